/**
 * Issue 18, as an attacker on the internet tries it, against the real server:
 * - JSON nested thousands of levels deep on REST, `/mcp` and the OAuth
 *   endpoints is refused unparsed with 400 in each surface's error shape
 *   (problem+json `json_too_deep`, RFC 6749 `invalid_request`, RFC 7591
 *   `invalid_client_metadata`, JSON-RPC 2.0 §5.1 parse error -32700), while
 *   64 levels still work where a route takes free-form JSON.
 * - A slow-drip body (one byte now and then, which Node's default 300 s
 *   `requestTimeout` let hold a socket 318 s) is cut with 408 at the
 *   configured request deadline; a FIT upload has its own, longer deadline.
 * - `/docs` cannot be framed by another site (CSP `frame-ancestors 'none'`,
 *   X-Frame-Options DENY) and runs no inline code but its own hashed styles,
 *   while Swagger UI still renders in Chromium without a CSP violation.
 * - Random bearer tokens on `/mcp` from one address: counted per minute,
 *   address and reason (O(1) rows, no rate-limit row per token), and past
 *   `PACER_MCP_AUTH_FAILURES_PER_MINUTE` the address gets 429 + Retry-After;
 *   a valid token from it works until then, another address is unaffected.
 * - `/api/admin/*` by bearer token needs the scope `admin:read`, which only an
 *   administrator can be granted (authorize endpoint, `token:create`): an
 *   admin's token issued to some app for training data reads no statistics.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../server/src/lib/json-depth.ts';
import type { User } from '../../server/src/db/tables.ts';
import { usePortalBrowser } from '../support/browser.ts';
import { authorizationRequest, authorizeAs, runCodeFlow, registerClient, signIn } from '../support/oauth-flow.ts';
import { runPacer } from '../support/process.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { buildFitActivity, rideSamples } from '../support/fit-fixtures.ts';
import { asProblem, call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { sleep, waitFor } from '../support/wait.ts';

let server: TestServer;
/** Short deadlines, so a slow-drip attack is cut in seconds. */
let impatient: TestServer;
let athlete: User;

const REQUEST_TIMEOUT_MS = 1_000;
const UPLOAD_TIMEOUT_MS = 4_000;

beforeAll(async () => {
  [server, impatient] = await Promise.all([
    // Behind a (loopback) proxy, so each test can speak from its own X-Forwarded-For address.
    startTestServer({ PACER_TRUST_PROXY: 'loopback' }),
    startTestServer({
      PACER_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      PACER_UPLOAD_TIMEOUT_MS: String(UPLOAD_TIMEOUT_MS),
    }),
  ]);
  athlete = await makeUser(server.db);
});
afterAll(async () => {
  await Promise.all([server?.stop(), impatient?.stop()]);
});

/** `levels` arrays inside one another around `inner`, as text: `[[[…0…]]]`. */
function nested(levels: number, inner = '0'): string {
  return `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;
}

/** The ~5,000 levels that answered 500 before (a stack overflow walking the parsed value). */
const ATTACK_DEPTH = 5_000;

function postMcp(body: string, token?: string, from?: string): Promise<Response> {
  return fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(from ? { 'x-forwarded-for': from } : {}),
    },
    body,
  });
}

describe('JSON nested deeper than 64 levels is refused before it is parsed', () => {
  it('REST: a wellness upsert whose rawJson nests 5,000 levels gets 400 json_too_deep, not 500', async () => {
    const { token } = await mintToken(server.db, athlete, { scopes: ['health:write'] });
    const res = await call(server.url, 'POST', '/api/wellness', {
      token,
      rawBody: `{"date":"2026-10-04","rawJson":{"a":${nested(ATTACK_DEPTH)}}}`,
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = asProblem(res.body);
    expect(problem.code).toBe('json_too_deep');
    expect(problem.detail).toBe(`The body nests deeper than ${MAX_JSON_DEPTH} levels.`);
    expect(problem.errors).toEqual([{ path: '', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }]);
  });

  it('REST: one level past the limit is refused, exactly 64 levels (rawJson inside the body) are stored', async () => {
    const { token } = await mintToken(server.db, athlete, { scopes: ['health:write', 'health:read'] });
    // The body object is level 1, rawJson level 2: 62 arrays inside `{"a": …}` make 64 in all.
    const rawJson = (arrays: number) => `{"a":${nested(arrays)}}`;
    const tooDeep = await call(server.url, 'POST', '/api/wellness', {
      token,
      rawBody: `{"date":"2026-10-05","rawJson":${rawJson(MAX_JSON_DEPTH - 1)}}`,
    });
    expect(tooDeep.status).toBe(400);
    expect(asProblem(tooDeep.body).code).toBe('json_too_deep');

    const deepest = await call<{ rawJsonBySource: Record<string, unknown> }>(server.url, 'POST', '/api/wellness', {
      token,
      rawBody: `{"date":"2026-10-05","rawJson":${rawJson(MAX_JSON_DEPTH - 2)}}`,
    });
    expect(deepest.status).toBe(201);
    expect(Object.values(deepest.body.rawJsonBySource)).toEqual([JSON.parse(rawJson(MAX_JSON_DEPTH - 2))]);
  });

  it('/mcp: a 5,000-level body gets HTTP 400 with JSON-RPC parse error -32700 and id null, before any auth', async () => {
    const res = await postMcp(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":${nested(ATTACK_DEPTH)}}}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: `Parse error: the body nests deeper than ${MAX_JSON_DEPTH} levels.` },
      id: null,
    });
  });

  it('/mcp: a tools/call whose arguments nest 64 levels in all is still answered', async () => {
    const token = (
      await mintToken(server.db, athlete, { scopes: ['profile:read'], resource: server.config.mcpResource })
    ).token;
    // Levels 1-3: the message, params, arguments; 61 arrays inside make 64.
    const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_current_time","arguments":{"x":${nested(MAX_JSON_DEPTH - 4)}}}}`;
    const res = await postMcp(body, token);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { id: number; result?: unknown; error?: unknown };
    expect(answer.id).toBe(7);
    expect(answer.error).toBeUndefined();
  });

  it('OAuth token endpoint: a 5,000-level JSON body gets 400 invalid_request (RFC 6749 §5.2)', async () => {
    const res = await call(server.url, 'POST', '/api/oauth/token', {
      rawBody: `{"grant_type":${nested(ATTACK_DEPTH, '"x"')}}`,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_request',
      error_description: `the body nests deeper than ${MAX_JSON_DEPTH} levels`,
    });
  });

  it('DCR: a 5,000-level client metadata body gets 400 invalid_client_metadata (RFC 7591 §3.2.2)', async () => {
    const res = await call(server.url, 'POST', '/api/oauth/register', {
      rawBody: `{"redirect_uris":["http://127.0.0.1/cb"],"client_name":"x","extra":${nested(ATTACK_DEPTH)}}`,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_client_metadata',
      error_description: `The body nests deeper than ${MAX_JSON_DEPTH} levels.`,
    });
  });
});

interface DripAnswer {
  /** The raw HTTP answer, if any came before the connection closed. */
  readonly text: string;
  /** Body bytes written before the server closed the connection. */
  readonly sent: number;
}

/**
 * A raw client that sends `head` at once, then the body in `pieces`, one
 * every `gapMs`, and keeps dripping (one space) after them while `dripForever`;
 * resolves with what the server answered once it closes the connection.
 */
function dripRequest(
  target: TestServer,
  head: string,
  pieces: readonly (string | Uint8Array)[],
  options: { gapMs: number; dripForever: boolean },
): Promise<DripAnswer> {
  const { port, hostname } = new URL(target.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: Number(port), host: hostname });
    const chunks: Buffer[] = [];
    let sent = 0;
    let closed = false;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      resolve({ text: Buffer.concat(chunks).toString('utf8'), sent });
    });
    socket.on('connect', () => {
      void (async () => {
        socket.write(head);
        const queue = [...pieces];
        while (!closed) {
          await sleep(options.gapMs);
          const piece = queue.shift() ?? (options.dripForever ? ' ' : undefined);
          if (piece === undefined || closed) return;
          socket.write(piece);
          sent += piece.length;
        }
      })().catch(reject);
    });
  });
}

function statusOf(answer: DripAnswer): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer.text)?.[1] ?? 0);
}

function bodyOf(answer: DripAnswer): unknown {
  return JSON.parse(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4));
}

describe('a slow-drip request body is cut at the request deadline', () => {
  it('a JSON body dripped one byte every 100 ms is answered 408 request_timeout and the connection closed', async () => {
    const { token } = await mintToken(impatient.db, await makeUser(impatient.db), { scopes: ['health:write'] });
    const head = [
      'POST /api/wellness HTTP/1.1',
      `Host: ${new URL(impatient.url).host}`,
      `Authorization: Bearer ${token}`,
      'Content-Type: application/json',
      'Content-Length: 100000',
      '',
      '',
    ].join('\r\n');
    const answer = await dripRequest(impatient, head, ['{"date":'], { gapMs: 100, dripForever: true });
    expect(statusOf(answer)).toBe(408);
    expect(answer.text).toMatch(/\r\nconnection: close\r\n/i);
    expect(bodyOf(answer)).toMatchObject({
      code: 'request_timeout',
      detail: `The request body did not arrive within ${String(REQUEST_TIMEOUT_MS / 1000)} s.`,
    });
    // Cut long before the body's 100,000 bytes: the drip sent a few dozen.
    expect(answer.sent).toBeLessThan(1_000);
  });

  describe('a FIT upload has its own, longer deadline', () => {
    const boundary = 'hostile-surface-boundary';
    const fit = buildFitActivity({
      startTime: new Date('2026-11-20T07:00:00Z'),
      sport: 'cycling',
      subSport: 'road',
      samples: rideSamples(300),
    });
    const partHead = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.fit"\r\nContent-Type: application/vnd.ant.fit\r\n\r\n`;
    const partTail = `\r\n--${boundary}--\r\n`;

    function uploadHead(target: TestServer, token: string): string {
      const length = Buffer.byteLength(partHead) + fit.bytes.length + Buffer.byteLength(partTail);
      return [
        'POST /api/workouts/upload-fit HTTP/1.1',
        `Host: ${new URL(target.url).host}`,
        `Authorization: Bearer ${token}`,
        `Content-Type: multipart/form-data; boundary=${boundary}`,
        `Content-Length: ${String(length)}`,
        'Connection: close',
        '',
        '',
      ].join('\r\n');
    }

    it('an upload that takes longer than the request deadline (but less than the upload one) is stored', async () => {
      const { token } = await mintToken(impatient.db, await makeUser(impatient.db), { scopes: ['workout:write'] });
      const half = Math.floor(fit.bytes.length / 2);
      // Four pieces 500 ms apart: about 2 s in all, twice the 1 s request deadline.
      const pieces = [partHead, fit.bytes.slice(0, half), fit.bytes.slice(half), partTail];
      const answer = await dripRequest(impatient, uploadHead(impatient, token), pieces, {
        gapMs: 500,
        dripForever: false,
      });
      expect(statusOf(answer)).toBe(201);
    });

    it('an upload dripped past the upload deadline is answered 408 and the connection closed', async () => {
      const { token } = await mintToken(impatient.db, await makeUser(impatient.db), { scopes: ['workout:write'] });
      const drip = Array.from({ length: 200 }, (_, index) => fit.bytes.slice(index, index + 1));
      const answer = await dripRequest(impatient, uploadHead(impatient, token), [partHead, ...drip], {
        gapMs: 100,
        dripForever: false,
      });
      expect(statusOf(answer)).toBe(408);
      expect(bodyOf(answer)).toMatchObject({
        code: 'request_timeout',
        detail: `The upload did not arrive within ${String(UPLOAD_TIMEOUT_MS / 1000)} s.`,
      });
    });
  });
});

describe('/docs under a Content-Security-Policy', () => {
  const chromium = usePortalBrowser(() => server.url);

  it('forbids framing and inline scripts in its headers', async () => {
    const res = await fetch(`${server.url}/docs/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });

  it('renders every operation in Chromium with no CSP violation', async () => {
    const { page } = await chromium.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/content security policy/i.test(message.text())) violations.push(message.text());
    });
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        console.error(`Content Security Policy violation: ${event.violatedDirective} ${event.blockedURI}`);
      });
    });
    await page.goto(`${server.url}/docs/`);
    await page.locator('.opblock-summary-path', { hasText: '/api/wellness' }).first().waitFor();
    expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
    // Opening an operation renders its parameters and responses (more React, more styles).
    await page.locator('.opblock-summary', { hasText: '/api/wellness' }).first().click();
    await page.locator('.responses-wrapper').first().waitFor();
    expect(violations).toEqual([]);
  });

  it('is not shown inside another page’s frame', async () => {
    const { page } = await chromium.newPage();
    const refusals: string[] = [];
    page.on('console', (message) => {
      if (/frame-ancestors/.test(message.text())) refusals.push(message.text());
    });
    await page.setContent(`<iframe id="docs" src="${server.url}/docs/"></iframe>`);
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
    await expect.poll(() => refusals.length).toBeGreaterThan(0);
    expect(await frame?.locator('#swagger-ui').count()).toBe(0);
  });
});

describe('/api/admin/* by bearer token needs admin:read, granted only to administrators', () => {
  const STATS = '/api/admin/mcp/stats';
  let admin: User;

  beforeAll(async () => {
    admin = await makeUser(server.db, { admin: true });
  });

  it("an admin's token issued for training data (every user scope) reads no stats: 403 insufficient_scope", async () => {
    const { token } = await mintToken(server.db, admin, { scopes: ['health:read', 'analysis:read', 'profile:read'] });
    const res = await call(server.url, 'GET', STATS, { token });
    expect(res.status).toBe(403);
    expect(asProblem(res.body).code).toBe('insufficient_scope');
    expect(res.headers.get('www-authenticate')).toContain('scope="admin:read"');
  });

  it('a non-admin asking the authorize endpoint for admin:read is sent back with invalid_scope, no consent, no code', async () => {
    const owner = await makeUser(server.db);
    const client = await registerClient(server.db, owner, { scopes: ['health:read', 'admin:read'] });
    const jar = await signIn(server.url, owner.email);
    const result = await authorizeAs(
      jar,
      authorizationRequest(server.url, client, { scope: 'health:read admin:read', state: 'st' }),
    );
    expect(result.status).toBe(303);
    expect(result.location?.origin + (result.location?.pathname ?? '')).toBe(client.redirectUri);
    expect(result.location?.searchParams.get('error')).toBe('invalid_scope');
    expect(result.location?.searchParams.get('code')).toBeNull();
  });

  it('an admin granting admin:read through the authorize endpoint gets a token that reads the stats', async () => {
    const client = await registerClient(server.db, admin, { scopes: ['admin:read'] });
    const jar = await signIn(server.url, admin.email);
    const { tokens } = await runCodeFlow(server.url, jar, client, { scope: 'admin:read' });
    expect(tokens.status).toBe(200);
    const res = await call(server.url, 'GET', STATS, { token: String(tokens.body['access_token']) });
    expect(res.status).toBe(200);
  });

  it('token:create refuses admin:read for a non-admin and issues it to an admin', async () => {
    const plain = await makeUser(server.db);
    const pacer = (email: string) =>
      runPacer(['token:create', '--email', email, '--scope', 'admin:read', '--json'], {
        ...process.env,
        DATABASE_URL: server.databaseUrl,
        PACER_BASE_URL: server.config.baseUrl,
        PACER_LOG_LEVEL: 'warn',
      });
    const refused = await pacer(plain.email);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('admin:read is granted only to administrators');
    const granted = await pacer(admin.email);
    expect(granted.code).toBe(0);
    const token = String((JSON.parse(granted.stdout) as { access_token: string }).access_token);
    expect((await call(server.url, 'GET', STATS, { token })).status).toBe(200);
  });

  it('admin:read is not on the MCP allowlist: an MCP authorization asking for it is refused', async () => {
    const client = await registerClient(server.db, admin, { scopes: ['admin:read', 'health:read'] });
    const jar = await signIn(server.url, admin.email);
    const result = await authorizeAs(
      jar,
      authorizationRequest(server.url, client, { scope: 'admin:read', resource: server.config.mcpResource }),
    );
    expect(result.location?.searchParams.get('error')).toBe('invalid_scope');
  });
});

describe('random bearer tokens on /mcp are limited per address and counted, not stored one row each', () => {
  const CALL = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'get_current_time', arguments: {} },
  });
  const randomToken = () => `pat_${randomBytes(32).toString('base64url')}`;

  async function rowCount(table: 'mcpAuthFailures' | 'rateLimitCounters'): Promise<number> {
    const row = await server.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async function failuresFrom(address: string): Promise<number> {
    const row = await server.db
      .selectFrom('mcpAuthFailures')
      .select((eb) => eb.fn.sum<string>('count').as('n'))
      .where('clientIp', '=', address)
      .executeTakeFirstOrThrow();
    return Number(row.n ?? 0);
  }

  it('500 random tokens from one address: 401 up to the limit, then 429 with Retry-After, and O(1) rows', async () => {
    const limit = server.config.mcp.authFailuresPerMinute;
    const address = '198.51.100.7';
    const [failureRows, counterRows] = [await rowCount('mcpAuthFailures'), await rowCount('rateLimitCounters')];
    const statuses: number[] = [];
    let lastRefusal: Response | undefined;
    for (let sent = 0; sent < 500; sent += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, () => postMcp(CALL, randomToken(), address)));
      for (const res of batch) {
        statuses.push(res.status);
        if (res.status === 429) lastRefusal = res;
        else await res.body?.cancel();
      }
    }
    expect(statuses.filter((status) => status === 401)).toHaveLength(limit);
    expect(statuses.filter((status) => status === 429)).toHaveLength(500 - limit);
    expect(Number(lastRefusal?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await lastRefusal?.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });

    // The refusals up to the limit and those that crossed it (at most one batch of 10 at once) are counted,
    // written off the request path; those refused before their token was looked up are not.
    await waitFor(async () => (await failuresFrom(address)) > limit, 'the failures to be counted');
    expect(await failuresFrom(address)).toBeLessThanOrEqual(limit + 10);
    // One row per minute, address and reason (two if a minute ended meanwhile), one address window, no row per token.
    expect((await rowCount('mcpAuthFailures')) - failureRows).toBeLessThanOrEqual(2);
    expect((await rowCount('rateLimitCounters')) - counterRows).toBe(1);

    // The administrator's statistics still show them.
    const admin = await makeUser(server.db, { admin: true });
    const { token } = await mintToken(server.db, admin, { scopes: ['admin:read'] });
    const stats = await call<{ authFailures: Record<string, number> }>(server.url, 'GET', '/api/admin/mcp/stats', {
      token,
    });
    expect(stats.body.authFailures['invalid_token']).toBeGreaterThanOrEqual(limit + 1);
  });

  it('a valid token from the attacking address keeps working past the limit while its bad tokens get 429; other addresses are unaffected', async () => {
    const limit = server.config.mcp.authFailuresPerMinute;
    const address = '198.51.100.8';
    const { token } = await mintToken(server.db, athlete, {
      scopes: ['profile:read'],
      resource: server.config.mcpResource,
    });
    for (let sent = 0; sent < limit; sent += 1) {
      expect((await postMcp(CALL, randomToken(), address)).status).toBe(401);
    }
    expect((await postMcp(CALL, token, address)).status).toBe(200);
    const blocked = await postMcp(CALL, randomToken(), address);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // Hosted assistants share egress addresses: the real user's token behind the same address still works.
    expect((await postMcp(CALL, token, address)).status).toBe(200);
    expect((await postMcp(CALL, randomToken(), '198.51.100.9')).status).toBe(401);
    expect((await postMcp(CALL, token, '198.51.100.9')).status).toBe(200);
  });
});

/**
 * The SDK's resilience against the real server, with a small fault-injecting
 * HTTP proxy (a real node:http server) in front of it where a test needs a
 * 429, a proxy's HTML 503, a dropped answer or a stall: retries with
 * Retry-After, an automatic Idempotency-Key reused by the retry of a write
 * (the server's replay applies it once), the default timeout, per-call
 * signals (uploadFit too), PacerError for undeclared statuses, non-JSON
 * error bodies and network failures, a fresh X-Request-Id per request, the
 * single-flight refresh before expiry and the pagination iterator.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createOAuthPacerClient,
  createPacerClient,
  createPkcePair,
  createState,
  exchangeCode,
  paginate,
  PacerError,
  uploadFit,
  validateAuthorizationResponse,
  type TokenSet,
} from '@pacer/client-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { ALL_DATA_SCOPES, makeUser, mintToken } from '../support/factories.ts';
import { oneHourRide } from '../support/fit-fixtures.ts';
import { freePort } from '../support/free-port.ts';
import { startOAuthFixture } from '../support/oauth-fixture.ts';
import { authorizeAs, type CookieJar, type TestClient } from '../support/oauth-flow.ts';
import type { TestServer } from '../support/test-server.ts';

/** One request the proxy saw. */
interface Seen {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly at: number;
  status?: number;
}

/** What the proxy does with the n-th request (0-based) of the current test. */
type Fault =
  | { readonly kind: 'pass' }
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly headers: Record<string, string>;
      readonly body: string;
    }
  /** Forward to the server, let it finish, then cut the connection without answering. */
  | { readonly kind: 'drop' }
  /** Never answer. */
  | { readonly kind: 'stall' };

interface FaultProxy {
  readonly url: string;
  readonly seen: Seen[];
  plan: (index: number, req: IncomingMessage) => Fault;
  close(): Promise<void>;
}

async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const stalled = new Set<ServerResponse>();
  const proxy: FaultProxy = {
    url: '',
    seen: [],
    plan: () => ({ kind: 'pass' }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of stalled) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const forward = (req: IncomingMessage, body: Buffer, onAnswer: (answer: IncomingMessage, bytes: Buffer) => void) => {
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => onAnswer(answer, Buffer.concat(chunks)));
      },
    );
    out.end(body);
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    // Seen (and planned) as the request line and headers arrive, before its body.
    const seen: Seen = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, at: Date.now() };
    const fault = proxy.plan(proxy.seen.length, req);
    proxy.seen.push(seen);
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      switch (fault.kind) {
        case 'answer':
          seen.status = fault.status;
          res.writeHead(fault.status, fault.headers).end(fault.body);
          return;
        case 'stall':
          stalled.add(res);
          return;
        case 'drop':
          forward(req, body, (answer) => {
            seen.status = answer.statusCode;
            res.socket?.destroy();
          });
          return;
        case 'pass':
          forward(req, body, (answer, bytes) => {
            seen.status = answer.statusCode;
            const headers = { ...answer.headers };
            delete headers['transfer-encoding'];
            res.writeHead(answer.statusCode ?? 502, { ...headers, 'content-length': String(bytes.length) }).end(bytes);
          });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(proxy, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

const HTML_503 = {
  kind: 'answer',
  status: 503,
  headers: { 'content-type': 'text/html' },
  body: '<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>',
} as const;

let server: TestServer;
let jar: CookieJar;
let app: TestClient;
let proxy: FaultProxy;
let user: User;
let token: string;

beforeAll(async () => {
  ({ server, jar, app } = await startOAuthFixture({ client: { scopes: ['health:read', 'health:write'] } }));
  proxy = await startFaultProxy(server.url);
  user = await makeUser(server.db);
  ({ token } = await mintToken(server.db, user, {
    scopes: [...ALL_DATA_SCOPES, 'profile:read', 'workout:read', 'workout:write'],
  }));
});
afterEach(() => {
  proxy.plan = () => ({ kind: 'pass' });
  proxy.seen.length = 0;
});
afterAll(async () => {
  await proxy.close();
  await server.stop();
});

function viaProxy(options: Partial<Parameters<typeof createPacerClient>[0]> = {}) {
  return createPacerClient({ baseUrl: proxy.url, accessToken: token, ...options });
}

async function caught(promise: Promise<unknown>): Promise<PacerError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(PacerError);
    return error as PacerError;
  }
  throw new Error('expected a PacerError, got an answer');
}

describe('retries', () => {
  it('waits out a 429 with Retry-After: 1 and then succeeds, with a fresh request id per request', async () => {
    proxy.plan = (index) =>
      index === 0
        ? {
            kind: 'answer',
            status: 429,
            headers: { 'content-type': 'application/problem+json', 'retry-after': '1' },
            body: JSON.stringify({
              type: 'about:blank',
              title: 'Too Many Requests',
              status: 429,
              code: 'rate_limited',
            }),
          }
        : { kind: 'pass' };
    const started = Date.now();
    const res = await viaProxy().wellness.listWellness({ query: { from: '2026-11-01', to: '2026-11-02' } });
    expect(res.status).toBe(200);
    expect(proxy.seen).toHaveLength(2);
    expect(proxy.seen[1]!.at - proxy.seen[0]!.at).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeLessThan(5000);
    const ids = proxy.seen.map((seen) => seen.headers['x-request-id']);
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(res.headers.get('x-request-id')).toBe(ids[1]);
  });

  it('returns the 429 as typed when Retry-After asks for longer than maxMs', async () => {
    proxy.plan = () => ({
      kind: 'answer',
      status: 429,
      headers: { 'content-type': 'application/problem+json', 'retry-after': '120' },
      body: JSON.stringify({ type: 'about:blank', title: 'Too Many Requests', status: 429, code: 'rate_limited' }),
    });
    const res = await viaProxy().wellness.listWellness();
    expect(res.status).toBe(429);
    if (res.status !== 429) throw new Error('unreachable');
    expect(res.body.code).toBe('rate_limited');
    expect(proxy.seen).toHaveLength(1);
  });

  it('retries a write whose answer was lost with the same Idempotency-Key: the server applies it once', async () => {
    proxy.plan = (index) => (index === 0 ? { kind: 'drop' } : { kind: 'pass' });
    const res = await viaProxy({ retry: { baseMs: 20 } }).wellness.upsertWellness({
      body: { date: '2026-10-01', restingHr: 44 },
    });
    expect(proxy.seen).toHaveLength(2);
    expect(proxy.seen[0]!.status).toBe(201); // the server did write it the first time
    const keys = proxy.seen.map((seen) => seen.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    // A second write of the same date would answer 200 (updated); the replay is the first 201.
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBe('true');
    const rows = await server.db
      .selectFrom('wellness')
      .select('date')
      .where('userId', '=', user.id)
      .where('date', '=', '2026-10-01')
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('retries a FIT upload whose answer was lost: the same key, one workout', async () => {
    proxy.plan = (index) => (index === 0 ? { kind: 'drop' } : { kind: 'pass' });
    const ride = oneHourRide({ startTime: new Date('2026-10-05T06:00:00Z') });
    const res = await uploadFit(viaProxy({ retry: { baseMs: 20 } }), { file: ride.bytes, fileName: 'lost.fit' });
    expect(proxy.seen).toHaveLength(2);
    expect(proxy.seen[0]!.status).toBe(201);
    expect(proxy.seen[1]!.headers['idempotency-key']).toBe(proxy.seen[0]!.headers['idempotency-key']);
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBe('true');
    const workouts = await server.db.selectFrom('workouts').select('id').where('userId', '=', user.id).execute();
    expect(workouts).toHaveLength(1);
  });

  it('asks again after a 409 idempotency_in_progress with the same key', async () => {
    proxy.plan = (index) =>
      index === 0
        ? {
            kind: 'answer',
            status: 409,
            headers: { 'content-type': 'application/problem+json', 'retry-after': '1' },
            body: JSON.stringify({
              type: 'about:blank',
              title: 'Conflict',
              status: 409,
              code: 'idempotency_in_progress',
            }),
          }
        : { kind: 'pass' };
    const res = await viaProxy().wellness.upsertWellness({ body: { date: '2026-10-04', restingHr: 47 } });
    expect(res.status).toBe(201);
    expect(proxy.seen).toHaveLength(2);
    expect(proxy.seen[1]!.at - proxy.seen[0]!.at).toBeGreaterThanOrEqual(950);
    expect(proxy.seen[1]!.headers['idempotency-key']).toBe(proxy.seen[0]!.headers['idempotency-key']);
  });

  it('uses the Idempotency-Key the caller passes, and does not retry a write without one', async () => {
    proxy.plan = () => ({ kind: 'pass' });
    await viaProxy().wellness.upsertWellness({
      headers: { 'idempotency-key': 'my-own-key-1' },
      body: { date: '2026-10-02', restingHr: 45 },
    });
    expect(proxy.seen[0]!.headers['idempotency-key']).toBe('my-own-key-1');

    proxy.seen.length = 0;
    proxy.plan = () => ({ kind: 'drop' });
    const error = await caught(
      viaProxy({ idempotencyKeys: false, retry: { baseMs: 20 } }).wellness.upsertWellness({
        body: { date: '2026-10-03', restingHr: 46 },
      }),
    );
    expect(error.code).toBe('network_error');
    expect(error.status).toBeNull();
    expect(proxy.seen).toHaveLength(1);
    expect(proxy.seen[0]!.headers['idempotency-key']).toBeUndefined();
  });
});

describe('honest errors', () => {
  it('turns a proxy HTML 503 into PacerError with status 503 after the retries', async () => {
    proxy.plan = () => HTML_503;
    const error = await caught(viaProxy({ retry: { retries: 2, baseMs: 10 } }).wellness.listWellness());
    expect(error.status).toBe(503);
    expect(error.code).toBe('unexpected_status'); // listWellness declares no 503
    expect(error.body).toContain('503 Service Temporarily Unavailable');
    expect(error.attempts).toBe(3);
    expect(proxy.seen).toHaveLength(3);
  });

  it('turns an HTML 503 on a route that declares 503 (uploadFit) into invalid_response', async () => {
    proxy.plan = () => HTML_503;
    const error = await caught(
      uploadFit(viaProxy({ retry: false }), { file: oneHourRide().bytes, fileName: 'ride.fit' }),
    );
    expect(error.status).toBe(503);
    expect(error.code).toBe('invalid_response');
    expect(proxy.seen).toHaveLength(1);
  });

  it('refuses an HTML page where the route declares JSON, even with a 200', async () => {
    proxy.plan = () => ({ ...HTML_503, status: 200 });
    const error = await caught(viaProxy().profile.getProfile());
    expect(error.status).toBe(200);
    expect(error.code).toBe('invalid_response');
    expect(error.problem).toBeUndefined();
    expect(error.body).toContain('<html>');
  });

  it('keeps declared problem answers typed (404)', async () => {
    const res = await viaProxy().workouts.getWorkout({ params: { id: '00000000-0000-4000-8000-000000000000' } });
    expect(res.status).toBe(404);
    if (res.status !== 404) throw new Error('unreachable');
    expect(res.body.code).toBe('not_found');
  });

  it('throws PacerError with status null when the server is offline', async () => {
    const port = await freePort();
    const offline = createPacerClient({
      baseUrl: `http://127.0.0.1:${port}`,
      accessToken: token,
      retry: { retries: 2, baseMs: 10 },
    });
    const error = await caught(offline.profile.getProfile());
    expect(error.status).toBeNull();
    expect(error.code).toBe('network_error');
    expect(error.attempts).toBe(3);
    expect(error.cause).toBeInstanceOf(TypeError);
  });
});

describe('timeouts and signals', () => {
  it('gives up on a stall after timeoutMs with a timeout PacerError', async () => {
    proxy.plan = () => ({ kind: 'stall' });
    const started = Date.now();
    const error = await caught(viaProxy({ timeoutMs: 400 }).profile.getProfile());
    const elapsed = Date.now() - started;
    expect(error.code).toBe('timeout');
    expect(error.status).toBeNull();
    expect(elapsed).toBeGreaterThanOrEqual(380);
    expect(elapsed).toBeLessThan(1500);
  });

  it('aborts a call with the per-call signal', async () => {
    proxy.plan = () => ({ kind: 'stall' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const started = Date.now();
    const error = await caught(viaProxy().profile.getProfile({ fetchOptions: { signal: controller.signal } }));
    expect(error.code).toBe('aborted');
    expect(error.status).toBeNull();
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('aborts uploadFit with its signal, and sends its own key and request id', async () => {
    proxy.plan = () => ({ kind: 'stall' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const error = await caught(
      uploadFit(viaProxy(), {
        file: oneHourRide().bytes,
        fileName: 'ride.fit',
        signal: controller.signal,
        idempotencyKey: 'upload-key-1',
        requestId: 'upload-request-1',
      }),
    );
    expect(error.code).toBe('aborted');
    expect(proxy.seen[0]!.headers['idempotency-key']).toBe('upload-key-1');
    expect(proxy.seen[0]!.headers['x-request-id']).toBe('upload-request-1');
  });
});

describe('refresh before expiry', () => {
  async function signIn(): Promise<TokenSet> {
    const pkce = await createPkcePair();
    const state = createState();
    const url = new URL('/api/oauth/authorize', server.url);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: app.redirectUri,
      scope: 'health:read',
      state,
      code_challenge: pkce.codeChallenge,
      code_challenge_method: 'S256',
    }).toString();
    const answer = await authorizeAs(jar, url.toString(), 'approve');
    if (!answer.location) throw new Error(`no redirect: ${answer.status}`);
    const { code } = validateAuthorizationResponse(answer.location.toString(), {
      expectedState: state,
      issuer: server.config.baseUrl,
    });
    return exchangeCode({
      baseUrl: server.url,
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      code,
      redirectUri: app.redirectUri,
      codeVerifier: pkce.codeVerifier,
    });
  }

  it('refreshes once for 5 concurrent calls when the token expires within the skew, before any 401', async () => {
    const tokens = await signIn();
    const received: TokenSet[] = [];
    const client = createOAuthPacerClient({
      baseUrl: proxy.url,
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      // Valid for 20 more seconds: inside the default 60 s skew.
      tokens: { ...tokens, expiresAt: new Date(Date.now() + 20_000) },
      onTokens: (fresh) => {
        received.push(fresh);
      },
    });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        client.wellness.listWellness({ query: { from: '2026-11-01', to: '2026-11-02' } }),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
    expect(received).toHaveLength(1);
    expect(client.getTokens().accessToken).not.toBe(tokens.accessToken);
    expect(proxy.seen.filter((seen) => seen.path === '/api/oauth/token')).toHaveLength(1);
    expect(proxy.seen.filter((seen) => seen.status === 401)).toHaveLength(0);
    const apiCalls = proxy.seen.filter((seen) => seen.path.startsWith('/api/wellness'));
    expect(apiCalls).toHaveLength(5);
    for (const call of apiCalls) expect(call.headers.authorization).toBe(`Bearer ${client.getTokens().accessToken}`);
  });
});

describe('paginate', () => {
  it('walks every page of a cursor list', async () => {
    const pacer = viaProxy();
    const dates = ['2026-09-01', '2026-09-02', '2026-09-03', '2026-09-04', '2026-09-05'];
    for (const [index, date] of dates.entries()) {
      const res = await pacer.wellness.upsertWellness({ body: { date, restingHr: 40 + index } });
      expect(res.status).toBe(201);
    }
    proxy.seen.length = 0;
    const items = [];
    for await (const item of paginate(pacer.wellness.listWellness, {
      query: { from: '2026-09-01', to: '2026-09-05', limit: 2 },
    })) {
      items.push(item);
    }
    expect(items.map((item) => item.date).sort()).toEqual(dates);
    expect(items.map((item) => item.restingHr).sort()).toEqual([40, 41, 42, 43, 44]);
    expect(proxy.seen).toHaveLength(3);
    expect(new URL(proxy.seen[0]!.path, proxy.url).searchParams.get('cursor')).toBeNull();
    expect(new URL(proxy.seen[2]!.path, proxy.url).searchParams.get('cursor')).not.toBeNull();
  });

  it('throws the problem of an error page as PacerError', async () => {
    const pacer = createPacerClient({ baseUrl: server.url, accessToken: 'not-a-token' });
    const pages = paginate(pacer.nutrition.listNutrition);
    const error = await caught(pages.next());
    expect(error.status).toBe(401);
    expect(error.problem?.status).toBe(401);
  });

  it('is a type error on a route without a cursor', () => {
    const pacer = viaProxy();
    // @ts-expect-error getProfile is not a cursor list
    expect(() => paginate(pacer.profile.getProfile)).not.toThrow(); // a generator starts lazily
  });
});

/**
 * The MCP endpoint as HTTP (docs/design.md §3 "MCP / Transport and access"), by
 * raw requests rather than an SDK client, so every status, header and body
 * is visible:
 * - bearer tokens bound to `{base}/mcp` (RFC 8707), 401 challenges naming the
 *   MCP resource metadata (RFC 9728 §5.1, RFC 6750 §3: no `error` without a token),
 * - the client allowlist (403) and `PACER_MCP_ENABLED=false` (404),
 * - the DNS-rebinding guard on `Host` and `Origin`, checked before any auth,
 * - Streamable HTTP: POST only, `initialize` for both protocol versions, JSON
 *   or SSE as `Accept` prefers, 406/415/400 for what cannot be answered,
 * - scope step-up (MCP 2025-11-25 "Scope Challenge Handling": 403 `insufficient_scope`),
 * - revocation taking effect on the next call, and every refusal recorded.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { MCP_SCOPES, type Scope } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { OauthClient, User } from '../../server/src/db/tables.ts';
import { sha256Hex } from '../../server/src/lib/crypto.ts';
import { insertClient } from '../../server/src/modules/oauth/client.repository.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { corsPreflight } from '../support/http.ts';
import { registerClient, revokeToken } from '../support/oauth-flow.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/** A browser origin listed in `PACER_MCP_ALLOWED_ORIGINS` of the main server. */
const LISTED_ORIGIN = 'https://assistant.example';
/** The only client the allowlisted server accepts. */
const ALLOWED_CLIENT_ID = 'allowlisted-assistant';
const BOTH_TYPES = 'application/json, text/event-stream';

let server: TestServer;
let allowlisted: TestServer;
let disabled: TestServer;
let athlete: User;

beforeAll(async () => {
  [server, allowlisted, disabled] = await Promise.all([
    startTestServer({ PACER_MCP_ALLOWED_ORIGINS: LISTED_ORIGIN }),
    startTestServer({ PACER_MCP_CLIENT_ALLOWLIST: ALLOWED_CLIENT_ID }),
    startTestServer({ PACER_MCP_ENABLED: 'false' }),
  ]);
  athlete = await makeUser(server.db);
});
afterAll(async () => {
  await Promise.all([server?.stop(), allowlisted?.stop(), disabled?.stop()]);
});

// --- JSON-RPC bodies -------------------------------------------------------

function initializeRequest(protocolVersion = '2025-11-25') {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-http-test', version: '1.0.0' } },
  };
}
const TOOLS_LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
function toolsCall(name: string, args: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: args } };
}

// --- HTTP ------------------------------------------------------------------

interface McpPostOptions {
  readonly token?: string;
  readonly body?: unknown;
  /** Sent verbatim instead of JSON-encoding `body`. */
  readonly rawBody?: string;
  readonly accept?: string;
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
  /** Default `/mcp`. */
  readonly path?: string;
}

interface McpAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The JSON body (or, for SSE, the JSON of the first `data:` line); undefined when there is none. */
  readonly json: Record<string, unknown> | undefined;
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function firstSseData(text: string): string | undefined {
  return text
    .split('\n')
    .find((line) => line.startsWith('data:'))
    ?.slice('data:'.length)
    .trim();
}

async function postMcp(target: TestServer, options: McpPostOptions = {}): Promise<McpAnswer> {
  const headers: Record<string, string> = {
    accept: options.accept ?? BOTH_TYPES,
    'content-type': options.contentType ?? 'application/json',
    ...options.headers,
  };
  if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
  const response = await fetch(`${target.url}${options.path ?? '/mcp'}`, {
    method: 'POST',
    headers,
    body: options.rawBody ?? JSON.stringify(options.body ?? initializeRequest()),
  });
  const text = await response.text();
  const isSse = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
  const data = isSse ? firstSseData(text) : text;
  return { status: response.status, headers: response.headers, text, json: data ? parseJson(data) : undefined };
}

/** A raw request with a Host header of our choosing (fetch does not let one set it). */
function postWithHost(target: TestServer, host: string, token?: string): Promise<{ status: number; body: string }> {
  const url = new URL(`${target.url}/mcp`);
  const payload = JSON.stringify(initializeRequest());
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          host,
          accept: BOTH_TYPES,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/** The auth-params of a `Bearer` challenge (RFC 6750 §3), by name. */
function bearerChallenge(headers: Headers): Record<string, string> {
  const header = headers.get('www-authenticate');
  if (!header) throw new Error('no WWW-Authenticate header');
  expect(header).toMatch(/^Bearer /);
  const params: Record<string, string> = {};
  for (const [, name = '', value = ''] of header.slice('Bearer '.length).matchAll(/([a-z_]+)="([^"]*)"/g)) {
    params[name] = value;
  }
  return params;
}

const metadataUrlOf = (target: TestServer) => `${target.url}/.well-known/oauth-protected-resource/mcp`;

// --- Tokens ----------------------------------------------------------------

function mcpToken(
  target: TestServer,
  user: User,
  scopes: readonly Scope[],
  options: { expiresInSecs?: number; client?: OauthClient } = {},
): Promise<string> {
  return mintToken(target.db, user, { scopes, resource: target.config.mcpResource, ...options }).then(
    (minted) => minted.token,
  );
}

async function revokeGrant(target: TestServer, grantId: string): Promise<void> {
  await target.db.updateTable('oauthGrants').set({ revokedAt: new Date() }).where('id', '=', grantId).execute();
}

async function insertAppClient(target: TestServer, owner: User, clientId: string): Promise<OauthClient> {
  return insertClient(target.db, {
    clientId,
    clientSecretHash: null,
    name: `Assistant ${clientId}`,
    ownerUserId: owner.id,
    kind: 'app',
    isPublic: true,
    redirectUris: ['http://127.0.0.1/callback'],
    scopes: [],
    webhookSecretHash: null,
    registrationKey: sha256Hex(clientId),
  });
}

// --- Tests -----------------------------------------------------------------

describe('a request without a token', () => {
  it('is refused with 401, the MCP metadata URL and basic scopes, and no error code', async () => {
    const answer = await postMcp(server);

    expect(answer.status).toBe(401);
    const challenge = bearerChallenge(answer.headers);
    expect(challenge['resource_metadata']).toBe(metadataUrlOf(server));
    expect(challenge).not.toHaveProperty('error');
    const scopes = (challenge['scope'] ?? '').split(' ');
    expect(scopes).toContain('profile:read');
    for (const scope of scopes) expect(MCP_SCOPES).toContain(scope);
    expect(answer.json).toMatchObject({ error: 'invalid_request', error_description: expect.any(String) });
  });
});

describe('a token the MCP endpoint does not accept', () => {
  const cases: readonly { readonly name: string; readonly token: () => Promise<string> }[] = [
    { name: 'an unknown token', token: () => Promise.resolve(`pat_${randomBytes(24).toString('base64url')}`) },
    {
      name: 'an expired token',
      token: () => mcpToken(server, athlete, ['profile:read'], { expiresInSecs: -60 }),
    },
    {
      name: 'a token of a revoked grant',
      token: async () => {
        const minted = await mintToken(server.db, athlete, {
          scopes: ['profile:read'],
          resource: server.config.mcpResource,
        });
        await revokeGrant(server, minted.grantId);
        return minted.token;
      },
    },
    {
      name: 'a token of a deactivated user',
      token: async () => {
        const user = await makeUser(server.db);
        const token = await mcpToken(server, user, ['profile:read']);
        await server.db.updateTable('users').set({ active: false }).where('id', '=', user.id).execute();
        return token;
      },
    },
    {
      name: 'a REST token (no resource)',
      token: async () => (await mintToken(server.db, athlete, { scopes: ['profile:read'] })).token,
    },
    {
      name: 'a token bound to {base} (REST)',
      token: async () =>
        (await mintToken(server.db, athlete, { scopes: ['profile:read'], resource: server.config.baseUrl })).token,
    },
  ];

  it.each(cases)('refuses $name with 401 invalid_token', async ({ token }) => {
    const answer = await postMcp(server, { token: await token() });

    expect(answer.status).toBe(401);
    const challenge = bearerChallenge(answer.headers);
    expect(challenge).toMatchObject({ resource_metadata: metadataUrlOf(server), error: 'invalid_token' });
    expect(challenge['scope']).toEqual(expect.stringContaining('profile:read'));
    expect(answer.json).toMatchObject({ error: 'invalid_token' });
  });

  it.each(['Basic x', 'Bearer', 'Bearer two words'])(
    'refuses the malformed Authorization header "%s" with 401',
    async (authorization) => {
      const answer = await postMcp(server, { headers: { authorization } });

      expect(answer.status).toBe(401);
      expect(bearerChallenge(answer.headers)['resource_metadata']).toBe(metadataUrlOf(server));
    },
  );
});

describe('PACER_MCP_CLIENT_ALLOWLIST', () => {
  it('refuses a client off the list with 403 and lets a listed one in', async () => {
    const owner = await makeUser(allowlisted.db);
    const listed = await insertAppClient(allowlisted, owner, ALLOWED_CLIENT_ID);
    const unlisted = await insertAppClient(allowlisted, owner, 'other-assistant');

    const refused = await postMcp(allowlisted, {
      token: await mcpToken(allowlisted, owner, ['profile:read'], { client: unlisted }),
    });
    const admitted = await postMcp(allowlisted, {
      token: await mcpToken(allowlisted, owner, ['profile:read'], { client: listed }),
    });

    expect(refused.status).toBe(403);
    expect(refused.json).not.toHaveProperty('result');
    expect(admitted.status).toBe(200);
    expect(admitted.json).toMatchObject({ result: { serverInfo: { name: 'pacer' } } });
  });
});

describe('PACER_MCP_ENABLED=false', () => {
  it('answers 404 on POST /mcp and on its protected-resource metadata', async () => {
    const owner = await makeUser(disabled.db);
    const answer = await postMcp(disabled, { token: await mcpToken(disabled, owner, ['profile:read']) });
    const metadata = await fetch(metadataUrlOf(disabled));

    expect(answer.status).toBe(404);
    expect(metadata.status).toBe(404);
    expect((await fetch(`${disabled.url}/.well-known/oauth-protected-resource`)).status).toBe(200);
  });
});

describe('HTTP methods', () => {
  it.each(['GET', 'DELETE'])('answers %s /mcp with 405, Allow: POST and a JSON-RPC error', async (method) => {
    const response = await fetch(`${server.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });

    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: expect.any(Number), message: expect.any(String) },
    });
  });
});

describe('DNS-rebinding guard (Host and Origin)', () => {
  it('refuses a foreign Origin with 403 before looking for a token', async () => {
    const answer = await postMcp(server, { headers: { origin: 'http://evil.example' } });

    expect(answer.status).toBe(403);
    expect(answer.headers.get('www-authenticate')).toBeNull();
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
  });

  it.each([
    { name: 'no Origin', origin: () => undefined },
    { name: "the base URL's origin", origin: () => new URL(server.url).origin },
    { name: 'an origin on PACER_MCP_ALLOWED_ORIGINS', origin: () => LISTED_ORIGIN },
  ])('accepts $name', async ({ origin }) => {
    const value = origin();
    const answer = await postMcp(server, {
      token: await mcpToken(server, athlete, ['profile:read']),
      headers: value === undefined ? {} : { origin: value },
    });

    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ result: { serverInfo: { name: 'pacer' } } });
  });

  it('lets a browser on an allowed origin read the answer (CORS) and preflights it', async () => {
    const answer = await postMcp(server, {
      token: await mcpToken(server, athlete, ['profile:read']),
      headers: { origin: LISTED_ORIGIN },
    });
    expect(answer.headers.get('access-control-allow-origin')).toBe(LISTED_ORIGIN);
    expect(answer.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');

    const preflight = await corsPreflight(`${server.url}/mcp`, {
      origin: LISTED_ORIGIN,
      method: 'POST',
      headers: 'authorization, content-type, mcp-protocol-version',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(LISTED_ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('Authorization');
    const foreign = await corsPreflight(`${server.url}/mcp`, { origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses a Host header naming another host with 403, before looking for a token', async () => {
    const port = new URL(server.url).port;
    const answer = await postWithHost(server, `rebound.example:${port}`);

    expect(answer.status).toBe(403);
  });

  it('accepts another loopback name in Host while the base URL is loopback', async () => {
    const port = new URL(server.url).port;
    const answer = await postWithHost(server, `localhost:${port}`, await mcpToken(server, athlete, ['profile:read']));

    expect(answer.status).toBe(200);
  });
});

describe('initialize', () => {
  it.each(['2025-11-25', '2025-06-18'])('negotiates protocol version %s', async (protocolVersion) => {
    const answer = await postMcp(server, {
      token: await mcpToken(server, athlete, ['profile:read']),
      body: initializeRequest(protocolVersion),
    });

    expect(answer.status).toBe(200);
    const result = answer.json?.['result'] as Record<string, unknown>;
    expect(result['protocolVersion']).toBe(protocolVersion);
    expect(result['capabilities']).toHaveProperty('tools');
    expect(result['serverInfo']).toMatchObject({ name: 'pacer' });
    expect(result['instructions']).toEqual(expect.any(String));
    expect(String(result['instructions']).length).toBeGreaterThan(0);
  });
});

describe('Accept and Content-Type', () => {
  let token: string;
  beforeAll(async () => {
    token = await mcpToken(server, athlete, ['profile:read']);
  });

  it.each([
    { accept: 'application/json, text/event-stream', answered: 'application/json' },
    { accept: 'text/event-stream, application/json', answered: 'text/event-stream' },
    { accept: 'application/json', answered: 'application/json' },
    { accept: 'application/json;q=0.5, text/event-stream', answered: 'text/event-stream' },
    // RFC 9110 §12.5.1: a media range covers the types it names.
    { accept: '*/*', answered: 'application/json' },
    { accept: 'text/*', answered: 'text/event-stream' },
  ])('answers Accept "$accept" with $answered', async ({ accept, answered }) => {
    const answer = await postMcp(server, { token, accept, body: TOOLS_LIST });

    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(new RegExp(`^${answered}`));
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', id: 2, result: { tools: expect.any(Array) } });
  });

  it('takes application/json with a charset parameter', async () => {
    const answer = await postMcp(server, { token, contentType: 'application/json; charset=utf-8', body: TOOLS_LIST });

    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ id: 2, result: { tools: expect.any(Array) } });
  });

  it('answers a notification with 202 and no body', async () => {
    const answer = await postMcp(server, { token, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });

    expect(answer.status).toBe(202);
    expect(answer.text).toBe('');
  });

  it('answers 406 to a client that accepts neither JSON nor SSE', async () => {
    const answer = await postMcp(server, { token, accept: 'text/html' });

    expect(answer.status).toBe(406);
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
  });

  it('answers 415 to a body that is not application/json', async () => {
    const answer = await postMcp(server, { token, contentType: 'text/plain' });

    expect(answer.status).toBe(415);
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
  });

  it('answers 413 to a body over 1 MiB', async () => {
    const answer = await postMcp(server, {
      token,
      body: toolsCall('remember_memory', { content: 'x'.repeat(1024 * 1024 + 1) }),
    });

    expect(answer.status).toBe(413);
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
  });

  it('answers 400 with JSON-RPC parse error -32700 to a body that is not JSON', async () => {
    const answer = await postMcp(server, { token, rawBody: '{"jsonrpc": "2.0", "id": 1, "method": ' });

    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });
});

describe('POST /mcp/ (trailing slash)', () => {
  it('is the same endpoint as /mcp', async () => {
    const unauthenticated = await postMcp(server, { path: '/mcp/' });
    const initialized = await postMcp(server, {
      path: '/mcp/',
      token: await mcpToken(server, athlete, ['profile:read']),
    });

    expect(unauthenticated.status).toBe(401);
    expect(bearerChallenge(unauthenticated.headers)['resource_metadata']).toBe(metadataUrlOf(server));
    expect(initialized.status).toBe(200);
    expect(initialized.json).toMatchObject({ result: { protocolVersion: '2025-11-25' } });
  });
});

describe('scope step-up (insufficient_scope)', () => {
  it('refuses a tool whose scope the token lacks with 403, asking for its scopes plus the missing one', async () => {
    const token = await mcpToken(server, athlete, ['health:read', 'profile:read']);
    const answer = await postMcp(server, {
      token,
      body: toolsCall('log_wellness', { date: '2026-11-20', hrv: 55 }),
    });

    expect(answer.status).toBe(403);
    const challenge = bearerChallenge(answer.headers);
    expect(challenge).toMatchObject({ error: 'insufficient_scope', resource_metadata: metadataUrlOf(server) });
    expect((challenge['scope'] ?? '').split(' ').sort()).toEqual(['health:read', 'health:write', 'profile:read']);
    expect(answer.json).toMatchObject({ error: 'insufficient_scope' });
  });

  it('asks for nutrition:read for a WEEKLY_NUTRITION report', async () => {
    const token = await mcpToken(server, athlete, ['analysis:read']);
    const answer = await postMcp(server, {
      token,
      body: toolsCall('generate_report', { type: 'WEEKLY_NUTRITION' }),
    });

    expect(answer.status).toBe(403);
    const challenge = bearerChallenge(answer.headers);
    expect(challenge['error']).toBe('insufficient_scope');
    expect((challenge['scope'] ?? '').split(' ')).toEqual(expect.arrayContaining(['analysis:read', 'nutrition:read']));
  });

  it('lets a tool the token holds the scope for through', async () => {
    const token = await mcpToken(server, athlete, ['health:read']);
    const answer = await postMcp(server, { token, body: toolsCall('get_wellness', {}) });

    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ result: { structuredContent: { items: expect.any(Array) } } });
  });
});

describe('revocation', () => {
  it('refuses the next call with 401 once the grant is revoked at /api/oauth/revoke', async () => {
    const app = await registerClient(server.db, athlete);
    const { token } = await mintToken(server.db, athlete, {
      scopes: ['profile:read'],
      resource: server.config.mcpResource,
      client: app.client,
    });
    const before = await postMcp(server, { token, body: toolsCall('get_current_time') });

    const revoked = await revokeToken(server.url, app, token);
    const after = await postMcp(server, { token, body: toolsCall('get_current_time') });

    expect(before.status).toBe(200);
    expect(revoked.status).toBe(200);
    expect(after.status).toBe(401);
    expect(bearerChallenge(after.headers)['error']).toBe('invalid_token');
  });
});

describe('refusals are recorded in mcp_auth_failures', () => {
  async function failureCounts(target: TestServer): Promise<Map<string, number>> {
    const rows = await target.db
      .selectFrom('mcpAuthFailures')
      .select(['reason', (eb) => eb.fn.sum<string>('count').as('count')])
      .groupBy('reason')
      .execute();
    return new Map(rows.map((row) => [row.reason, Number(row.count)]));
  }

  it('records each refusal with its reason', async () => {
    const owner = await makeUser(allowlisted.db);
    const unlisted = await insertAppClient(allowlisted, owner, `unlisted-${randomBytes(3).toString('hex')}`);
    const refusals: readonly {
      readonly reason: string;
      readonly target: TestServer;
      readonly send: () => Promise<McpAnswer>;
    }[] = [
      { reason: 'missing_token', target: server, send: () => postMcp(server) },
      { reason: 'invalid_token', target: server, send: () => postMcp(server, { token: 'pat_not-a-real-token' }) },
      {
        reason: 'expired',
        target: server,
        send: async () =>
          postMcp(server, { token: await mcpToken(server, athlete, ['profile:read'], { expiresInSecs: -60 }) }),
      },
      {
        reason: 'wrong_resource',
        target: server,
        send: async () =>
          postMcp(server, { token: (await mintToken(server.db, athlete, { scopes: ['profile:read'] })).token }),
      },
      {
        reason: 'insufficient_scope',
        target: server,
        send: async () =>
          postMcp(server, {
            token: await mcpToken(server, athlete, ['health:read']),
            body: toolsCall('log_wellness', { date: '2026-11-20', hrv: 55 }),
          }),
      },
      {
        reason: 'client_not_allowed',
        target: allowlisted,
        send: async () =>
          postMcp(allowlisted, { token: await mcpToken(allowlisted, owner, ['profile:read'], { client: unlisted }) }),
      },
    ];
    const before = new Map(
      await Promise.all(refusals.map(async ({ target }) => [target, await failureCounts(target)] as const)),
    );

    for (const refusal of refusals) expect([401, 403]).toContain((await refusal.send()).status);

    // Written off the request path: wait for the rows rather than for a fixed time.
    await vi.waitFor(
      async () => {
        for (const { reason, target } of refusals) {
          const now = await failureCounts(target);
          expect(now.get(reason) ?? 0, reason).toBeGreaterThanOrEqual((before.get(target)?.get(reason) ?? 0) + 1);
        }
      },
      { timeout: 5_000, interval: 25 },
    );
  });
});

/**
 * RFC 8707 (resource indicators) with the specification's §5.4 MCP rules:
 * §2 `resource` on the authorization request: absolute, no fragment, one of {base} or {base}/mcp,
 *    else `invalid_target`; MCP requests only with allowlisted scopes and clients (PACER_MCP_CLIENT_ALLOWLIST),
 * §2.2 `resource` on the token request must match the grant,
 * one trailing slash in `resource` names the same resource (`{base}/mcp/` is `{base}/mcp`), on the
 *    authorization request, the code exchange and the refresh, and the token is bound to the form without it,
 * audience: an MCP-bound token is refused on REST; MCP grants get a rotating refresh token like every grant,
 *    with or without offline_access, and reuse of a rotated one revokes the grant chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { sha256Hex } from '../../server/src/lib/crypto.ts';
import { call } from '../support/http.ts';
import { startOAuthFixture } from '../support/oauth-fixture.ts';
import {
  authorizationRequest,
  authorizeAs,
  exchangeCode,
  issueCode,
  refreshTokens,
  registerClient,
  runCodeFlow,
  type CookieJar,
  type TestClient,
} from '../support/oauth-flow.ts';
import type { TestServer } from '../support/test-server.ts';

let server: TestServer;
let user: User;
let jar: CookieJar;
let app: TestClient;

beforeAll(async () => {
  ({ server, user, jar, app } = await startOAuthFixture({
    client: { isPublic: true, redirectUri: 'http://127.0.0.1:33418/cb' },
  }));
});
afterAll(async () => {
  await server.stop();
});

const authorizeWith = (resource: string | undefined, scope = 'health:read', client: TestClient = app) =>
  authorizeAs(jar, authorizationRequest(server.url, client, { scope, state: 'r', resource }), 'stop');

describe('resource on the authorization request', () => {
  it.each([
    ['a relative URI', () => '/mcp'],
    ['a fragment', () => `${server.config.mcpResource}#x`],
    ['another server', () => 'https://elsewhere.example/mcp'],
    ['another path', () => `${server.config.mcpResource}x`],
    ['another path with a trailing slash', () => `${server.config.mcpResource}x/`],
    ['two trailing slashes', () => `${server.config.mcpResource}//`],
  ])('refuses %s with invalid_target', async (_label, resource) => {
    const result = await authorizeWith(resource());
    expect(result.location?.searchParams.get('error')).toBe('invalid_target');
  });

  it('refuses two resources at once', async () => {
    const single = authorizationRequest(server.url, app, { resource: server.config.baseUrl });
    const url = `${single}&resource=${encodeURIComponent(server.config.mcpResource)}`;
    const result = await authorizeAs(jar, url, 'stop');
    expect(result.location?.searchParams.get('error')).toBe('invalid_request');
  });

  it('ignores the port of a loopback redirect URI (RFC 8252 §7.3)', async () => {
    const result = await authorizeAs(
      jar,
      authorizationRequest(server.url, app, { redirect_uri: 'http://127.0.0.1:50123/cb' }),
      'stop',
    );
    expect(result.status).toBe(200);
  });
});

const refreshWith = (refreshToken: string, resource: string | undefined) =>
  refreshTokens(server.url, app, refreshToken, { resource });

/** The stored resource of the access token, and the grant it belongs to. */
const storedAccessToken = (accessToken: unknown) =>
  server.db
    .selectFrom('oauthAccessTokens')
    .select(['resource', 'grantId', 'revokedAt'])
    .where('tokenHash', '=', sha256Hex(String(accessToken)))
    .executeTakeFirstOrThrow();

describe('MCP tokens', () => {
  it('are bound to {base}/mcp and refused on REST', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, {
      scope: 'health:read',
      resource: server.config.mcpResource,
    });
    expect(tokens.status).toBe(200);
    const rest = await call(server.url, 'GET', '/api/wellness', { token: String(tokens.body['access_token']) });
    expect(rest.status).toBe(401);
    expect((await storedAccessToken(tokens.body['access_token'])).resource).toBe(server.config.mcpResource);
  });

  it('get a rotating refresh token without offline_access, and reuse of a rotated one revokes the grant chain', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, {
      scope: 'health:read',
      resource: server.config.mcpResource,
    });
    expect(tokens.body['scope']).toBe('health:read');
    const original = String(tokens.body['refresh_token']);
    expect(original).toMatch(/^prt_/);
    expect(tokens.body['refresh_token_expires_in']).toEqual(expect.any(Number));

    const rotated = await refreshWith(original, server.config.mcpResource);
    expect(rotated.status).toBe(200);
    expect(rotated.body['scope']).toBe('health:read');
    const next = String(rotated.body['refresh_token']);
    expect(next).toMatch(/^prt_/);
    expect(next).not.toBe(original);
    const latest = await storedAccessToken(rotated.body['access_token']);
    expect(latest).toMatchObject({ resource: server.config.mcpResource, revokedAt: null });

    // The rotated token comes back: it leaked, so the whole grant dies.
    const reuse = await refreshWith(original, server.config.mcpResource);
    expect(reuse.status).toBe(400);
    expect(reuse.body['error']).toBe('invalid_grant');
    const grant = await server.db
      .selectFrom('oauthGrants')
      .select('revokedAt')
      .where('id', '=', latest.grantId)
      .executeTakeFirstOrThrow();
    expect(grant.revokedAt).not.toBeNull();
    const liveAccessTokens = await server.db
      .selectFrom('oauthAccessTokens')
      .select('id')
      .where('grantId', '=', latest.grantId)
      .where('revokedAt', 'is', null)
      .execute();
    expect(liveAccessTokens).toEqual([]);
    expect((await refreshWith(next, server.config.mcpResource)).body['error']).toBe('invalid_grant');
  });

  it('with offline_access (still a valid scope) get the same rotating refresh token; the refresh must name the same resource', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, {
      scope: 'health:read offline_access',
      resource: server.config.mcpResource,
    });
    expect(tokens.body['scope']).toBe('health:read offline_access');
    const refreshToken = String(tokens.body['refresh_token']);
    expect(refreshToken).toMatch(/^prt_/);
    const wrong = await refreshWith(refreshToken, server.config.baseUrl);
    expect(wrong.status).toBe(400);
    expect(wrong.body['error']).toBe('invalid_target');
    const right = await refreshWith(refreshToken, server.config.mcpResource);
    expect(right.status).toBe(200);
    expect(right.body['refresh_token']).not.toBe(refreshToken);
  });

  it('the code exchange must name the resource of the authorization request', async () => {
    const { code, verifier } = await issueCode(server.url, jar, app, {
      scope: 'health:read',
      resource: server.config.mcpResource,
    });
    const res = await exchangeCode(server.url, app, { code, verifier }, { resource: server.config.baseUrl });
    expect(res.body['error']).toBe('invalid_target');
  });

  it('a REST consent does not count for MCP: the consent page is shown again', async () => {
    const fresh = await registerClient(server.db, user, { redirectUri: 'https://fresh.example.test/cb' });
    await runCodeFlow(server.url, jar, fresh, { scope: 'health:read' });
    const again = await authorizeWith(undefined, 'health:read', fresh);
    expect(again.status).toBe(303);
    const mcp = await authorizeWith(server.config.mcpResource, 'health:read', fresh);
    expect(mcp.status).toBe(200);
  });
});

describe('a trailing slash in resource (some MCP hosts send one)', () => {
  const withSlash = () => `${server.config.mcpResource}/`;

  const exchange = (code: string, verifier: string, resource: string) =>
    exchangeCode(server.url, app, { code, verifier }, { resource });

  it('{base}/mcp/ is {base}/mcp: the code exchange and the refresh with the slash succeed, and the tokens are bound to {base}/mcp', async () => {
    const { code, verifier } = await issueCode(server.url, jar, app, { scope: 'health:read', resource: withSlash() });
    const tokens = await exchange(code, verifier, withSlash());
    expect(tokens.status).toBe(200);
    const first = await storedAccessToken(tokens.body['access_token']);
    expect(first.resource).toBe(server.config.mcpResource);
    const grant = await server.db
      .selectFrom('oauthGrants')
      .select('resource')
      .where('id', '=', first.grantId)
      .executeTakeFirstOrThrow();
    expect(grant.resource).toBe(server.config.mcpResource);

    const refreshed = await refreshWith(String(tokens.body['refresh_token']), withSlash());
    expect(refreshed.status).toBe(200);
    expect((await storedAccessToken(refreshed.body['access_token'])).resource).toBe(server.config.mcpResource);
    // And the form without the slash names the same grant.
    const again = await refreshWith(String(refreshed.body['refresh_token']), server.config.mcpResource);
    expect(again.status).toBe(200);
  });

  it('a code requested with {base}/mcp/ is exchanged with {base}/mcp, and the other way round', async () => {
    const slashed = await issueCode(server.url, jar, app, { scope: 'health:read', resource: withSlash() });
    const plainExchange = await exchange(slashed.code, slashed.verifier, server.config.mcpResource);
    expect(plainExchange.status).toBe(200);
    expect((await storedAccessToken(plainExchange.body['access_token'])).resource).toBe(server.config.mcpResource);

    const plain = await issueCode(server.url, jar, app, { scope: 'health:read', resource: server.config.mcpResource });
    const slashedExchange = await exchange(plain.code, plain.verifier, withSlash());
    expect(slashedExchange.status).toBe(200);
    expect((await storedAccessToken(slashedExchange.body['access_token'])).resource).toBe(server.config.mcpResource);
  });

  it('another path is still invalid_target at the code exchange and the refresh, slash or not', async () => {
    const { code, verifier } = await issueCode(server.url, jar, app, { scope: 'health:read', resource: withSlash() });
    const exchanged = await exchange(code, verifier, `${server.config.mcpResource}x`);
    expect(exchanged.status).toBe(400);
    expect(exchanged.body['error']).toBe('invalid_target');

    const { tokens } = await runCodeFlow(server.url, jar, app, {
      scope: 'health:read',
      resource: server.config.mcpResource,
    });
    const refreshToken = String(tokens.body['refresh_token']);
    for (const resource of [`${server.config.mcpResource}x/`, `${server.config.mcpResource}//`]) {
      const refused = await refreshWith(refreshToken, resource);
      expect(refused.status).toBe(400);
      expect(refused.body['error']).toBe('invalid_target');
    }
    // A refused resource does not burn the refresh token.
    expect((await refreshWith(refreshToken, withSlash())).status).toBe(200);
  });

  it('{base}/ is the REST resource: the token is bound to {base} and works on REST', async () => {
    const restWithSlash = `${server.config.baseUrl}/`;
    const { tokens } = await runCodeFlow(server.url, jar, app, { scope: 'health:read', resource: restWithSlash });
    expect(tokens.status).toBe(200);
    expect((await storedAccessToken(tokens.body['access_token'])).resource).toBe(server.config.baseUrl);
    const rest = await call(server.url, 'GET', '/api/wellness', { token: String(tokens.body['access_token']) });
    expect(rest.status).toBe(200);
    const refreshed = await refreshWith(String(tokens.body['refresh_token']), restWithSlash);
    expect(refreshed.status).toBe(200);
  });
});

describe('PACER_MCP_CLIENT_ALLOWLIST', () => {
  it('refuses MCP authorization for clients not on the list, and allows REST for them', async () => {
    const env = { PACER_MCP_CLIENT_ALLOWLIST: 'pc_someone_else' };
    const { server: listed, jar: listedJar, app: client } = await startOAuthFixture({ env });
    try {
      const request = (resource: string | undefined) =>
        authorizeAs(listedJar, authorizationRequest(listed.url, client, { resource }), 'stop');
      expect((await request(listed.config.mcpResource)).location?.searchParams.get('error')).toBe(
        'unauthorized_client',
      );
      expect((await request(undefined)).status).toBe(200);
    } finally {
      await listed.stop();
    }
  });
});

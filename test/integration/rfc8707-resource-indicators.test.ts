/**
 * RFC 8707 (resource indicators) with the specification's §5.4 MCP rules:
 * §2 `resource` on the authorization request: absolute, no fragment, one of {base} or {base}/mcp,
 *    else `invalid_target`; MCP requests only with allowlisted scopes and clients (PACER_MCP_CLIENT_ALLOWLIST),
 * §2.2 `resource` on the token request must match the grant,
 * audience: an MCP-bound token is refused on REST; MCP tokens get a refresh token only with offline_access.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { makeUser } from '../support/factories.ts';
import { call } from '../support/http.ts';
import {
  authorizeAs,
  authorizeUrl,
  issueCode,
  pkcePair,
  registerClient,
  runCodeFlow,
  signIn,
  tokenRequest,
  type CookieJar,
  type TestClient,
} from '../support/oauth-flow.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
let user: User;
let jar: CookieJar;
let app: TestClient;

beforeAll(async () => {
  server = await startTestServer();
  user = await makeUser(server.db);
  jar = await signIn(server.url, user.email);
  app = await registerClient(server.db, user, { isPublic: true, redirectUri: 'http://127.0.0.1:33418/cb' });
});
afterAll(async () => {
  await server.stop();
});

const authorizeWith = (resource: string | undefined, scope = 'health:read', client: TestClient = app) =>
  authorizeAs(
    jar,
    authorizeUrl(server.url, {
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      scope,
      state: 'r',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      resource,
    }),
    'stop',
  );

describe('resource on the authorization request', () => {
  it.each([
    ['a relative URI', () => '/mcp'],
    ['a fragment', () => `${server.config.mcpResource}#x`],
    ['another server', () => 'https://elsewhere.example/mcp'],
  ])('refuses %s with invalid_target', async (_label, resource) => {
    const result = await authorizeWith(resource());
    expect(result.location?.searchParams.get('error')).toBe('invalid_target');
  });

  it('refuses two resources at once', async () => {
    const url = `${authorizeUrl(server.url, {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: app.redirectUri,
      scope: 'health:read',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      resource: server.config.baseUrl,
    })}&resource=${encodeURIComponent(server.config.mcpResource)}`;
    const result = await authorizeAs(jar, url, 'stop');
    expect(result.location?.searchParams.get('error')).toBe('invalid_request');
  });

  it('ignores the port of a loopback redirect URI (RFC 8252 §7.3)', async () => {
    const result = await authorizeAs(
      jar,
      authorizeUrl(server.url, {
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: 'http://127.0.0.1:50123/cb',
        scope: 'health:read',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      }),
      'stop',
    );
    expect(result.status).toBe(200);
  });
});

describe('MCP tokens', () => {
  it('are bound to {base}/mcp, refused on REST, and get no refresh token without offline_access', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, {
      scope: 'health:read',
      resource: server.config.mcpResource,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body['refresh_token']).toBeUndefined();
    const rest = await call(server.url, 'GET', '/api/wellness', { token: String(tokens.body['access_token']) });
    expect(rest.status).toBe(401);
    const introspected = await server.db
      .selectFrom('oauthAccessTokens')
      .select('resource')
      .orderBy('createdAt', 'desc')
      .executeTakeFirstOrThrow();
    expect(introspected.resource).toBe(server.config.mcpResource);
  });

  it('get a rotating refresh token with offline_access; the refresh must name the same resource', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, {
      scope: 'health:read offline_access',
      resource: server.config.mcpResource,
    });
    const refreshToken = String(tokens.body['refresh_token']);
    expect(refreshToken).toMatch(/^prt_/);
    const wrong = await tokenRequest(server.url, {
      grant_type: 'refresh_token',
      client_id: app.clientId,
      refresh_token: refreshToken,
      resource: server.config.baseUrl,
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body['error']).toBe('invalid_target');
    const right = await tokenRequest(server.url, {
      grant_type: 'refresh_token',
      client_id: app.clientId,
      refresh_token: refreshToken,
      resource: server.config.mcpResource,
    });
    expect(right.status).toBe(200);
    expect(right.body['refresh_token']).not.toBe(refreshToken);
  });

  it('the code exchange must name the resource of the authorization request', async () => {
    const { code, verifier } = await issueCode(server.url, jar, app, {
      scope: 'health:read',
      resource: server.config.mcpResource,
    });
    const res = await tokenRequest(server.url, {
      grant_type: 'authorization_code',
      client_id: app.clientId,
      code: code,
      redirect_uri: app.redirectUri,
      code_verifier: verifier,
      resource: server.config.baseUrl,
    });
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

describe('PACER_MCP_CLIENT_ALLOWLIST', () => {
  it('refuses MCP authorization for clients not on the list, and allows REST for them', async () => {
    const listed = await startTestServer({ PACER_MCP_CLIENT_ALLOWLIST: 'pc_someone_else' });
    try {
      const owner = await makeUser(listed.db);
      const listedJar = await signIn(listed.url, owner.email);
      const client = await registerClient(listed.db, owner);
      const request = (resource: string | undefined) =>
        authorizeAs(
          listedJar,
          authorizeUrl(listed.url, {
            response_type: 'code',
            client_id: client.clientId,
            redirect_uri: client.redirectUri,
            scope: 'health:read',
            code_challenge: pkcePair().challenge,
            code_challenge_method: 'S256',
            resource,
          }),
          'stop',
        );
      expect((await request(listed.config.mcpResource)).location?.searchParams.get('error')).toBe(
        'unauthorized_client',
      );
      expect((await request(undefined)).status).toBe(200);
    } finally {
      await listed.stop();
    }
  });
});

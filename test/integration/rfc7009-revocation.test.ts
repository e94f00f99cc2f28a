/**
 * RFC 7009 (token revocation):
 * §2.1 the request (token, token_type_hint; client authentication, public clients by client_id),
 * §2.2 200 for every valid request, also for unknown tokens; revoking either token of a grant
 *      revokes the grant chain (docs/design.md §3); a client cannot revoke another client's token,
 * §2.2.1 errors (invalid_client 401, invalid_request).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.ts';
import { startOAuthFixture } from '../support/oauth-fixture.ts';
import {
  refreshTokens,
  registerClient,
  revokeToken,
  runCodeFlow,
  type CookieJar,
  type TestClient,
} from '../support/oauth-flow.ts';
import type { TestServer } from '../support/test-server.ts';

let server: TestServer;
let jar: CookieJar;
let app: TestClient;
let other: TestClient;

beforeAll(async () => {
  const fixture = await startOAuthFixture();
  ({ server, jar, app } = fixture);
  other = await registerClient(server.db, fixture.user, { redirectUri: 'https://other.example.test/cb' });
});
afterAll(async () => {
  await server.stop();
});

const revoke = (client: TestClient, token: string, extra: Record<string, string> = {}) =>
  revokeToken(server.url, client, token, extra);
const alive = async (accessToken: string) =>
  (await call(server.url, 'GET', '/api/wellness', { token: accessToken })).status === 200;

describe('revocation', () => {
  it('revoking the access token kills the refresh token too', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, { scope: 'health:read' });
    const res = await revoke(app, String(tokens.body['access_token']), { token_type_hint: 'access_token' });
    expect(res.status).toBe(200);
    expect(await alive(String(tokens.body['access_token']))).toBe(false);
    const refreshed = await refreshTokens(server.url, app, String(tokens.body['refresh_token']));
    expect(refreshed.body['error']).toBe('invalid_grant');
  });

  it('revoking the refresh token kills the access tokens of the grant', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, { scope: 'health:read' });
    expect(await alive(String(tokens.body['access_token']))).toBe(true);
    expect((await revoke(app, String(tokens.body['refresh_token']))).status).toBe(200);
    expect(await alive(String(tokens.body['access_token']))).toBe(false);
  });

  it('answers 200 for an unknown token', async () => {
    expect((await revoke(app, 'pat_unknown')).status).toBe(200);
  });

  it("answers 200 but changes nothing for another client's token", async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, { scope: 'health:read' });
    expect((await revoke(other, String(tokens.body['access_token']))).status).toBe(200);
    expect(await alive(String(tokens.body['access_token']))).toBe(true);
  });

  it('requires client authentication (401 invalid_client) and a token (400)', async () => {
    const unauthenticated = await revokeToken(server.url, app, 'x', { client_secret: 'wrong' });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body['error']).toBe('invalid_client');
    expect(unauthenticated.headers.get('www-authenticate')).toMatch(/^Basic/);
    const missing = await revokeToken(server.url, app, undefined);
    expect(missing.status).toBe(400);
    expect(missing.body['error']).toBe('invalid_request');
  });

  it('lets a public client revoke its own token with client_id alone', async () => {
    const phone = await registerClient(
      server.db,
      await server.db.selectFrom('users').selectAll().executeTakeFirstOrThrow(),
      {
        isPublic: true,
        redirectUri: 'http://localhost/cb',
      },
    );
    const { tokens } = await runCodeFlow(server.url, jar, phone, { scope: 'health:read' });
    const res = await revokeToken(server.url, phone, String(tokens.body['refresh_token']));
    expect(res.status).toBe(200);
    expect(await alive(String(tokens.body['access_token']))).toBe(false);
  });
});

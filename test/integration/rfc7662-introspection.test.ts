/**
 * RFC 7662 (token introspection):
 * §2.1 the request, authenticated by a confidential client (public clients are refused),
 * §2.2 the response: active tokens with scope, client_id, sub, exp, iat, iss, aud, token_type;
 *      `{active: false}` only for dead tokens (unknown, expired, revoked, rotated).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { startOAuthFixture } from '../support/oauth-fixture.ts';
import {
  clientRequest,
  refreshTokens,
  registerClient,
  revokeToken,
  runCodeFlow,
  type CookieJar,
  type RequestingClient,
  type TestClient,
} from '../support/oauth-flow.ts';
import type { TestServer } from '../support/test-server.ts';

let server: TestServer;
let user: User;
let jar: CookieJar;
let app: TestClient;

beforeAll(async () => {
  ({ server, user, jar, app } = await startOAuthFixture());
});
afterAll(async () => {
  await server.stop();
});

const INTROSPECT = { form: true, path: '/api/oauth/introspect' } as const;
const introspect = (token: string, client: RequestingClient = app) =>
  clientRequest(server.url, client, { token }, { ...INTROSPECT, clientAuth: 'basic' });

describe('introspection', () => {
  it('describes a live access token and a live refresh token', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, { scope: 'health:read health:write' });
    const access = await introspect(String(tokens.body['access_token']));
    expect(access.status).toBe(200);
    expect(access.headers.get('cache-control')).toBe('no-store');
    expect(access.body).toEqual({
      active: true,
      scope: 'health:read health:write',
      client_id: app.clientId,
      sub: user.id,
      token_type: 'Bearer',
      exp: expect.any(Number),
      iat: expect.any(Number),
      iss: server.config.baseUrl,
      aud: server.config.baseUrl,
    });
    expect(Number(access.body['exp']) - Number(access.body['iat'])).toBeGreaterThanOrEqual(3599);
    const refresh = await introspect(String(tokens.body['refresh_token']));
    expect(refresh.body).toMatchObject({ active: true, token_type: 'refresh_token' });
  });

  it('answers only {active:false} for unknown, expired, revoked and rotated tokens', async () => {
    expect((await introspect('pat_unknown')).body).toEqual({ active: false });
    const { tokens } = await runCodeFlow(server.url, jar, app, { scope: 'health:read' });
    const rotated = await refreshTokens(server.url, app, String(tokens.body['refresh_token']));
    expect((await introspect(String(tokens.body['refresh_token']))).body).toEqual({ active: false });
    await server.db
      .updateTable('oauthAccessTokens')
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .execute();
    expect((await introspect(String(rotated.body['access_token']))).body).toEqual({ active: false });
    await revokeToken(server.url, app, String(rotated.body['refresh_token']));
    expect((await introspect(String(rotated.body['refresh_token']))).body).toEqual({ active: false });
  });

  it('requires an authenticated confidential client', async () => {
    const phone = await registerClient(server.db, user, { isPublic: true, redirectUri: 'http://localhost/cb' });
    const res = await clientRequest(server.url, phone, { token: 'x' }, INTROSPECT);
    expect(res.status).toBe(401);
    expect(res.body['error']).toBe('invalid_client');
    const wrong = await introspect('x', { clientId: app.clientId, clientSecret: 'nope' });
    expect(wrong.status).toBe(401);
  });
});

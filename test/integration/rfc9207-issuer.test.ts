/**
 * RFC 9207 (authorization server issuer identification):
 * §2 / §2.4 every authorization response, success or error, carries `iss`, exactly the issuer (the base URL),
 * with OpenID-style `prompt=none` (`login_required`, `consent_required`) as error responses that also carry it.
 * Also `/api/oauth/userinfo`: `sub`, and e-mail and name only with profile:read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { startOAuthFixture } from '../support/oauth-fixture.ts';
import {
  authorizationRequest,
  authorizeAs,
  CookieJar,
  signIn,
  type AuthorizeQuery,
  type TestClient,
} from '../support/oauth-flow.ts';
import type { TestServer } from '../support/test-server.ts';

let server: TestServer;
let user: User;
let jar: CookieJar;
let app: TestClient;

beforeAll(async () => {
  ({ server, user, jar, app } = await startOAuthFixture({ user: { name: 'Iss Tester' } }));
});
afterAll(async () => {
  await server.stop();
});

const url = (override: AuthorizeQuery = {}) =>
  authorizationRequest(server.url, app, { scope: 'profile:read', state: 'st', ...override });

describe('iss on authorization responses', () => {
  it('is on the code response and on error responses, equal to the discovery issuer', async () => {
    const ok = await authorizeAs(jar, url());
    const failed = await authorizeAs(jar, url({ scope: 'nope:nope' }), 'stop');
    for (const result of [ok, failed]) expect(result.location?.searchParams.get('iss')).toBe(server.config.baseUrl);
    expect(server.config.baseUrl.endsWith('/')).toBe(false);
  });

  it('prompt=none answers login_required when signed out and consent_required when consent is missing', async () => {
    const signedOut = await authorizeAs(new CookieJar(), url({ prompt: 'none' }), 'stop');
    expect(signedOut.location?.searchParams.get('error')).toBe('login_required');
    expect(signedOut.location?.searchParams.get('iss')).toBe(server.config.baseUrl);
    const stranger = await makeUser(server.db);
    const strangerJar = await signIn(server.url, stranger.email);
    const noConsent = await authorizeAs(strangerJar, url({ prompt: 'none', scope: 'health:write' }), 'stop');
    expect(noConsent.location?.searchParams.get('error')).toBe('consent_required');
    expect(noConsent.location?.searchParams.get('state')).toBe('st');
  });
});

describe('userinfo', () => {
  it('answers sub alone without profile:read, and e-mail and name with it', async () => {
    const plain = await mintToken(server.db, user, { scopes: ['health:read'] });
    expect((await call(server.url, 'GET', '/api/oauth/userinfo', { token: plain.token })).body).toEqual({
      sub: user.id,
    });
    const profile = await mintToken(server.db, user, { scopes: ['profile:read'] });
    expect((await call(server.url, 'GET', '/api/oauth/userinfo', { token: profile.token })).body).toEqual({
      sub: user.id,
      email: user.email,
      name: 'Iss Tester',
    });
  });

  it('refuses a missing or dead token with 401 and a challenge', async () => {
    const none = await call(server.url, 'GET', '/api/oauth/userinfo');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('resource_metadata=');
    const dead = await call(server.url, 'GET', '/api/oauth/userinfo', { token: 'pat_dead' });
    expect(dead.status).toBe(401);
    expect(dead.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});

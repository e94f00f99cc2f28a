/**
 * RFC 6749 (OAuth 2.0), as Pacer applies it (docs/design.md §3):
 * §3.1 / §3.1.2.3 / §4.1.1 authorization request (client, exact redirect URI, response_type, scope),
 * §4.1.2 / §4.1.2.1 authorization response and error redirects (with RFC 9207 `iss`),
 * §2.3.1 / §3.2.1 client authentication (client_secret_basic, client_secret_post, none),
 * §4.1.3 / §5.1 / §5.2 code exchange, token response and errors, single use and replay,
 * §6 refresh with rotation, reuse detection, narrowing scope, concurrent refreshes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { makeUser } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { startOAuthFixture } from '../support/oauth-fixture.ts';
import {
  authorizationRequest,
  authorizeAs,
  clientRequest,
  exchangeCode,
  issueCode,
  pkcePair,
  refreshTokens,
  registerClient,
  runCodeFlow,
  signIn,
  type CookieJar,
  type TestClient,
} from '../support/oauth-flow.ts';
import type { TestServer } from '../support/test-server.ts';

let server: TestServer;
let athlete: User;
let jar: CookieJar;
let app: TestClient;

beforeAll(async () => {
  ({ server, user: athlete, jar, app } = await startOAuthFixture({ env: { PACER_REFRESH_TOKEN_TTL: '86400' } }));
});
afterAll(async () => {
  await server.stop();
});

describe('authorization request (§4.1.1)', () => {
  it('sends a signed-out user to /login and back to the same request', async () => {
    const url = authorizationRequest(server.url, app, { state: 'abc' });
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location') ?? '', server.url);
    expect(location.pathname).toBe('/login');
    expect(location.searchParams.get('next')).toBe(url.slice(server.url.length));
  });

  it('shows a consent page naming the app, the redirect host and each scope in plain words', async () => {
    const result = await authorizeAs(
      jar,
      authorizationRequest(server.url, app, { scope: 'health:read nutrition:write', state: 'abc', prompt: 'consent' }),
      'stop',
    );
    expect(result.status).toBe(200);
    expect(result.body).toContain('Strict client');
    expect(result.body).toContain('client.example.test');
    expect(result.body).toContain('Read your daily wellness metrics');
    expect(result.body).toContain('Log calories, macros and meal items');
    const raw = await fetch(authorizationRequest(server.url, app, { prompt: 'consent' }), {
      headers: { cookie: jar.header() },
      redirect: 'manual',
    });
    expect(raw.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(raw.headers.get('cache-control')).toBe('no-store');
    expect(await raw.text()).toContain('name="_csrf"');
  });

  it('refuses a consent POST without the CSRF token', async () => {
    const { challenge } = pkcePair();
    const res = await fetch(`${server.url}/api/oauth/authorize`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: `pacer_session=${jar.get('pacer_session') ?? ''}`,
      },
      body: new URLSearchParams({
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: app.redirectUri,
        scope: 'health:read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        decision: 'approve',
      }),
      redirect: 'manual',
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('location')).toBeNull();
  });

  it('approves with a code, the state and iss; denies with access_denied, the state and iss', async () => {
    const request = authorizationRequest(server.url, app, { scope: 'profile:read', state: 'xyz 1', prompt: 'consent' });
    const approved = await authorizeAs(jar, request, 'approve');
    expect(approved.status).toBe(303);
    expect(approved.location?.origin + (approved.location?.pathname ?? '')).toBe(app.redirectUri);
    expect(approved.location?.searchParams.get('code')).toMatch(/^pac_/);
    expect(approved.location?.searchParams.get('state')).toBe('xyz 1');
    expect(approved.location?.searchParams.get('iss')).toBe(server.config.baseUrl);
    const denied = await authorizeAs(jar, request, 'deny');
    expect(denied.location?.searchParams.get('error')).toBe('access_denied');
    expect(denied.location?.searchParams.get('state')).toBe('xyz 1');
    expect(denied.location?.searchParams.get('iss')).toBe(server.config.baseUrl);
    expect(denied.location?.searchParams.get('code')).toBeNull();
  });

  it('remembers consent: the same scopes skip the page; a new scope shows it again', async () => {
    const other = await makeUser(server.db);
    const otherJar = await signIn(server.url, other.email);
    const request = (scope: string) => authorizationRequest(server.url, app, { scope, state: 's' });
    expect((await authorizeAs(otherJar, request('health:read'), 'stop')).status).toBe(200);
    await authorizeAs(otherJar, request('health:read'), 'approve');
    const again = await authorizeAs(otherJar, request('health:read'), 'stop');
    expect(again.status).toBe(303);
    expect(again.location?.searchParams.get('code')).toBeTruthy();
    expect((await authorizeAs(otherJar, request('health:read health:write'), 'stop')).status).toBe(200);
  });

  it.each([
    ['an unknown client_id', { client_id: 'pc_nope' }],
    ['a redirect_uri that was not registered', { redirect_uri: 'https://evil.example/cb' }],
    ['a redirect_uri that differs by a trailing slash', { redirect_uri: 'https://client.example.test/callback/' }],
  ])('renders a 400 page and never redirects for %s', async (_label, override) => {
    const res = await fetch(authorizationRequest(server.url, app, override), {
      headers: { cookie: jar.header() },
      redirect: 'manual',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('not valid');
  });

  it.each([
    ['unsupported_response_type', { response_type: 'token' }],
    ['invalid_scope', { scope: 'health:read everything' }],
    ['invalid_scope', { scope: '' }],
  ])('redirects with %s', async (error, override) => {
    const result = await authorizeAs(
      jar,
      authorizationRequest(server.url, app, { state: 'keep-me', ...override }),
      'stop',
    );
    expect(result.status).toBe(303);
    expect(result.location?.searchParams.get('error')).toBe(error);
    expect(result.location?.searchParams.get('state')).toBe('keep-me');
    expect(result.location?.searchParams.get('iss')).toBe(server.config.baseUrl);
  });

  it('refuses scopes the client is not allowed to ask for', async () => {
    const narrow = await registerClient(server.db, athlete, {
      scopes: ['health:read'],
      redirectUri: 'https://narrow.example.test/cb',
    });
    const result = await authorizeAs(
      jar,
      authorizationRequest(server.url, narrow, { scope: 'health:read health:write' }),
      'stop',
    );
    expect(result.location?.searchParams.get('error')).toBe('invalid_scope');
  });
});

describe('code exchange (§4.1.3, §5.1, §5.2)', () => {
  it('answers the specification §2.1 token response, uncached, from a JSON body with client_secret_post', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, { scope: 'health:read health:write' });
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get('cache-control')).toBe('no-store');
    expect(tokens.body).toEqual({
      access_token: expect.stringMatching(/^pat_/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^prt_/),
      scope: 'health:read health:write',
      refresh_token_expires_in: 86_400,
    });
    const res = await call(server.url, 'POST', '/api/wellness', {
      token: String(tokens.body['access_token']),
      body: { date: '2026-02-02', hrv: 44 },
    });
    expect(res.status).toBe(201);
  });

  it('accepts a form body with client_secret_basic', async () => {
    const { code, verifier } = await issueCode(server.url, jar, app, { scope: 'health:read' });
    const tokens = await exchangeCode(server.url, app, { code, verifier }, {}, { form: true, clientAuth: 'basic' });
    expect(tokens.status).toBe(200);
    expect(tokens.body['token_type']).toBe('Bearer');
  });

  it('lets a public client exchange with PKCE alone (auth method none)', async () => {
    const phone = await registerClient(server.db, athlete, { isPublic: true, redirectUri: 'http://127.0.0.1/cb' });
    const { tokens } = await runCodeFlow(server.url, jar, phone, { scope: 'health:read' });
    expect(tokens.status).toBe(200);
    expect(tokens.body['refresh_token']).toBeTruthy();
  });

  it('refuses a wrong client secret with 401 invalid_client and a challenge', async () => {
    const { code, verifier } = await runCodeFlow(server.url, jar, app, { scope: 'health:read' });
    const wrong = await exchangeCode(server.url, app, { code, verifier }, { client_secret: 'pcs_wrong' });
    expect(wrong.status).toBe(401);
    expect(wrong.body['error']).toBe('invalid_client');
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);
  });

  it('refuses a confidential client that sends no secret', async () => {
    const { code, verifier } = await issueCode(server.url, jar, app, { scope: 'health:read' });
    const res = await exchangeCode(server.url, app, { code, verifier }, {}, { clientAuth: 'none' });
    expect(res.status).toBe(401);
    expect(res.body['error']).toBe('invalid_client');
  });

  it('a code works once; a replay is refused and revokes the tokens issued from it', async () => {
    const { tokens, code, verifier } = await runCodeFlow(server.url, jar, app, { scope: 'health:write' });
    const accessToken = String(tokens.body['access_token']);
    expect(
      (await call(server.url, 'POST', '/api/wellness', { token: accessToken, body: { date: '2026-03-01' } })).status,
    ).toBe(201);
    const replay = await exchangeCode(server.url, app, { code, verifier });
    expect(replay.status).toBe(400);
    expect(replay.body['error']).toBe('invalid_grant');
    expect(
      (await call(server.url, 'POST', '/api/wellness', { token: accessToken, body: { date: '2026-03-01' } })).status,
    ).toBe(401);
    const refreshed = await refreshTokens(server.url, app, String(tokens.body['refresh_token']));
    expect(refreshed.body['error']).toBe('invalid_grant');
  });

  it('binds the code to its client and redirect URI', async () => {
    const other = await registerClient(server.db, athlete, { redirectUri: 'https://other.example.test/cb' });
    const { verifier, challenge } = pkcePair();
    const issue = async () =>
      (
        await authorizeAs(jar, authorizationRequest(server.url, app, { code_challenge: challenge }))
      ).location?.searchParams.get('code') ?? '';
    const stolen = await exchangeCode(
      server.url,
      other,
      { code: await issue(), verifier },
      { redirect_uri: app.redirectUri },
    );
    expect(stolen.body['error']).toBe('invalid_grant');
    const redirect = await exchangeCode(
      server.url,
      app,
      { code: await issue(), verifier },
      { redirect_uri: 'https://client.example.test/other' },
    );
    expect(redirect.body['error']).toBe('invalid_grant');
  });

  it('refuses an expired code', async () => {
    const { code, verifier } = await issueCode(server.url, jar, app, { scope: 'health:read' });
    await server.db
      .updateTable('oauthAuthorizationCodes')
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where('consumedAt', 'is', null)
      .execute();
    const res = await exchangeCode(server.url, app, { code, verifier });
    expect(res.body['error']).toBe('invalid_grant');
  });

  it('answers RFC 6749 errors for malformed requests', async () => {
    const unsupported = await clientRequest(server.url, app, { grant_type: 'password' });
    expect(unsupported.body['error']).toBe('unsupported_grant_type');
    const nested = await fetch(`${server.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', code: ['a', 'b'] }),
    });
    expect(nested.status).toBe(400);
    expect(((await nested.json()) as { error: string }).error).toBe('invalid_request');
    const text = await fetch(`${server.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(text.status).toBe(400);
    expect(text.headers.get('cache-control')).toBe('no-store');
  });
});

describe('refresh-token lifetime', () => {
  it('without a limit (PACER_REFRESH_TOKEN_TTL=0) the response has no refresh_token_expires_in', async () => {
    const env = { PACER_REFRESH_TOKEN_TTL: '0' };
    const { server: unlimited, jar: ownerJar, app: client } = await startOAuthFixture({ env });
    try {
      const { tokens } = await runCodeFlow(unlimited.url, ownerJar, client, { scope: 'health:read' });
      expect(tokens.body['refresh_token']).toBeTruthy();
      expect(tokens.body).not.toHaveProperty('refresh_token_expires_in');
      const stored = await unlimited.db.selectFrom('oauthRefreshTokens').select('expiresAt').executeTakeFirstOrThrow();
      expect(stored.expiresAt).toBeNull();
    } finally {
      await unlimited.stop();
    }
  });
});

describe('refresh (§6)', () => {
  const refresh = (token: string, extra: Record<string, string> = {}) => refreshTokens(server.url, app, token, extra);

  it('rotates the refresh token every time, and the new access token works', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, { scope: 'health:read health:write' });
    const first = await refresh(String(tokens.body['refresh_token']));
    expect(first.status).toBe(200);
    expect(first.body['refresh_token']).not.toBe(tokens.body['refresh_token']);
    expect(first.body['scope']).toBe('health:read health:write');
    expect(first.body['expires_in']).toBe(3600);
    expect(first.body['refresh_token_expires_in']).toBe(86_400);
    const second = await refresh(String(first.body['refresh_token']));
    expect(second.status).toBe(200);
    const res = await call(server.url, 'GET', '/api/wellness', { token: String(second.body['access_token']) });
    expect(res.status).toBe(200);
  });

  it('reuse of a rotated refresh token revokes the whole grant chain', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, { scope: 'health:read' });
    const original = String(tokens.body['refresh_token']);
    const rotated = await refresh(original);
    const latestAccess = String(rotated.body['access_token']);
    expect((await call(server.url, 'GET', '/api/wellness', { token: latestAccess })).status).toBe(200);
    const reuse = await refresh(original);
    expect(reuse.body['error']).toBe('invalid_grant');
    expect((await call(server.url, 'GET', '/api/wellness', { token: latestAccess })).status).toBe(401);
    expect((await refresh(String(rotated.body['refresh_token']))).body['error']).toBe('invalid_grant');
  });

  it('of ten concurrent refreshes with one token exactly one succeeds', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, { scope: 'health:read' });
    const results = await Promise.all(Array.from({ length: 10 }, () => refresh(String(tokens.body['refresh_token']))));
    expect(results.filter((res) => res.status === 200)).toHaveLength(1);
    expect(results.filter((res) => res.body['error'] === 'invalid_grant')).toHaveLength(9);
  });

  it('scope may only narrow', async () => {
    const { tokens } = await runCodeFlow(server.url, jar, app, { scope: 'health:read health:write' });
    const wider = await refresh(String(tokens.body['refresh_token']), { scope: 'health:read nutrition:write' });
    expect(wider.body['error']).toBe('invalid_scope');
    const narrower = await refresh(String(tokens.body['refresh_token']), { scope: 'health:read' });
    expect(narrower.status).toBe(200);
    expect(narrower.body['scope']).toBe('health:read');
    const write = await call(server.url, 'POST', '/api/wellness', {
      token: String(narrower.body['access_token']),
      body: { date: '2026-04-01' },
    });
    expect(write.status).toBe(403);
  });

  it('refuses a refresh token of another client and an expired one', async () => {
    const other = await registerClient(server.db, athlete, { redirectUri: 'https://third.example.test/cb' });
    const { tokens } = await runCodeFlow(server.url, jar, app, { scope: 'health:read' });
    const foreign = await refreshTokens(server.url, other, String(tokens.body['refresh_token']));
    expect(foreign.body['error']).toBe('invalid_grant');
    await server.db
      .updateTable('oauthRefreshTokens')
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where('rotatedAt', 'is', null)
      .execute();
    expect((await refresh(String(tokens.body['refresh_token']))).body['error']).toBe('invalid_grant');
  });
});

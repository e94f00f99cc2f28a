/**
 * The SDK's OAuth helpers against the real server:
 * RFC 7636 (PKCE S256) and RFC 6749 §4.1 (code flow with state) through
 * buildAuthorizeUrl / validateAuthorizationResponse / exchangeCode,
 * RFC 9207 (iss on the callback), RFC 6749 §5.2 (errors as OAuthError),
 * RFC 6749 §6 with rotation (docs/design.md §3) through refreshTokens and
 * createOAuthPacerClient: refresh on 401 once, single flight, onTokens before
 * the retry, a refused refresh is final.
 */
import {
  buildAuthorizeUrl,
  createOAuthPacerClient,
  createPkcePair,
  createState,
  exchangeCode,
  OAuthError,
  refreshTokens,
  validateAuthorizationResponse,
  type AuthorizeUrlOptions,
  type TokenSet,
} from '@pacer/client-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { sha256Hex } from '../../server/src/lib/crypto.ts';
import { startOAuthFixture } from '../support/oauth-fixture.ts';
import { authorizeAs, registerClient, revokeToken, type CookieJar, type TestClient } from '../support/oauth-flow.ts';
import type { TestServer } from '../support/test-server.ts';
import { sleep } from '../support/wait.ts';

const REFRESH_TTL_SECS = 86_400;

let server: TestServer;
let athlete: User;
let jar: CookieJar;
let app: TestClient;

beforeAll(async () => {
  const fixture = await startOAuthFixture({ env: { PACER_REFRESH_TOKEN_TTL: String(REFRESH_TTL_SECS) } });
  ({ server, user: athlete, jar, app } = fixture);
});
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  await server.stop();
});

/** The SDK's authorization URL (buildAuthorizeUrl) for `client` at this server. */
function sdkAuthorizeUrl(
  client: TestClient,
  request: Pick<AuthorizeUrlOptions, 'scope' | 'state' | 'codeChallenge' | 'prompt'>,
): string {
  return buildAuthorizeUrl({
    baseUrl: server.url,
    clientId: client.clientId,
    redirectUri: client.redirectUri,
    ...request,
  });
}

/** The SDK's code exchange (exchangeCode) by `client` at this server, with its secret when it has one. */
function sdkExchangeCode(client: TestClient, code: string, codeVerifier: string): Promise<TokenSet> {
  return exchangeCode({
    baseUrl: server.url,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    code,
    redirectUri: client.redirectUri,
    codeVerifier,
  });
}

/** The integrator's sign-in, with nothing but the SDK's helpers (the browser part is authorizeAs). */
async function signInWithSdk(client: TestClient, scope: string[]): Promise<TokenSet> {
  const pkce = await createPkcePair();
  const state = createState();
  const url = sdkAuthorizeUrl(client, { scope, state, codeChallenge: pkce.codeChallenge });
  const answer = await authorizeAs(jar, url, 'approve');
  if (!answer.location) throw new Error(`no redirect: ${answer.status} ${answer.body.slice(0, 300)}`);
  const { code } = validateAuthorizationResponse(answer.location.toString(), {
    expectedState: state,
    issuer: server.config.baseUrl,
  });
  return sdkExchangeCode(client, code, pkce.codeVerifier);
}

async function grantIdOf(tokens: TokenSet): Promise<string> {
  const row = await server.db
    .selectFrom('oauthAccessTokens')
    .select('grantId')
    .where('tokenHash', '=', sha256Hex(tokens.accessToken))
    .executeTakeFirstOrThrow();
  return row.grantId;
}

async function expireAccessTokens(grantId: string): Promise<void> {
  await server.db
    .updateTable('oauthAccessTokens')
    .set({ expiresAt: new Date(Date.now() - 1000) })
    .where('grantId', '=', grantId)
    .execute();
}

/**
 * Every request this process sends from now on, in order, among the `events`
 * the test adds itself (e.g. `onTokens`): `POST /api/oauth/token`, or an API
 * call followed by the access token it carried.
 */
function recordRequests(events: string[]): void {
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const bearer = new Headers(init?.headers).get('authorization')?.replace(/^Bearer /, '');
    events.push(`${init?.method ?? 'GET'} ${url.pathname}${bearer === undefined ? '' : ` ${bearer}`}`);
    return realFetch(input, init);
  });
}

describe('sign-in with the SDK helpers (RFC 6749 §4.1, RFC 7636, RFC 9207)', () => {
  it('signs in with PKCE and state, exchanges the code, and calls the API through the OAuth client', async () => {
    const before = Date.now();
    const tokens = await signInWithSdk(app, ['health:read', 'health:write']);
    expect(tokens).toMatchObject({
      accessToken: expect.stringMatching(/^pat_/),
      tokenType: 'Bearer',
      refreshToken: expect.stringMatching(/^prt_/),
      scope: ['health:read', 'health:write'],
    });
    expect(tokens.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(tokens.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 3_600_000);
    expect(tokens.refreshTokenExpiresAt?.getTime()).toBeGreaterThanOrEqual(before + REFRESH_TTL_SECS * 1000);

    const onTokens = vi.fn();
    const pacer = createOAuthPacerClient({
      baseUrl: server.url,
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      tokens,
      onTokens,
    });
    const created = await pacer.wellness.upsertWellness({ body: { date: '2026-02-01', hrv: 61 } });
    expect(created.status).toBe(201);
    const listed = await pacer.wellness.listWellness({ query: { from: '2026-02-01', to: '2026-02-01' } });
    expect(listed.status).toBe(200);
    if (listed.status === 200) expect(listed.body.items.map((item) => item.hrv)).toEqual([61]);
    // A valid token needs no refresh.
    expect(onTokens).not.toHaveBeenCalled();
    expect(pacer.getTokens()).toBe(tokens);
  });

  it('throws OAuthError invalid_grant with the status when the code verifier is wrong', async () => {
    const pkce = await createPkcePair();
    const other = await createPkcePair();
    const state = createState();
    const answer = await authorizeAs(
      jar,
      sdkAuthorizeUrl(app, { scope: 'health:read', state, codeChallenge: pkce.codeChallenge }),
    );
    const { code } = validateAuthorizationResponse(answer.location ?? '', {
      expectedState: state,
      issuer: server.config.baseUrl,
    });
    const failure = sdkExchangeCode(app, code, other.codeVerifier);
    await expect(failure).rejects.toBeInstanceOf(OAuthError);
    await expect(failure).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
  });

  it('reports a denial on the callback as OAuthError access_denied', async () => {
    const pkce = await createPkcePair();
    const state = createState();
    const answer = await authorizeAs(
      jar,
      sdkAuthorizeUrl(app, { scope: ['nutrition:read'], state, codeChallenge: pkce.codeChallenge, prompt: 'consent' }),
      'deny',
    );
    expect(() =>
      validateAuthorizationResponse(answer.location ?? '', { expectedState: state, issuer: server.config.baseUrl }),
    ).toThrow(expect.objectContaining({ name: 'OAuthError', error: 'access_denied' }));
  });

  it('lets a public client exchange and refresh with its client_id alone, narrowing the scope', async () => {
    const phone = await registerClient(server.db, athlete, { isPublic: true, redirectUri: 'http://127.0.0.1/cb' });
    const tokens = await signInWithSdk(phone, ['health:read', 'health:write']);
    const refreshed = await refreshTokens({
      baseUrl: server.url,
      clientId: phone.clientId,
      refreshToken: tokens.refreshToken ?? '',
      scope: ['health:read'],
    });
    expect(refreshed.scope).toEqual(['health:read']);
    expect(refreshed.accessToken).not.toBe(tokens.accessToken);
    expect(refreshed.refreshToken).toMatch(/^prt_/);
    expect(refreshed.refreshToken).not.toBe(tokens.refreshToken);
  });
});

describe('createOAuthPacerClient: refresh on 401 (RFC 6749 §6, rotation)', () => {
  it('shares one refresh among five concurrent 401s, hands the new tokens to onTokens before retrying, and every call succeeds', async () => {
    // The app's grant for this user is shared with the earlier sign-ins of this file (one grant per user, app
    // and resource): the rotation is counted among the refresh tokens issued from this sign-in on.
    const signedInAt = new Date();
    const initial = await signInWithSdk(app, ['health:read', 'health:write']);
    const grantId = await grantIdOf(initial);
    const events: string[] = [];
    const handed: TokenSet[] = [];
    const pacer = createOAuthPacerClient({
      baseUrl: server.url,
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      tokens: initial,
      onTokens: async (tokens) => {
        // A slow store: the retries must still wait for it.
        await sleep(50);
        handed.push(tokens);
        events.push('onTokens');
      },
    });

    await expireAccessTokens(grantId);
    recordRequests(events);
    const dates = ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05'];
    const results = await Promise.all(
      dates.map((date, index) => pacer.wellness.upsertWellness({ body: { date, hrv: 50 + index } })),
    );
    vi.restoreAllMocks();

    expect(results.map((result) => result.status)).toEqual([201, 201, 201, 201, 201]);
    expect(handed).toHaveLength(1);
    const fresh = handed[0] as TokenSet;
    expect(pacer.getTokens()).toBe(fresh);
    expect(fresh.accessToken).not.toBe(initial.accessToken);
    expect(fresh.refreshToken).toMatch(/^prt_/);
    expect(fresh.refreshToken).not.toBe(initial.refreshToken);
    expect(fresh.scope).toEqual(['health:read', 'health:write']);

    // Five calls with the dead token, one refresh, onTokens, then the five retries with the new token.
    expect(events).toEqual([
      ...Array<string>(5).fill(`POST /api/wellness ${initial.accessToken}`),
      'POST /api/oauth/token',
      'onTokens',
      ...Array<string>(5).fill(`POST /api/wellness ${fresh.accessToken}`),
    ]);

    // The server saw one rotation: the original refresh token and the one onTokens got.
    const rows = await server.db
      .selectFrom('oauthRefreshTokens')
      .select(['id', 'tokenHash', 'rotatedAt', 'replacedBy'])
      .where('grantId', '=', grantId)
      .where('createdAt', '>=', signedInAt)
      .orderBy('createdAt')
      .execute();
    expect(rows).toHaveLength(2);
    const [original, latest] = rows;
    expect(original?.tokenHash).toBe(sha256Hex(initial.refreshToken ?? ''));
    expect(original?.rotatedAt).not.toBeNull();
    expect(original?.replacedBy).toBe(latest?.id);
    expect(latest?.tokenHash).toBe(sha256Hex(fresh.refreshToken ?? ''));
    expect(latest?.rotatedAt).toBeNull();

    // Each upsert reached the server exactly once.
    const listed = await pacer.wellness.listWellness({ query: { from: '2026-03-01', to: '2026-03-05' } });
    expect(listed.status).toBe(200);
    if (listed.status === 200) {
      expect(listed.body.items.map((item) => [item.date, item.hrv])).toEqual(
        dates.map((date, index) => [date, 50 + index]),
      );
    }

    // The previous refresh token is refused afterwards.
    await expect(
      refreshTokens({
        baseUrl: server.url,
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        refreshToken: initial.refreshToken ?? '',
      }),
    ).rejects.toMatchObject({ name: 'OAuthError', error: 'invalid_grant', status: 400 });
  });

  it('rejects every waiting call with OAuthError invalid_grant when the grant was revoked, without retrying or refreshing again', async () => {
    const initial = await signInWithSdk(app, ['health:read']);
    const revoked = await revokeToken(server.url, app, initial.refreshToken);
    expect(revoked.status).toBe(200);
    const onTokens = vi.fn();
    const pacer = createOAuthPacerClient({
      baseUrl: server.url,
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      tokens: initial,
      onTokens,
    });

    const events: string[] = [];
    recordRequests(events);
    const old = initial.accessToken;
    const query = { from: '2026-03-01', to: '2026-03-05' };
    const outcomes = await Promise.allSettled([
      pacer.wellness.listWellness({ query }),
      pacer.wellness.listWellness({ query }),
      pacer.nutrition.listNutrition({ query }),
    ]);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      const reason: unknown = outcome.status === 'rejected' ? outcome.reason : undefined;
      expect(reason).toBeInstanceOf(OAuthError);
      expect(reason).toMatchObject({ error: 'invalid_grant', status: 400 });
    }
    expect(events).toEqual([
      `GET /api/wellness ${old}`,
      `GET /api/wellness ${old}`,
      `GET /api/nutrition ${old}`,
      'POST /api/oauth/token',
    ]);

    // A later call gets the same refusal; the dead refresh token is not sent again.
    await expect(pacer.wellness.listWellness({ query })).rejects.toMatchObject({ error: 'invalid_grant' });
    expect(events.slice(4)).toEqual([`GET /api/wellness ${old}`]);
    expect(onTokens).not.toHaveBeenCalled();
    expect(pacer.getTokens()).toBe(initial);
  });

  it('resolves to the 401 answer, without refreshing, when there is no refresh token', async () => {
    const events: string[] = [];
    const pacer = createOAuthPacerClient({
      baseUrl: server.url,
      clientId: app.clientId,
      tokens: { accessToken: 'pat_not-a-real-token', tokenType: 'Bearer', expiresAt: new Date(), scope: [] },
      onTokens: () => {
        events.push('onTokens');
      },
    });
    recordRequests(events);
    const res = await pacer.wellness.listWellness({ query: {} });
    expect(res.status).toBe(401);
    if (res.status === 401) expect(res.body.code).toBe('invalid_token');
    expect(events).toEqual(['GET /api/wellness pat_not-a-real-token']);
  });
});

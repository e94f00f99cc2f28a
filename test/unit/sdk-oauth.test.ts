/**
 * The SDK's OAuth helpers without a server:
 * RFC 7636 §4.1 / §4.2 / Appendix B (PKCE verifier and S256 challenge),
 * RFC 6749 §4.1.1 (authorization URL), §4.1.2 / §4.1.2.1 / §10.12 (response, state),
 * RFC 9207 §2.4 (iss), §4.1.3 / §5.1 / §5.2 / §6 (token requests and answers, fetch stubbed).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  buildAuthorizeUrl,
  createPkcePair,
  createState,
  exchangeCode,
  OAuthError,
  OAuthResponseError,
  refreshTokens,
  s256Challenge,
  validateAuthorizationResponse,
} from '../../client-sdk/src/oauth.ts';

const BASE = 'https://pacer.example.test';
const APPENDIX_B_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const APPENDIX_B_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE (RFC 7636)', () => {
  it('computes the Appendix B S256 challenge of the Appendix B verifier', async () => {
    // RFC 7636 Appendix B, checked against its octets: the verifier is these 32 octets base64url-encoded,
    // and the challenge is the base64url of the SHA-256 octets the appendix lists.
    const verifierOctets = [
      116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191, 240,
      91, 88, 5, 88, 83, 132, 141, 121,
    ];
    const challengeOctets = [
      19, 211, 30, 150, 26, 26, 216, 236, 47, 22, 177, 12, 76, 152, 46, 8, 118, 168, 120, 173, 109, 241, 68, 86, 110,
      225, 137, 74, 203, 112, 249, 195,
    ];
    expect(Buffer.from(verifierOctets).toString('base64url')).toBe(APPENDIX_B_VERIFIER);
    expect(Buffer.from(challengeOctets).toString('base64url')).toBe(APPENDIX_B_CHALLENGE);
    expect(await s256Challenge(APPENDIX_B_VERIFIER)).toBe(APPENDIX_B_CHALLENGE);
  });

  it('makes a 43-character base64url verifier (32 random octets) with its S256 challenge', async () => {
    const pair = await createPkcePair();
    expect(pair.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(pair.codeChallenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(pair.codeChallengeMethod).toBe('S256');
    expect(pair.codeChallenge).toBe(await s256Challenge(pair.codeVerifier));
  });

  it('makes a different verifier and state every time', async () => {
    const verifiers = new Set(
      await Promise.all(Array.from({ length: 20 }, async () => (await createPkcePair()).codeVerifier)),
    );
    expect(verifiers.size).toBe(20);
    const states = new Set(Array.from({ length: 20 }, () => createState()));
    expect(states.size).toBe(20);
    for (const state of states) expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('buildAuthorizeUrl (RFC 6749 §4.1.1, specification §5.1)', () => {
  const base = {
    baseUrl: `${BASE}/`,
    clientId: 'pc_app',
    redirectUri: 'https://app.example.test/callback?x=1',
    scope: ['health:read', 'nutrition:write'],
    state: 'st ate&=',
    codeChallenge: APPENDIX_B_CHALLENGE,
  };

  it('builds the authorization URL with every parameter of the code flow with PKCE', () => {
    const url = buildAuthorizeUrl(base);
    expect(url.startsWith(`${BASE}/api/oauth/authorize?response_type=code&`)).toBe(true);
    expect(url.endsWith('&code_challenge_method=S256')).toBe(true);
    const parsed = new URL(url);
    expect(Object.fromEntries(parsed.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'pc_app',
      redirect_uri: 'https://app.example.test/callback?x=1',
      scope: 'health:read nutrition:write',
      state: 'st ate&=',
      code_challenge: APPENDIX_B_CHALLENGE,
      code_challenge_method: 'S256',
    });
  });

  it('takes the scope as a space-separated string and adds resource and prompt when given', () => {
    const parsed = new URL(
      buildAuthorizeUrl({ ...base, scope: 'profile:read offline_access', resource: `${BASE}/mcp`, prompt: 'consent' }),
    );
    expect(parsed.searchParams.get('scope')).toBe('profile:read offline_access');
    expect(parsed.searchParams.get('resource')).toBe(`${BASE}/mcp`);
    expect(parsed.searchParams.get('prompt')).toBe('consent');
  });

  it('leaves scope out when none is given, so the app gets its registered scopes', () => {
    expect(new URL(buildAuthorizeUrl({ ...base, scope: [] })).searchParams.has('scope')).toBe(false);
  });

  it('refuses to build a URL without a state or a code challenge', () => {
    expect(() => buildAuthorizeUrl({ ...base, state: '' })).toThrow(TypeError);
    expect(() => buildAuthorizeUrl({ ...base, codeChallenge: '' })).toThrow(TypeError);
  });
});

describe('validateAuthorizationResponse (RFC 6749 §4.1.2, RFC 9207)', () => {
  const checks = { expectedState: 'st-1', issuer: BASE };
  const callback = (params: Record<string, string>) =>
    `https://app.example.test/callback?${new URLSearchParams(params).toString()}`;

  it('returns the code when state and iss match', () => {
    expect(validateAuthorizationResponse(callback({ code: 'pac_1', state: 'st-1', iss: BASE }), checks)).toEqual({
      code: 'pac_1',
      state: 'st-1',
      iss: BASE,
    });
  });

  it('accepts a response without iss, and an issuer given with a trailing slash', () => {
    expect(validateAuthorizationResponse(new URL(callback({ code: 'pac_1', state: 'st-1' })), checks).code).toBe(
      'pac_1',
    );
    expect(
      validateAuthorizationResponse(callback({ code: 'pac_1', state: 'st-1', iss: BASE }), {
        ...checks,
        issuer: `${BASE}/`,
      }).code,
    ).toBe('pac_1');
  });

  it('refuses a state that differs from the one sent, or a missing state', () => {
    for (const url of [callback({ code: 'pac_1', state: 'st-2', iss: BASE }), callback({ code: 'pac_1', iss: BASE })]) {
      expect(() => validateAuthorizationResponse(url, checks)).toThrow(
        expect.objectContaining({ name: 'OAuthResponseError', problem: 'state_mismatch' }),
      );
    }
  });

  it('refuses an iss that is not the issuer (mix-up), even on an error response', () => {
    const fromElsewhere = [
      callback({ code: 'pac_1', state: 'st-1', iss: 'https://evil.example.test' }),
      callback({ code: 'pac_1', state: 'st-1', iss: `${BASE}/` }),
      callback({ error: 'access_denied', state: 'st-1', iss: 'https://evil.example.test' }),
    ];
    for (const url of fromElsewhere) {
      let thrown: unknown;
      try {
        validateAuthorizationResponse(url, checks);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(OAuthResponseError);
      expect((thrown as OAuthResponseError).problem).toBe('issuer_mismatch');
    }
  });

  it('throws the error response as an OAuthError with its code and description', () => {
    let thrown: unknown;
    try {
      validateAuthorizationResponse(
        callback({
          error: 'access_denied',
          error_description: 'The user denied the request.',
          state: 'st-1',
          iss: BASE,
        }),
        checks,
      );
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(OAuthError);
    expect(thrown).toMatchObject({
      error: 'access_denied',
      errorDescription: 'The user denied the request.',
      status: undefined,
    });
  });

  it('checks the state of an error response before reporting its error', () => {
    expect(() =>
      validateAuthorizationResponse(callback({ error: 'access_denied', state: 'forged', iss: BASE }), checks),
    ).toThrow(OAuthResponseError);
  });

  it('refuses a response with neither code nor error', () => {
    expect(() => validateAuthorizationResponse(callback({ state: 'st-1', iss: BASE }), checks)).toThrow(
      expect.objectContaining({ problem: 'missing_code' }),
    );
  });
});

describe('token requests (RFC 6749 §4.1.3, §5, §6), fetch stubbed', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  function stubTokenEndpoint(status: number, body: string, contentType = 'application/json') {
    const fetchStub = vi.fn((_input: string, _init?: RequestInit) =>
      Promise.resolve(new Response(body, { status, headers: { 'content-type': contentType } })),
    );
    vi.stubGlobal('fetch', fetchStub);
    return fetchStub;
  }

  function sentForm(fetchStub: ReturnType<typeof stubTokenEndpoint>) {
    const [input, init] = fetchStub.mock.calls[0] ?? [];
    return {
      url: input,
      method: init?.method,
      contentType: new Headers(init?.headers).get('content-type'),
      fields: Object.fromEntries(new URLSearchParams(init?.body as string)),
    };
  }

  const TOKEN_RESPONSE = JSON.stringify({
    access_token: 'pat_a',
    token_type: 'Bearer',
    expires_in: 3600,
    refresh_token: 'prt_r',
    scope: 'health:read health:write',
    refresh_token_expires_in: 86_400,
  });

  it('exchanges a code with a form body and client_secret_post, and maps the answer to a TokenSet', async () => {
    const fetchStub = stubTokenEndpoint(200, TOKEN_RESPONSE);
    const before = Date.now();
    const tokens = await exchangeCode({
      baseUrl: `${BASE}/`,
      clientId: 'pc_app',
      clientSecret: 'pcs_secret',
      code: 'pac_code',
      redirectUri: 'https://app.example.test/callback',
      codeVerifier: APPENDIX_B_VERIFIER,
    });
    expect(sentForm(fetchStub)).toEqual({
      url: `${BASE}/api/oauth/token`,
      method: 'POST',
      contentType: 'application/x-www-form-urlencoded',
      fields: {
        grant_type: 'authorization_code',
        code: 'pac_code',
        redirect_uri: 'https://app.example.test/callback',
        code_verifier: APPENDIX_B_VERIFIER,
        client_id: 'pc_app',
        client_secret: 'pcs_secret',
      },
    });
    expect(tokens).toMatchObject({
      accessToken: 'pat_a',
      tokenType: 'Bearer',
      refreshToken: 'prt_r',
      scope: ['health:read', 'health:write'],
    });
    expect(tokens.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(tokens.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 3_600_000);
    expect((tokens.refreshTokenExpiresAt?.getTime() ?? 0) - tokens.expiresAt.getTime()).toBe(82_800_000);
  });

  it('refreshes as a public client (client_id alone) with a narrowed scope and a resource', async () => {
    const fetchStub = stubTokenEndpoint(200, TOKEN_RESPONSE);
    await refreshTokens({
      baseUrl: BASE,
      clientId: 'pc_phone',
      refreshToken: 'prt_old',
      scope: ['health:read'],
      resource: `${BASE}/mcp`,
    });
    expect(sentForm(fetchStub).fields).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'prt_old',
      scope: 'health:read',
      resource: `${BASE}/mcp`,
      client_id: 'pc_phone',
    });
  });

  it('throws an RFC 6749 §5.2 error answer as an OAuthError with error, description and status', async () => {
    stubTokenEndpoint(
      400,
      JSON.stringify({ error: 'invalid_grant', error_description: 'Invalid grant: refresh token is invalid' }),
    );
    const failure = refreshTokens({ baseUrl: BASE, clientId: 'pc_app', refreshToken: 'prt_gone' });
    await expect(failure).rejects.toBeInstanceOf(OAuthError);
    await expect(failure).rejects.toMatchObject({
      error: 'invalid_grant',
      errorDescription: 'Invalid grant: refresh token is invalid',
      status: 400,
    });
  });

  it('throws OAuthResponseError for an answer that is not an OAuth response', async () => {
    stubTokenEndpoint(502, '<html>Bad gateway</html>', 'text/html');
    await expect(refreshTokens({ baseUrl: BASE, clientId: 'pc_app', refreshToken: 'prt_x' })).rejects.toMatchObject({
      name: 'OAuthResponseError',
      problem: 'invalid_token_response',
      status: 502,
    });
    stubTokenEndpoint(200, JSON.stringify({ token_type: 'Bearer', expires_in: 3600 }));
    await expect(refreshTokens({ baseUrl: BASE, clientId: 'pc_app', refreshToken: 'prt_x' })).rejects.toBeInstanceOf(
      OAuthResponseError,
    );
  });
});

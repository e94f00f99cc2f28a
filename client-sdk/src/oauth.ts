import { createPacerClient, type PacerClient, type PacerClientOptions } from './client.ts';

/*
 * OAuth 2.0 helpers for apps that sign their users in to Pacer: the
 * authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636), the
 * authorization response checks (RFC 6749 §10.12 state, RFC 9207 iss), the
 * token endpoint (RFC 6749 §4.1.3, §6) and a client that refreshes its access
 * token shortly before it expires and when the API answers 401. Only Web APIs are used (fetch,
 * crypto.getRandomValues, crypto.subtle, btoa), so this runs in browsers and
 * in Node.js 22 alike.
 */

const AUTHORIZE_PATH = '/api/oauth/authorize';
const TOKEN_PATH = '/api/oauth/token';

/** The tokens of one grant, as the token endpoint issued them (specification §2.1). */
export interface TokenSet {
  readonly accessToken: string;
  /** `Bearer`. */
  readonly tokenType: string;
  /** When the access token expires: the time of the answer plus `expires_in`. */
  readonly expiresAt: Date;
  /** Absent only when the server issued none (Pacer issues one for every grant, MCP ones included). */
  readonly refreshToken?: string;
  /** Present when the server enforces a refresh-token lifetime (`refresh_token_expires_in`). */
  readonly refreshTokenExpiresAt?: Date;
  /** The granted scopes. */
  readonly scope: readonly string[];
}

/**
 * The authorization server refused a request: an error answer of the token
 * endpoint (RFC 6749 §5.2, `status` is its HTTP status) or an error on the
 * redirect URI (RFC 6749 §4.1.2.1, e.g. `access_denied`; `status` is
 * undefined there).
 */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  /** The RFC 6749 error code, e.g. `invalid_grant`, `access_denied`. */
  readonly error: string;
  readonly errorDescription: string | undefined;
  readonly errorUri: string | undefined;
  /** The token endpoint's HTTP status; undefined for an authorization response. */
  readonly status: number | undefined;

  constructor(
    error: string,
    options: { errorDescription?: string | undefined; errorUri?: string | undefined; status?: number | undefined } = {},
  ) {
    super(options.errorDescription ? `${error}: ${options.errorDescription}` : error);
    this.error = error;
    this.errorDescription = options.errorDescription;
    this.errorUri = options.errorUri;
    this.status = options.status;
  }
}

/** Why the SDK refused what it received. */
export type OAuthResponseProblem =
  /** The callback's `state` is not the one this sign-in sent (RFC 6749 §10.12: possible CSRF). */
  | 'state_mismatch'
  /** The callback's `iss` is not the expected issuer (RFC 9207 §2.4: possible mix-up attack). */
  | 'issuer_mismatch'
  /** The callback has neither `code` nor `error`. */
  | 'missing_code'
  /** The token endpoint's answer is not an RFC 6749 token or error response. */
  | 'invalid_token_response';

/**
 * The SDK refused a response it received: a callback that fails the checks
 * of `validateAuthorizationResponse`, or a token endpoint answer that is not
 * an OAuth response at all (e.g. a proxy's HTML error page). Unlike
 * `OAuthError`, the server did not say no: the answer itself is wrong.
 */
export class OAuthResponseError extends Error {
  override readonly name = 'OAuthResponseError';
  readonly problem: OAuthResponseProblem;
  /** The HTTP status, for a token endpoint answer. */
  readonly status: number | undefined;

  constructor(problem: OAuthResponseProblem, message: string, status?: number) {
    super(message);
    this.problem = problem;
    this.status = status;
  }
}

// ---------------------------------------------------------------------------
// PKCE and state

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomBase64url(byteLength: number): string {
  return base64url(globalThis.crypto.getRandomValues(new Uint8Array(byteLength)));
}

/** RFC 7636 §4.2: `BASE64URL(SHA256(ASCII(code_verifier)))`. */
export async function s256Challenge(codeVerifier: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(codeVerifier));
  return base64url(new Uint8Array(digest));
}

export interface PkcePair {
  /** Keep it (e.g. in the session) until the callback; send it to `exchangeCode`. */
  readonly codeVerifier: string;
  /** Send it in the authorization URL. */
  readonly codeChallenge: string;
  readonly codeChallengeMethod: 'S256';
}

/**
 * A PKCE verifier and its challenge. RFC 7636 §4.1 recommends 32 random
 * octets, base64url-encoded: a 43-character verifier; §4.2 `S256` (Pacer
 * refuses `plain`).
 */
export async function createPkcePair(): Promise<PkcePair> {
  const codeVerifier = randomBase64url(32);
  return { codeVerifier, codeChallenge: await s256Challenge(codeVerifier), codeChallengeMethod: 'S256' };
}

/**
 * A fresh `state` for one authorization request: 32 random octets,
 * base64url-encoded. RFC 6749 §10.10 asks for a guessing chance of at most
 * 2^-128; this is 2^-256.
 */
export function createState(): string {
  return randomBase64url(32);
}

// ---------------------------------------------------------------------------
// Authorization request and response

function trimBaseUrl(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}

function scopeString(scope: readonly string[] | string): string {
  return typeof scope === 'string' ? scope.trim() : scope.join(' ');
}

export interface AuthorizeUrlOptions {
  /** Where Pacer runs, e.g. `https://pacer.example.com` (a trailing slash is fine). */
  readonly baseUrl: string;
  readonly clientId: string;
  /** Exactly one of the redirect URIs the app registered. */
  readonly redirectUri: string;
  /** Scopes as a list or a space-separated string. Empty: the app's registered scopes. */
  readonly scope: readonly string[] | string;
  /** From `createState()`; check it with `validateAuthorizationResponse`. */
  readonly state: string;
  /** From `createPkcePair()`. */
  readonly codeChallenge: string;
  /** RFC 8707: `{baseUrl}/mcp` for an MCP token. Leave it out for the REST API. */
  readonly resource?: string;
  /** `none` (answer without any page, or fail), `consent` (ask again) or `login`. */
  readonly prompt?: 'none' | 'consent' | 'login';
}

/** The URL to send the user's browser to (RFC 6749 §4.1.1, specification §5.1 step 1). */
export function buildAuthorizeUrl(options: AuthorizeUrlOptions): string {
  if (!options.state) throw new TypeError('state is required: use createState()');
  if (!options.codeChallenge) throw new TypeError('codeChallenge is required: use createPkcePair()');
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
  });
  const scope = scopeString(options.scope);
  if (scope) params.set('scope', scope);
  params.set('state', options.state);
  if (options.resource !== undefined) params.set('resource', options.resource);
  if (options.prompt !== undefined) params.set('prompt', options.prompt);
  params.set('code_challenge', options.codeChallenge);
  params.set('code_challenge_method', 'S256');
  return `${trimBaseUrl(options.baseUrl)}${AUTHORIZE_PATH}?${params.toString()}`;
}

export interface AuthorizationResponseChecks {
  /** The `state` this sign-in sent. */
  readonly expectedState: string;
  /** Pacer's issuer: its base URL without a trailing slash (a trailing slash here is ignored). */
  readonly issuer: string;
}

export interface AuthorizationResponse {
  readonly code: string;
  readonly state: string;
  /** The `iss` the server sent, when it sent one. */
  readonly iss: string | undefined;
}

/**
 * Check the redirect back to the app and return its `code`. Throws
 * `OAuthResponseError` when `iss` or `state` do not match or there is no
 * code, and `OAuthError` when the server sent an error (e.g. the user
 * pressed Deny: `access_denied`).
 */
export function validateAuthorizationResponse(
  callbackUrl: string | URL,
  checks: AuthorizationResponseChecks,
): AuthorizationResponse {
  const params = new URL(callbackUrl).searchParams;
  const one = (name: string) => params.get(name) ?? undefined;

  // RFC 9207 §2.4: compare iss before anything else in the response is used,
  // error responses included; a simple string comparison.
  const iss = one('iss');
  const issuer = trimBaseUrl(checks.issuer);
  if (iss !== undefined && iss !== issuer) {
    throw new OAuthResponseError('issuer_mismatch', `the response comes from ${iss}, not from ${issuer}`);
  }
  // RFC 6749 §4.1.2 and §10.12: state must be exactly the one sent, on errors too.
  const state = one('state');
  if (!checks.expectedState || state !== checks.expectedState) {
    throw new OAuthResponseError('state_mismatch', 'the state does not match the one this sign-in sent');
  }
  const error = one('error');
  if (error !== undefined) {
    throw new OAuthError(error, { errorDescription: one('error_description'), errorUri: one('error_uri') });
  }
  const code = one('code');
  if (!code) throw new OAuthResponseError('missing_code', 'the response has neither a code nor an error');
  return { code, state, iss };
}

// ---------------------------------------------------------------------------
// Token endpoint

export interface ExchangeCodeOptions {
  readonly baseUrl: string;
  readonly clientId: string;
  /** Confidential apps only (sent as `client_secret_post`); never put a secret in a browser or mobile app. */
  readonly clientSecret?: string;
  /** From `validateAuthorizationResponse`. */
  readonly code: string;
  /** The same redirect URI as in the authorization URL (RFC 6749 §4.1.3). */
  readonly redirectUri: string;
  /** The verifier whose challenge was in the authorization URL. */
  readonly codeVerifier: string;
  /** The same resource as in the authorization URL, if any. */
  readonly resource?: string;
}

export interface RefreshTokensOptions {
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret?: string;
  /** The latest refresh token: Pacer rotates them, and an older one revokes the whole grant. */
  readonly refreshToken: string;
  /** Narrow the scopes of the new access token (RFC 6749 §6); never widen them. */
  readonly scope?: readonly string[] | string;
  /** The grant's resource, if any. */
  readonly resource?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  return typeof value === 'string' ? value : undefined;
}

/** RFC 6749 §5.1: the successful answer, mapped to a `TokenSet`. */
function toTokenSet(body: Record<string, unknown>, receivedAt: number, status: number): TokenSet {
  const accessToken = body['access_token'];
  const tokenType = body['token_type'];
  const expiresIn = body['expires_in'];
  const refreshExpiresIn = body['refresh_token_expires_in'];
  const refreshToken = optionalString(body, 'refresh_token');
  const scope = optionalString(body, 'scope');
  if (typeof accessToken !== 'string' || !accessToken) {
    throw new OAuthResponseError('invalid_token_response', 'the token response has no access_token', status);
  }
  // The client sends the token as `Authorization: Bearer`; any other type would be misused.
  if (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer') {
    throw new OAuthResponseError('invalid_token_response', `token_type ${String(tokenType)} is not Bearer`, status);
  }
  // Specification §2.1: expires_in is always sent.
  if (typeof expiresIn !== 'number' || !Number.isFinite(expiresIn)) {
    throw new OAuthResponseError('invalid_token_response', 'the token response has no expires_in', status);
  }
  return {
    accessToken,
    tokenType,
    expiresAt: new Date(receivedAt + expiresIn * 1000),
    ...(refreshToken ? { refreshToken } : {}),
    ...(refreshToken && typeof refreshExpiresIn === 'number' && Number.isFinite(refreshExpiresIn)
      ? { refreshTokenExpiresAt: new Date(receivedAt + refreshExpiresIn * 1000) }
      : {}),
    scope: scope ? scope.split(' ').filter((entry) => entry.length > 0) : [],
  };
}

/**
 * One token request (RFC 6749 §3.2): a form body, the client authenticated
 * with `client_secret_post` when it has a secret (§2.3.1) and by `client_id`
 * alone when it is public.
 */
async function requestTokens(
  baseUrl: string,
  client: { clientId: string; clientSecret?: string | undefined },
  fields: Record<string, string | undefined>,
): Promise<TokenSet> {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries({
    ...fields,
    client_id: client.clientId,
    client_secret: client.clientSecret,
  })) {
    if (value !== undefined) form.set(name, value);
  }
  const response = await fetch(`${trimBaseUrl(baseUrl)}${TOKEN_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: form.toString(),
  });
  const receivedAt = Date.now();
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (response.ok) {
    if (!isRecord(body)) {
      throw new OAuthResponseError(
        'invalid_token_response',
        'the token response is not a JSON object',
        response.status,
      );
    }
    return toTokenSet(body, receivedAt, response.status);
  }
  // RFC 6749 §5.2: `{ error, error_description?, error_uri? }`.
  const error = isRecord(body) ? optionalString(body, 'error') : undefined;
  if (!isRecord(body) || !error) {
    throw new OAuthResponseError(
      'invalid_token_response',
      `the token endpoint answered ${response.status} without an OAuth error`,
      response.status,
    );
  }
  throw new OAuthError(error, {
    errorDescription: optionalString(body, 'error_description'),
    errorUri: optionalString(body, 'error_uri'),
    status: response.status,
  });
}

/**
 * Exchange the authorization code for tokens (RFC 6749 §4.1.3 with the
 * RFC 7636 §4.5 verifier). Throws `OAuthError` when the server refuses (e.g.
 * `invalid_grant` for a used or expired code or a wrong verifier).
 */
export function exchangeCode(options: ExchangeCodeOptions): Promise<TokenSet> {
  return requestTokens(options.baseUrl, options, {
    grant_type: 'authorization_code',
    code: options.code,
    redirect_uri: options.redirectUri,
    code_verifier: options.codeVerifier,
    resource: options.resource,
  });
}

/**
 * Get a new access token with the refresh token (RFC 6749 §6). Pacer rotates
 * refresh tokens: persist the `refreshToken` of the answer and forget the old
 * one. Throws `OAuthError` (`invalid_grant`) when the refresh token is
 * unknown, expired, revoked or was already used.
 */
export function refreshTokens(options: RefreshTokensOptions): Promise<TokenSet> {
  return requestTokens(options.baseUrl, options, {
    grant_type: 'refresh_token',
    refresh_token: options.refreshToken,
    scope: options.scope === undefined ? undefined : scopeString(options.scope),
    resource: options.resource,
  });
}

// ---------------------------------------------------------------------------
// A client that refreshes on 401

export interface OAuthPacerClientOptions {
  /** Where Pacer runs, e.g. `https://pacer.example.com`. */
  readonly baseUrl: string;
  readonly clientId: string;
  /** Confidential apps only. */
  readonly clientSecret?: string;
  /** The tokens to start with, from `exchangeCode`, `refreshTokens` or your store. */
  readonly tokens: TokenSet;
  /**
   * Called with every new `TokenSet`, before any call is retried with it.
   * Persist at least its `refreshToken`: the previous one no longer works.
   * When it throws, the calls that waited for the refresh reject with its
   * error (the client itself keeps and uses the new tokens).
   */
  readonly onTokens: (tokens: TokenSet) => void | Promise<void>;
  /** The grant's resource, if any (sent on refresh). */
  readonly resource?: string;
  /** Extra headers sent with every API request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Check response bodies against the contract's schemas (off by default). */
  readonly validateResponse?: boolean;
  /** As for `createPacerClient`. */
  readonly retry?: PacerClientOptions['retry'];
  /** As for `createPacerClient`. */
  readonly timeoutMs?: PacerClientOptions['timeoutMs'];
  /** As for `createPacerClient`. */
  readonly idempotencyKeys?: boolean;
  /**
   * Refresh before a call when the access token expires within this many ms
   * (default 60,000), so calls do not spend a request on a 401. `0`: refresh
   * only after a 401.
   */
  readonly refreshSkewMs?: number;
}

/** Default of `OAuthPacerClientOptions.refreshSkewMs`. */
export const DEFAULT_REFRESH_SKEW_MS = 60_000;

export type OAuthPacerClient = PacerClient & {
  /** The tokens the client uses now (the latest `onTokens` got, or the ones it started with). */
  getTokens(): TokenSet;
};

type RouteCall = (args?: unknown) => Promise<{ status: number }>;

/** RFC 6749 §6: a refresh answer without a refresh token or scope keeps the previous ones. */
function mergeTokens(previous: TokenSet, fresh: TokenSet): TokenSet {
  if (fresh.refreshToken !== undefined) {
    return fresh.scope.length > 0 ? fresh : { ...fresh, scope: previous.scope };
  }
  return {
    ...fresh,
    scope: fresh.scope.length > 0 ? fresh.scope : previous.scope,
    ...(previous.refreshToken !== undefined ? { refreshToken: previous.refreshToken } : {}),
    ...(previous.refreshTokenExpiresAt !== undefined ? { refreshTokenExpiresAt: previous.refreshTokenExpiresAt } : {}),
  };
}

/**
 * `createPacerClient` with OAuth tokens that renew themselves. A call made
 * when the access token expires within `refreshSkewMs` refreshes first. When
 * a call answers 401 all the same (e.g. a revoked token, a skewed clock), the
 * client refreshes the tokens once and retries that call once. Calls that hit 401 at the same time share one refresh (Pacer rotates
 * refresh tokens, so two refreshes with one token would make the second fail
 * and revoke the grant). A refused refresh rejects every waiting call with
 * the `OAuthError` (e.g. `invalid_grant`: the user must sign in again) and is
 * not tried again with the same refresh token.
 *
 * Make one client per token set and share it: two clients holding the same
 * refresh token cannot coordinate their refreshes.
 */
export function createOAuthPacerClient(options: OAuthPacerClientOptions): OAuthPacerClient {
  let current = options.tokens;
  let inFlight: Promise<void> | undefined;
  let refused: { readonly tokens: TokenSet; readonly error: OAuthError } | undefined;

  const runRefresh = async (stale: TokenSet, refreshToken: string): Promise<void> => {
    let fresh: TokenSet;
    try {
      fresh = await refreshTokens({
        baseUrl: options.baseUrl,
        clientId: options.clientId,
        clientSecret: options.clientSecret,
        refreshToken,
        resource: options.resource,
      });
    } catch (error) {
      // The server said no (4xx): this refresh token is done. A network
      // failure or a 5xx may pass, so the next 401 tries again.
      if (error instanceof OAuthError && error.status !== undefined && error.status < 500) {
        refused = { tokens: stale, error };
      }
      throw error;
    }
    current = mergeTokens(stale, fresh);
    await options.onTokens(current);
  };

  /** Renew `stale` (the tokens a call was sent with) unless that already happened. Single flight. */
  const refreshAfter = (stale: TokenSet): Promise<void> => {
    if (inFlight) return inFlight;
    if (current !== stale) return Promise.resolve();
    if (refused?.tokens === stale) return Promise.reject(refused.error);
    const refreshToken = stale.refreshToken;
    if (refreshToken === undefined) return Promise.resolve();
    const run = runRefresh(stale, refreshToken);
    inFlight = run;
    const settle = () => {
      if (inFlight === run) inFlight = undefined;
    };
    void run.then(settle, settle);
    return run;
  };

  const skewMs = options.refreshSkewMs ?? DEFAULT_REFRESH_SKEW_MS;
  const expiresSoon = (tokens: TokenSet): boolean =>
    skewMs > 0 && tokens.refreshToken !== undefined && tokens.expiresAt.getTime() - skewMs <= Date.now();

  const callWithRefresh = async (route: RouteCall, args: unknown) => {
    // A call made while a refresh runs waits for it rather than spend a request on a dead token.
    if (inFlight) await inFlight.catch(() => undefined);
    else if (expiresSoon(current)) {
      try {
        await refreshAfter(current);
      } catch (error) {
        // Refused: the grant is over, tell the caller. Anything else (network, 5xx): the token
        // may still be good for a few seconds, so try the call; a 401 refreshes again.
        if (error instanceof OAuthError && error.status !== undefined && error.status < 500) throw error;
      }
    }
    // ts-rest reads the token synchronously as the call starts, so this is the token the request carries.
    const sentWith = current;
    const first = await route(args);
    if (first.status !== 401 || sentWith.refreshToken === undefined) return first;
    await refreshAfter(sentWith);
    if (current === sentWith) return first;
    return route(args);
  };

  const wrap = (node: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(node).map(([key, value]): [string, unknown] => {
        if (typeof value === 'function') {
          const route = value as RouteCall;
          return [key, (args?: unknown) => callWithRefresh(route, args)];
        }
        return [key, wrap(value as Record<string, unknown>)];
      }),
    );

  const client = createPacerClient({
    baseUrl: options.baseUrl,
    accessToken: () => current.accessToken,
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.validateResponse !== undefined ? { validateResponse: options.validateResponse } : {}),
    ...(options.retry !== undefined ? { retry: options.retry } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.idempotencyKeys !== undefined ? { idempotencyKeys: options.idempotencyKeys } : {}),
  });
  const wrapped = wrap(client) as unknown as PacerClient;
  return Object.assign(wrapped, { getTokens: () => current });
}

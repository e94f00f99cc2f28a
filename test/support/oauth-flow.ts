import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../server/src/db/database.ts';
import type { OauthClient, User } from '../../server/src/db/tables.ts';
import { createApp } from '../../server/src/modules/oauth/client.service.ts';
import { findClientByClientId } from '../../server/src/modules/oauth/client.repository.ts';
import { CookieJar } from './cookie-jar.ts';
import { TEST_PASSWORD } from './factories.ts';
import { testSecretBox } from './test-server.ts';

export { CookieJar };

/** RFC 7636 §4.1-4.2: a verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface TestClient {
  readonly client: OauthClient;
  readonly clientId: string;
  readonly clientSecret: string | undefined;
  readonly redirectUri: string;
}

export interface RegisterClientOptions {
  readonly isPublic?: boolean;
  readonly redirectUri?: string;
  readonly scopes?: string[];
  readonly name?: string;
}

export async function registerClient(db: Db, owner: User, options: RegisterClientOptions = {}): Promise<TestClient> {
  const redirectUri = options.redirectUri ?? 'https://client.example.test/callback';
  const created = await createApp(db, {
    name: options.name ?? 'Strict client',
    redirectUris: [redirectUri],
    scopes: options.scopes ?? [],
    isPublic: options.isPublic ?? false,
    ownerEmail: owner.email,
    secretBox: testSecretBox,
  });
  const client = await findClientByClientId(db, created.clientId);
  if (!client) throw new Error('client vanished');
  return { client, clientId: created.clientId, clientSecret: created.clientSecret, redirectUri };
}

/** Sign in through the real /login form (CSRF and all). */
export async function signIn(baseUrl: string, email: string, password = TEST_PASSWORD): Promise<CookieJar> {
  const jar = new CookieJar();
  const form = await fetch(`${baseUrl}/login`);
  jar.store(form);
  const csrf = jar.get('pacer_csrf') ?? '';
  const res = await fetch(`${baseUrl}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams({ _csrf: csrf, email, password }),
    redirect: 'manual',
  });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`);
  jar.store(res);
  return jar;
}

export type AuthorizeQuery = Record<string, string | undefined>;

export function authorizeUrl(baseUrl: string, query: AuthorizeQuery): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
  return `${baseUrl}/api/oauth/authorize?${params.toString()}`;
}

/**
 * An authorization request (RFC 6749 §4.1.1) of `client` at `baseUrl`, as a URL:
 * `response_type=code`, the client's redirect URI, scope `health:read`, a fresh
 * S256 challenge (RFC 7636 §4.3) and no state. `overrides` replace any of these
 * and add others (`state`, `resource`, `prompt`); an `undefined` value leaves
 * that parameter out.
 */
export function authorizationRequest(
  baseUrl: string,
  client: Pick<TestClient, 'clientId' | 'redirectUri'>,
  overrides: AuthorizeQuery = {},
): string {
  return authorizeUrl(baseUrl, {
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    scope: 'health:read',
    state: undefined,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    resource: undefined,
    ...overrides,
  });
}

/** The hidden fields of the consent form on a page. */
export function consentFields(pageHtml: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of pageHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g)) {
    fields[match[1] as string] = (match[2] as string)
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>');
  }
  return fields;
}

/** The scopes whose checkboxes are ticked on a consent page, as a browser would send them. */
export function tickedScopes(pageHtml: string): string[] {
  const ticked: string[] = [];
  for (const match of pageHtml.matchAll(/<input\b[^>]*\btype="checkbox"[^>]*>/g)) {
    const input = match[0];
    const value = /\bvalue="([^"]*)"/.exec(input)?.[1];
    if (/\bname="granted_scope"/.test(input) && /\schecked\b/.test(input) && value !== undefined) ticked.push(value);
  }
  return ticked;
}

export interface AuthorizeOptions {
  /** The scopes left ticked when approving; what the page ticked (the request's scopes) when left out. */
  readonly granted?: readonly string[];
}

export interface AuthorizeResult {
  readonly status: number;
  readonly location: URL | undefined;
  readonly body: string;
}

/**
 * GET the authorization endpoint as the signed-in browser; when it shows the
 * consent page, press the button `decision`. Returns the final answer.
 */
export async function authorizeAs(
  jar: CookieJar,
  url: string,
  decision: 'approve' | 'deny' | 'stop' = 'approve',
  options: AuthorizeOptions = {},
): Promise<AuthorizeResult> {
  const first = await fetch(url, { headers: { cookie: jar.header() }, redirect: 'manual' });
  jar.store(first);
  const firstBody = await first.text();
  const location = first.headers.get('location');
  if (first.status !== 200 || decision === 'stop') {
    return { status: first.status, location: location ? new URL(location, url) : undefined, body: firstBody };
  }
  const form = new URLSearchParams({ ...consentFields(firstBody), decision });
  // A browser sends each ticked checkbox (`granted_scope`) once, and nothing for an unticked one.
  for (const scope of options.granted ?? tickedScopes(firstBody)) form.append('granted_scope', scope);
  const second = await fetch(new URL('/api/oauth/authorize', url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: form,
    redirect: 'manual',
  });
  const secondLocation = second.headers.get('location');
  return {
    status: second.status,
    location: secondLocation ? new URL(secondLocation) : undefined,
    body: await second.text(),
  };
}

export interface TokenCall {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

/** Request fields; an `undefined` value leaves that field out. */
export type TokenFields = Record<string, string | undefined>;

export interface TokenRequestOptions {
  /** An application/x-www-form-urlencoded body instead of JSON. */
  readonly form?: boolean;
  /** client_secret_basic (RFC 6749 §2.3.1) with these credentials. */
  readonly basic?: { id: string; secret: string };
  /** Another endpoint than `/api/oauth/token` (revocation, introspection). */
  readonly path?: string;
}

/** POST to the token endpoint, as JSON (the specification's example) or as a form. */
export async function tokenRequest(
  baseUrl: string,
  fields: TokenFields,
  options: TokenRequestOptions = {},
): Promise<TokenCall> {
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) clean[name] = value;
  const headers: Record<string, string> = {};
  if (options.basic) {
    // RFC 6749 §2.3.1 / Appendix B, as strict clients do it: everything but
    // alphanumerics is percent-encoded (so `pc_` goes as `pc%5F`).
    const encode = (value: string) =>
      [...Buffer.from(value, 'utf8')]
        .map((byte) =>
          /[A-Za-z0-9]/.test(String.fromCharCode(byte))
            ? String.fromCharCode(byte)
            : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
        )
        .join('');
    headers['authorization'] =
      `Basic ${Buffer.from(`${encode(options.basic.id)}:${encode(options.basic.secret)}`).toString('base64')}`;
  }
  let body: string;
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(clean).toString();
  } else {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(clean);
  }
  const res = await fetch(`${baseUrl}${options.path ?? '/api/oauth/token'}`, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** The client that sends a request: a public one has no secret. */
export interface RequestingClient {
  readonly clientId: string;
  readonly clientSecret?: string | undefined;
}

/**
 * How the client authenticates (RFC 6749 §2.3.1): `post` puts client_id and
 * client_secret in the body (a public client sends its client_id alone), `basic`
 * puts them in the Authorization header and neither in the body, `none` sends
 * the client_id alone, also for a confidential client.
 */
export type ClientAuth = 'post' | 'basic' | 'none';

export interface ClientRequestOptions extends Omit<TokenRequestOptions, 'basic'> {
  readonly clientAuth?: ClientAuth;
}

/** `fields` sent by `client`, authenticated as `options.clientAuth` says (client_secret_post by default). */
export function clientRequest(
  baseUrl: string,
  client: RequestingClient,
  fields: TokenFields,
  options: ClientRequestOptions = {},
): Promise<TokenCall> {
  const { clientAuth = 'post', ...rest } = options;
  if (clientAuth === 'basic') {
    return tokenRequest(baseUrl, fields, {
      ...rest,
      basic: { id: client.clientId, secret: client.clientSecret ?? '' },
    });
  }
  const credentials = {
    client_id: client.clientId,
    client_secret: clientAuth === 'post' ? client.clientSecret : undefined,
  };
  return tokenRequest(baseUrl, { ...credentials, ...fields }, rest);
}

/**
 * A code exchange (RFC 6749 §4.1.3) with the PKCE verifier (RFC 7636 §4.5) at
 * the client's redirect URI. `overrides` replace any field and add others
 * (`resource`); an `undefined` value leaves that field out.
 */
export function exchangeCode(
  baseUrl: string,
  client: RequestingClient & Pick<TestClient, 'redirectUri'>,
  grant: { readonly code: string; readonly verifier: string | undefined },
  overrides: TokenFields = {},
  options: ClientRequestOptions = {},
): Promise<TokenCall> {
  return clientRequest(
    baseUrl,
    client,
    {
      grant_type: 'authorization_code',
      code: grant.code,
      redirect_uri: client.redirectUri,
      code_verifier: grant.verifier,
      ...overrides,
    },
    options,
  );
}

/** A refresh (RFC 6749 §6); `overrides` add `scope` or `resource`, or replace a field. */
export function refreshTokens(
  baseUrl: string,
  client: RequestingClient,
  refreshToken: string,
  overrides: TokenFields = {},
): Promise<TokenCall> {
  return clientRequest(baseUrl, client, { grant_type: 'refresh_token', refresh_token: refreshToken, ...overrides });
}

/** A revocation request (RFC 7009 §2.1), a form; `overrides` add `token_type_hint` or replace a field. */
export function revokeToken(
  baseUrl: string,
  client: RequestingClient,
  token: string | undefined,
  overrides: TokenFields = {},
): Promise<TokenCall> {
  return clientRequest(baseUrl, client, { token, ...overrides }, { form: true, path: '/api/oauth/revoke' });
}

export interface FlowOptions {
  readonly scope: string;
  readonly resource?: string;
  readonly state?: string;
}

/** Authorize and approve: a fresh code and the PKCE verifier it was issued for. */
export async function issueCode(
  baseUrl: string,
  jar: CookieJar,
  client: TestClient,
  options: FlowOptions,
): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkcePair();
  const result = await authorizeAs(
    jar,
    authorizationRequest(baseUrl, client, {
      scope: options.scope,
      state: options.state ?? 'st-1',
      code_challenge: challenge,
      resource: options.resource,
    }),
  );
  const code = result.location?.searchParams.get('code');
  if (!code) throw new Error(`no code: ${result.status} ${result.location?.toString()} ${result.body.slice(0, 300)}`);
  return { code, verifier };
}

/** The whole code flow: authorize + approve + exchange. Returns the token response and the code. */
export async function runCodeFlow(
  baseUrl: string,
  jar: CookieJar,
  client: TestClient,
  options: FlowOptions,
): Promise<{ tokens: TokenCall; code: string; verifier: string }> {
  const { code, verifier } = await issueCode(baseUrl, jar, client, options);
  const tokens = await exchangeCode(baseUrl, client, { code, verifier }, { resource: options.resource });
  return { tokens, code, verifier };
}

import { MCP_SCOPES, SCOPES } from '@pacer/contract';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { OauthClient } from '../../db/tables.ts';
import { generateSecret, sha256Hex } from '../../lib/crypto.ts';
import { findConsent, insertAuthorizationCode, replaceConsent } from './authorization.repository.ts';
import { findClientByClientId } from './client.repository.ts';
import { OAuthProtocolError, UntrustedAuthorizationRequestError } from './oauth-errors.ts';
import { anyAppCanClaim, matchRedirectUri } from './redirect-uri.ts';
import { normalizeResource } from './resource.ts';

/** docs/design.md §3: codes live 10 minutes and are single use. */
export const AUTHORIZATION_CODE_TTL_SECS = 600;

/** RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is 43 characters of [A-Za-z0-9-_]. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export type AuthorizeParams = Readonly<Record<string, unknown>>;

/** A checked authorization request: what the consent page shows and the code binds. */
export interface AuthorizationRequest {
  readonly client: OauthClient;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  /** `null`: no resource indicator (a REST token). */
  readonly resource: string | null;
  readonly state: string | undefined;
  readonly codeChallenge: string;
  readonly prompt: string | undefined;
}

function single(params: AuthorizeParams, name: string): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    // RFC 6749 §3.1: parameters must not be included more than once.
    throw new OAuthProtocolError('invalid_request', `${name} must be given once`);
  }
  return value;
}

/** The consent key of a resource: '' for the REST API, the URL for MCP. */
export function consentResourceKey(resource: string | null, config: Config): string {
  return resource === null || resource === config.baseUrl ? '' : resource;
}

/**
 * Check an authorization request (RFC 6749 §4.1.1 with RFC 7636 and RFC 8707).
 * Throws `UntrustedAuthorizationRequestError` when the client or redirect URI
 * is bad (no redirect may happen), and `AuthorizationRedirectError` for every
 * other failure, which goes back to the client on its redirect URI.
 */
export async function checkAuthorizationRequest(
  db: Db,
  config: Config,
  params: AuthorizeParams,
): Promise<AuthorizationRequest> {
  let clientId: string | undefined;
  let requestedRedirect: string | undefined;
  try {
    clientId = single(params, 'client_id');
    requestedRedirect = single(params, 'redirect_uri');
  } catch (error) {
    throw new UntrustedAuthorizationRequestError((error as Error).message);
  }
  if (!clientId) throw new UntrustedAuthorizationRequestError('The request has no client_id.');
  const client = await findClientByClientId(db, clientId);
  if (!client || client.kind === 'developer') {
    throw new UntrustedAuthorizationRequestError('The application that sent you here is not registered with Pacer.');
  }
  // RFC 6749 §3.1.2.3: with one registered URI the parameter may be left out.
  const only = client.redirectUris.length === 1 ? client.redirectUris[0] : undefined;
  const redirectUri = requestedRedirect === undefined ? only : matchRedirectUri(client.redirectUris, requestedRedirect);
  if (!redirectUri) {
    throw new UntrustedAuthorizationRequestError(
      'The redirect address in this request is not one the application registered, so Pacer will not send you back to it.',
    );
  }

  let state: string | undefined;
  try {
    state = single(params, 'state');
  } catch (error) {
    throw new AuthorizationRedirectError(redirectUri, undefined, error as OAuthProtocolError);
  }
  const fail = (error: string, description: string) =>
    new AuthorizationRedirectError(redirectUri, state, new OAuthProtocolError(error, description));
  try {
    const responseType = single(params, 'response_type');
    if (responseType !== 'code') {
      throw fail('unsupported_response_type', 'response_type must be "code"');
    }
    // PKCE with S256 is required for every client (docs/design.md §3; RFC 7636, OAuth 2.1 §4.1.1).
    const codeChallenge = single(params, 'code_challenge');
    const method = single(params, 'code_challenge_method');
    if (!codeChallenge) throw fail('invalid_request', 'code_challenge is required (PKCE)');
    if (method !== 'S256') throw fail('invalid_request', 'code_challenge_method must be S256');
    if (!S256_CHALLENGE.test(codeChallenge)) throw fail('invalid_request', 'code_challenge is not an S256 challenge');

    const resource = checkResource(single(params, 'resource'), config);
    const isMcp = resource === config.mcpResource;
    if (isMcp && config.mcp.clientAllowlist.length > 0 && !config.mcp.clientAllowlist.includes(client.clientId)) {
      throw fail('unauthorized_client', 'this client may not access the MCP endpoint');
    }

    const scopes = checkScopes(single(params, 'scope'), client, isMcp);
    const prompt = single(params, 'prompt');
    if (prompt !== undefined && !['none', 'consent', 'login'].includes(prompt)) {
      throw fail('invalid_request', `prompt "${prompt}" is not supported`);
    }
    return { client, redirectUri, scopes, resource, state, codeChallenge, prompt };
  } catch (error) {
    if (error instanceof AuthorizationRedirectError) throw error;
    if (error instanceof OAuthProtocolError) throw new AuthorizationRedirectError(redirectUri, state, error);
    throw error;
  }
}

/**
 * RFC 8707 §2: an absolute URI without a fragment, one this server serves.
 * Returns the normalised form (no trailing slash, `normalizeResource`): the
 * code, the grant and its tokens are bound to exactly `{base}` or `{base}/mcp`.
 */
function checkResource(requested: string | undefined, config: Config): string | null {
  if (requested === undefined) return null;
  const resource = normalizeResource(requested);
  let parsed: URL | undefined;
  try {
    parsed = new URL(resource);
  } catch {
    parsed = undefined;
  }
  if (!parsed || resource.includes('#')) {
    throw new OAuthProtocolError('invalid_target', 'resource must be an absolute URI without a fragment');
  }
  if (resource !== config.baseUrl && resource !== config.mcpResource) {
    throw new OAuthProtocolError('invalid_target', `resource must be ${config.baseUrl} or ${config.mcpResource}`);
  }
  return resource;
}

/**
 * Requested scopes must be known, allowed for the client, and for MCP within
 * the MCP allowlist (specification §5.4 rule 1). No `scope`: the client's
 * registered scopes (for MCP, those on the allowlist).
 */
function checkScopes(scope: string | undefined, client: OauthClient, isMcp: boolean): string[] {
  const allowedForResource = isMcp ? (MCP_SCOPES as readonly string[]) : (SCOPES as readonly string[]);
  if (scope === undefined) {
    const defaults = client.scopes.filter((entry) => allowedForResource.includes(entry));
    if (defaults.length === 0) throw new OAuthProtocolError('invalid_scope', 'no scope requested and none registered');
    return defaults;
  }
  const requested = [...new Set(scope.split(' ').filter((entry) => entry.length > 0))];
  if (requested.length === 0) throw new OAuthProtocolError('invalid_scope', 'scope is empty');
  const unknown = requested.filter((entry) => !(SCOPES as readonly string[]).includes(entry));
  if (unknown.length > 0) throw new OAuthProtocolError('invalid_scope', `unknown scope: ${unknown.join(' ')}`);
  const notAllowed = requested.filter((entry) => !client.scopes.includes(entry));
  if (notAllowed.length > 0) {
    throw new OAuthProtocolError('invalid_scope', `scope not allowed for this client: ${notAllowed.join(' ')}`);
  }
  const outsideMcp = requested.filter((entry) => !allowedForResource.includes(entry));
  if (outsideMcp.length > 0) {
    throw new OAuthProtocolError('invalid_scope', `scope outside the MCP allowlist: ${outsideMcp.join(' ')}`);
  }
  return requested;
}

/** A failure reported to the client on its redirect URI (RFC 6749 §4.1.2.1). */
export class AuthorizationRedirectError extends Error {
  override readonly name = 'AuthorizationRedirectError';
  readonly redirectUri: string;
  readonly state: string | undefined;
  readonly protocolError: OAuthProtocolError;

  constructor(redirectUri: string, state: string | undefined, protocolError: OAuthProtocolError) {
    super(protocolError.message);
    this.redirectUri = redirectUri;
    this.state = state;
    this.protocolError = protocolError;
  }
}

/** Append response parameters, with `iss` (RFC 9207 §2) on every response. */
export function authorizationResponseUrl(
  config: Config,
  redirectUri: string,
  params: Readonly<Record<string, string | undefined>>,
): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  url.searchParams.set('iss', config.baseUrl);
  return url.toString();
}

export function errorRedirectUrl(config: Config, error: AuthorizationRedirectError): string {
  return authorizationResponseUrl(config, error.redirectUri, {
    error: error.protocolError.error,
    error_description: error.protocolError.message,
    state: error.state,
  });
}

/**
 * Whether an approval of this request may be remembered and reused without
 * asking again. RFC 6749 §10.2: the server "SHOULD NOT process repeated
 * authorization requests automatically (without active end-user interaction)
 * without authenticating the client or relying on other measures to ensure
 * that the repeated request comes from the original client and not an
 * impersonator". RFC 8252 §8.6 applies it to native apps: unless the
 * client's identity can be proven, a request is processed "as if no previous
 * request had been approved", and "claimed https scheme redirects MAY be
 * accepted ... as identity proof".
 *
 * So it may for a confidential client an operator registered (it
 * authenticates at the token endpoint: an impersonator gets a code it cannot
 * exchange) and for any client sent back to an `https` redirect (only the
 * owner of that host receives the code). It may not for a public client sent
 * back to a loopback or private-use redirect: any program on the device may
 * listen there, and with dynamic registration anyone can register the same
 * name and URIs. Nor for a dynamically registered confidential client sent
 * there: its secret proves only that the caller is whoever registered it,
 * and anyone can register one for nothing (RFC 7591 §5: registered metadata
 * is self-asserted; a secret kept on the device, RFC 8252 §8.5, is readable
 * by the programs that could take the loopback code), so it is asked each
 * time like a public client.
 */
export function consentMayBeRemembered(request: Pick<AuthorizationRequest, 'client' | 'redirectUri'>): boolean {
  const authenticates = !request.client.isPublic && request.client.kind !== 'dcr';
  return authenticates || !anyAppCanClaim(request.redirectUri);
}

/**
 * True when the request may be approved without showing the consent page:
 * the user already approved every requested scope for this client and
 * resource, and `consentMayBeRemembered` (otherwise the page is shown each
 * time: one click on Approve).
 */
export async function hasConsent(
  db: Db,
  config: Config,
  userId: string,
  request: AuthorizationRequest,
): Promise<boolean> {
  if (request.prompt === 'consent' || !consentMayBeRemembered(request)) return false;
  const consent = await findConsent(db, userId, request.client.id, consentResourceKey(request.resource, config));
  return consent !== undefined && request.scopes.every((scope) => consent.scopes.includes(scope));
}

/**
 * The scopes the user left ticked on the consent page, in the request's
 * order. Only scopes the request asked for count: a value the page never
 * offered grants nothing. Empty when the user unticked them all.
 */
export function tickedScopesOf(request: AuthorizationRequest, ticked: readonly string[]): string[] {
  return request.scopes.filter((scope) => ticked.includes(scope));
}

/**
 * Answer with a fresh code on the redirect URI. `decided`: the scopes the
 * user approved on the consent page (a subset of the request's, at least
 * one); they become the remembered consent for this client and resource,
 * replacing the earlier one, so scopes the user just unticked are asked for
 * again rather than approved from memory. Without it the request was
 * approved from remembered consent (`hasConsent`), which stays as it was.
 * The code, and so the grant and the token response's `scope` (RFC 6749
 * §5.1), carry exactly the approved scopes.
 */
export async function approveAuthorization(
  db: Db,
  config: Config,
  userId: string,
  request: AuthorizationRequest,
  decided?: readonly string[],
): Promise<string> {
  const scopes = decided ?? request.scopes;
  if (scopes.length === 0) throw new Error('an approval needs at least one scope');
  const code = generateSecret('pac_');
  await db.transaction().execute(async (trx) => {
    if (decided) {
      await replaceConsent(trx, {
        userId,
        clientId: request.client.id,
        resource: consentResourceKey(request.resource, config),
        scopes: decided,
      });
    }
    await insertAuthorizationCode(trx, {
      codeHash: sha256Hex(code),
      clientId: request.client.id,
      userId,
      redirectUri: request.redirectUri,
      scopes,
      resource: request.resource,
      codeChallenge: request.codeChallenge,
      codeChallengeMethod: 'S256',
      expiresAt: new Date(Date.now() + AUTHORIZATION_CODE_TTL_SECS * 1000),
    });
  });
  return authorizationResponseUrl(config, request.redirectUri, { code, state: request.state });
}

export function denialRedirectUrl(config: Config, request: AuthorizationRequest): string {
  return authorizationResponseUrl(config, request.redirectUri, {
    error: 'access_denied',
    error_description: 'The user denied the request.',
    state: request.state,
  });
}

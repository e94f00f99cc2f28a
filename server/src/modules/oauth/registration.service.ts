import { MCP_SCOPES, SCOPES } from '@pacer/contract';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { OauthClient, User } from '../../db/tables.ts';
import { AppError, type AppErrorOptions, type ErrorCode } from '../../errors.ts';
import { generateSecret, sha256Hex } from '../../lib/crypto.ts';
import type { Logger } from '../../logger.ts';
import { findFirstAdmin, findUserByEmail, findUserById } from '../accounts/user.repository.ts';
import { consumeRateLimit, type RateLimitResult, rateLimitHeaders } from '../rate-limit/rate-limit.service.ts';
import { generateClientId } from './client.service.ts';
import { appendRedirectUris, findDcrClientByRegistrationKey, insertDcrClientIfMissing } from './client.repository.ts';
import { isLoopbackHost, matchRedirectUri, redirectUriProblem } from './redirect-uri.ts';

/** RFC 7591 §3.2.2 error codes, plus the two this endpoint adds for overload. */
export type RegistrationErrorCode =
  'invalid_redirect_uri' | 'invalid_client_metadata' | 'temporarily_unavailable' | 'too_many_requests';

/** Each registration error's `AppError` code, which decides the HTTP status (errors.ts). */
const APP_ERROR_CODES: Record<RegistrationErrorCode, ErrorCode> = {
  invalid_redirect_uri: 'validation_failed',
  invalid_client_metadata: 'validation_failed',
  temporarily_unavailable: 'service_unavailable',
  too_many_requests: 'rate_limited',
};

export interface RegistrationErrorOptions extends AppErrorOptions {
  /** Overrides the status-deciding code (e.g. `payload_too_large` for an oversized body). */
  readonly appCode?: ErrorCode;
}

/**
 * A refused registration. It is an `AppError` (status from the one table);
 * the registration endpoint answers it as RFC 7591 §3.2.2 JSON
 * `{error, error_description}` instead of a problem document.
 */
export class RegistrationError extends AppError {
  readonly registrationCode: RegistrationErrorCode;

  constructor(code: RegistrationErrorCode, message: string, options: RegistrationErrorOptions = {}) {
    super(options.appCode ?? APP_ERROR_CODES[code], message, options);
    this.registrationCode = code;
  }

  toResponseObject(): { error: RegistrationErrorCode; error_description: string } {
    return { error: this.registrationCode, error_description: this.message };
  }
}

export const DCR_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
export const DCR_RESPONSE_TYPES = ['code'] as const;
const MAX_REDIRECT_URIS = 10;
const MAX_CLIENT_NAME_LENGTH = 200;
/** Spellings of one redirect set a shared client may collect (see `registerDynamicClient`). */
const MAX_SHARED_REDIRECT_URIS = 50;
const RATE_LIMIT_WINDOW_SECS = 3600;

/**
 * RFC 7591 §2 `token_endpoint_auth_method` values a registration may ask for.
 * `none`: a public client (PKCE only). The two secret methods get a client
 * secret of their own; such a client may then use either secret method at
 * the token, revocation and introspection endpoints (RFC 6749 §2.3.1: the
 * server must support Basic and may support the body; both prove the same
 * secret). `private_key_jwt`, `client_secret_jwt` and `tls_client_auth`
 * are not supported and are refused.
 */
export const DCR_AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'] as const;
export type DcrAuthMethod = (typeof DCR_AUTH_METHODS)[number];

/** The metadata this server acts on; everything else a client sends is ignored (RFC 7591 §2). */
export interface ClientMetadata {
  /** Deduplicated, in the order sent. */
  readonly redirectUris: readonly string[];
  /** As sent (trimmed), or derived from the redirect URIs when the client sent none (`deriveClientName`). */
  readonly clientName: string;
  readonly authMethod: DcrAuthMethod;
}

/** RFC 7591 §3.2.1 client information response. */
export interface ClientInformationResponse {
  readonly client_id: string;
  readonly client_id_issued_at: number;
  readonly client_name: string;
  readonly redirect_uris: string[];
  readonly grant_types: string[];
  readonly response_types: string[];
  readonly token_endpoint_auth_method: DcrAuthMethod;
  readonly scope: string;
  /** Confidential registrations only: shown this once, stored as a SHA-256 hash. */
  readonly client_secret?: string;
  /** RFC 7591 §3.2.1: required with a secret; 0 = it does not expire. */
  readonly client_secret_expires_at?: 0;
}

export interface RegisterDynamicClientOptions {
  readonly config: Config;
  /** The parsed JSON body, not yet validated. */
  readonly metadata: unknown;
  /** The caller's address: registrations are rate limited per IP. */
  readonly clientIp: string;
  readonly logger?: Logger | undefined;
}

export interface DynamicRegistration {
  readonly response: ClientInformationResponse;
  /** True when an existing shared client was returned instead of creating one. */
  readonly reused: boolean;
  /** Absent when the rate limit is off. */
  readonly rateLimit: RateLimitResult | undefined;
}

/**
 * Dynamic client registration (RFC 7591) for MCP clients. Clients may ask for
 * the MCP allowlist only. Public clients (`token_endpoint_auth_method`
 * `none`, or omitted) are shared (specification §4.2, "Compatible redirect
 * URIs reuse one shared MCP OAuth client application"): a host that does not
 * keep its registration registers again on every connection, often from a
 * new loopback port, and would otherwise add a client row each time.
 *
 * Shared only with an exact repeat (`registrationKeyOf`): the same client
 * name and the same normalized redirect-URI set. Anything else gets a client
 * of its own, so one app never receives another's client id, name or the
 * consents its users gave (RFC 8252 §8.6). The rest of a public
 * registration's metadata cannot tell two registrations apart: every
 * accepted `grant_types`, `response_types` and `scope` yields the same
 * client (both grant types, `code`, the MCP allowlist).
 *
 * A confidential registration (`client_secret_post` / `client_secret_basic`)
 * is never shared: each gets a client and a secret of its own (a secret
 * handed to whoever repeats a registration would authenticate nobody), under
 * a registration key no other registration can have (`confidentialKeyOf`).
 */
export async function registerDynamicClient(
  db: Db,
  options: RegisterDynamicClientOptions,
): Promise<DynamicRegistration> {
  const rateLimit = await consumeRegistrationAllowance(db, options);
  const metadata = parseClientMetadata(options.metadata);
  if (metadata.authMethod !== 'none') {
    return { reused: false, rateLimit, response: await registerConfidentialClient(db, options, metadata) };
  }
  const registrationKey = registrationKeyOf(metadata);

  let client = await findDcrClientByRegistrationKey(db, registrationKey);
  let reused = client !== undefined;
  if (!client) {
    const owner = await requireDcrOwner(db, options);
    client = await insertDcrClientIfMissing(db, {
      clientId: generateClientId(),
      clientSecretHash: null,
      name: metadata.clientName,
      ownerUserId: owner.id,
      kind: 'dcr',
      isPublic: true,
      redirectUris: [...metadata.redirectUris],
      scopes: [...MCP_SCOPES],
      webhookSecretHash: null,
      registrationKey,
    });
    if (!client) {
      // A concurrent identical registration won the unique index: share its client.
      client = await findDcrClientByRegistrationKey(db, registrationKey);
      if (!client) throw new Error('DCR client vanished after a conflicting insert');
      reused = true;
    }
  }
  if (reused) client = await registerNewSpellings(db, client, metadata.redirectUris);

  return { reused, rateLimit, response: clientInformation(client, metadata) };
}

/** RFC 7591 §3.2.1: the registered metadata, as this server will apply it. */
function clientInformation(client: OauthClient, metadata: ClientMetadata): ClientInformationResponse {
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    client_name: client.name,
    // Exactly what this client may send: each is now accepted at the authorize endpoint.
    redirect_uris: [...metadata.redirectUris],
    grant_types: [...DCR_GRANT_TYPES],
    response_types: [...DCR_RESPONSE_TYPES],
    token_endpoint_auth_method: metadata.authMethod,
    scope: client.scopes.join(' '),
  };
}

/**
 * A confidential client of its own, with a fresh secret (RFC 7591 §3.2.1
 * `client_secret`, `client_secret_expires_at` 0: it does not expire). Only
 * the secret's SHA-256 hash is stored, as for operator-registered apps.
 */
async function registerConfidentialClient(
  db: Db,
  options: RegisterDynamicClientOptions,
  metadata: ClientMetadata,
): Promise<ClientInformationResponse> {
  const owner = await requireDcrOwner(db, options);
  const clientId = generateClientId();
  const clientSecret = generateSecret('pcs_');
  const client = await insertDcrClientIfMissing(db, {
    clientId,
    clientSecretHash: sha256Hex(clientSecret),
    name: metadata.clientName,
    ownerUserId: owner.id,
    kind: 'dcr',
    isPublic: false,
    redirectUris: [...metadata.redirectUris],
    scopes: [...MCP_SCOPES],
    webhookSecretHash: null,
    registrationKey: confidentialKeyOf(clientId),
  });
  if (!client) throw new Error('a confidential DCR client collided with an existing registration key');
  return { ...clientInformation(client, metadata), client_secret: clientSecret, client_secret_expires_at: 0 };
}

/**
 * Registration key of a confidential DCR client: derived from its own (new,
 * random) client id, so no other registration shares it. The prefix keeps it
 * apart from every public key, which hashes a 64-hex-digit set key first.
 */
function confidentialKeyOf(clientId: string): string {
  return sha256Hex(`confidential\n${clientId}`);
}

async function requireDcrOwner(db: Db, options: RegisterDynamicClientOptions): Promise<User> {
  const owner = await resolveDcrOwner(db, options);
  if (!owner) {
    throw new RegistrationError(
      'temporarily_unavailable',
      'Client registration is not available yet: this server has no owner for registered clients. ' +
        'An operator must create an admin user or set PACER_MCP_DCR_OWNER_USER_ID / PACER_MCP_DCR_OWNER_EMAIL.',
    );
  }
  return owner;
}

/** Every registration attempt counts, refused ones included: the limit protects the endpoint. */
async function consumeRegistrationAllowance(
  db: Db,
  options: RegisterDynamicClientOptions,
): Promise<RateLimitResult | undefined> {
  const limit = options.config.rateLimits.dcrRegistrationsPerHour;
  if (limit === 0) return undefined;
  const result = await consumeRateLimit(db, {
    key: `dcr-register:ip:${options.clientIp}`,
    limit,
    windowSecs: RATE_LIMIT_WINDOW_SECS,
  });
  if (!result.allowed) {
    throw new RegistrationError(
      'too_many_requests',
      `Too many client registrations from this address; try again in ${result.resetSecs} seconds.`,
      { headers: rateLimitHeaders(result) },
    );
  }
  return result;
}

/**
 * A reused client was registered with one spelling of the set (say
 * `https://App.example/cb`); this registration may use another
 * (`https://app.example/cb`). The authorize endpoint compares redirect URIs
 * exactly (RFC 6749 §3.1.2.3), so a spelling it would not accept is added to
 * the shared client. Loopback URIs differing only in port already match
 * (RFC 8252 §7.3) and are not added, so ephemeral ports do not pile up.
 */
async function registerNewSpellings(
  db: Db,
  client: OauthClient,
  redirectUris: readonly string[],
): Promise<OauthClient> {
  const missing = redirectUris.filter((uri) => matchRedirectUri(client.redirectUris, uri) === undefined);
  if (missing.length === 0) return client;
  if (client.redirectUris.length + missing.length > MAX_SHARED_REDIRECT_URIS) {
    throw new RegistrationError(
      'invalid_redirect_uri',
      'These redirect URIs are spelled differently from the ones already registered for this set; use those spellings.',
    );
  }
  return appendRedirectUris(db, client.id, missing);
}

/**
 * Owner of new DCR clients, in the specification §4.2 order: the
 * `PACER_MCP_DCR_OWNER_USER_ID` user, the `PACER_MCP_DCR_OWNER_EMAIL` user,
 * the first (active) admin. A setting naming no active user is skipped.
 */
export async function resolveDcrOwner(
  db: Db,
  options: Pick<RegisterDynamicClientOptions, 'config' | 'logger'>,
): Promise<User | undefined> {
  const { dcrOwnerUserId, dcrOwnerEmail } = options.config.mcp;
  if (dcrOwnerUserId) {
    const user = await findUserById(db, dcrOwnerUserId);
    if (user?.active) return user;
    options.logger?.warn(
      { setting: 'PACER_MCP_DCR_OWNER_USER_ID' },
      'the configured DCR owner is not an active user; trying the next choice',
    );
  }
  if (dcrOwnerEmail) {
    const user = await findUserByEmail(db, dcrOwnerEmail);
    if (user?.active) return user;
    options.logger?.warn(
      { setting: 'PACER_MCP_DCR_OWNER_EMAIL' },
      'the configured DCR owner is not an active user; trying the next choice',
    );
  }
  return findFirstAdmin(db);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function metadataError(message: string): RegistrationError {
  return new RegistrationError('invalid_client_metadata', message);
}

function redirectError(message: string): RegistrationError {
  return new RegistrationError('invalid_redirect_uri', message);
}

/**
 * Validate a registration request (RFC 7591 §2, §3.1). Fields this server
 * does not understand are ignored, as §2 requires.
 */
export function parseClientMetadata(body: unknown): ClientMetadata {
  if (!isObject(body)) throw metadataError('The request body must be a JSON object of client metadata.');
  const redirectUris = parseRedirectUris(body['redirect_uris']);

  const clientName =
    body['client_name'] === undefined ? deriveClientName(redirectUris) : parseClientName(body['client_name']);
  const authMethod = parseAuthMethod(body['token_endpoint_auth_method']);

  const grantTypes = parseStringList(body['grant_types'], 'grant_types', DCR_GRANT_TYPES);
  const responseTypes = parseStringList(body['response_types'], 'response_types', DCR_RESPONSE_TYPES);
  // RFC 7591 §2.1: response type `code` needs grant type `authorization_code`.
  if (grantTypes && !grantTypes.includes('authorization_code') && (responseTypes ?? ['code']).includes('code')) {
    throw metadataError('grant_types must include "authorization_code" for response type "code" (RFC 7591 §2.1).');
  }

  parseScope(body['scope']);
  return { redirectUris, clientName, authMethod };
}

/**
 * RFC 7591 §2: an omitted method means `client_secret_basic`, but §3.2.1 lets
 * the server register another and say so in the response; an omitted method
 * is registered (and answered) as `none`, a public client, as before secret
 * methods were accepted (MCP hosts that omit it expect no secret). A method
 * this server does not implement is refused (§3.2.2 `invalid_client_metadata`).
 */
function parseAuthMethod(value: unknown): DcrAuthMethod {
  if (value === undefined) return 'none';
  if (typeof value !== 'string' || !(DCR_AUTH_METHODS as readonly string[]).includes(value)) {
    throw metadataError(`token_endpoint_auth_method must be one of: ${DCR_AUTH_METHODS.join(', ')}.`);
  }
  return value as DcrAuthMethod;
}

/** Used when a derived name would be refused (a host named `pacer-…`) or is too long. */
const FALLBACK_CLIENT_NAME = 'Unnamed app';

/**
 * A name for a registration without `client_name` (optional, RFC 7591 §2),
 * from the first of its normalized redirect URIs, so the name does not
 * depend on their order or on a loopback port: "App at localhost", "App at
 * claude.ai", "App (com.example.app)" for a private-use scheme. The consent
 * page marks it unverified like every self-registered name, and shows where
 * the answer goes. A derived name that `clientNameProblem` would refuse
 * becomes "Unnamed app": it must not pass a host off as Pacer either.
 */
export function deriveClientName(redirectUris: readonly string[]): string {
  const first = normalizeRedirectSet(redirectUris)[0];
  if (first === undefined) return FALLBACK_CLIENT_NAME;
  const url = new URL(first);
  const name =
    url.protocol === 'https:' || url.protocol === 'http:' ? `App at ${url.host}` : `App (${url.protocol.slice(0, -1)})`;
  return clientNameProblem(name) === undefined ? name : FALLBACK_CLIENT_NAME;
}

/**
 * Words a self-registered name may not start a word with: the consent page
 * shows the name as the app asking, and these would pass it off as Pacer
 * itself or as an app someone checked ("Pacer Official Assistant (verified)").
 */
const IMPERSONATING_WORDS = ['pacer', 'official', 'verified'] as const;

/**
 * `client_name` (RFC 7591 §2), when sent (`deriveClientName` otherwise): the
 * consent page names the app by it. Anyone may register any name, so two
 * kinds are refused:
 * - control and format characters (`\p{Cc}`, `\p{Cf}`: bidirectional
 *   overrides, zero-width joiners), which make a name display as other text;
 * - a word starting with one of `IMPERSONATING_WORDS`, compared after NFKC
 *   (full-width and other compatibility forms fold to ASCII) and lowercasing.
 * Look-alikes from other scripts still pass; the consent page marks every
 * dynamically registered name as unverified and shows where the user returns.
 */
function parseClientName(value: unknown): string {
  if (typeof value !== 'string') throw metadataError('client_name must be a string naming the client.');
  const clientName = value.trim();
  const problem = clientNameProblem(clientName);
  if (problem) throw metadataError(problem);
  return clientName;
}

/** Why a (trimmed) client name is refused, or `undefined` (see `parseClientName`). */
function clientNameProblem(clientName: string): string | undefined {
  if (clientName.length === 0 || clientName.length > MAX_CLIENT_NAME_LENGTH) {
    return `client_name must be 1-${MAX_CLIENT_NAME_LENGTH} characters.`;
  }
  if (/[\p{Cc}\p{Cf}]/u.test(clientName)) return 'client_name must not contain control or formatting characters.';
  const words = clientName
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u);
  const claimed = IMPERSONATING_WORDS.find((word) => words.some((entry) => entry.startsWith(word)));
  if (claimed) {
    return `client_name must not contain "${claimed}": a self-registered app cannot present itself as Pacer or as verified.`;
  }
  return undefined;
}

/**
 * RFC 7591 §2: `redirect_uris` is required for the authorization-code grant.
 * Each must be absolute and fragment-free (RFC 6749 §3.1.2), and https, http
 * on a loopback address (RFC 8252 §7.3, specification §5.4 rule 3), or an
 * app's private-use scheme (RFC 8252 §7.1; the rule is `redirectUriProblem`'s).
 * One registration may mix them: Cursor sends `cursor://…`, `https://…` and a
 * loopback URI together.
 */
function parseRedirectUris(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw redirectError('redirect_uris is required: a non-empty array of redirect URIs.');
  }
  if (value.length > MAX_REDIRECT_URIS) throw redirectError(`redirect_uris may hold at most ${MAX_REDIRECT_URIS}.`);
  const uris: string[] = [];
  for (const uri of value) {
    if (typeof uri !== 'string') throw redirectError('Every redirect URI must be a string.');
    // The URL parser trims and drops some characters; the authorize endpoint compares exact strings.
    if (/[\s\p{Cc}]/u.test(uri)) throw redirectError(`${JSON.stringify(uri)} must not contain whitespace.`);
    const problem = redirectUriProblem(uri);
    if (problem) throw redirectError(`${uri} ${problem}.`);
    if (!uris.includes(uri)) uris.push(uri);
  }
  return uris;
}

function parseStringList(value: unknown, field: string, allowed: readonly string[]): string[] | undefined {
  if (value === undefined) return undefined;
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((entry): entry is string => typeof entry === 'string')
  ) {
    throw metadataError(`${field} must be a non-empty array of strings.`);
  }
  const unsupported = value.filter((entry) => !allowed.includes(entry));
  if (unsupported.length > 0) {
    throw metadataError(
      `${field} ${unsupported.map((entry) => JSON.stringify(entry)).join(', ')} not supported; allowed: ${allowed.join(', ')}.`,
    );
  }
  return value;
}

/**
 * RFC 7591 §2 `scope`: space-separated. Only known scopes of the MCP
 * allowlist (specification §5.3, §5.4 rule 1) may be asked for.
 */
function parseScope(value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'string') throw metadataError('scope must be a space-separated string.');
  const scopes = value.split(' ').filter((scope) => scope.length > 0);
  const unknown = scopes.filter((scope) => !(SCOPES as readonly string[]).includes(scope));
  if (unknown.length > 0) throw metadataError(`Unknown scope: ${unknown.join(' ')}.`);
  const outside = scopes.filter((scope) => !(MCP_SCOPES as readonly string[]).includes(scope));
  if (outside.length > 0) throw metadataError(`Not allowed for MCP clients: ${outside.join(' ')}.`);
}

/** Scheme, then the authority up to the first `/`, `\`, `?` or `#` (WHATWG URL treats `\` as `/`). */
const SCHEME_AND_AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/\\?#]*)/;
/** A scheme and its colon, for URIs without an authority (`com.example.app:/callback`). */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * One redirect URI as it counts for sharing a client: scheme and host
 * lowercased (both are case-insensitive, RFC 3986 §6.2.2.1, for private-use
 * schemes such as `cursor://` too), a default port dropped, and the port of
 * an `http` loopback URI dropped (RFC 8252 §7.3: the client picks an
 * ephemeral port per run). A URI without an authority
 * (`com.example.app:/callback`, RFC 8252 §7.1) has only its scheme
 * lowercased. Path and query stay verbatim: they are case-sensitive. Expects
 * a URI that passed `redirectUriProblem`.
 */
export function normalizeRedirectUri(uri: string): string {
  const match = SCHEME_AND_AUTHORITY.exec(uri);
  if (!match) return uri.replace(SCHEME, (scheme) => scheme.toLowerCase());
  const url = new URL(uri);
  const authority = match[1] ?? '';
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at + 1) : '';
  const loopback = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  const port = loopback || url.port === '' ? '' : `:${url.port}`;
  // Special schemes' hosts come lowercased from the parser; an opaque host (`cursor://AnySphere…`) does not.
  return `${url.protocol}//${userinfo}${url.hostname.toLowerCase()}${port}${uri.slice(match[0].length)}`;
}

/** The normalized set, sorted and deduplicated: two registrations with equal sets share a client. */
export function normalizeRedirectSet(uris: readonly string[]): string[] {
  return [...new Set(uris.map(normalizeRedirectUri))].sort();
}

/** Key of a redirect set: a hash, since ten long URIs would not fit a B-tree index entry. */
export function redirectSetKeyOf(uris: readonly string[]): string {
  return sha256Hex(normalizeRedirectSet(uris).join('\n'));
}

/**
 * Stored key of a DCR client: registrations with equal keys share it
 * (`registerDynamicClient`). The redirect-set key (64 hex digits, so the
 * split is unambiguous), a newline, then the client name as registered
 * (trimmed; case and spelling count). Migration 20261126T0104 computes the
 * same in SQL for clients registered before the name was part of it.
 */
export function registrationKeyOf(metadata: Pick<ClientMetadata, 'redirectUris' | 'clientName'>): string {
  return sha256Hex(`${redirectSetKeyOf(metadata.redirectUris)}\n${metadata.clientName}`);
}

import type { Scope } from '@pacer/contract';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { BEARER, bearerChallenge, INVALID_TOKEN_REASONS } from '../http/bearer-auth.ts';
import { MCP_REQUESTED_SCOPES, mcpResourceMetadataUrl } from '../http/oauth/discovery.router.ts';
import { sha256Hex } from '../lib/crypto.ts';
import {
  checkAccessToken,
  checkAccessTokenCounting,
  type TokenCheck,
  type TokenPrincipal,
} from '../modules/oauth/token.service.ts';
import {
  consumeRateLimit,
  peekRateLimit,
  type RateLimitResult,
  type RateLimitsOptions,
} from '../modules/rate-limit/rate-limit.service.ts';

export type McpAuthFailureReason =
  | 'missing_token'
  | 'malformed_header'
  | 'invalid_token'
  | 'expired'
  | 'revoked'
  | 'inactive_user'
  | 'wrong_resource'
  | 'client_not_allowed'
  | 'insufficient_scope';

/** An answer before the MCP transport: status, headers and an RFC 6750-style body. */
export interface McpAuthRefusal {
  readonly status: 401 | 403;
  readonly reason: McpAuthFailureReason;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: { readonly error: string; readonly error_description: string };
}

export type McpAuthOutcome =
  | {
      readonly ok: true;
      readonly principal: TokenPrincipal;
      /** The windows counted with the lookup, in the order given (none when nothing was counted). */
      readonly limits: readonly RateLimitResult[];
    }
  | { readonly ok: false; readonly refusal: McpAuthRefusal };

const MESSAGES: Record<Exclude<McpAuthFailureReason, 'client_not_allowed' | 'insufficient_scope'>, string> = {
  missing_token: 'This endpoint needs an access token for the MCP resource: send `Authorization: Bearer <token>`.',
  malformed_header: 'The Authorization header is not `Bearer <token>`.',
  invalid_token: INVALID_TOKEN_REASONS.unknown,
  expired: INVALID_TOKEN_REASONS.expired,
  revoked: INVALID_TOKEN_REASONS.revoked,
  inactive_user: INVALID_TOKEN_REASONS.inactive_user,
  wrong_resource: 'This token is not bound to the MCP resource; authorize with resource={base}/mcp.',
};

function unauthorized(config: Config, reason: keyof typeof MESSAGES, tokenSent: boolean): McpAuthRefusal {
  const description = MESSAGES[reason].replace('{base}', config.baseUrl);
  return {
    status: 401,
    reason,
    headers: {
      'WWW-Authenticate': bearerChallenge({
        resourceMetadataUrl: mcpResourceMetadataUrl(config),
        // Every MCP scope (MCP_REQUESTED_SCOPES): hosts ask for exactly this on the first
        // authorization, and a model never calls a write tool it was never shown.
        scopes: MCP_REQUESTED_SCOPES,
        // RFC 6750 §3.1: no error code when the request carried no token at all.
        ...(tokenSent ? { error: 'invalid_token' as const, description } : {}),
      }),
    },
    body: { error: tokenSent ? 'invalid_token' : 'invalid_request', error_description: description },
  };
}

/**
 * docs/design.md §3 "MCP / Transport and access": a token bound to exactly
 * `{base}/mcp` (RFC 8707), unexpired, unrevoked, of an active user; else 401
 * with the MCP resource's metadata URL (RFC 9728 §5.1). A client off
 * `PACER_MCP_CLIENT_ALLOWLIST` (when set) gets 403.
 *
 * With `windows`, the token's rate-limit windows are counted by the lookup's
 * own statement, as on REST (`checkAccessTokenCounting`): one round trip.
 */
export async function authenticateMcp(
  deps: { readonly config: Config; readonly db: Db },
  authorization: string | undefined,
  windows?: (tokenHash: string) => RateLimitsOptions & { readonly knownTokenOnly?: boolean },
): Promise<McpAuthOutcome> {
  const { config } = deps;
  if (!authorization) return { ok: false, refusal: unauthorized(config, 'missing_token', false) };
  const match = BEARER.exec(authorization);
  if (!match) return { ok: false, refusal: unauthorized(config, 'malformed_header', true) };
  const token = match[1] as string;
  let check: TokenCheck;
  let limits: readonly RateLimitResult[] = [];
  if (windows) {
    const tokenHash = sha256Hex(token);
    ({ check, limits } = await checkAccessTokenCounting(deps.db, tokenHash, windows(tokenHash)));
  } else {
    check = await checkAccessToken(deps.db, token);
  }
  if (!check.ok) {
    return {
      ok: false,
      refusal: unauthorized(config, check.reason === 'unknown' ? 'invalid_token' : check.reason, true),
    };
  }
  const { principal } = check;
  if (principal.resource !== config.mcpResource) {
    return { ok: false, refusal: unauthorized(config, 'wrong_resource', true) };
  }
  const allowlist = config.mcp.clientAllowlist;
  if (allowlist.length > 0 && !allowlist.includes(principal.clientId)) {
    return {
      ok: false,
      refusal: {
        status: 403,
        reason: 'client_not_allowed',
        headers: {},
        body: { error: 'access_denied', error_description: 'This client is not allowed to use the MCP endpoint.' },
      },
    };
  }
  return { ok: true, principal, limits };
}

/**
 * MCP 2025-11-25 "Scope Challenge Handling": a tool whose scopes the token
 * lacks is refused with HTTP 403 `insufficient_scope`, naming the scopes to
 * ask for: the token's own plus the tool's, so stepping up never loses a
 * scope the host already had.
 */
export function insufficientScope(config: Config, principal: TokenPrincipal, needed: readonly Scope[]): McpAuthRefusal {
  const scopes = [...new Set([...principal.scopes, ...needed])] as Scope[];
  const missing = needed.filter((scope) => !principal.scopes.includes(scope));
  const description = `This tool needs the scope ${missing.join(' ')}.`;
  return {
    status: 403,
    reason: 'insufficient_scope',
    headers: {
      'WWW-Authenticate': bearerChallenge({
        resourceMetadataUrl: mcpResourceMetadataUrl(config),
        scopes,
        error: 'insufficient_scope',
        description,
      }),
    },
    body: { error: 'insufficient_scope', error_description: description },
  };
}

/** The window of `PACER_MCP_AUTH_FAILURES_PER_MINUTE`. */
const AUTH_FAILURE_WINDOW_SECS = 60;

const authFailureKey = (clientIp: string) => `mcp:auth-failures:${clientIp}`;

/**
 * Whether `clientIp` has spent its window of failed authentications: then
 * every request from it whose token fails is refused with 429 until the
 * window ends, neither counted nor recorded (a peek: nothing is written).
 * Undefined while the address may go on, or with the limit off.
 */
export async function authFailuresSpent(
  deps: { readonly config: Config; readonly db: Db },
  clientIp: string,
): Promise<RateLimitResult | undefined> {
  const limit = deps.config.mcp.authFailuresPerMinute;
  if (limit === 0) return undefined;
  const window = await peekRateLimit(deps.db, { key: authFailureKey(clientIp), limit });
  return window && !window.allowed ? window : undefined;
}

/** Count one failed authentication (401) from `clientIp`; the verdict of its window, or undefined with the limit off. */
export async function countAuthFailure(
  deps: { readonly config: Config; readonly db: Db },
  clientIp: string,
): Promise<RateLimitResult | undefined> {
  const limit = deps.config.mcp.authFailuresPerMinute;
  if (limit === 0) return undefined;
  return consumeRateLimit(deps.db, { key: authFailureKey(clientIp), limit, windowSecs: AUTH_FAILURE_WINDOW_SECS });
}

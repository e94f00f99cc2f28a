import type { Logger } from '../../logger.ts';
import type { Scope } from '@pacer/contract';
import type { Db } from '../../db/database.ts';
import { AppError } from '../../errors.ts';
import { generateSecret, sha256Hex } from '../../lib/crypto.ts';
import { findUserByEmail } from '../accounts/user.repository.ts';
import { ensureDeveloperClient, parseScopes } from './client.service.ts';
import { refuseAdminScopesForDeveloperToken } from './admin-scopes.ts';
import { type RateLimitResult, rateLimitResultsOf, type RateLimitsOptions } from '../rate-limit/rate-limit.service.ts';
import {
  type AccessTokenRecord,
  findAccessTokenByHash,
  findAccessTokenCountingHits,
  insertAccessToken,
  insertGrant,
  markGrantWrite,
  touchGrant,
} from './token.repository.ts';
import type { UserRole } from '../../db/tables.ts';

export const ACCESS_TOKEN_PREFIX = 'pat_';

/** Who is calling, as established by a valid bearer token. */
export interface TokenPrincipal {
  readonly userId: string;
  readonly role: UserRole;
  readonly timeZone: string;
  /** Public client id of the app the token was issued to: the "source app". */
  readonly clientId: string;
  readonly grantId: string;
  readonly scopes: readonly string[];
  /** `null` for tokens issued without a resource indicator. */
  readonly resource: string | null;
  /** The profile's `nutrition` feature (MCP lists nutrition tools only while it is on). */
  readonly nutritionEnabled: boolean;
  /**
   * Milliseconds since a token of this grant last wrote (database clock), null if
   * none has: within the read-your-writes window its reads go to the primary.
   */
  readonly msSinceWrite: number | null;
}

export type TokenCheck =
  | { readonly ok: true; readonly principal: TokenPrincipal }
  | { readonly ok: false; readonly reason: 'unknown' | 'expired' | 'revoked' | 'inactive_user' };

/**
 * Validate an access token: known (by its SHA-256), not expired, not revoked
 * (itself or its grant), and its user still active. Audience and scopes are
 * the caller's to check, because they depend on where the token is used.
 */
export async function checkAccessToken(db: Db, token: string): Promise<TokenCheck> {
  return tokenCheckOf(await findAccessTokenByHash(db, sha256Hex(token)));
}

export interface CountedTokenCheck {
  readonly check: TokenCheck;
  /** The rate-limit windows counted, in the order of the buckets given. */
  readonly limits: RateLimitResult[];
}

/**
 * `checkAccessToken` for a token given by its SHA-256, counting one hit
 * against each rate-limit bucket in the same statement: every bucket counts,
 * whatever the token is worth, unless `knownTokenOnly` (then an unknown
 * token counts nothing, and no limits come back).
 */
export async function checkAccessTokenCounting(
  db: Db,
  tokenHash: string,
  windows: RateLimitsOptions & { readonly knownTokenOnly?: boolean },
): Promise<CountedTokenCheck> {
  const { record, hits } = await findAccessTokenCountingHits(db, tokenHash, {
    keys: windows.buckets.map((bucket) => bucket.key),
    windowSecs: windows.windowSecs,
    knownTokenOnly: windows.knownTokenOnly === true,
  });
  return { check: tokenCheckOf(record), limits: rateLimitResultsOf(hits, windows.buckets) };
}

function tokenCheckOf(record: AccessTokenRecord | undefined): TokenCheck {
  if (!record) return { ok: false, reason: 'unknown' };
  if (record.tokenRevokedAt || record.grantRevokedAt) return { ok: false, reason: 'revoked' };
  if (record.expiresAt.getTime() <= Date.now()) return { ok: false, reason: 'expired' };
  if (!record.userActive) return { ok: false, reason: 'inactive_user' };
  return {
    ok: true,
    principal: {
      userId: record.userId,
      role: record.userRole,
      timeZone: record.userTimeZone,
      clientId: record.clientId,
      grantId: record.grantId,
      scopes: record.scopes,
      resource: record.resource,
      nutritionEnabled: record.userFeatureFlags.nutrition !== false,
      msSinceWrite: record.msSinceWrite,
    },
  };
}

const GRANT_TOUCH_INTERVAL_MS = 60_000;
/** When this process last recorded each grant's use: spares the database a write per request. */
const lastTouched = new Map<string, number>();

/**
 * Note that a grant was used (for "last used" in /settings): at most one
 * write per grant and minute from each process. Failures are only logged.
 */
export function noteGrantUse(db: Db, grantId: string, logger: Logger): void {
  const now = Date.now();
  if (now - (lastTouched.get(grantId) ?? 0) < GRANT_TOUCH_INTERVAL_MS) return;
  lastTouched.set(grantId, now);
  if (lastTouched.size > 10_000) lastTouched.clear();
  touchGrant(db, grantId).catch((error: unknown) => logger.warn({ err: error }, 'could not record grant use'));
}

/**
 * Note that a token of `grantId` has written, before its answer goes out: the
 * caller's next reads, on any API process, then go to the primary for the
 * read-your-writes window (db/read-replica.ts). Only called with a replica.
 */
export async function noteGrantWrite(db: Db, grantId: string): Promise<void> {
  await markGrantWrite(db, grantId);
}

export interface IssueDeveloperTokenOptions {
  readonly email: string;
  readonly scopes: readonly string[];
  /** Absent: a REST token. `{base}/mcp`: a token for the MCP endpoint. */
  readonly resource?: string | undefined;
  readonly expiresInSecs: number;
  /** The resources this deployment serves; anything else is refused. */
  readonly allowedResources: readonly string[];
}

export interface IssuedToken {
  readonly accessToken: string;
  readonly tokenType: 'Bearer';
  readonly expiresIn: number;
  readonly scope: string;
  readonly resource: string | null;
  readonly clientId: string;
}

/**
 * A developer token (docs/design.md §4): issued to the user's own built-in
 * developer client on a grant of its own, no refresh token, bound to a
 * resource only when one is given.
 */
export async function issueDeveloperToken(db: Db, options: IssueDeveloperTokenOptions): Promise<IssuedToken> {
  const scopes: Scope[] = parseScopes(options.scopes);
  if (scopes.length === 0) throw AppError.validation('scope', 'at least one scope is required');
  if (options.resource !== undefined && !options.allowedResources.includes(options.resource)) {
    throw AppError.validation('resource', `must be one of ${options.allowedResources.join(', ')}`);
  }
  const user = await findUserByEmail(db, options.email);
  if (!user) throw new AppError('not_found', `No user with e-mail ${options.email}.`);
  if (!user.active) throw new AppError('forbidden', `The account ${options.email} is deactivated.`);
  refuseAdminScopesForDeveloperToken(scopes, user);
  const accessToken = generateSecret(ACCESS_TOKEN_PREFIX);
  const resource = options.resource ?? null;
  const client = await db.transaction().execute(async (trx) => {
    const developerClient = await ensureDeveloperClient(trx, user.id);
    const grantId = await insertGrant(trx, { clientId: developerClient.id, userId: user.id, scopes, resource });
    await insertAccessToken(trx, {
      grantId,
      tokenHash: sha256Hex(accessToken),
      scopes,
      resource,
      expiresAt: new Date(Date.now() + options.expiresInSecs * 1000),
    });
    return developerClient;
  });
  return {
    accessToken,
    tokenType: 'Bearer',
    expiresIn: options.expiresInSecs,
    scope: scopes.join(' '),
    resource,
    clientId: client.clientId,
  };
}

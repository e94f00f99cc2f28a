import type { Db } from '../../db/database.ts';
import { deleteIdempotencyKeysExpiredBefore } from '../idempotency/idempotency.repository.ts';
import { deleteMcpRecordsBefore } from '../mcp-audit/mcp-audit.repository.ts';
import { MCP_RECORD_RETENTION_DAYS } from '../mcp-audit/mcp-stats.service.ts';
import { deleteTokensExpiredBefore } from '../oauth/token.repository.ts';
import { deleteCountersExpiredBefore } from '../rate-limit/rate-limit.repository.ts';
import { deleteKnownAddressesUnusedSince, deleteThrottlesIdleSince } from '../accounts/login-throttle.repository.ts';
import { KNOWN_ADDRESS_DAYS } from '../accounts/login.service.ts';
import { deleteSessionsExpiredBefore } from '../accounts/session.repository.ts';

export interface PurgeCounts {
  readonly sessions: number;
  readonly tokens: number;
  readonly idempotencyKeys: number;
  readonly rateLimitCounters: number;
  /** Sign-in throttles with no attempt and no lock for `graceDays` (their counts went stale after a day). */
  readonly loginThrottles: number;
  /** Addresses an account has not signed in from for `KNOWN_ADDRESS_DAYS`: they no longer count as known. */
  readonly loginKnownAddresses: number;
  /** MCP execution and auth-failure records past their retention. */
  readonly mcpRecords: number;
}

/**
 * Delete sessions, tokens, idempotency keys and rate-limit windows that
 * expired more than `graceDays` days ago, and MCP stats records older than
 * their retention (a fixed age, not an expiry).
 */
export async function purgeExpired(db: Db, graceDays: number): Promise<PurgeCounts> {
  const now = Date.now();
  const before = new Date(now - graceDays * 86_400_000);
  const mcpBefore = new Date(now - MCP_RECORD_RETENTION_DAYS * 86_400_000);
  return db.transaction().execute(async (trx) => ({
    sessions: await deleteSessionsExpiredBefore(trx, before),
    tokens: await deleteTokensExpiredBefore(trx, before),
    idempotencyKeys: await deleteIdempotencyKeysExpiredBefore(trx, before),
    rateLimitCounters: await deleteCountersExpiredBefore(trx, before),
    loginThrottles: await deleteThrottlesIdleSince(trx, before),
    loginKnownAddresses: await deleteKnownAddressesUnusedSince(trx, new Date(now - KNOWN_ADDRESS_DAYS * 86_400_000)),
    mcpRecords: await deleteMcpRecordsBefore(trx, mcpBefore),
  }));
}

import type { Db } from '../../db/database.ts';
import { deleteIdempotencyKeysExpiredBefore } from '../idempotency/idempotency.repository.ts';
import { deleteTokensExpiredBefore } from '../oauth/token.repository.ts';
import { deleteCountersExpiredBefore } from '../rate-limit/rate-limit.repository.ts';
import { deleteSessionsExpiredBefore } from './session.repository.ts';

export interface PurgeCounts {
  readonly sessions: number;
  readonly tokens: number;
  readonly idempotencyKeys: number;
  readonly rateLimitCounters: number;
}

/** Delete sessions, tokens, idempotency keys and rate-limit windows that expired more than `graceDays` days ago. */
export async function purgeExpired(db: Db, graceDays: number): Promise<PurgeCounts> {
  const before = new Date(Date.now() - graceDays * 86_400_000);
  return db.transaction().execute(async (trx) => ({
    sessions: await deleteSessionsExpiredBefore(trx, before),
    tokens: await deleteTokensExpiredBefore(trx, before),
    idempotencyKeys: await deleteIdempotencyKeysExpiredBefore(trx, before),
    rateLimitCounters: await deleteCountersExpiredBefore(trx, before),
  }));
}

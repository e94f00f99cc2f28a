import { type RawBuilder, sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';

/**
 * Mark the user's derived data stale from `fromDate` on, in the caller's
 * transaction. One row per user: the earliest date wins, so a burst of writes
 * leaves one request covering all of them.
 */
export async function upsertRecomputeRequest(db: DbOrTrx, userId: string, fromDate: string): Promise<void> {
  await recomputeRequestUpsert(userId, fromDate).execute(db);
}

/**
 * The statement of `upsertRecomputeRequest`, for a write that runs it as a
 * data-modifying CTE of its own statement (the wellness upsert does): the
 * values may be expressions of that statement, e.g. its parameters.
 */
export function recomputeRequestUpsert(
  userId: string | RawBuilder<unknown>,
  fromDate: string | RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql`
    insert into analytics_recompute_requests (user_id, from_date, requested_at)
    values (${userId}, ${fromDate}::date, clock_timestamp())
    on conflict (user_id) do update set
      from_date = least(analytics_recompute_requests.from_date, excluded.from_date),
      requested_at = excluded.requested_at`;
}

export interface RecomputeRequest {
  readonly fromDate: string;
  /** `requested_at` as PostgreSQL's text: a JS Date would drop its microseconds and never match again. */
  readonly requestedAt: string;
}

export async function findRecomputeRequest(db: DbOrTrx, userId: string): Promise<RecomputeRequest | undefined> {
  return db
    .selectFrom('analyticsRecomputeRequests')
    .select(['fromDate', sql<string>`requested_at::text`.as('requestedAt')])
    .where('userId', '=', userId)
    .executeTakeFirst();
}

/**
 * Settle the request a recompute served: only when no write has come since
 * it was read (`requestedAt` unchanged). A newer request stays for the next run.
 */
export async function settleRecomputeRequest(db: DbOrTrx, userId: string, requestedAt: string): Promise<boolean> {
  const result = await db
    .deleteFrom('analyticsRecomputeRequests')
    .where('userId', '=', userId)
    .where('requestedAt', '=', sql<Date>`${requestedAt}::timestamptz`)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** A transaction-scoped advisory lock on the user's derived data (released at commit or rollback). */
export async function lockUserForRecompute(db: DbOrTrx, userId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`recompute:${userId}`}, 0))`.execute(db);
}

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
 * A queued job older than this no longer vouches for a request: a write
 * enqueues again (a job lost to a failure that left its mark is replaced).
 */
export const RECOMPUTE_JOB_MARK_SECS = 300;

/**
 * The statement of `upsertRecomputeRequest`, for a write that runs it as a
 * data-modifying CTE of its own statement (the wellness upsert does): the
 * values may be expressions of that statement, e.g. its parameters (it adds
 * none of its own, so its text can sit among raw `$n` placeholders).
 *
 * It also marks the request as having a queued job (`job_queued_at`),
 * unless a fresh mark is there already: a write that finds one can leave the
 * job out (`recomputeJobNeeded`), as the queued job will read its change. A
 * run clears the mark before it reads the request (`takeRecomputeRequest`),
 * so a write landing after that marks it again and sends a job of its own.
 */
export function recomputeRequestUpsert(
  userId: string | RawBuilder<unknown>,
  fromDate: string | RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql`
    insert into analytics_recompute_requests (user_id, from_date, requested_at, job_queued_at)
    values (${userId}, ${fromDate}::date, clock_timestamp(), clock_timestamp())
    on conflict (user_id) do update set
      from_date = least(analytics_recompute_requests.from_date, excluded.from_date),
      requested_at = excluded.requested_at,
      job_queued_at = case
        when analytics_recompute_requests.job_queued_at is null
          or analytics_recompute_requests.job_queued_at
            < clock_timestamp() - make_interval(secs => ${sql.lit(RECOMPUTE_JOB_MARK_SECS)})
        then excluded.job_queued_at
        else analytics_recompute_requests.job_queued_at end`;
}

/**
 * True, later in the transaction of a `recomputeRequestUpsert`, when that
 * upsert marked the request itself: its job must be sent. (A mark at or
 * after the transaction's start may also be another transaction's that
 * committed meanwhile: then one job too many is sent, which the queue's one
 * queued job per user folds away. A mark set here is never missed.)
 */
export function recomputeJobNeeded(userId: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`exists (
    select 1 from analytics_recompute_requests
    where user_id = ${userId} and job_queued_at >= transaction_timestamp())`;
}

export interface RecomputeRequest {
  readonly fromDate: string;
  /** `requested_at` as PostgreSQL's text: a JS Date would drop its microseconds and never match again. */
  readonly requestedAt: string;
}

/**
 * The user's pending request, for a run about to serve it. Clears the
 * request's job mark in the same statement: from here on a write cannot
 * count on this run to see its change, so it sends a job of its own.
 */
export async function takeRecomputeRequest(db: DbOrTrx, userId: string): Promise<RecomputeRequest | undefined> {
  return db
    .updateTable('analyticsRecomputeRequests')
    .set({ jobQueuedAt: null })
    .where('userId', '=', userId)
    .returning(['fromDate', sql<string>`requested_at::text`.as('requestedAt')])
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

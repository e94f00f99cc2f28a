import type { PgBoss } from 'pg-boss';
import type { Db, DbOrTrx } from '../../db/database.ts';
import type { BatchStatement } from '../../db/statement-batch.ts';
import { enqueue, enqueueStatement, sendOnlyWhen } from '../../queue/boss.ts';
import { analyticsRecomputeQueue } from '../../queue/queues.ts';
import { listUsersBehindToday } from './analytics.repository.ts';
import { recomputeJobNeeded, upsertRecomputeRequest } from './recompute.repository.ts';

/** What a service that writes an input of the derived data needs: its handle and the queue. */
export interface AnalyticsInputDeps {
  readonly db: DbOrTrx;
  readonly boss: PgBoss;
}

/** The earliest date there can be: "recompute everything" (a profile change touches every day). */
export const FROM_THE_BEGINNING = '0001-01-01';

/**
 * Ask for the user's derived data (training load, recovery, fuel) to be
 * recomputed from `fromDate` on. Runs in the caller's transaction (`db` must
 * be the transaction that writes the input): the request row and its pg-boss
 * job commit with the write or not at all. The job is keyed by the user in a
 * `short` queue, so a burst of writes makes at most one queued job per user;
 * the request row keeps the earliest date.
 */
export async function requestRecompute(
  deps: { readonly boss: PgBoss },
  trx: DbOrTrx,
  userId: string,
  fromDate: string,
): Promise<void> {
  await upsertRecomputeRequest(trx, userId, fromDate);
  await enqueue(deps.boss, trx, analyticsRecomputeQueue, { userId }, { singletonKey: userId });
}

/**
 * The job half of `requestRecompute` as a statement to run, for a write that
 * records the request row in its own statement (`recomputeRequestUpsert` as
 * a CTE, as the wellness upsert does) and runs both in one transaction
 * (`runAtomically`), row first: the row and the job commit together or not
 * at all. The job is inserted only when that upsert marked the request
 * itself (`recomputeJobNeeded`); while a queued job still vouches for the
 * request, the write sends none (pg-boss would fold it into that job anyway,
 * at the cost of its insert statement on every write).
 */
export async function recomputeJobStatement(
  deps: { readonly boss: PgBoss; readonly db: Db },
  userId: string,
): Promise<BatchStatement> {
  const send = await enqueueStatement(deps.boss, analyticsRecomputeQueue, { userId }, { singletonKey: userId });
  return sendOnlyWhen(deps.db, send, recomputeJobNeeded, userId);
}

/** Users brought forward per rollover run; the next hourly run takes the rest. */
const ROLLOVER_BATCH = 1000;

/**
 * The hourly rollover: a user whose derived data ends before their local
 * today gets a recompute from their last stored day, so today's recovery and
 * the decay of training load appear without a write.
 */
export async function requestDayRollovers(deps: { readonly db: Db; readonly boss: PgBoss }): Promise<number> {
  const behind = await listUsersBehindToday(deps.db, ROLLOVER_BATCH);
  for (const user of behind) {
    await deps.db.transaction().execute((trx) => requestRecompute(deps, trx, user.userId, user.lastDate));
  }
  return behind.length;
}

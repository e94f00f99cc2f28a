import type { Db, DbOrTrx } from '../../db/database.ts';
import { listUsersWithChanges, recordChange, type SettleWindow, takeChanges } from '../changes/changes.repository.ts';
import { type LoadAndRecoveryOutcome, recomputeLoadAndRecovery } from './analytics.service.ts';
import { listUsersBehindToday } from './analytics.repository.ts';
import { tryLockUserForRecompute } from './recompute.repository.ts';
import { recomputeFuel } from './fuel.service.ts';
import { refreshRecommendations } from './refresh-recommendations.service.ts';

/** One run for one user: the change records it served and what it rewrote. */
export interface RecomputeRun extends LoadAndRecoveryOutcome {
  readonly userId: string;
  /** The earliest changed date among the records served: where the run started. */
  readonly changedFrom: string;
  /** Change records served by this one run (a burst of writes coalesces here). */
  readonly changes: number;
}

/**
 * Serve the user's change records in one run: take them all (however many
 * writes left them), recompute training load, recovery and fuel from the
 * earliest changed date on, then the recommendations the new numbers call
 * for, in one transaction with the records' deletion. A worker that dies
 * half-way leaves the old numbers and the records, so the next run does the
 * work exactly once. Answers undefined when there was nothing to serve, or
 * when another run holds the user (it, or the next poll, serves the records).
 */
export async function recomputeUser(db: Db, userId: string, now = new Date()): Promise<RecomputeRun | undefined> {
  return db.transaction().execute(async (trx) => {
    if (!(await tryLockUserForRecompute(trx, userId))) return undefined;
    const taken = await takeChanges(trx, userId);
    if (!taken) return undefined;
    const outcome = await recomputeFrom(trx, userId, taken.fromDate, now);
    return { userId, changedFrom: taken.fromDate, changes: taken.count, ...outcome };
  });
}

/**
 * The recompute itself, in the caller's transaction: training load, recovery
 * and fuel from `fromDate` through the user's today (`now`), then the
 * recommendations the new numbers call for. `recomputeUser` runs it for
 * change records; a caller that runs it directly (a test or a bench with a
 * fixed `now`) owns the consistency with the records.
 */
export async function recomputeFrom(
  trx: DbOrTrx,
  userId: string,
  fromDate: string,
  now: Date,
): Promise<LoadAndRecoveryOutcome> {
  const outcome = await recomputeLoadAndRecovery(trx, userId, fromDate, now);
  await recomputeFuel(trx, userId, fromDate, now);
  await refreshRecommendations(trx, userId, now);
  return outcome;
}

/** Users served per drain pass; a full pass is followed by another at once. */
export const DRAIN_BATCH = 16;

/**
 * When a user's records are served: once their writes have paused for
 * `quietMs`, so a burst (a sync of many days, a backfill) is one run, or at
 * the latest `maxWaitMs` after the oldest, so a steady stream of writes still
 * sees its derived data within about a second (plus the poll and the run).
 */
export const SETTLE = { quietMs: 100, maxWaitMs: 750 } as const satisfies SettleWindow;

/**
 * The users with settled change records (the longest-waiting first, at most
 * `DRAIN_BATCH`), each for `recomputeUser`, but those `excluded` (waiting
 * out a failure).
 */
export async function listUsersToRecompute(db: Db, excluded: readonly string[] = []): Promise<string[]> {
  return listUsersWithChanges(db, DRAIN_BATCH, SETTLE, excluded);
}

/** Users brought forward per rollover run; the next hourly run takes the rest. */
const ROLLOVER_BATCH = 1000;

/**
 * The hourly rollover: a user whose derived data ends before their local
 * today gets a change record from their last stored day, so today's recovery
 * and the decay of training load appear without a write.
 */
export async function recordDayRollovers(db: Db): Promise<number> {
  const behind = await listUsersBehindToday(db, ROLLOVER_BATCH);
  for (const user of behind) {
    await recordChange(db, { userId: user.userId, kind: 'day_rollover', fromDate: user.lastDate });
  }
  return behind.length;
}

import type { Db, DbOrTrx } from '../../db/database.ts';
import { findUserById } from '../accounts/user.repository.ts';
import {
  type DerivedChangeKind,
  listUsersWithChanges,
  recordChange,
  type SettleWindow,
  takeChanges,
  type TakenChanges,
} from '../changes/changes.repository.ts';
import { type LoadAndRecoveryOutcome, recomputeLoadAndRecovery } from './analytics.service.ts';
import { listUsersBehindToday } from './analytics.repository.ts';
import { tryLockUserForRecompute } from './recompute.repository.ts';
import { recomputeFuel } from './fuel.service.ts';
import { refreshRecommendations } from './refresh-recommendations.service.ts';

/** The derived numbers a run may rewrite (recommendations follow whatever changed). */
export type DerivedOutput = 'trainingLoad' | 'recovery' | 'fuel';

/**
 * Which derived numbers each kind of input change can alter (docs/science.md
 * names the inputs of each model): training load reads workouts and the
 * profile's thresholds; recovery reads wellness and the load's TSB; fuel reads
 * meals, recorded and planned workouts, and body mass (the profile's weight,
 * else the latest wellness weight). A run rewrites only what its records
 * feed, so a wellness day leaves training load and fuel as they were.
 */
export const FEEDS: Readonly<Record<DerivedChangeKind, readonly DerivedOutput[]>> = {
  wellness: ['recovery'],
  body_mass: ['recovery', 'fuel'],
  nutrition: ['fuel'],
  workouts: ['trainingLoad', 'recovery', 'fuel'],
  planned_workouts: ['fuel'],
  profile: ['trainingLoad', 'recovery', 'fuel'],
  day_rollover: ['trainingLoad', 'recovery', 'fuel'],
};

/** The earliest date each output must be rewritten from; an output not named is left as stored. */
export type OutputsFrom = Partial<Readonly<Record<DerivedOutput, string>>>;

/** What the taken records ask for: per output, the earliest date of the kinds that feed it. */
export function outputsFrom(fromDateByKind: TakenChanges['fromDateByKind']): OutputsFrom {
  const from: Partial<Record<DerivedOutput, string>> = {};
  for (const [kind, date] of Object.entries(fromDateByKind) as [DerivedChangeKind, string][]) {
    for (const output of FEEDS[kind]) {
      const known = from[output];
      if (known === undefined || date < known) from[output] = date;
    }
  }
  return from;
}

/** One run for one user: the change records it served and what it rewrote. */
export interface RecomputeRun extends LoadAndRecoveryOutcome {
  readonly userId: string;
  /** The earliest changed date among the records served. */
  readonly changedFrom: string;
  /** Change records served by this one run (a burst of writes coalesces here). */
  readonly changes: number;
  /** What the records asked for: per output, where its rewrite started (`outputsFrom`). */
  readonly outputs: OutputsFrom;
}

/**
 * Serve the user's change records in one run: take them all (however many
 * writes left them), recompute what they feed (`FEEDS`: training load,
 * recovery, fuel) from the earliest date each asks for, then the
 * recommendations the new numbers call for, in one transaction with the
 * records' deletion. A worker that dies
 * half-way leaves the old numbers and the records, so the next run does the
 * work exactly once. Answers undefined when there was nothing to serve, or
 * when another run holds the user (it, or the next poll, serves the records),
 * or when the user is gone (its records are deleted all the same).
 */
export async function recomputeUser(db: Db, userId: string, now = new Date()): Promise<RecomputeRun | undefined> {
  return db.transaction().execute(async (trx) => {
    if (!(await tryLockUserForRecompute(trx, userId))) return undefined;
    const taken = await takeChanges(trx, userId);
    if (!taken) return undefined;
    // Records can outlive their user (derived_changes has no foreign key to users): taken, with nothing to compute.
    if (!(await findUserById(trx, userId))) return undefined;
    const outputs = outputsFrom(taken.fromDateByKind);
    const outcome = await recomputeOutputs(trx, userId, outputs, now);
    const changedFrom = Object.values(taken.fromDateByKind).sort()[0] as string;
    return { userId, changedFrom, changes: taken.count, outputs, ...outcome };
  });
}

/**
 * The recompute itself, in the caller's transaction: each output named in
 * `from` from its date through the user's today (`now`), then the
 * recommendations the new numbers call for. `recomputeUser` runs it for
 * change records.
 */
export async function recomputeOutputs(
  trx: DbOrTrx,
  userId: string,
  from: OutputsFrom,
  now: Date,
): Promise<LoadAndRecoveryOutcome> {
  const outcome = await recomputeLoadAndRecovery(trx, userId, from, now);
  if (from.fuel !== undefined) await recomputeFuel(trx, userId, from.fuel, now);
  await refreshRecommendations(trx, userId, now);
  return outcome;
}

/**
 * Every output from `fromDate` on (`recomputeOutputs`), for a caller that
 * runs the recompute directly (a test or a bench with a fixed `now`): it owns
 * the consistency with the change records.
 */
export async function recomputeFrom(
  trx: DbOrTrx,
  userId: string,
  fromDate: string,
  now: Date,
): Promise<LoadAndRecoveryOutcome> {
  return recomputeOutputs(trx, userId, { trainingLoad: fromDate, recovery: fromDate, fuel: fromDate }, now);
}

/** Users served per drain pass; a full pass is followed by another at once. */
export const DRAIN_BATCH = 16;

/**
 * When a user's records are served: once their writes have paused for
 * `quietMs`, so a burst (a sync of many days, a backfill) is one run, or at
 * the latest `maxWaitMs` after the oldest, so a steady stream of writes still
 * sees its derived data within about 1.3 s (plus the run: the wait, then up
 * to a poll interval, `PACER_DERIVED_POLL_MS`). A run recomputes every day
 * from the earliest changed one, whatever number of writes it serves, so the
 * longer the wait the fewer runs a steady stream costs: 1000 ms rather than
 * 750 ms is about a fifth fewer runs for such a user, while the bound
 * (a write's derived data served within 2 s at p95) keeps a margin for the
 * poll, the run and a busy machine. A writer that pauses (one athlete's
 * app, the bench's lag probe) is served after `quietMs`, not after this.
 */
export const SETTLE = { quietMs: 100, maxWaitMs: 1000 } as const satisfies SettleWindow;

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

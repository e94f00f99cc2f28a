import { keysetPage, type KeysetPage } from '../../lib/cursor.ts';
import {
  RECOVERY_COMPONENTS,
  type DateRangeQuery,
  type RecoveryComponent,
  type RecoveryDay as RecoveryDayBody,
  type TrainingLoad,
} from '@pacer/contract';
import type { Db, DbOrTrx } from '../../db/database.ts';
import { encodeDateCursor, resolveDatePage } from '../../lib/date-range.ts';
import { addDays, localDateOf } from '../../lib/dates.ts';
import type { Actor } from '../../lib/actor.ts';
import {
  findFirstDataDates,
  findModelProfile,
  findTrainingLoadDay,
  listRecovery,
  listTrainingLoad,
  listWellnessBetween,
  listWorkoutsFrom,
  type ModelProfile,
  storeRecoveryFrom,
  storeTrainingLoadFrom,
  type StoredLoadDay,
  type StoredRecoveryDay,
} from './analytics.repository.ts';
import { RECOVERY_HISTORY_DAYS, recoverySeries, type RecoveryDay } from './recovery.model.ts';
import { PAGE_LIMIT_MAX, type PlannedWorkout } from '@pacer/contract';
import { listPlannedWorkoutPage } from '../planned-workouts/planned-workouts.service.ts';
import { type ProjectedLoadDay, LOAD_PROJECTION_DAYS, projectTrainingLoad } from './load-projection.ts';
import { plannedLoadOf } from './recommendation-rules.ts';
import {
  ctlEnteringDay,
  type DatedStress,
  stressOfWorkoutRow,
  trainingLoadSeries,
  weeklyCtlRamp,
} from './training-load.model.ts';

export interface LoadAndRecoveryOutcome {
  /** First day rewritten, or `null` when nothing was (no data to compute from, or neither was asked for). */
  readonly from: string | null;
  readonly to: string;
  /** Days rewritten from `from` through `to`. */
  readonly days: number;
}

/** Where training load and recovery must be rewritten from; one not named is left as stored. */
export interface LoadAndRecoveryFrom {
  readonly trainingLoad?: string | undefined;
  readonly recovery?: string | undefined;
}

/**
 * Recompute training load and recovery from the dates asked (through the
 * user's today) and store them, in the caller's transaction. The training
 * load chain continues from the stored state of the day before, so a change
 * on one day rewrites only that day and those after it. Recovery reads the
 * load's TSB: a new load is rewritten from its date on, so recovery is too;
 * recovery asked alone reads the stored load, computing only the days it lacks
 * (a day the hourly rollover has not reached yet, or a first day earlier than
 * before). The models are pure (see training-load.model.ts,
 * recovery.model.ts); this only reads their inputs and stores their outputs.
 */
export async function recomputeLoadAndRecovery(
  trx: DbOrTrx,
  userId: string,
  asked: LoadAndRecoveryFrom,
  now: Date,
): Promise<LoadAndRecoveryOutcome> {
  const profile = await findModelProfile(trx, userId);
  const today = localDateOf(now, profile?.timeZone ?? 'UTC');
  const earliestAsked = earliest(asked.trainingLoad, asked.recovery);
  if (earliestAsked === undefined) return { from: null, to: today, days: 0 };
  const { firstWorkout, firstWellness } = await findFirstDataDates(trx, userId);
  const firstData = earliest(firstWorkout ?? undefined, firstWellness ?? undefined);
  if (!profile || firstData === undefined) {
    await storeTrainingLoadFrom(trx, userId, earliestAsked, []);
    await storeRecoveryFrom(trx, userId, earliestAsked, []);
    return { from: null, to: today, days: 0 };
  }
  // Nothing exists before the first data: start there (a profile change asks for "everything").
  const notBeforeData = (date: string) => (date > firstData ? date : firstData);
  const from = notBeforeData(earliestAsked);
  const to = from > today ? from : today;

  // The load's TSB for the days before the load is rewritten, as stored; a day missing there is computed too.
  const askedLoadFrom = asked.trainingLoad === undefined ? undefined : notBeforeData(asked.trainingLoad);
  const storedUntil = askedLoadFrom === undefined ? to : addDays(askedLoadFrom, -1);
  const stored = storedUntil < from ? [] : await listTrainingLoad(trx, userId, from, storedUntil);
  const loadFrom = earliest(askedLoadFrom, firstMissingDay(stored, from, storedUntil));
  const storedLoad = loadFrom === undefined ? stored : stored.filter((day) => day.date < loadFrom);
  const load = loadFrom === undefined ? [] : await recomputeLoadFrom(trx, userId, profile, firstData, loadFrom, to);

  const history = await listWellnessBetween(trx, userId, addDays(from, -RECOVERY_HISTORY_DAYS), to);
  const recovery = recoverySeries(history, {
    fromDate: from,
    toDate: to,
    loadByDate: new Map([...storedLoad, ...load].map((day) => [day.date, { tsb: day.tsb, ctl: ctlEnteringDay(day) }])),
    ...(firstWorkout ? { firstWorkoutDate: firstWorkout } : {}),
  });
  await storeRecoveryFrom(trx, userId, from, recovery.map(toStoredRecovery));
  return { from, to, days: recovery.length };
}

function earliest(...dates: (string | undefined)[]): string | undefined {
  return dates.filter((date): date is string => date !== undefined).sort()[0];
}

/** The first day of `from`..`to` with no stored row (the rows are ordered by date), or undefined when none lacks. */
function firstMissingDay(stored: readonly StoredLoadDay[], from: string, to: string): string | undefined {
  let expected = from;
  for (const day of stored) {
    if (day.date !== expected) return expected;
    expected = addDays(expected, 1);
  }
  return expected <= to ? expected : undefined;
}

/** The training load chain from `from` through `to`, continued from the stored day before, stored and answered. */
async function recomputeLoadFrom(
  trx: DbOrTrx,
  userId: string,
  profile: ModelProfile,
  firstData: string,
  from: string,
  to: string,
): Promise<StoredLoadDay[]> {
  const previous = from > firstData ? await findTrainingLoadDay(trx, userId, addDays(from, -1)) : undefined;
  const stress: DatedStress[] = [];
  for (const workout of await listWorkoutsFrom(trx, userId, previous ? from : firstData)) {
    const scored = stressOfWorkoutRow(workout, {
      ftp: profile.ftpWatts,
      restingHr: profile.restingHr,
      thresholdHr: profile.thresholdHr,
    });
    if (scored) stress.push({ date: workout.localDate, tss: scored.tss, method: scored.method });
  }
  const load = trainingLoadSeries(stress, {
    fromDate: from,
    toDate: to,
    ...(previous ? { previous: { date: previous.date, atl: previous.atl, ctl: previous.ctl } } : {}),
  }).map((day) => ({ date: day.date, tss: day.tss, atl: day.atl, ctl: day.ctl, tsb: day.tsb, method: day.method }));
  await storeTrainingLoadFrom(trx, userId, from, load);
  return load;
}

function toStoredRecovery(day: RecoveryDay): StoredRecoveryDay {
  return {
    date: day.date,
    score: day.score,
    status: day.status,
    components: Object.fromEntries(
      RECOVERY_COMPONENTS.map((name) => [name, toComponentBody(day.components[name])]),
    ) as StoredRecoveryDay['components'],
    explanation: day.explanation,
  };
}

/** The contract's component: the model's own fields, as the API shows them. */
function toComponentBody(component: RecoveryDay['components'][keyof RecoveryDay['components']]): RecoveryComponent {
  const baseline = component.baseline as { mean: number; sd: number; low: number; high: number } | null;
  return {
    available: component.available,
    value: component.value,
    baseline: baseline ? { mean: baseline.mean, sd: baseline.sd, low: baseline.low, high: baseline.high } : null,
    score: component.score,
    weight: component.available ? component.weight : null,
    contribution: component.available ? component.contribution : null,
    detail: component.detail,
  };
}

/** The stored days of a range (default: the 30 days up to today; at most 366). */
export async function getTrainingLoad(
  db: Db,
  actor: Actor,
  query: { from?: string; to?: string },
): Promise<TrainingLoad> {
  const page = resolveDatePage({ ...query, limit: 1 }, actor.timeZone);
  const rows = await listTrainingLoad(db, actor.userId, page.from, page.to);
  return { items: rows };
}

export async function getRecoveryPage(
  db: Db,
  actor: Actor,
  query: DateRangeQuery,
): Promise<KeysetPage<RecoveryDayBody>> {
  const page = resolveDatePage(query, actor.timeZone);
  const rows = await listRecovery(db, actor.userId, page);
  return keysetPage(
    rows,
    page.limit,
    (row) => row,
    (last) => encodeDateCursor(last.date),
  );
}

/** The load chart's outlook: the ramp to today and the projection after it (docs/science.md §1.1). */
export interface LoadOutlook {
  /** The last stored day the projection starts from; `null` without training load yet. */
  readonly from: string | null;
  /** CTL today − CTL 7 days before; `null` while either day is not stored. */
  readonly rampCtlPerWeek: number | null;
  readonly projection: readonly ProjectedLoadDay[];
  /** Planned workouts in the projected days with neither a stress nor a duration: counted as 0. */
  readonly unscoredPlannedWorkouts: number;
  /**
   * The local date of the athlete's first workout (`null` without one): form
   * in percent of CTL means little in the 42 days after it (docs/science.md §1.1, §2).
   */
  readonly firstWorkoutDate: string | null;
}

/**
 * The ramp rate and the 14-day projection of CTL / ATL / TSB from today's
 * stored state and the planned workouts after today, each counted with its
 * planned stress as the recommendation rules read it (`plannedLoadOf`).
 */
export async function getLoadOutlook(db: Db, actor: Actor, now: Date): Promise<LoadOutlook> {
  const today = localDateOf(now, actor.timeZone);
  const [stored, { firstWorkout }] = await Promise.all([
    listTrainingLoad(db, actor.userId, addDays(today, -RAMP_DAYS), today),
    findFirstDataDates(db, actor.userId),
  ]);
  const last = stored.at(-1);
  if (last?.date !== today) {
    return {
      from: null,
      rampCtlPerWeek: null,
      projection: [],
      unscoredPlannedWorkouts: 0,
      firstWorkoutDate: firstWorkout,
    };
  }
  const planned = await listPlannedBetween(db, actor, addDays(today, 1), addDays(today, LOAD_PROJECTION_DAYS));
  const stresses: DatedStress[] = [];
  let unscored = 0;
  for (const workout of planned) {
    const stress = plannedLoadOf(workout).trainingStress;
    if (stress === null) unscored += 1;
    else stresses.push({ date: workout.date, tss: stress, method: 'estimate' });
  }
  return {
    from: last.date,
    rampCtlPerWeek: weeklyCtlRamp(stored, today),
    projection: projectTrainingLoad(last, stresses),
    unscoredPlannedWorkouts: unscored,
    firstWorkoutDate: firstWorkout,
  };
}

const RAMP_DAYS = 7;

/** Every planned workout from `from` through `to`, page by page. */
async function listPlannedBetween(db: Db, actor: Actor, from: string, to: string): Promise<PlannedWorkout[]> {
  const all: PlannedWorkout[] = [];
  let cursor: string | undefined;
  do {
    const page = await listPlannedWorkoutPage(db, actor, { from, to, limit: PAGE_LIMIT_MAX, cursor });
    all.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return all;
}

import type { FuelTimeline, PlannedWorkoutFuel } from '@pacer/contract';
import { FUEL_RANGE_MAX_DAYS } from '@pacer/contract';
import type { Db, DbOrTrx } from '../../db/database.ts';
import type { PlannedWorkoutRow } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import {
  addDays,
  daysBetween,
  formatInZone,
  formatWithOffset,
  localDateOf,
  localMidnightMs,
  zonedTimeMs,
  zoneOffsetMinutes,
} from '../../lib/dates.ts';
import { findModelProfile } from './analytics.repository.ts';
import { stressOfWorkoutRow } from './training-load.model.ts';
import type { Actor } from '../../lib/actor.ts';
import { findPlannedWorkout, listPlannedWorkouts } from '../planned-workouts/planned-workouts.repository.ts';
import {
  defaultFtpWatts,
  exerciseCarbohydrateG,
  exerciseFromBlocks,
  plannedWorkoutIntensity,
  type ExerciseInput,
} from './exercise.ts';
import { planWorkoutFuel } from './fuel-plan.ts';
import {
  findFirstFuelDataDate,
  findFuelDay,
  findLatestWellnessWeight,
  listCarbItemsBetween,
  listFuelDays,
  listLoggedFoodDates,
  listRecentStartTimes,
  listRecordedWorkoutsBetween,
  replaceFuelDaysFrom,
  type FuelMealRow,
  type RecordedWorkoutRow,
  type StoredFuelDay,
} from './fuel.repository.ts';
import { DEFAULT_BODY_MASS_KG, STEP_MS } from './glycogen.constants.ts';
import {
  capacityFor,
  clampToCapacity,
  initialState,
  percentOf,
  simulateGlycogen,
  type GlycogenCapacity,
  type GlycogenSimulationInput,
  type GlycogenState,
  type MealInput,
} from './glycogen.model.ts';

/**
 * The fuel chain as stored (the model itself is glycogen.model.ts): one row
 * per local day from 7 days before the athlete's first data through 14 days
 * ahead, each day starting where the previous ended. This file only gathers
 * each day's inputs and stores what the model makes of them.
 */

/** Days ahead of today the chain is kept for, so planned workouts have a forecast. */
export const FUEL_HORIZON_DAYS = 14;
/** The chain starts this many days before the first data, from the model's start state. */
const LEAD_IN_DAYS = 7;
/** The longest release (HYPER_LOAD ends at 360 min): meals this long before a day still release into it. */
const LONGEST_RELEASE_MS = 6 * 3_600_000;
/** Planned workouts without a time start at the median of recent recorded starts, else at this time. */
const DEFAULT_START_TIME = '09:00';
const RECENT_STARTS_DAYS = 60;

/** Who the model runs for: body mass, FTP and time zone, with what was assumed. */
interface Athlete {
  readonly timeZone: string;
  readonly capacity: GlycogenCapacity;
  readonly ftpWatts: number;
  readonly restingHr: number | null;
  readonly thresholdHr: number | null;
  readonly assumptions: readonly string[];
}

async function athleteOf(db: DbOrTrx, userId: string): Promise<Athlete> {
  const profile = await findModelProfile(db, userId);
  if (!profile) throw new AppError('not_found', 'The account no longer exists.');
  const assumptions: string[] = [];
  let mass = profile.weightKg ?? (await findLatestWellnessWeight(db, userId));
  if (mass === null) {
    mass = DEFAULT_BODY_MASS_KG;
    assumptions.push(`Body mass ${DEFAULT_BODY_MASS_KG} kg (no weight in the profile or wellness).`);
  }
  let ftp = profile.ftpWatts;
  if (ftp === null) {
    ftp = defaultFtpWatts(mass);
    assumptions.push(`FTP ${Math.round(ftp)} W (3.0 W/kg; no FTP in the profile).`);
  }
  return {
    timeZone: profile.timeZone,
    capacity: capacityFor(mass),
    ftpWatts: ftp,
    restingHr: profile.restingHr,
    thresholdHr: profile.thresholdHr,
    assumptions,
  };
}

interface PlacedPlannedWorkout {
  readonly row: PlannedWorkoutRow;
  readonly startMs: number;
  readonly endMs: number;
  readonly intensityFactor: number;
  readonly exercise: readonly ExerciseInput[];
}

/** The time window, intensity and exercise of a planned workout, or why it cannot be placed. */
function placePlanned(
  row: PlannedWorkoutRow,
  athlete: Athlete,
  defaultStart: string,
  assumptions: string[],
): PlacedPlannedWorkout | undefined {
  const intensity = plannedWorkoutIntensity({
    sport: row.sport,
    durationSecs: row.durationSecs,
    trainingStress: row.trainingStress,
    structure: row.structure,
  });
  if (!intensity) {
    assumptions.push(`Planned workout "${row.title}" on ${row.date} has no duration and is left out.`);
    return undefined;
  }
  if (row.timeOfDay === null) {
    assumptions.push(`Planned workout "${row.title}" on ${row.date} has no start time: placed at ${defaultStart}.`);
  }
  const startMs = zonedTimeMs(row.date, row.timeOfDay ?? defaultStart, athlete.timeZone);
  const exercise = exerciseFromBlocks(startMs, intensity.blocks, athlete.ftpWatts);
  const secs = intensity.blocks.reduce((sum, block) => sum + block.durationSecs, 0);
  const weighted = intensity.blocks.reduce((sum, block) => sum + block.durationSecs * block.intensityFactor, 0);
  return { row, startMs, endMs: startMs + secs * 1000, intensityFactor: secs > 0 ? weighted / secs : 0, exercise };
}

/** The median of `HH:MM` times, or the default. */
function medianStart(times: readonly string[]): string {
  if (times.length === 0) return DEFAULT_START_TIME;
  const sorted = [...times].sort();
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? DEFAULT_START_TIME;
}

interface RecordedWorkout {
  readonly id: string;
  readonly title: string | null;
  /** The athlete's local date of its start. */
  readonly date: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly exercise: ExerciseInput;
}

interface FuelWindowInputs {
  /** Logged items: what the timeline lists. */
  readonly meals: readonly (MealInput & { readonly name: string })[];
  /**
   * Logged items and, on past days without food logged, the assumed recovery
   * intake after each recorded workout: what the model eats.
   */
  readonly modelMeals: readonly MealInput[];
  readonly recorded: readonly RecordedWorkout[];
  readonly planned: readonly PlacedPlannedWorkout[];
  readonly loggedFoodDates: ReadonlySet<string>;
  readonly assumptions: string[];
}

/** Everything the model needs between two dates (inclusive), read once. */
async function loadInputs(
  db: DbOrTrx,
  userId: string,
  athlete: Athlete,
  range: { readonly from: string; readonly to: string; readonly today: string; readonly now: Date },
): Promise<FuelWindowInputs> {
  const fromMs = localMidnightMs(range.from, athlete.timeZone);
  const toMs = localMidnightMs(addDays(range.to, 1), athlete.timeZone);
  const assumptions: string[] = [];
  const [mealRows, workoutRows, plannedRows, loggedDates, recentStarts] = await Promise.all([
    listCarbItemsBetween(db, userId, fromMs - LONGEST_RELEASE_MS, toMs),
    listRecordedWorkoutsBetween(db, userId, fromMs - 24 * 3_600_000, toMs),
    listPlannedWorkouts(db, userId, {
      from: range.from > range.today ? range.from : range.today,
      to: range.to,
      after: undefined,
      limit: 1000,
    }),
    // The day before too: a workout late on it may still be refilling the first day.
    listLoggedFoodDates(db, userId, addDays(range.from, -1), range.to),
    listRecentStartTimes(db, userId, athlete.timeZone, range.now.getTime() - RECENT_STARTS_DAYS * 86_400_000),
  ]);
  const defaultStart = medianStart(recentStarts);
  const loggedFoodDates = new Set(loggedDates);
  const meals = mealRows.map((meal: FuelMealRow) => ({
    name: meal.name,
    atMs: meal.loggedAt.getTime(),
    carbsG: meal.carbs,
    absorptionType: meal.absorptionType,
  }));
  const recorded = workoutRows.map((workout) => recordedWorkoutOf(workout, athlete));
  return {
    meals,
    modelMeals: [...meals, ...assumedRecoveryMeals(recorded, loggedFoodDates, range.today)],
    recorded,
    planned: plannedRows.flatMap((row) => placePlanned(row, athlete, defaultStart, assumptions) ?? []),
    loggedFoodDates,
    assumptions,
  };
}

/**
 * A recorded workout as the model takes it (docs/science.md §3, exercise
 * demand): over its elapsed time, moving for moving / elapsed of it; the
 * energy from its work (average power over the moving time) when the file has
 * power, else from IF × FTP; the carbohydrate share from its IF (NP / FTP,
 * else heart rate, else the sport).
 */
function recordedWorkoutOf(workout: RecordedWorkoutRow, athlete: Athlete): RecordedWorkout {
  const stress = stressOfWorkoutRow(workout, {
    ftp: athlete.ftpWatts,
    restingHr: athlete.restingHr,
    thresholdHr: athlete.thresholdHr,
  });
  const startMs = workout.startTime.getTime();
  const elapsedSecs = workout.elapsedSecs ?? workout.movingSecs ?? 0;
  const movingSecs = workout.movingSecs ?? elapsedSecs;
  const endMs = startMs + elapsedSecs * 1000;
  const intensityFactor = stress?.intensityFactor ?? 0;
  const watts = workout.avgPower ?? intensityFactor * athlete.ftpWatts;
  const movingFraction = elapsedSecs > 0 ? Math.min(1, movingSecs / elapsedSecs) : 1;
  return {
    id: workout.id,
    title: workout.name,
    date: localDateOf(workout.startTime, athlete.timeZone),
    startMs,
    endMs,
    exercise: { startMs, endMs, intensityFactor, watts, movingFraction },
  };
}

/**
 * On a past day without food logged, the athlete ate but did not log: an
 * assumed BALANCED intake equal to each recorded workout's carbohydrate use,
 * eaten at its end, so the day shows the ride's drain and refill
 * (docs/science.md §3, days without food logs).
 */
function assumedRecoveryMeals(
  recorded: readonly RecordedWorkout[],
  loggedFoodDates: ReadonlySet<string>,
  today: string,
): MealInput[] {
  return recorded
    .filter((workout) => workout.date < today && !loggedFoodDates.has(workout.date))
    .map((workout) => {
      const { watts, intensityFactor, movingFraction } = workout.exercise;
      const minutes = ((workout.endMs - workout.startMs) / 60_000) * movingFraction;
      return {
        atMs: workout.endMs,
        carbsG: exerciseCarbohydrateG(watts, intensityFactor, minutes),
        absorptionType: 'BALANCED' as const,
      };
    })
    .filter((meal) => meal.carbsG > 0);
}

function exerciseOf(inputs: FuelWindowInputs): ExerciseInput[] {
  return [...inputs.recorded.map((workout) => workout.exercise), ...inputs.planned.flatMap((plan) => plan.exercise)];
}

const round2 = (value: number) => Math.round(value * 100) / 100;

/**
 * One day of the chain. A past day without food logged is balanced
 * (docs/science.md §3): no resting use (unlogged food covered it), its
 * workouts drain as recorded and the assumed recovery intake refills. A day
 * with a recorded workout the stores cannot fuel is marked incomplete.
 */
function simulateDay(
  date: string,
  start: GlycogenState,
  athlete: Athlete,
  inputs: FuelWindowInputs,
  today: string,
): StoredFuelDay {
  const dayStart = localMidnightMs(date, athlete.timeZone);
  const steps = Math.round((localMidnightMs(addDays(date, 1), athlete.timeZone) - dayStart) / STEP_MS);
  const balanced = date < today && !inputs.loggedFoodDates.has(date);
  const simulation = simulateGlycogen({
    capacity: athlete.capacity,
    start,
    startAt: dayStart,
    steps,
    meals: inputs.modelMeals,
    exercise: exerciseOf(inputs),
    restingUse: !balanced,
  });
  const dayEnd = dayStart + steps * STEP_MS;
  const unfuelled = inputs.recorded.filter(
    (workout) =>
      workout.startMs < dayEnd &&
      workout.endMs > dayStart &&
      simulation.points.some(
        (point) => point.deficitG > 0 && point.atMs > workout.startMs && point.atMs - STEP_MS < workout.endMs,
      ),
  );
  const assumptions: string[] = [];
  if (balanced) {
    assumptions.push(
      `${date}: no food logged, taken as balanced (resting use covered; recorded workouts drain and are refilled after).`,
    );
  }
  for (const workout of unfuelled) {
    assumptions.push(
      `${date}: the recorded workout "${workout.title ?? 'untitled'}" needs more carbohydrate than the log shows: the log is incomplete, and the stores are held at their floors.`,
    );
  }
  return {
    date,
    startState: start,
    endState: simulation.end,
    points: simulation.points.map((point) => [
      point.atMs,
      round2(point.liverG),
      round2(point.muscleG),
      round2(point.gutG),
    ]),
    assumptions,
    incompleteLog: unfuelled.length > 0,
  };
}

/**
 * Recompute the fuel chain from `fromDate` through today + 14 days and store
 * it, in the caller's transaction. The day before `fromDate` keeps its stored
 * end state, which the recompute starts from (the model's invariant: starting
 * from a stored day equals a full run).
 */
export async function recomputeFuel(trx: DbOrTrx, userId: string, fromDate: string, now: Date): Promise<number> {
  const athlete = await athleteOf(trx, userId);
  const today = localDateOf(now, athlete.timeZone);
  const first = await findFirstFuelDataDate(trx, userId);
  const chainStart = addDays(first !== null && first < today ? first : today, -LEAD_IN_DAYS);
  let from = fromDate > chainStart ? fromDate : chainStart;
  const previous = from > chainStart ? await findFuelDay(trx, userId, addDays(from, -1)) : undefined;
  if (from > chainStart && !previous) from = chainStart;
  const to = addDays(today, FUEL_HORIZON_DAYS);
  if (from > to) return 0;

  const inputs = await loadInputs(trx, userId, athlete, { from, to, today, now });
  const days: StoredFuelDay[] = [];
  // A capacity change (a new weight) applies at once: nothing is carried above the new ceiling.
  let state = clampToCapacity(previous?.endState ?? initialState(athlete.capacity), athlete.capacity);
  for (let date = from; date <= to; date = addDays(date, 1)) {
    const day = simulateDay(date, state, athlete, inputs, today);
    days.push(day);
    state = day.endState;
  }
  await replaceFuelDaysFrom(trx, userId, from, days);
  return days.length;
}

/** `GET /api/fuel/timeline`: the stored chain for at most 14 days, with the meals and workouts in it. */
export async function getFuelTimeline(
  db: Db,
  actor: Actor,
  query: { readonly from?: string | undefined; readonly to?: string | undefined },
  now = new Date(),
): Promise<FuelTimeline> {
  const athlete = await athleteOf(db, actor.userId);
  const today = localDateOf(now, athlete.timeZone);
  const from = query.from ?? (query.to ? addDays(query.to, -2) : today);
  const to = query.to ?? addDays(from, 2);
  if (from > to) throw AppError.validation('from', 'must not be after `to`');
  if (daysBetween(from, to) + 1 > FUEL_RANGE_MAX_DAYS) {
    throw new AppError('date_range_too_large', `A fuel timeline spans at most ${FUEL_RANGE_MAX_DAYS} days.`, {
      errors: [{ path: 'to', message: `at most ${FUEL_RANGE_MAX_DAYS} days after \`from\`` }],
    });
  }
  const [stored, inputs] = await Promise.all([
    listFuelDays(db, actor.userId, from, to),
    loadInputs(db, actor.userId, athlete, { from, to, today, now }),
  ]);
  const total = athlete.capacity.liverG + athlete.capacity.muscleG;
  const fromMs = localMidnightMs(from, athlete.timeZone);
  return {
    capacity: { liverG: athlete.capacity.liverG, muscleG: athlete.capacity.muscleG },
    points: stored.flatMap((day) => {
      const at = dayFormatter(day, athlete.timeZone);
      // A capacity change applies at once: days stored under a larger one are shown within the new ceilings.
      return day.points.map(([atMs, storedLiverG, storedMuscleG, gutG]) => {
        const liverG = Math.min(storedLiverG, athlete.capacity.liverG);
        const muscleG = Math.min(storedMuscleG, athlete.capacity.muscleG);
        return {
          at: at(atMs),
          liverG,
          muscleG,
          gutG,
          totalG: round2(liverG + muscleG),
          percent: round2(((liverG + muscleG) / total) * 100),
        };
      });
    }),
    workouts: [
      ...inputs.recorded
        .filter((workout) => workout.startMs >= fromMs)
        .map((workout) => ({
          kind: 'recorded' as const,
          id: workout.id,
          title: workout.title,
          start: formatInZone(workout.startMs, athlete.timeZone),
          end: formatInZone(workout.endMs, athlete.timeZone),
          intensityFactor: round2(workout.exercise.intensityFactor),
          fuelStatus: null,
          limitingStore: null,
        })),
      ...inputs.planned.map((plan) => ({
        kind: 'planned' as const,
        id: plan.row.id,
        title: plan.row.title,
        start: formatInZone(plan.startMs, athlete.timeZone),
        end: formatInZone(plan.endMs, athlete.timeZone),
        intensityFactor: round2(plan.intensityFactor),
        // Filled by issue 21's fuel-status work (one plan per planned workout in the range).
        fuelStatus: null,
        limitingStore: null,
      })),
    ],
    meals: inputs.meals
      .filter((meal) => meal.atMs >= fromMs)
      .map((meal) => ({
        at: formatInZone(meal.atMs, athlete.timeZone),
        name: meal.name,
        carbsG: meal.carbsG,
        absorptionType: meal.absorptionType,
        source: 'logged' as const,
      })),
    incompleteLogDates: stored.filter((day) => day.incompleteLog).map((day) => day.date),
    assumptions: [
      ...new Set([...athlete.assumptions, ...inputs.assumptions, ...stored.flatMap((day) => day.assumptions)]),
    ],
  };
}

/**
 * Timestamps of one stored day in the athlete's offset. The zone's offset is
 * looked up once for the day (an Intl lookup per point was most of the
 * timeline's CPU) and per point only on a day whose offset changes (DST).
 */
function dayFormatter(day: StoredFuelDay, timeZone: string): (atMs: number) => string {
  const first = day.points[0]?.[0];
  const last = day.points.at(-1)?.[0];
  if (first === undefined || last === undefined) return (atMs) => formatInZone(atMs, timeZone);
  const offset = zoneOffsetMinutes(new Date(first), timeZone);
  if (zoneOffsetMinutes(new Date(last), timeZone) !== offset) return (atMs) => formatInZone(atMs, timeZone);
  return (atMs) => formatWithOffset(new Date(Math.floor(atMs / 1000) * 1000), offset).replace('.000', '');
}

/**
 * `GET /api/planned-workouts/{id}/fuel`: the predicted level at the start,
 * the end and the lowest point of a planned workout, its status and the
 * advice that makes it `ready`. The day is re-simulated from its stored start
 * (one day, never the chain), with the advice tried out by the model.
 */
export async function getPlannedWorkoutFuel(
  db: Db,
  actor: Actor,
  id: string,
  now = new Date(),
): Promise<PlannedWorkoutFuel> {
  const row = await findPlannedWorkout(db, actor.userId, id);
  if (!row) throw new AppError('not_found', `No planned workout ${id}.`);
  const athlete = await athleteOf(db, actor.userId);
  const today = localDateOf(now, athlete.timeZone);
  const stored = await findFuelDay(db, actor.userId, row.date);
  const inputs = await loadInputs(db, actor.userId, athlete, { from: row.date, to: row.date, today, now });
  const placed = inputs.planned.find((plan) => plan.row.id === id);
  if (!placed) {
    throw new AppError(
      'unprocessable',
      row.date < today
        ? 'The planned workout is in the past: its fuel is the recorded workouts’ now.'
        : 'The planned workout has no duration, so its fuel cannot be predicted; give it a duration or steps.',
    );
  }
  return planPlacedWorkoutFuel({ athlete, inputs, placed, stored, now });
}

/**
 * The fuel plan of every planned workout from `range.from` to `range.to`
 * (never before today) that has not started by `now`, as
 * `GET /api/planned-workouts/{id}/fuel` would answer for each, in the
 * caller's handle or transaction. Reads the stored chain, so a caller that
 * has just recomputed it in its transaction sees the new one. Workouts that
 * cannot be placed (no duration) are left out.
 */
export async function planUpcomingWorkoutsFuel(
  db: DbOrTrx,
  userId: string,
  range: { readonly from: string; readonly to: string },
  now: Date,
): Promise<PlannedWorkoutFuel[]> {
  const athlete = await athleteOf(db, userId);
  const today = localDateOf(now, athlete.timeZone);
  const from = range.from > today ? range.from : today;
  if (from > range.to) return [];
  const inputs = await loadInputs(db, userId, athlete, { from, to: range.to, today, now });
  const upcoming = inputs.planned.filter((plan) => plan.startMs > now.getTime());
  if (upcoming.length === 0) return [];
  const stored = new Map((await listFuelDays(db, userId, from, range.to)).map((day) => [day.date, day]));
  return upcoming.map((placed) =>
    planPlacedWorkoutFuel({ athlete, inputs, placed, stored: stored.get(placed.row.date), now }),
  );
}

interface PlacedWorkoutFuelOptions {
  readonly athlete: Athlete;
  readonly inputs: FuelWindowInputs;
  readonly placed: PlacedPlannedWorkout;
  /** The stored day of the workout's date; without one the day starts from the model's start state. */
  readonly stored: Pick<StoredFuelDay, 'startState'> | undefined;
  readonly now: Date;
}

/**
 * The workout's day re-simulated from its stored start (one day, never the
 * chain), with the advice tried out by the model.
 */
function planPlacedWorkoutFuel({ athlete, inputs, placed, stored, now }: PlacedWorkoutFuelOptions): PlannedWorkoutFuel {
  const row = placed.row;
  const simulation = {
    capacity: athlete.capacity,
    start: clampToCapacity(stored?.startState ?? initialState(athlete.capacity), athlete.capacity),
    startAt: localMidnightMs(row.date, athlete.timeZone),
    meals: inputs.modelMeals,
    exercise: exerciseOf(inputs),
  };
  const plan = planWorkoutFuel({
    simulation,
    workout: { startMs: placed.startMs, endMs: placed.endMs },
    notBeforeMs: now.getTime(),
    timeZone: athlete.timeZone,
  });
  const startAt = Math.floor(placed.startMs / STEP_MS) * STEP_MS;
  const endAt = Math.ceil(placed.endMs / STEP_MS) * STEP_MS;
  const levels = workoutLevels(simulation, startAt, endAt);
  const level = (state: Pick<GlycogenState, 'liverG' | 'muscleG'>, atMs: number) => ({
    at: formatInZone(atMs, athlete.timeZone),
    liverG: round2(state.liverG),
    muscleG: round2(state.muscleG),
    totalG: round2(state.liverG + state.muscleG),
    percent: round2(percentOf(state, athlete.capacity)),
  });
  return {
    plannedWorkoutId: row.id,
    start: level(levels.start, startAt),
    end: level(levels.end, endAt),
    minimum: level(levels.lowest, levels.lowest.atMs),
    status: plan.status,
    limitingStore: plan.limitingStore,
    advice: plan.advice.map((item) => ({
      at: formatInZone(item.atMs, athlete.timeZone),
      phase: item.phase,
      carbsG: item.carbsG,
      absorptionType: item.absorptionType,
      reason: item.reason,
    })),
    plan: plan.plan.map((line) => ({ phase: line.phase, text: line.text })),
    assumptions: [
      ...new Set([
        ...athlete.assumptions,
        ...inputs.assumptions,
        ...(stored ? [] : ['No stored fuel chain yet: the day starts from the model’s start state.']),
      ]),
    ],
  };
}

interface TimedState {
  readonly atMs: number;
  readonly liverG: number;
  readonly muscleG: number;
}

/**
 * The stores at the workout's first and last step boundaries and at its
 * lowest combined level (the first such boundary), as logged.
 */
function workoutLevels(
  input: Omit<GlycogenSimulationInput, 'steps'>,
  startAt: number,
  endAt: number,
): { start: TimedState; end: TimedState; lowest: TimedState } {
  const { points } = simulateGlycogen({ ...input, steps: Math.round((endAt - input.startAt) / STEP_MS) });
  const boundaries: TimedState[] = [{ atMs: input.startAt, ...input.start }, ...points].filter(
    (point) => point.atMs >= startAt,
  );
  const start = boundaries[0] as TimedState;
  let lowest = start;
  for (const point of boundaries) {
    if (percentOf(point, input.capacity) < percentOf(lowest, input.capacity)) lowest = point;
  }
  return { start, end: boundaries.at(-1) as TimedState, lowest };
}

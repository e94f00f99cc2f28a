import type { FuelLimitingStore, FuelMealSource, FuelStatus, FuelTimeline, PlannedWorkoutFuel } from '@pacer/contract';
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
import { isFuelNotLogged, judgePlannedFuel, planWorkoutFuel, type NotLoggedContext } from './fuel-plan.ts';
import {
  findFirstFuelDataDate,
  findFuelDay,
  findLatestWellnessWeight,
  listEatenCarbItemsBetween,
  listFoodItemsBetween,
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
import {
  assumedMealsFor,
  assumedMealTimeMs,
  USUAL_INTAKE_WINDOW_DAYS,
  usualIntakeOf,
  type AssumedMeal,
  type DayItem,
  type MealSlot,
  type UsualIntake,
} from './usual-intake.model.ts';

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

/** A logged or planned item with carbohydrate, as the timeline lists it. */
interface ListedMeal extends MealInput {
  readonly name: string;
  readonly planned: boolean;
}

/** An assumed meal (the usual intake) placed at its instant. */
interface PlacedAssumedMeal extends MealInput {
  readonly slot: MealSlot;
}

interface FuelWindowInputs {
  /** Logged and planned items with carbohydrate: what the timeline lists. */
  readonly meals: readonly ListedMeal[];
  /** Every logged or planned item (with carbohydrate or not), slotted by local date and time. */
  readonly dayItems: readonly DayItem[];
  /**
   * Logged and planned items, on past days without food logged the assumed
   * recovery intake after each recorded workout, and the assumed meals
   * (`withAssumedMeals`): what the model eats.
   */
  readonly modelMeals: readonly MealInput[];
  /** The assumed meals in the model's meals (none until `withAssumedMeals`). */
  readonly assumed: readonly PlacedAssumedMeal[];
  /** Whether the athlete has a usual intake (docs/science.md §3; without one, `not_logged`). */
  readonly usualIntake: boolean;
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
    listFoodItemsBetween(db, userId, { fromMs: fromMs - LONGEST_RELEASE_MS, toMs, timeZone: athlete.timeZone }),
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
  const meals = mealRows
    .filter((meal) => meal.carbs > 0)
    .map((meal: FuelMealRow) => ({
      name: meal.name,
      atMs: meal.loggedAt.getTime(),
      carbsG: meal.carbs,
      absorptionType: meal.absorptionType,
      planned: meal.planned,
    }));
  const recorded = workoutRows.map((workout) => recordedWorkoutOf(workout, athlete));
  return {
    meals,
    dayItems: mealRows.map(dayItemOf),
    modelMeals: [...meals, ...assumedRecoveryMeals(recorded, loggedFoodDates, range.today)],
    assumed: [],
    usualIntake: false,
    recorded,
    planned: plannedRows.flatMap((row) => placePlanned(row, athlete, defaultStart, assumptions) ?? []),
    loggedFoodDates,
    assumptions,
  };
}

function dayItemOf(row: FuelMealRow): DayItem {
  return {
    date: row.localDate,
    minutes: row.localMinutes,
    carbsG: row.carbs,
    absorptionType: row.absorptionType,
    meal: row.meal,
    planned: row.planned,
  };
}

/** The usual intake as of `today`: from the eaten items of the 14 local days before it (docs/science.md §3). */
async function loadUsualIntake(
  db: DbOrTrx,
  userId: string,
  athlete: Athlete,
  today: string,
): Promise<UsualIntake | null> {
  const rows = await listEatenCarbItemsBetween(db, userId, {
    fromMs: localMidnightMs(addDays(today, -USUAL_INTAKE_WINDOW_DAYS), athlete.timeZone),
    toMs: localMidnightMs(today, athlete.timeZone),
    timeZone: athlete.timeZone,
  });
  return usualIntakeOf(rows.map(dayItemOf), today);
}

/** Local clock time of an instant, whole minutes after midnight. */
function localMinutesOf(instant: Date, timeZone: string): number {
  const time = formatInZone(instant.getTime(), timeZone).slice(11, 16);
  return Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
}

const hhmm = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

/**
 * The assumed meals at their instants: the usual time, or the end of a
 * planned or recorded workout it would fall in (docs/science.md §3,
 * "Assumed meals and workouts"). Stored so, the timeline shows them where
 * they are counted.
 */
function placeAssumed(
  meals: readonly AssumedMeal[],
  inputs: Pick<FuelWindowInputs, 'recorded' | 'planned'>,
  timeZone: string,
): PlacedAssumedMeal[] {
  const workouts = [...inputs.recorded, ...inputs.planned].map(({ startMs, endMs }) => ({ startMs, endMs }));
  return meals.map((meal) => ({
    atMs: assumedMealTimeMs(zonedTimeMs(meal.date, hhmm(meal.minutes), timeZone), workouts),
    carbsG: meal.carbsG,
    absorptionType: meal.absorptionType,
    slot: meal.slot,
  }));
}

/** The assumed meals as a stored day keeps them. */
function assumedOfStored(days: readonly (Pick<StoredFuelDay, 'assumedMeals'> | undefined)[]): PlacedAssumedMeal[] {
  return days.flatMap((day) =>
    (day?.assumedMeals ?? []).map(([atMs, carbsG, absorptionType, slot]) => ({ atMs, carbsG, absorptionType, slot })),
  );
}

/** The inputs with the assumed meals eaten too. */
function withAssumedMeals(
  inputs: FuelWindowInputs,
  assumed: readonly PlacedAssumedMeal[],
  usualIntake: boolean,
): FuelWindowInputs {
  return { ...inputs, modelMeals: [...inputs.modelMeals, ...assumed], assumed, usualIntake };
}

/**
 * `not_logged` (docs/science.md §3): no usual intake, and nothing with
 * carbohydrate logged or planned on the workout's local day before its
 * start. The stores then show only the missing log, so no status is judged
 * from them.
 */
function notLoggedContext(inputs: FuelWindowInputs, placed: PlacedPlannedWorkout, timeZone: string): NotLoggedContext {
  return {
    usualIntake: inputs.usualIntake,
    dayStartMs: localMidnightMs(placed.row.date, timeZone),
    startMs: placed.startMs,
    carbMealTimesMs: inputs.meals.map((meal) => meal.atMs),
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
  const assumed = inputs.assumed.filter((meal) => meal.atMs >= dayStart && meal.atMs < dayEnd);
  if (assumed.length > 0) {
    const list = assumed
      .map(
        (meal) =>
          `${meal.slot.toLowerCase()} ${formatInZone(meal.atMs, athlete.timeZone).slice(11, 16)} ${String(meal.carbsG)} g`,
      )
      .join(', ');
    assumptions.push(`${date}: usual meals assumed where nothing is logged or planned (${list}).`);
  }
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
    assumedMeals: assumed.map((meal) => [meal.atMs, meal.carbsG, meal.absorptionType, meal.slot]),
    usualIntake: inputs.usualIntake,
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

  const [loaded, usual] = await Promise.all([
    loadInputs(trx, userId, athlete, { from, to, today, now }),
    loadUsualIntake(trx, userId, athlete, today),
  ]);
  // Today's slots are assumed only after now; the previous stored day's assumed meals may still release into `from`.
  const assumed = placeAssumed(
    assumedMealsFor(usual, loaded.dayItems, { from, to, today, nowMinutes: localMinutesOf(now, athlete.timeZone) }),
    loaded,
    athlete.timeZone,
  );
  const inputs = withAssumedMeals(loaded, [...assumedOfStored([previous]), ...assumed], usual !== null);
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
        ...judgeFromStoredChain(plan, { athlete, inputs, stored }),
      })),
    ],
    meals: timelineMeals(inputs, stored)
      .filter((meal) => meal.atMs >= fromMs)
      .map((meal) => ({
        at: formatInZone(meal.atMs, athlete.timeZone),
        name: meal.name,
        carbsG: meal.carbsG,
        absorptionType: meal.absorptionType,
        source: meal.source,
      })),
    incompleteLogDates: stored.filter((day) => day.incompleteLog).map((day) => day.date),
    assumptions: [
      ...new Set([...athlete.assumptions, ...inputs.assumptions, ...stored.flatMap((day) => day.assumptions)]),
    ],
  };
}

/** The name an assumed meal is listed under. */
const ASSUMED_MEAL_NAMES: Readonly<Record<MealSlot, string>> = {
  BREAKFAST: 'Usual breakfast',
  LUNCH: 'Usual lunch',
  DINNER: 'Usual dinner',
  SNACK: 'Usual snack',
};

/** Logged, planned and (from the stored days, as their points were drawn) assumed meals, in time order. */
function timelineMeals(
  inputs: FuelWindowInputs,
  stored: readonly StoredFuelDay[],
): (MealInput & { readonly name: string; readonly source: FuelMealSource })[] {
  return [
    ...inputs.meals.map((meal) => ({ ...meal, source: meal.planned ? ('planned' as const) : ('logged' as const) })),
    ...assumedOfStored(stored).map((meal) => ({
      ...meal,
      name: ASSUMED_MEAL_NAMES[meal.slot],
      source: 'assumed' as const,
    })),
  ].sort((a, b) => a.atMs - b.atMs);
}

/**
 * A planned workout's fuel status and limiting store from the stored chain:
 * the levels at its step boundaries (within the current capacity, as shown),
 * judged by the rule `GET /api/planned-workouts/{id}/fuel` applies to the
 * same day, then `not_logged` as there. No stored day: null.
 */
function judgeFromStoredChain(
  plan: PlacedPlannedWorkout,
  context: { readonly athlete: Athlete; readonly inputs: FuelWindowInputs; readonly stored: readonly StoredFuelDay[] },
): { fuelStatus: FuelStatus | null; limitingStore: FuelLimitingStore | null } {
  const { athlete, stored } = context;
  const day = stored.find((candidate) => candidate.date === plan.row.date);
  if (!day) return { fuelStatus: null, limitingStore: null };
  const notLogged = notLoggedContext({ ...context.inputs, usualIntake: day.usualIntake }, plan, athlete.timeZone);
  const startAt = Math.floor(plan.startMs / STEP_MS) * STEP_MS;
  const endAt = Math.ceil(plan.endMs / STEP_MS) * STEP_MS;
  const dayStart = localMidnightMs(day.date, athlete.timeZone);
  const levels: Pick<GlycogenState, 'liverG' | 'muscleG'>[] = [];
  if (startAt === dayStart) levels.push(day.startState);
  for (const candidate of stored) {
    if (candidate.date < day.date) continue;
    for (const [atMs, liverG, muscleG] of candidate.points) {
      if (atMs >= startAt && atMs <= endAt) levels.push({ liverG, muscleG });
    }
    if ((candidate.points.at(-1)?.[0] ?? 0) >= endAt) break;
  }
  const judged = judgePlannedFuel(
    levels.map((level) => clampToCapacity({ ...level, gutG: 0 }, athlete.capacity)),
    athlete.capacity,
    notLogged,
  );
  return { fuelStatus: judged.status, limitingStore: judged.limitingStore };
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
  const [storedDays, loaded] = await Promise.all([
    listFuelDays(db, actor.userId, addDays(row.date, -1), row.date),
    loadInputs(db, actor.userId, athlete, { from: row.date, to: row.date, today, now }),
  ]);
  const stored = storedDays.find((day) => day.date === row.date);
  const inputs = await withStoredOrUsualMeals(db, actor.userId, {
    athlete,
    inputs: loaded,
    stored: storedDays,
    date: row.date,
    today,
    now,
  });
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
  const loaded = await loadInputs(db, userId, athlete, { from, to: range.to, today, now });
  const upcoming = loaded.planned.filter((plan) => plan.startMs > now.getTime());
  if (upcoming.length === 0) return [];
  const storedDays = await listFuelDays(db, userId, addDays(from, -1), range.to);
  const stored = new Map(storedDays.map((day) => [day.date, day]));
  const inputs = await withStoredOrUsualMeals(db, userId, {
    athlete,
    inputs: loaded,
    stored: storedDays,
    date: from,
    today,
    now,
  });
  return upcoming.map((placed) =>
    planPlacedWorkoutFuel({ athlete, inputs, placed, stored: stored.get(placed.row.date), now }),
  );
}

/**
 * The inputs with the assumed meals the stored chain was drawn with (its
 * days from the day before `date` on), so a workout is judged on the meals
 * the timeline shows. Without a stored `date` (no chain yet, or beyond its
 * horizon) the usual intake is read now and assumed from `date` on.
 */
async function withStoredOrUsualMeals(
  db: DbOrTrx,
  userId: string,
  options: {
    readonly athlete: Athlete;
    readonly inputs: FuelWindowInputs;
    readonly stored: readonly StoredFuelDay[];
    readonly date: string;
    readonly today: string;
    readonly now: Date;
  },
): Promise<FuelWindowInputs> {
  const { athlete, inputs, stored, date, today, now } = options;
  const day = stored.find((candidate) => candidate.date === date);
  if (day) return withAssumedMeals(inputs, assumedOfStored(stored), day.usualIntake);
  const usual = await loadUsualIntake(db, userId, athlete, today);
  const last = inputs.planned.reduce((latest, plan) => (plan.row.date > latest ? plan.row.date : latest), date);
  const assumed = placeAssumed(
    assumedMealsFor(usual, inputs.dayItems, {
      from: date,
      to: last,
      today,
      nowMinutes: localMinutesOf(now, athlete.timeZone),
    }),
    inputs,
    athlete.timeZone,
  );
  return withAssumedMeals(inputs, assumed, usual !== null);
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
  const fuel: PlannedWorkoutFuel = {
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
  return isFuelNotLogged(notLoggedContext(inputs, placed, athlete.timeZone)) ? notLoggedFuel(fuel) : fuel;
}

/**
 * `not_logged` (docs/science.md §3): no status from stores that show only
 * a missing log, so no limiting store and no advice before or after; the
 * in-ride part stays, as it depends on the workout, not on the stores.
 */
function notLoggedFuel(fuel: PlannedWorkoutFuel): PlannedWorkoutFuel {
  return {
    ...fuel,
    status: 'not_logged',
    limitingStore: null,
    advice: fuel.advice.filter((item) => item.phase === 'during'),
    plan: fuel.plan.filter((line) => line.phase === 'during'),
    assumptions: [
      ...fuel.assumptions,
      'No usual intake (fewer than 3 days with food logged in the last 14) and nothing logged or planned before the workout that day: log or plan meals for a fuel status.',
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

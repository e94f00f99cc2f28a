import type { FuelAdvicePhase, FuelLimitingStore, FuelStatus } from '@pacer/contract';
import { formatInZone } from '../../lib/dates.ts';
import {
  ADVICE_INTENSITY_STEPS,
  AT_RISK_MUSCLE_START_PERCENT,
  type AbsorptionType,
  DURING_CEILING_G_PER_H,
  DURING_GUIDELINE_G_PER_H,
  DURING_INTERVAL_MIN,
  LIVER_RISK_G,
  LONG_WORKOUT_MIN,
  MUSCLE_MAX_G_PER_KG,
  PRE_WORKOUT_G_PER_KG,
  PRE_WORKOUT_HOURS,
  READY_MUSCLE_START_PERCENT,
  RECOVERY_INTAKE,
  RECOVERY_LINE_FROM_IF,
  SINGLE_SUGAR_MAX_G_PER_H,
  SPORTS_DRINK_G_PER_100_ML,
  STEP_MINUTES,
  STEP_MS,
  STORAGE_LIVER_SHARE,
  UPTAKE_CAP_PER_STEP_G,
  VERY_LONG_WORKOUT_MIN,
} from './glycogen.constants.ts';
import {
  muscleFloorG,
  percentOf,
  simulateGlycogen,
  type GlycogenCapacity,
  type GlycogenSimulation,
  type GlycogenSimulationInput,
  type GlycogenState,
  type MealInput,
} from './glycogen.model.ts';
import type { ExerciseInput } from './exercise.ts';

/**
 * Fuel status and advice for one planned workout, from the glycogen model
 * (docs/science.md §3, "Planned-workout fuel").
 *
 * Status, judged per store over the step boundaries from the last at or
 * before the start through the first at or after the end:
 * - `at_risk`: the liver below 20 g at any of them (limiting store `liver`:
 *   blood glucose depends on it), or muscle at its floor at any of them or
 *   below 50 % of M_max at the start (limiting store `muscle`);
 * - `top_up`: otherwise, when muscle starts below 70 % of M_max (`muscle`);
 * - `ready`: otherwise (no limiting store).
 * When both stores fail, the one that fails first is named, the liver on a
 * tie. The combined percent is shown, never judged: it hid an empty liver.
 *
 * Advice is what a coach would give, as timed items and a short plan:
 * - every workout longer than 75 minutes gets, whatever the stores say, the
 *   guideline amounts for its duration and intensity: a pre-workout meal
 *   (1–2.5 g/kg, less what the model's meals in the 4 h before already give),
 *   in-ride carbohydrate every 20 minutes at 30–90 g/h (less what is logged in
 *   the workout), and a recovery line after;
 * - when the stores still run short, the model raises it: a FAST top-up 90,
 *   75 and 60 minutes before for muscle below 70 %, the in-ride rate in
 *   15 g/h steps up to 60 g/h (90 g/h past 2.5 h), then more before the
 *   start (up to 180 g), else the plan says to shorten or ease the workout.
 * Every candidate is checked by re-running the model with the items added as
 * meals; the advice returned is the first candidate that the model rates
 * `ready`, so logging exactly those items and asking again gives `ready`,
 * and no further items (what is logged counts against every target).
 * The constants and their sources are in glycogen.constants.ts, the tables
 * and worked examples in docs/science.md §3.
 *
 * Choices the rules leave open (each also noted where it is made):
 * - The in-ride rate is held for the whole workout, from minute 20.
 * - Grams are rounded up to 5 g; rounding up only adds food, which never
 *   lowers the stores, and the rounded items are the ones verified.
 * - The after line is text only: a recovery intake depends on when the next
 *   session is, which the plan of one workout does not know, so it says both.
 */

/** The planned workout's time span, epoch ms. Its exercise must be in the simulation input. */
export interface WorkoutWindow {
  readonly startMs: number;
  readonly endMs: number;
}

/** A status and the store that decides it (`null` when `ready`). */
export interface FuelJudgement {
  readonly status: FuelStatus;
  readonly limitingStore: FuelLimitingStore | null;
}

export interface WorkoutFuelAssessment extends FuelJudgement {
  /** Percent at the last step boundary at or before the start. */
  readonly startPercent: number;
  /** Lowest percent from that boundary through the first boundary at or after the end. */
  readonly minPercent: number;
  /** Percent at the first step boundary at or after the end. */
  readonly endPercent: number;
  /** Stores at the start boundary, grams. */
  readonly start: Pick<GlycogenState, 'liverG' | 'muscleG'>;
  /** Lowest liver and lowest muscle over the workout's boundaries, grams (each its own minimum). */
  readonly lowest: Pick<GlycogenState, 'liverG' | 'muscleG'>;
}

export interface FuelAdviceItem {
  readonly atMs: number;
  readonly carbsG: number;
  readonly absorptionType: AbsorptionType;
  readonly phase: FuelAdvicePhase;
  /** A few words: what and how much. The plan says why. */
  readonly reason: string;
}

/** One line of the short plan. */
export interface FuelPlanLine {
  readonly phase: FuelAdvicePhase;
  readonly text: string;
}

export interface WorkoutFuelPlan extends WorkoutFuelAssessment {
  /** Empty for a workout of 75 minutes or less that is already `ready`, and when the log covers every target. */
  readonly advice: readonly FuelAdviceItem[];
  /** The advice as a few lines: before, during, after, in that order. */
  readonly plan: readonly FuelPlanLine[];
  /** The workout re-simulated with exactly `advice` added as meals. */
  readonly withAdvice: WorkoutFuelAssessment;
  /** Why the advice cannot make the workout ready; `null` when it does. */
  readonly shortfallReason: string | null;
}

export interface WorkoutFuelPlanOptions {
  /**
   * The model input around the workout, without `steps`: the plan runs it
   * from `startAt` through the step boundary at or after the workout's end.
   * `exercise` holds the workout itself; `meals` what is logged, planned or
   * assumed.
   */
  readonly simulation: Omit<GlycogenSimulationInput, 'steps'>;
  readonly workout: WorkoutWindow;
  /**
   * Earliest time advice may be placed at, e.g. now (the caller owns the
   * clock). Never earlier than `simulation.startAt`, because release before
   * the start of a run is the start state's business.
   */
  readonly notBeforeMs?: number;
  /** IANA zone the plan's clock times are written in; UTC when absent. */
  readonly timeZone?: string;
}

/** Muscle counts as at its floor within this many grams (stored points are rounded to 0.01 g). */
const FLOOR_TOLERANCE_G = 0.005;

/**
 * The status of a workout from the stores at its step boundaries, in order
 * from the last at or before its start to the first at or after its end
 * (see the top of this file). Pure, so the stored timeline is judged by the
 * same rule as a fresh simulation.
 */
export function judgeFuel(
  levels: readonly Pick<GlycogenState, 'liverG' | 'muscleG'>[],
  capacity: GlycogenCapacity,
): FuelJudgement {
  const start = levels[0];
  if (start === undefined) throw new RangeError('a workout has at least its start boundary');
  const floor = muscleFloorG(capacity);
  const muscleStartPercent = (100 * start.muscleG) / capacity.muscleG;
  const liverFails = levels.findIndex((level) => level.liverG < LIVER_RISK_G);
  const muscleFails =
    muscleStartPercent < AT_RISK_MUSCLE_START_PERCENT
      ? 0
      : levels.findIndex((level) => level.muscleG <= floor + FLOOR_TOLERANCE_G);
  if (liverFails >= 0 && (muscleFails < 0 || liverFails <= muscleFails)) {
    return { status: 'at_risk', limitingStore: 'liver' };
  }
  if (muscleFails >= 0) return { status: 'at_risk', limitingStore: 'muscle' };
  if (muscleStartPercent < READY_MUSCLE_START_PERCENT) return { status: 'top_up', limitingStore: 'muscle' };
  return { status: 'ready', limitingStore: null };
}

/** What the `not_logged` rule looks at for one planned workout (docs/science.md §3, "Not logged"). */
export interface NotLoggedContext {
  /** Whether the athlete had a usual intake when the workout's day was computed (the stored day's). */
  readonly usualIntake: boolean;
  /** The workout's local midnight and its start, epoch ms. */
  readonly dayStartMs: number;
  readonly startMs: number;
  /** Times of the logged or planned items with carbohydrate (any days; those of the day before the start count). */
  readonly carbMealTimesMs: readonly number[];
}

/**
 * `not_logged`: no usual intake, and nothing with carbohydrate logged or
 * planned on the workout's local day before its start. The stores then show
 * only the missing log, so no status is judged from them. The fuel API and
 * the weekly report both decide by this.
 */
export function isFuelNotLogged(context: NotLoggedContext): boolean {
  if (context.usualIntake) return false;
  return !context.carbMealTimesMs.some((atMs) => atMs >= context.dayStartMs && atMs < context.startMs);
}

/**
 * A planned workout's status from the stores at its step boundaries
 * (`judgeFuel`), unless `not_logged` applies, which overrides it.
 */
export function judgePlannedFuel(
  levels: readonly Pick<GlycogenState, 'liverG' | 'muscleG'>[],
  capacity: GlycogenCapacity,
  context: NotLoggedContext,
): FuelJudgement {
  return isFuelNotLogged(context) ? { status: 'not_logged', limitingStore: null } : judgeFuel(levels, capacity);
}

/**
 * Reads a workout's start, minimum and end from a simulation that began at
 * `startAt` from `start`, and judges it. Choice: the start is the last step
 * boundary at or before the workout's start, so a workout at 07:10 is judged
 * on the 07:00 state, before any of its own drain.
 */
export function assessWorkoutFuel(
  simulation: GlycogenSimulation,
  run: { readonly capacity: GlycogenCapacity; readonly start: GlycogenState; readonly startAt: number },
  workout: WorkoutWindow,
): WorkoutFuelAssessment {
  const { first, last } = workoutBoundaries(run.startAt, workout);
  if (first < 0 || last > simulation.points.length) {
    throw new RangeError('the simulation does not cover the workout');
  }
  const stateAt = (boundary: number): GlycogenState =>
    boundary === 0 ? run.start : (simulation.points[boundary - 1] as GlycogenState);
  const levels: GlycogenState[] = [];
  for (let b = first; b <= last; b += 1) levels.push(stateAt(b));
  const start = levels[0] as GlycogenState;
  let minPercent = Number.POSITIVE_INFINITY;
  let lowestLiver = Number.POSITIVE_INFINITY;
  let lowestMuscle = Number.POSITIVE_INFINITY;
  for (const level of levels) {
    minPercent = Math.min(minPercent, percentOf(level, run.capacity));
    lowestLiver = Math.min(lowestLiver, level.liverG);
    lowestMuscle = Math.min(lowestMuscle, level.muscleG);
  }
  return {
    ...judgeFuel(levels, run.capacity),
    startPercent: percentOf(start, run.capacity),
    minPercent,
    endPercent: percentOf(levels.at(-1) as GlycogenState, run.capacity),
    start: { liverG: start.liverG, muscleG: start.muscleG },
    lowest: { liverG: lowestLiver, muscleG: lowestMuscle },
  };
}

/**
 * Step boundaries (indices from `startAt`) that frame the workout: the last
 * at or before its start and the first at or after its end.
 */
function workoutBoundaries(startAt: number, workout: WorkoutWindow): { first: number; last: number } {
  return {
    first: Math.floor((workout.startMs - startAt) / STEP_MS),
    last: Math.ceil((workout.endMs - startAt) / STEP_MS),
  };
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/**
 * In-ride rates the search may use, g/h. Choice: 15 g/h steps give items of
 * 10, 15, 20, 25 and 30 g every 20 minutes, the sizes of gels and bottles.
 */
const RATE_LADDER = [30, 45, 60, 75, 90] as const;
/** Minutes before the start of the first, second and third FAST top-up item. */
const TOP_UP_OFFSETS_MIN = [90, 75, 60] as const;
/**
 * Largest top-up item before another is added. Choice: three items 15 minutes
 * apart release at most 75 % of one item in a single step (the second,
 * third and fourth steps of the first item overlap), so 30 g items keep the
 * release within the 22.5 g uptake cap when the gut is otherwise empty.
 */
const TOP_UP_ITEM_MAX_G = UPTAKE_CAP_PER_STEP_G / 0.75;
/** Advice grams are multiples of this. */
const GRAMS_ROUNDING = 5;
/** Bound on re-simulations. */
const MAX_ITERATIONS = 40;
/**
 * Most top-up grams the gut can use. Choice: from the first item (90 min
 * before) to the end of the last one's release (30 min after the start) the
 * gut can take up at most 8 steps × 22.5 g = 180 g; more would not be
 * absorbed in time to matter.
 */
const TOP_UP_GUT_MAX_G = ((TOP_UP_OFFSETS_MIN[0] + 30) / STEP_MINUTES) * UPTAKE_CAP_PER_STEP_G;

/**
 * Most top-up grams for a workout: the gut's 180 g, and no more than 1 g/kg
 * per hour between the first top-up item and the start (1.5 g/kg when the
 * 90 minutes before are free; Burke et al. 2011: 1 g/kg an hour before).
 */
function topUpMaxG(workout: WorkoutWindow, earliestMs: number, massKg: number): number {
  const firstMs = Math.max(earliestMs, workout.startMs - TOP_UP_OFFSETS_MIN[0] * MINUTE_MS);
  const hours = Math.max(0, (workout.startMs - firstMs) / HOUR_MS);
  return Math.min(TOP_UP_GUT_MAX_G, Math.floor((hours * massKg) / GRAMS_ROUNDING) * GRAMS_ROUNDING);
}
/**
 * More top-up grams stop paying off when the stored grams they add (at the
 * start, or at the minimum) are below this fraction of the grams added: the
 * uptake cap is full.
 */
const SATURATION_GAIN_RATIO = 0.1;

interface Candidate {
  /** Grams of the store-driven FAST top-up before the start. */
  readonly topUpG: number;
  /** Index into RATE_LADDER, or −1 for no in-ride items. */
  readonly rung: number;
}

/** One re-run of the model with advice added, and the grams the search compares between candidates. */
interface Evaluation {
  readonly assessment: WorkoutFuelAssessment;
  /** Muscle at the start, grams: what top-up grams are for first. */
  readonly muscleAtStart: number;
  /** Lowest liver plus lowest muscle over the workout, grams: whether more top-up grams still help. */
  readonly storedAtLowest: number;
}

/** The guideline pre-workout amount (docs/science.md §3, "Before"), against what the model's meals give. */
interface PreWorkout {
  /** The guideline for the workout, g/kg (the cap by the hours left is on the item). */
  readonly gPerKg: number;
  /** The guideline in grams. */
  readonly targetG: number;
  /** Carbohydrate in the model's meals in the 4 h before the start. */
  readonly eatenG: number;
  /** The difference to eat, or null when none is due or too late. */
  readonly item: FuelAdviceItem | null;
  /** The target is not met and the time left allows no more (less than an hour, or the cap at the advised time). */
  readonly tooLate: boolean;
}

/** What the search for advice around one workout works with. */
interface FuelSearch {
  readonly workout: WorkoutWindow;
  readonly earliestMs: number;
  readonly durationMin: number;
  readonly intensityFactor: number;
  readonly capacity: GlycogenCapacity;
  readonly massKg: number;
  readonly meals: readonly MealInput[];
  readonly timeZone: string;
  /** Guideline advice is given (the workout is longer than 75 minutes). */
  readonly isLong: boolean;
  /** The guideline in-ride rate's rung of RATE_LADDER (−1 for a workout of 75 min or less). */
  readonly guidelineRung: number;
  /** The highest rung the workout may use. */
  readonly lastRung: number;
  /** Most grams of store-driven top-up. */
  readonly topUpMaxG: number;
  readonly pre: PreWorkout | null;
  readonly evaluate: (advice: readonly FuelAdviceItem[]) => Evaluation;
}

/** Duration-weighted intensity factor of the exercise within the workout's window. */
function workoutIntensity(exercise: readonly ExerciseInput[], workout: WorkoutWindow): number {
  let weighted = 0;
  let total = 0;
  for (const block of exercise) {
    const overlap = Math.min(block.endMs, workout.endMs) - Math.max(block.startMs, workout.startMs);
    if (overlap <= 0) continue;
    weighted += overlap * block.intensityFactor;
    total += overlap;
  }
  return total > 0 ? weighted / total : 0;
}

/** The guideline in-ride rate, g/h, for a workout longer than 75 min (the table in docs/science.md §3). */
export function guidelineRateGPerH(durationMin: number, intensityFactor: number): number {
  const rates =
    durationMin > VERY_LONG_WORKOUT_MIN ? DURING_GUIDELINE_G_PER_H.beyond150 : DURING_GUIDELINE_G_PER_H.upTo150;
  const band = ADVICE_INTENSITY_STEPS.filter((step) => intensityFactor >= step).length;
  return rates[band] as number;
}

/** The guideline pre-workout carbohydrate, g/kg, before the cap by the hours left. */
export function guidelinePreWorkoutGPerKg(durationMin: number, intensityFactor: number): number {
  const base = durationMin > VERY_LONG_WORKOUT_MIN ? PRE_WORKOUT_G_PER_KG.beyond150 : PRE_WORKOUT_G_PER_KG.upTo150;
  return base + (intensityFactor >= ADVICE_INTENSITY_STEPS[1] ? PRE_WORKOUT_G_PER_KG.hardExtra : 0);
}

function fuelSearch(options: WorkoutFuelPlanOptions): FuelSearch {
  const { simulation, workout } = options;
  if (!(workout.endMs >= workout.startMs) || workout.startMs < simulation.startAt) {
    throw new RangeError('the workout must start at or after the simulation start and end after it starts');
  }
  const steps = Math.ceil((workout.endMs - simulation.startAt) / STEP_MS);
  const durationMin = (workout.endMs - workout.startMs) / MINUTE_MS;
  const intensityFactor = workoutIntensity(simulation.exercise, workout);
  const isLong = durationMin > LONG_WORKOUT_MIN;
  const ceiling =
    durationMin > VERY_LONG_WORKOUT_MIN ? DURING_CEILING_G_PER_H.beyond150 : DURING_CEILING_G_PER_H.upTo150;
  const guidelineRung = isLong
    ? RATE_LADDER.indexOf(guidelineRateGPerH(durationMin, intensityFactor) as (typeof RATE_LADDER)[number])
    : -1;
  const earliestMs = Math.max(simulation.startAt, options.notBeforeMs ?? simulation.startAt);
  const massKg = simulation.capacity.muscleG / MUSCLE_MAX_G_PER_KG;
  const search = {
    workout,
    earliestMs,
    durationMin,
    intensityFactor,
    capacity: simulation.capacity,
    massKg,
    topUpMaxG: topUpMaxG(workout, earliestMs, massKg),
    meals: simulation.meals,
    timeZone: options.timeZone ?? 'UTC',
    isLong,
    guidelineRung,
    lastRung: isLong ? RATE_LADDER.indexOf(ceiling as (typeof RATE_LADDER)[number]) : -1,
    evaluate: (advice: readonly FuelAdviceItem[]) => {
      const meals: MealInput[] = [...simulation.meals, ...advice];
      const run = simulateGlycogen({ ...simulation, meals, steps });
      const assessment = assessWorkoutFuel(run, simulation, workout);
      return {
        assessment,
        muscleAtStart: assessment.start.muscleG,
        storedAtLowest: assessment.lowest.liverG + assessment.lowest.muscleG,
      };
    },
  };
  return { ...search, pre: isLong ? preWorkout(search) : null };
}

/**
 * The guideline pre-workout amount less what the model's meals in the 4 h
 * before give, as one item: a meal 3 h before (BALANCED from 2 h, FAST
 * below), or, when something is eaten and at most 1 g/kg is missing, a FAST
 * top-up 1 h before. The item (not the target) is at most 1 g/kg for each
 * hour from its time to the start, less what is eaten in those hours, and
 * within 1 g/kg an hour for all food from now to the start; none below 1 h.
 */
function preWorkout(
  search: Pick<FuelSearch, 'workout' | 'earliestMs' | 'durationMin' | 'intensityFactor' | 'massKg' | 'meals'>,
): PreWorkout {
  const { workout, massKg } = search;
  const gPerKg = guidelinePreWorkoutGPerKg(search.durationMin, search.intensityFactor);
  const targetG = gPerKg * massKg;
  const windowStart = workout.startMs - PRE_WORKOUT_HOURS.window * HOUR_MS;
  const eatenG = search.meals
    .filter((meal) => meal.atMs >= windowStart && meal.atMs < workout.startMs)
    .reduce((sum, meal) => sum + meal.carbsG, 0);
  const topUp = eatenG > 0 && targetG - eatenG <= massKg;
  const atMs = Math.max(
    search.earliestMs,
    workout.startMs - (topUp ? PRE_WORKOUT_HOURS.topUp : PRE_WORKOUT_HOURS.meal) * HOUR_MS,
  );
  const hoursLeft = (workout.startMs - atMs) / HOUR_MS;
  // The cap is on the item: 1 g/kg for each hour from its time to the start, less what is eaten in those hours.
  // Food eaten earlier in the window had its own time; capping the whole target wrongly said "too little time".
  // All food from now to the start keeps to 1 g/kg an hour too, so an item eaten now and asked again adds none.
  const capAt = (fromMs: number) =>
    ((workout.startMs - fromMs) / HOUR_MS) * massKg - eatenIn(search.meals, fromMs, workout.startMs);
  const capG = Math.min(capAt(atMs), capAt(search.earliestMs));
  const missingG = roundUp(targetG - eatenG);
  const carbsG = missingG <= capG ? missingG : roundDown(capG);
  const due = targetG - eatenG > 1e-9;
  if (!due || hoursLeft < PRE_WORKOUT_HOURS.least || carbsG <= 0) {
    // Due but nothing more can go in: less than an hour is left, or the cap at the advised time allows nothing.
    return { gPerKg, targetG, eatenG, item: null, tooLate: due };
  }
  const balanced = !topUp && hoursLeft >= PRE_WORKOUT_HOURS.balancedFrom;
  return {
    gPerKg,
    targetG,
    eatenG,
    item: {
      atMs,
      carbsG,
      absorptionType: balanced ? 'BALANCED' : 'FAST',
      phase: 'before',
      reason: topUp
        ? 'Pre-workout top-up'
        : balanced
          ? `Pre-workout meal (${formatNumber(gPerKg)} g/kg)`
          : 'Pre-workout snack',
    },
    tooLate: false,
  };
}

/** Muscle at the start as a percent of M_max. */
function muscleStartPercent(assessment: WorkoutFuelAssessment, capacity: GlycogenCapacity): number {
  return (100 * assessment.start.muscleG) / capacity.muscleG;
}

/** Grams to eat at rest to bring muscle from `muscleG` to `targetPercent` of M_max: it stores 70 % of uptake. */
function gramsForMuscle(targetPercent: number, muscleG: number, capacity: GlycogenCapacity): number {
  return Math.max(0, ((targetPercent / 100) * capacity.muscleG - muscleG) / (1 - STORAGE_LIVER_SHARE));
}

/** Grams to eat at rest to lift the store that runs short during the workout back to its limit. */
function gramsForShortStore(assessment: WorkoutFuelAssessment, capacity: GlycogenCapacity): number {
  const liverShort = Math.max(0, LIVER_RISK_G - assessment.lowest.liverG) / STORAGE_LIVER_SHARE;
  const muscleShort =
    assessment.limitingStore === 'muscle'
      ? Math.max(0, muscleFloorG(capacity) - assessment.lowest.muscleG) / (1 - STORAGE_LIVER_SHARE)
      : 0;
  return Math.max(liverShort, muscleShort);
}

/** Where the search stands: the candidate to try, the last top-up tried, and why a lever ran out. */
interface SearchState {
  candidate: Candidate;
  previous: { topUpG: number; muscleAtStart: number; storedAtLowest: number } | null;
  /** The store the in-ride rate was last raised for, if it was. */
  raisedFor: FuelLimitingStore | null;
  // Set once a lever is exhausted; the advice is then the best effort.
  startReason: string | null;
  minimumReason: string | null;
}

/**
 * The candidate to try after one that is not `ready`, or null when no lever
 * is left (a reason is then set) or no store runs short during the workout.
 */
function nextCandidate(search: FuelSearch, state: SearchState, result: Evaluation): Candidate | null {
  const { candidate, previous } = state;
  const outcome = result.assessment;
  // Has the last rise in top-up grams stopped paying off (the uptake cap is full)?
  const added = previous === null ? 0 : candidate.topUpG - previous.topUpG;
  const exhausted = candidate.topUpG >= search.topUpMaxG || search.earliestMs >= search.workout.startMs;
  const gainAtStart = result.muscleAtStart - (previous?.muscleAtStart ?? 0);
  const gainAtLowest = result.storedAtLowest - (previous?.storedAtLowest ?? 0);
  const remember = {
    topUpG: candidate.topUpG,
    muscleAtStart: result.muscleAtStart,
    storedAtLowest: result.storedAtLowest,
  };

  const startPercent = muscleStartPercent(outcome, search.capacity);
  if (startPercent < READY_MUSCLE_START_PERCENT && state.startReason === null) {
    if (!exhausted && !(added > 0 && gainAtStart < SATURATION_GAIN_RATIO * added)) {
      state.previous = remember;
      const missing = gramsForMuscle(READY_MUSCLE_START_PERCENT, outcome.start.muscleG, search.capacity);
      return { ...candidate, topUpG: moreTopUp(search, candidate.topUpG, missing) };
    }
    state.startReason =
      search.earliestMs >= search.workout.startMs
        ? `there is no time left before the start to top up muscle glycogen to ${READY_MUSCLE_START_PERCENT} %.`
        : `muscle glycogen cannot reach ${READY_MUSCLE_START_PERCENT} % by the start in the time left (about 1 g/kg an hour); a carbohydrate-rich meal 3–4 h earlier would.`;
  }
  const liverShort = outcome.lowest.liverG < LIVER_RISK_G;
  const muscleShort = outcome.lowest.muscleG <= muscleFloorG(search.capacity) + FLOOR_TOLERANCE_G;
  if (!liverShort && !muscleShort) return null;
  // Food during the workout replaces the liver's output first and spares muscle in part: the next lever.
  if (search.isLong && candidate.rung < search.lastRung) {
    state.raisedFor = liverShort ? 'liver' : 'muscle';
    return { ...candidate, rung: candidate.rung + 1 };
  }
  // Still short at the highest in-ride rate (or the workout is too short for
  // in-ride advice): more before the start is the only lever left.
  if (exhausted || (added > 0 && gainAtLowest < SATURATION_GAIN_RATIO * added)) {
    state.minimumReason = shortfallOf(search, outcome);
    return null;
  }
  state.previous = remember;
  return { ...candidate, topUpG: moreTopUp(search, candidate.topUpG, gramsForShortStore(outcome, search.capacity)) };
}

/** Why the store that runs short cannot be kept above its limit. */
function shortfallOf(search: FuelSearch, outcome: WorkoutFuelAssessment): string {
  const most = RATE_LADDER[search.lastRung] ?? 0;
  if (outcome.lowest.liverG < LIVER_RISK_G) {
    return search.isLong
      ? `the liver falls below ${LIVER_RISK_G} g (blood glucose runs short) even at ${most} g/h during the workout; shorten it or ease it.`
      : `the liver falls below ${LIVER_RISK_G} g (blood glucose runs short) even with the most that can be eaten before the workout; shorten it or ease it.`;
  }
  return search.isLong
    ? `muscle glycogen runs down to its floor even at ${most} g/h during the workout; shorten it or ease it, or eat more carbohydrate the day before.`
    : 'muscle glycogen runs down to its floor even with the most that can be eaten before the workout; shorten it or ease it, or eat more carbohydrate the day before.';
}

interface SearchResult {
  readonly candidate: Candidate;
  readonly advice: FuelAdviceItem[];
  readonly outcome: WorkoutFuelAssessment;
  readonly raisedFor: FuelLimitingStore | null;
  readonly startReason: string | null;
  readonly minimumReason: string | null;
}

/** Candidates in the search order (top of this file) until one is `ready` or none is left. */
function searchAdvice(search: FuelSearch, base: WorkoutFuelAssessment): SearchResult {
  const state: SearchState = {
    candidate: { topUpG: 0, rung: search.guidelineRung },
    previous: null,
    raisedFor: null,
    startReason: null,
    minimumReason: null,
  };
  const context: AdviceContext = {
    search,
    fromMusclePercent: muscleStartPercent(base, search.capacity),
    limitingStore: base.limitingStore,
  };
  let advice: FuelAdviceItem[] = [];
  let outcome = base;
  for (let iteration = 0; iteration < MAX_ITERATIONS; iteration += 1) {
    advice = adviceFor(state.candidate, context);
    const result = search.evaluate(advice);
    outcome = result.assessment;
    if (outcome.status === 'ready') break;
    const next = nextCandidate(search, state, result);
    if (next === null) break;
    state.candidate = next;
  }
  return {
    candidate: state.candidate,
    advice,
    outcome,
    raisedFor: state.candidate.rung > search.guidelineRung ? state.raisedFor : null,
    startReason: state.startReason,
    minimumReason: state.minimumReason,
  };
}

/**
 * Status of a planned workout as logged, the advice a coach would give for
 * it, and the proof that eating the advice makes it `ready`. See the
 * description at the top of this file.
 */
export function planWorkoutFuel(options: WorkoutFuelPlanOptions): WorkoutFuelPlan {
  const search = fuelSearch(options);
  const base = search.evaluate([]).assessment;
  if (base.status === 'ready' && !search.isLong) {
    return { ...base, advice: [], plan: afterLines(search), withAdvice: base, shortfallReason: null };
  }
  const result = searchAdvice(search, base);
  let shortfallReason: string | null = null;
  if (result.outcome.status !== 'ready') {
    shortfallReason =
      [result.startReason, result.minimumReason].filter((reason) => reason !== null).join(' Also, ') ||
      'no advice within the intake limits makes this workout ready.';
  }
  const context: AdviceContext = {
    search,
    fromMusclePercent: muscleStartPercent(base, search.capacity),
    limitingStore: base.limitingStore,
  };
  const before = beforeLines(search, result.candidate, context);
  const during = duringLines(search, result);
  if (shortfallReason !== null) {
    // The line goes with the phase the advice could not fix: in-ride for a long workout, else before.
    (search.isLong ? during : before).push({
      phase: search.isLong ? 'during' : 'before',
      text: `Even so, the workout stays ${result.outcome.status === 'at_risk' ? 'at risk' : 'short of ready'}: ${shortfallReason}`,
    });
  }
  const plan = [...before, ...during, ...afterLines(search)];
  return { ...base, advice: result.advice, plan, withAdvice: result.outcome, shortfallReason };
}

/** Top-up grams raised by what is missing (at least 5 g), never past the workout's most. */
function moreTopUp(search: FuelSearch, topUpG: number, missingG: number): number {
  return Math.min(search.topUpMaxG, topUpG + Math.max(GRAMS_ROUNDING, roundUp(missingG)));
}

function roundUp(grams: number): number {
  return Math.ceil(grams / GRAMS_ROUNDING - 1e-9) * GRAMS_ROUNDING;
}

function roundDown(grams: number): number {
  return Math.floor(grams / GRAMS_ROUNDING + 1e-9) * GRAMS_ROUNDING;
}

/** A number as the plan writes it: at most one decimal. */
function formatNumber(value: number): string {
  return String(Math.round(value * 10) / 10);
}

/** Local clock time of an instant, `HH:MM`. */
function clock(atMs: number, timeZone: string): string {
  return formatInZone(atMs, timeZone).slice(11, 16);
}

/** Millilitres of a 6 % sports drink holding `grams`, to 10 ml. */
function drinkMl(grams: number): number {
  return Math.round((grams * 100) / SPORTS_DRINK_G_PER_100_ML / 10) * 10;
}

interface AdviceContext {
  readonly search: FuelSearch;
  /** Muscle at the start as logged, percent of M_max. */
  readonly fromMusclePercent: number;
  /** The store that limits the workout as logged. */
  readonly limitingStore: FuelLimitingStore | null;
}

/** The guideline pre-workout item, the top-up and the in-ride items; items at one time and of one type merged. */
function adviceFor(candidate: Candidate, context: AdviceContext): FuelAdviceItem[] {
  const before = [
    ...(context.search.pre?.item ? [context.search.pre.item] : []),
    ...topUpItems(candidate.topUpG, context),
  ];
  const merged = new Map<string, FuelAdviceItem>();
  for (const item of before) {
    const key = `${String(item.atMs)} ${item.absorptionType}`;
    const same = merged.get(key);
    merged.set(
      key,
      same ? { ...same, carbsG: same.carbsG + item.carbsG, reason: `${same.reason} + ${item.reason}` } : item,
    );
  }
  return [...[...merged.values()].sort((a, b) => a.atMs - b.atMs), ...duringItems(candidate.rung, context.search)];
}

/** Why the store-driven top-up is advised, a few words. */
function topUpPurpose(context: AdviceContext): string {
  if (context.fromMusclePercent < READY_MUSCLE_START_PERCENT) {
    return `to bring muscle glycogen from ${context.fromMusclePercent.toFixed(1)} % to ${READY_MUSCLE_START_PERCENT} % by the start`;
  }
  return context.limitingStore === 'muscle'
    ? 'so muscle glycogen lasts the workout'
    : `so the liver stays at or above ${LIVER_RISK_G} g`;
}

/**
 * `totalG` split into up to three FAST items 90, 75 and 60 minutes before the
 * start. Choice: when that window has partly passed, items move to the
 * earliest allowed time (the same time merges into one item) rather than
 * being dropped.
 */
function topUpItems(totalG: number, context: AdviceContext): FuelAdviceItem[] {
  const { workout, earliestMs } = context.search;
  if (totalG <= 0 || earliestMs >= workout.startMs) return [];
  const count = Math.min(TOP_UP_OFFSETS_MIN.length, Math.ceil(totalG / TOP_UP_ITEM_MAX_G));
  // Whole 5 g units shared out, the earlier items taking the remainder, so the items add up to the total.
  const units = Math.ceil(totalG / GRAMS_ROUNDING - 1e-9);
  const byTime = new Map<number, number>();
  for (let i = 0; i < count; i += 1) {
    const atMs = Math.max(earliestMs, workout.startMs - (TOP_UP_OFFSETS_MIN[i] as number) * MINUTE_MS);
    const itemUnits = Math.floor(units / count) + (i < units % count ? 1 : 0);
    byTime.set(atMs, (byTime.get(atMs) ?? 0) + itemUnits * GRAMS_ROUNDING);
  }
  const store =
    context.fromMusclePercent < READY_MUSCLE_START_PERCENT || context.limitingStore === 'muscle'
      ? 'muscle glycogen'
      : 'the liver';
  return [...byTime].map(([atMs, carbsG]) => ({
    atMs,
    carbsG,
    absorptionType: 'FAST' as const,
    phase: 'before' as const,
    reason: `Top-up for ${store}`,
  }));
}

/**
 * RAPID items every 20 minutes from the 20th minute, the last at least 20
 * minutes before the end (choice: food in the last minutes is not absorbed
 * in time to matter), each the shortfall against the rate by its time of
 * what is logged since the start plus what is advised before it. Slots
 * before `earliestMs` are taken as eaten as advised.
 */
function duringItems(rung: number, search: FuelSearch): FuelAdviceItem[] {
  const rate = RATE_LADDER[rung];
  if (rate === undefined) return [];
  const { workout } = search;
  const perItem = (rate * DURING_INTERVAL_MIN) / 60;
  const items: FuelAdviceItem[] = [];
  let advised = 0;
  for (
    let minute = DURING_INTERVAL_MIN, slot = 1;
    minute <= search.durationMin - DURING_INTERVAL_MIN;
    minute += DURING_INTERVAL_MIN, slot += 1
  ) {
    const atMs = workout.startMs + minute * MINUTE_MS;
    const shortfall = roundUp(perItem * slot - eatenBetween(search.meals, workout.startMs, atMs) - advised);
    if (shortfall <= 0) continue;
    advised += shortfall;
    if (atMs < search.earliestMs) continue;
    items.push({
      atMs,
      carbsG: shortfall,
      absorptionType: 'RAPID',
      phase: 'during',
      reason: `In-ride, ${rate} g/h${rate > SINGLE_SUGAR_MAX_G_PER_H ? ', glucose + fructose' : ''}`,
    });
  }
  return items;
}

/** Carbohydrate in the meals from `fromMs` up to but not including `untilMs`. */
function eatenIn(meals: readonly MealInput[], fromMs: number, untilMs: number): number {
  return meals.filter((meal) => meal.atMs >= fromMs && meal.atMs < untilMs).reduce((sum, meal) => sum + meal.carbsG, 0);
}

/** Carbohydrate in the meals from `fromMs` through `toMs`, both included. */
function eatenBetween(meals: readonly MealInput[], fromMs: number, toMs: number): number {
  return meals.filter((meal) => meal.atMs >= fromMs && meal.atMs <= toMs).reduce((sum, meal) => sum + meal.carbsG, 0);
}

/** The plan's before lines: the guideline meal (or that the meals cover it), and the store-driven top-up. */
function beforeLines(search: FuelSearch, candidate: Candidate, context: AdviceContext): FuelPlanLine[] {
  const lines: FuelPlanLine[] = [];
  const { pre, timeZone } = search;
  if (pre !== null) {
    const guideline = `${formatNumber(pre.gPerKg)} g/kg`;
    if (pre.item !== null) {
      const kind =
        pre.item.absorptionType === 'BALANCED'
          ? 'a carbohydrate-rich meal (porridge, bread, rice, pasta)'
          : 'fast carbohydrate (banana, white bread, rice cakes)';
      const counted =
        pre.eatenG > 0 ? `, on top of the ${formatNumber(pre.eatenG)} g already eaten in the 4 h before` : '';
      lines.push({
        phase: 'before',
        text: `Before: ${String(pre.item.carbsG)} g of carbohydrate at ${clock(pre.item.atMs, timeZone)}, ${kind}${counted} (${guideline} in the 1–4 h before).`,
      });
    } else if (pre.tooLate) {
      lines.push({
        phase: 'before',
        text: `Before: too little time is left for the ${formatNumber(pre.targetG)} g (${guideline}) of a pre-workout meal${pre.eatenG > 0 ? ` (${formatNumber(pre.eatenG)} g eaten)` : ''}; start eating early in the workout.`,
      });
    } else {
      lines.push({
        phase: 'before',
        text: `Before: the ${formatNumber(pre.eatenG)} g in your meals in the 4 h before cover the ${formatNumber(pre.targetG)} g (${guideline}) this workout needs.`,
      });
    }
  }
  const topUp = topUpItems(candidate.topUpG, context);
  const first = topUp[0];
  const last = topUp.at(-1);
  if (first !== undefined && last !== undefined) {
    const grams = topUp.reduce((sum, item) => sum + item.carbsG, 0);
    const when =
      first.atMs === last.atMs
        ? `at ${clock(first.atMs, timeZone)}`
        : `from ${clock(first.atMs, timeZone)} to ${clock(last.atMs, timeZone)}`;
    lines.push({
      phase: 'before',
      text: `Top-up: ${String(grams)} g of fast carbohydrate ${when} (banana, white bread, rice cakes), ${topUpPurpose(context)}.`,
    });
  }
  return lines;
}

/** The plan's during line: the rate, from when, how much how often, and why when raised. */
function duringLines(search: FuelSearch, result: SearchResult): FuelPlanLine[] {
  const rate = RATE_LADDER[result.candidate.rung];
  if (rate === undefined) return [];
  const during = result.advice.filter((item) => item.phase === 'during');
  // In the workout: from its start, before its end (a meal at the end is eaten after it).
  const loggedG = eatenIn(search.meals, search.workout.startMs, search.workout.endMs);
  const logged = loggedG > 0 ? `; the ${formatNumber(loggedG)} g logged or planned in the workout count` : '';
  const first = during[0];
  const perItem = (rate * DURING_INTERVAL_MIN) / 60;
  if (first === undefined) {
    const text =
      loggedG > 0
        ? `During: ${rate} g/h${logged} and cover it.`
        : `During: ${rate} g/h, ${formatNumber(perItem)} g every ${DURING_INTERVAL_MIN} min.`;
    return [{ phase: 'during', text }];
  }
  const guideline = RATE_LADDER[search.guidelineRung];
  const raised =
    result.raisedFor !== null && guideline !== undefined
      ? `; raised from ${guideline} g/h ${result.raisedFor === 'liver' ? `so the liver stays at or above ${LIVER_RISK_G} g` : 'so muscle glycogen lasts'}`
      : '';
  const sugars = rate > SINGLE_SUGAR_MAX_G_PER_H ? '; above 60 g/h only glucose + fructose products (about 2:1)' : '';
  return [
    {
      phase: 'during',
      text: `During: ${rate} g/h from ${clock(first.atMs, search.timeZone)}, ${formatNumber(perItem)} g every ${DURING_INTERVAL_MIN} min (a gel, or ${drinkMl(perItem)} ml of ${SPORTS_DRINK_G_PER_100_ML} % sports drink)${sugars}${raised}${logged}.`,
    },
  ];
}

/** The plan's after line, for a workout longer than 75 min or a hard one (IF ≥ 0.85). */
function afterLines(search: FuelSearch): FuelPlanLine[] {
  if (!search.isLong && search.intensityFactor < RECOVERY_LINE_FROM_IF) return [];
  const low = Math.round(RECOVERY_INTAKE.lowGPerKgPerH * search.massKg);
  const high = Math.round(RECOVERY_INTAKE.highGPerKgPerH * search.massKg);
  return [
    {
      phase: 'after',
      text: `After: if you train again within ${RECOVERY_INTAKE.nextWithinH} h, ${low}–${high} g of carbohydrate an hour (${RECOVERY_INTAKE.lowGPerKgPerH}–${RECOVERY_INTAKE.highGPerKgPerH} g/kg/h) for the first ${RECOVERY_INTAKE.hours} h, starting soon after; otherwise carbohydrate-rich meals as usual.`,
    },
  ];
}

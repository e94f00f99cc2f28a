import type { FuelLimitingStore, FuelStatus } from '@pacer/contract';
import {
  AT_RISK_MUSCLE_START_PERCENT,
  type AbsorptionType,
  LIVER_RISK_G,
  READY_MUSCLE_START_PERCENT,
  STEP_MINUTES,
  STEP_MS,
  STORAGE_LIVER_SHARE,
  UPTAKE_CAP_PER_STEP_G,
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
 * Advice turns a workout that is not ready into one that is:
 * - before: FAST items (white bread, rice cakes, banana) 90, 75 and 60
 *   minutes before the start, first the grams that bring muscle to 70 % of
 *   M_max (muscle stores 70 % of what is taken up at rest);
 * - during, for workouts longer than 75 minutes: RAPID items (gels, sports
 *   drinks) every 20 minutes at 30, 45 or 60 g/h, and up to 90 g/h past
 *   2.5 hours, the intakes at which multiple transportable carbohydrates are
 *   still absorbed (Jeukendrup 2014, Sports Med 44 Suppl 1:S25). In the
 *   model these replace the liver's output first, so they are what keeps the
 *   liver above 20 g, and spare muscle only in part.
 * Every candidate is checked by re-running the model with the items added as
 * meals; the advice returned is the first candidate that the model rates
 * `ready`, so logging exactly those items and asking again gives `ready`.
 * When no candidate within those limits gets there, the best effort is
 * returned with a reason that says so.
 *
 * Choices the rules leave open (each also noted where it is made):
 * - A workout that is already `ready` gets no advice, even a long one.
 * - Search order: before-grams up to 70 % muscle at the start; then, while
 *   a store runs short, the during rate up the ladder 30 → 45 → 60 g/h
 *   (then 75 → 90 g/h past 2.5 h); then more before-grams, up to 180 g,
 *   while they still lift the store that runs short.
 * - The during rate is the lowest rung that works, never under 30 g/h.
 * - Grams are rounded up to 5 g; rounding up only adds food, which never
 *   lowers the stores, and the rounded items are the ones verified.
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
  readonly reason: string;
}

export interface WorkoutFuelPlan extends WorkoutFuelAssessment {
  /** Empty when the workout is already `ready`. */
  readonly advice: readonly FuelAdviceItem[];
  /** The workout re-simulated with exactly `advice` added as meals. */
  readonly withAdvice: WorkoutFuelAssessment;
  /** Why the advice cannot make the workout ready; `null` when it does. */
  readonly shortfallReason: string | null;
}

export interface WorkoutFuelPlanOptions {
  /**
   * The model input around the workout, without `steps`: the plan runs it
   * from `startAt` through the step boundary at or after the workout's end.
   * `exercise` holds the workout itself; `meals` what is logged.
   */
  readonly simulation: Omit<GlycogenSimulationInput, 'steps'>;
  readonly workout: WorkoutWindow;
  /**
   * Earliest time advice may be placed at, e.g. now (the caller owns the
   * clock). Never earlier than `simulation.startAt`, because release before
   * the start of a run is the start state's business.
   */
  readonly notBeforeMs?: number;
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

/** Longest workout without during advice, minutes. */
const DURING_ADVICE_AFTER_MIN = 75;
/** Minutes between during items. */
const DURING_INTERVAL_MIN = 20;
/** From this minute of the workout on, the during rate may rise past 60 g/h. */
const HIGH_RATE_FROM_MIN = 150;
/**
 * During rates tried in order, g/h: [rate before 2.5 h, rate from 2.5 h].
 * Choice: 15 g/h rungs give items of 10, 15, 20, 25 and 30 g, the sizes of
 * gels and bottles.
 */
const DURING_RATE_LADDER: readonly (readonly [number, number])[] = [
  [30, 30],
  [45, 45],
  [60, 60],
  [60, 75],
  [60, 90],
];
/** Minutes before the start of the first, second and third FAST item. */
const BEFORE_OFFSETS_MIN = [90, 75, 60] as const;
/**
 * Largest FAST item before another is added. Choice: three items 15 minutes
 * apart release at most 75 % of one item in a single step (the second,
 * third and fourth steps of the first item overlap), so 30 g items keep the
 * release within the 22.5 g uptake cap when the gut is otherwise empty.
 */
const BEFORE_ITEM_MAX_G = UPTAKE_CAP_PER_STEP_G / 0.75;
/** Advice grams are multiples of this. */
const GRAMS_ROUNDING = 5;
/** Bound on re-simulations. */
const MAX_ITERATIONS = 40;
/**
 * Most grams advised before the start. Choice: from the first item (90 min
 * before) to the end of the last one's release (30 min after the start) the
 * gut can take up at most 8 steps × 22.5 g = 180 g; more would not be
 * absorbed in time to matter.
 */
const BEFORE_MAX_G = ((BEFORE_OFFSETS_MIN[0] + 30) / STEP_MINUTES) * UPTAKE_CAP_PER_STEP_G;
/**
 * More before-grams stop paying off when the stored grams they add (at the
 * start, or at the minimum) are below this fraction of the grams added: the
 * uptake cap is full.
 */
const SATURATION_GAIN_RATIO = 0.1;

interface Candidate {
  readonly beforeG: number;
  /** Index into DURING_RATE_LADDER, or −1 for no during items. */
  readonly rung: number;
}

/** One re-run of the model with advice added, and the grams the search compares between candidates. */
interface Evaluation {
  readonly assessment: WorkoutFuelAssessment;
  /** Muscle at the start, grams: what before-grams are for first. */
  readonly muscleAtStart: number;
  /** Lowest liver plus lowest muscle over the workout, grams: whether more before-grams still help. */
  readonly storedAtLowest: number;
}

/** What the search for advice around one workout works with. */
interface FuelSearch {
  readonly workout: WorkoutWindow;
  readonly earliestMs: number;
  readonly durationMin: number;
  readonly capacity: GlycogenCapacity;
  /** During advice is given (the workout is longer than 75 minutes). */
  readonly isLong: boolean;
  /** The highest rung of DURING_RATE_LADDER the workout may use. */
  readonly lastRung: number;
  readonly evaluate: (advice: readonly FuelAdviceItem[]) => Evaluation;
}

function fuelSearch(options: WorkoutFuelPlanOptions): FuelSearch {
  const { simulation, workout } = options;
  if (!(workout.endMs >= workout.startMs) || workout.startMs < simulation.startAt) {
    throw new RangeError('the workout must start at or after the simulation start and end after it starts');
  }
  const steps = Math.ceil((workout.endMs - simulation.startAt) / STEP_MS);
  const durationMin = (workout.endMs - workout.startMs) / 60_000;
  return {
    workout,
    earliestMs: Math.max(simulation.startAt, options.notBeforeMs ?? simulation.startAt),
    durationMin,
    capacity: simulation.capacity,
    isLong: durationMin > DURING_ADVICE_AFTER_MIN,
    lastRung: durationMin > HIGH_RATE_FROM_MIN ? DURING_RATE_LADDER.length - 1 : 2,
    evaluate: (advice) => {
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

/** Where the search stands: the candidate to try, the last before-grams tried, and why a lever ran out. */
interface SearchState {
  candidate: Candidate;
  previous: { beforeG: number; muscleAtStart: number; storedAtLowest: number } | null;
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
  // Has the last rise in before-grams stopped paying off (the uptake cap is full)?
  const added = previous === null ? 0 : candidate.beforeG - previous.beforeG;
  const exhausted = candidate.beforeG >= BEFORE_MAX_G || search.earliestMs >= search.workout.startMs;
  const gainAtStart = result.muscleAtStart - (previous?.muscleAtStart ?? 0);
  const gainAtLowest = result.storedAtLowest - (previous?.storedAtLowest ?? 0);
  const remember = {
    beforeG: candidate.beforeG,
    muscleAtStart: result.muscleAtStart,
    storedAtLowest: result.storedAtLowest,
  };

  const startPercent = muscleStartPercent(outcome, search.capacity);
  if (startPercent < READY_MUSCLE_START_PERCENT && state.startReason === null) {
    if (!exhausted && !(added > 0 && gainAtStart < SATURATION_GAIN_RATIO * added)) {
      state.previous = remember;
      const missing = gramsForMuscle(READY_MUSCLE_START_PERCENT, outcome.start.muscleG, search.capacity);
      return { ...candidate, beforeG: moreBefore(candidate.beforeG, missing) };
    }
    state.startReason =
      search.earliestMs >= search.workout.startMs
        ? `There is no time left before the start to top up muscle glycogen to ${READY_MUSCLE_START_PERCENT} %.`
        : `Muscle glycogen cannot reach ${READY_MUSCLE_START_PERCENT} % by the start: the gut passes at most 90 g of carbohydrate an hour, and the 90 minutes before the start are not enough; a carbohydrate-rich meal 3–4 hours earlier would be.`;
  }
  const liverShort = outcome.lowest.liverG < LIVER_RISK_G;
  const muscleShort = outcome.lowest.muscleG <= muscleFloorG(search.capacity) + FLOOR_TOLERANCE_G;
  if (!liverShort && !muscleShort) return null;
  // Food during the workout replaces the liver's output first and spares muscle in part: the next lever.
  if (search.isLong && candidate.rung < search.lastRung) {
    return { ...candidate, rung: candidate.rung + 1 };
  }
  // Still short at the highest during rate (or the workout is too short for
  // during advice, or it is muscle that runs short): more before the start is
  // the only lever left.
  if (exhausted || (added > 0 && gainAtLowest < SATURATION_GAIN_RATIO * added)) {
    state.minimumReason = shortfallOf(search, outcome);
    return null;
  }
  state.previous = remember;
  return { ...candidate, beforeG: moreBefore(candidate.beforeG, gramsForShortStore(outcome, search.capacity)) };
}

/** Why the store that runs short cannot be kept above its limit. */
function shortfallOf(search: FuelSearch, outcome: WorkoutFuelAssessment): string {
  if (outcome.lowest.liverG < LIVER_RISK_G) {
    return search.isLong
      ? `The liver falls below ${LIVER_RISK_G} g (blood glucose runs short) even with up to ${DURING_RATE_LADDER[search.lastRung]?.[1] ?? 90} g/h during the workout; shorten it or lower its intensity.`
      : `The liver falls below ${LIVER_RISK_G} g (blood glucose runs short) even with the most that can be absorbed before the workout; shorten it or lower its intensity.`;
  }
  return search.isLong
    ? `Muscle glycogen runs down to its floor during the workout even with the most that can be absorbed before it and up to ${DURING_RATE_LADDER[search.lastRung]?.[1] ?? 90} g/h during it (food during a workout spares muscle only in part); shorten it or lower its intensity, or eat more carbohydrate the day before.`
    : 'Muscle glycogen runs down to its floor during the workout even with the most that can be absorbed before it; shorten it or lower its intensity, or eat more carbohydrate the day before.';
}

interface SearchResult {
  readonly advice: FuelAdviceItem[];
  readonly outcome: WorkoutFuelAssessment;
  readonly startReason: string | null;
  readonly minimumReason: string | null;
}

/** Candidates in the search order (top of this file) until one is `ready` or none is left. */
function searchAdvice(search: FuelSearch, base: WorkoutFuelAssessment): SearchResult {
  const startShortfall = gramsForMuscle(READY_MUSCLE_START_PERCENT, base.start.muscleG, search.capacity);
  const state: SearchState = {
    candidate: { beforeG: Math.min(BEFORE_MAX_G, roundUp(startShortfall)), rung: -1 },
    previous: null,
    startReason: null,
    minimumReason: null,
  };
  const context: AdviceContext = {
    workout: search.workout,
    earliestMs: search.earliestMs,
    durationMin: search.durationMin,
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
  return { advice, outcome, startReason: state.startReason, minimumReason: state.minimumReason };
}

/**
 * Status of a planned workout as logged, and advice that makes it `ready`.
 * See the description at the top of this file.
 */
export function planWorkoutFuel(options: WorkoutFuelPlanOptions): WorkoutFuelPlan {
  const search = fuelSearch(options);
  const base = search.evaluate([]).assessment;
  if (base.status === 'ready') return { ...base, advice: [], withAdvice: base, shortfallReason: null };

  const { outcome, startReason, minimumReason, advice: found } = searchAdvice(search, base);
  let advice = found;
  let shortfallReason: string | null = null;
  if (outcome.status !== 'ready') {
    shortfallReason =
      [startReason, minimumReason].filter((reason) => reason !== null).join(' ') ||
      'No advice within the intake limits makes this workout ready.';
    const note = ` Even with all of the advice the workout stays ${outcome.status === 'at_risk' ? 'at risk' : 'short of ready'}: ${shortfallReason}`;
    advice = advice.map((item) => ({ ...item, reason: item.reason + note }));
  }
  return { ...base, advice, withAdvice: outcome, shortfallReason };
}

/** Before-grams raised by what is missing (at least 5 g), never past BEFORE_MAX_G. */
function moreBefore(beforeG: number, missingG: number): number {
  return Math.min(BEFORE_MAX_G, beforeG + Math.max(GRAMS_ROUNDING, roundUp(missingG)));
}

function roundUp(grams: number): number {
  return Math.ceil(grams / GRAMS_ROUNDING - 1e-9) * GRAMS_ROUNDING;
}

interface AdviceContext {
  readonly workout: WorkoutWindow;
  readonly earliestMs: number;
  readonly durationMin: number;
  /** Muscle at the start as logged, percent of M_max. */
  readonly fromMusclePercent: number;
  /** The store that limits the workout as logged. */
  readonly limitingStore: FuelLimitingStore | null;
}

function adviceFor(candidate: Candidate, context: AdviceContext): FuelAdviceItem[] {
  return [...beforeItems(candidate.beforeG, context), ...duringItems(candidate.rung, context)];
}

/**
 * `totalG` split into up to three FAST items 90, 75 and 60 minutes before the
 * start. Choice: when that window has partly passed, items move to the
 * earliest allowed time (the same time merges into one item) rather than
 * being dropped.
 */
function beforeItems(totalG: number, context: AdviceContext): FuelAdviceItem[] {
  if (totalG <= 0 || context.earliestMs >= context.workout.startMs) return [];
  const count = Math.min(BEFORE_OFFSETS_MIN.length, Math.ceil(totalG / BEFORE_ITEM_MAX_G));
  const eachG = roundUp(totalG / count);
  const byTime = new Map<number, number>();
  for (let i = 0; i < count; i += 1) {
    const atMs = Math.max(context.earliestMs, context.workout.startMs - (BEFORE_OFFSETS_MIN[i] as number) * 60_000);
    byTime.set(atMs, (byTime.get(atMs) ?? 0) + eachG);
  }
  const items = [...byTime];
  const totalAdvised = eachG * count;
  return items.map(([atMs, carbsG]) => ({
    atMs,
    carbsG,
    absorptionType: 'FAST' as const,
    reason:
      `${carbsG} g of fast carbohydrate (white bread, rice cakes, banana) ` +
      `${Math.round((context.workout.startMs - atMs) / 60_000)} min before the start` +
      (items.length > 1 ? `, one of ${items.length} items (${totalAdvised} g in all),` : '') +
      (context.fromMusclePercent < READY_MUSCLE_START_PERCENT
        ? ` to bring muscle glycogen from ${context.fromMusclePercent.toFixed(1)} % to at least ${READY_MUSCLE_START_PERCENT} % by the start.`
        : context.limitingStore === 'muscle'
          ? ' to start with fuller muscle glycogen, so it lasts the workout.'
          : ` to start with a fuller liver, so it stays at or above ${LIVER_RISK_G} g during the workout.`),
  }));
}

/**
 * RAPID items every 20 minutes from the 20th minute, the last at least 20
 * minutes before the end (choice: food in the last minutes is not absorbed
 * in time to matter), at the rung's rates.
 */
function duringItems(rung: number, context: AdviceContext): FuelAdviceItem[] {
  const rates = DURING_RATE_LADDER[rung];
  if (rates === undefined) return [];
  const items: FuelAdviceItem[] = [];
  for (
    let minute = DURING_INTERVAL_MIN;
    minute <= context.durationMin - DURING_INTERVAL_MIN;
    minute += DURING_INTERVAL_MIN
  ) {
    const atMs = context.workout.startMs + minute * 60_000;
    if (atMs < context.earliestMs) continue;
    const ratePerHour = minute >= HIGH_RATE_FROM_MIN ? rates[1] : rates[0];
    const carbsG = (ratePerHour * DURING_INTERVAL_MIN) / 60;
    items.push({
      atMs,
      carbsG,
      absorptionType: 'RAPID',
      reason:
        `${carbsG} g of rapid carbohydrate (gel, sports drink) at minute ${minute}, ` +
        `${ratePerHour} g/h, to keep the liver at or above ${LIVER_RISK_G} g (blood glucose) during the workout.`,
    });
  }
  return items;
}

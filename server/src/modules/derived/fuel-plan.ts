import type { FuelStatus } from '@pacer/contract';
import {
  AT_RISK_START_PERCENT,
  type AbsorptionType,
  MINIMUM_DURING_PERCENT,
  READY_START_PERCENT,
  STEP_MINUTES,
  STEP_MS,
  UPTAKE_CAP_PER_STEP_G,
} from './glycogen.constants.ts';
import {
  percentOf,
  simulateGlycogen,
  type GlycogenCapacity,
  type GlycogenSimulation,
  type GlycogenSimulationInput,
  type GlycogenState,
  type MealInput,
} from './glycogen.model.ts';

/**
 * Fuel status and advice for one planned workout, from the glycogen model.
 *
 * Status, with percent = (L + M) / (L_max + M_max):
 * - `ready`: at least 70 % at the start and at least 20 % throughout;
 * - `at_risk`: below 50 % at the start, or below 20 % at some point;
 * - `top_up`: otherwise (50–70 % at the start, never below 20 %).
 *
 * Advice turns a workout that is not ready into one that is:
 * - before: the grams that bring the start to 70 %, as FAST items (white
 *   bread, rice cakes, banana) 90, 75 and 60 minutes before the start;
 * - during, for workouts longer than 75 minutes: RAPID items (gels, sports
 *   drinks) every 20 minutes at 30, 45 or 60 g/h, and up to 90 g/h past
 *   2.5 hours, the intakes at which multiple transportable carbohydrates are
 *   still absorbed (Jeukendrup 2014, Sports Med 44 Suppl 1:S25).
 * Every candidate is checked by re-running the model with the items added as
 * meals; the advice returned is the first candidate that the model rates
 * `ready`, so logging exactly those items and asking again gives `ready`.
 * When no candidate within those limits gets there, the best effort is
 * returned with a reason that says so.
 *
 * Choices the rules leave open (each also noted where it is made):
 * - A workout that is already `ready` gets no advice, even a long one.
 * - Search order: before-grams up to 70 % at the start; then the during rate
 *   up the ladder 30 → 45 → 60 g/h (then 75 → 90 g/h past 2.5 h); then more
 *   before-grams, up to 180 g, while they still lift the minimum.
 * - The during rate is the lowest rung that works, never under 30 g/h.
 * - Grams are rounded up to 5 g; rounding up only adds food, which never
 *   lowers the stores, and the rounded items are the ones verified.
 */

/** The planned workout's time span, epoch ms. Its exercise must be in the simulation input. */
export interface WorkoutWindow {
  readonly startMs: number;
  readonly endMs: number;
}

export interface WorkoutFuelAssessment {
  readonly status: FuelStatus;
  /** Percent at the last step boundary at or before the start. */
  readonly startPercent: number;
  /** Lowest percent from that boundary through the first boundary at or after the end. */
  readonly minPercent: number;
  /** Percent at the first step boundary at or after the end. */
  readonly endPercent: number;
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

/** The status for a start and a minimum percent. */
export function fuelStatus(startPercent: number, minPercent: number): FuelStatus {
  if (startPercent < AT_RISK_START_PERCENT || minPercent < MINIMUM_DURING_PERCENT) return 'at_risk';
  if (startPercent >= READY_START_PERCENT) return 'ready';
  return 'top_up';
}

/**
 * Reads a workout's start, minimum and end percent from a simulation that
 * began at `startAt` from `start`. Choice: the start is the last step
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
  const startPercent = percentOf(stateAt(first), run.capacity);
  let minPercent = startPercent;
  for (let b = first + 1; b <= last; b += 1) minPercent = Math.min(minPercent, percentOf(stateAt(b), run.capacity));
  const endPercent = percentOf(stateAt(last), run.capacity);
  return { status: fuelStatus(startPercent, minPercent), startPercent, minPercent, endPercent };
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

/** One re-run of the model with advice added: the assessment and the grams stored at the start and at the minimum. */
interface Evaluation {
  readonly assessment: WorkoutFuelAssessment;
  readonly storedAtStart: number;
  readonly storedAtMin: number;
}

/** What the search for advice around one workout works with. */
interface FuelSearch {
  readonly workout: WorkoutWindow;
  readonly earliestMs: number;
  readonly durationMin: number;
  readonly totalCapacity: number;
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
  const totalCapacity = simulation.capacity.liverG + simulation.capacity.muscleG;
  const durationMin = (workout.endMs - workout.startMs) / 60_000;
  return {
    workout,
    earliestMs: Math.max(simulation.startAt, options.notBeforeMs ?? simulation.startAt),
    durationMin,
    totalCapacity,
    isLong: durationMin > DURING_ADVICE_AFTER_MIN,
    lastRung: durationMin > HIGH_RATE_FROM_MIN ? DURING_RATE_LADDER.length - 1 : 2,
    evaluate: (advice) => {
      const meals: MealInput[] = [...simulation.meals, ...advice];
      const run = simulateGlycogen({ ...simulation, meals, steps });
      const assessment = assessWorkoutFuel(run, simulation, workout);
      return {
        assessment,
        storedAtStart: (assessment.startPercent / 100) * totalCapacity,
        storedAtMin: (assessment.minPercent / 100) * totalCapacity,
      };
    },
  };
}

/** Grams of glycogen between `percent` and `targetPercent` of the capacity. */
function gramsShort(targetPercent: number, percent: number, totalCapacity: number): number {
  return ((targetPercent - percent) / 100) * totalCapacity;
}

/** Where the search stands: the candidate to try, the last before-grams tried, and why a lever ran out. */
interface SearchState {
  candidate: Candidate;
  previous: { beforeG: number; storedAtStart: number; storedAtMin: number } | null;
  // Set once a lever is exhausted; the advice is then the best effort.
  startReason: string | null;
  minimumReason: string | null;
}

/**
 * The candidate to try after one that is not `ready`, or null when no lever
 * is left (a reason is then set) or the minimum is already met.
 */
function nextCandidate(search: FuelSearch, state: SearchState, result: Evaluation): Candidate | null {
  const { candidate, previous } = state;
  const outcome = result.assessment;
  // Has the last rise in before-grams stopped paying off (the uptake cap is full)?
  const added = previous === null ? 0 : candidate.beforeG - previous.beforeG;
  const exhausted = candidate.beforeG >= BEFORE_MAX_G || search.earliestMs >= search.workout.startMs;
  const gainAtStart = result.storedAtStart - (previous?.storedAtStart ?? 0);
  const gainAtMinimum = result.storedAtMin - (previous?.storedAtMin ?? 0);
  const remember = {
    beforeG: candidate.beforeG,
    storedAtStart: result.storedAtStart,
    storedAtMin: result.storedAtMin,
  };

  if (outcome.startPercent < READY_START_PERCENT && state.startReason === null) {
    if (!exhausted && !(added > 0 && gainAtStart < SATURATION_GAIN_RATIO * added)) {
      state.previous = remember;
      const missing = gramsShort(READY_START_PERCENT, outcome.startPercent, search.totalCapacity);
      return { ...candidate, beforeG: moreBefore(candidate.beforeG, missing) };
    }
    state.startReason =
      search.earliestMs >= search.workout.startMs
        ? 'There is no time left before the start to top up glycogen to 70 %.'
        : 'Glycogen cannot reach 70 % by the start: the gut passes at most 90 g of carbohydrate an hour, and the 90 minutes before the start are not enough; a carbohydrate-rich meal 3–4 hours earlier would be.';
  }
  if (outcome.minPercent >= MINIMUM_DURING_PERCENT) return null;
  if (search.isLong && candidate.rung < search.lastRung) return { ...candidate, rung: candidate.rung + 1 };
  // The minimum is still below 20 % at the highest during rate (or the
  // workout is too short for during advice): more before the start is the
  // only lever left.
  if (exhausted || (added > 0 && gainAtMinimum < SATURATION_GAIN_RATIO * added)) {
    state.minimumReason = search.isLong
      ? `The workout drains glycogen below 20 % even with up to ${DURING_RATE_LADDER[search.lastRung]?.[1] ?? 90} g/h during it; shorten it or lower its intensity.`
      : 'The workout drains glycogen below 20 % even with the most that can be absorbed before it; shorten it or lower its intensity.';
    return null;
  }
  state.previous = remember;
  const missing = gramsShort(MINIMUM_DURING_PERCENT, outcome.minPercent, search.totalCapacity);
  return { ...candidate, beforeG: moreBefore(candidate.beforeG, missing) };
}

interface SearchResult {
  readonly advice: FuelAdviceItem[];
  readonly outcome: WorkoutFuelAssessment;
  readonly startReason: string | null;
  readonly minimumReason: string | null;
}

/** Candidates in the search order (top of this file) until one is `ready` or none is left. */
function searchAdvice(search: FuelSearch, base: WorkoutFuelAssessment): SearchResult {
  const startShortfall = gramsShort(READY_START_PERCENT, base.startPercent, search.totalCapacity);
  const state: SearchState = {
    candidate: { beforeG: Math.min(BEFORE_MAX_G, roundUp(Math.max(0, startShortfall))), rung: -1 },
    previous: null,
    startReason: null,
    minimumReason: null,
  };
  const context: AdviceContext = {
    workout: search.workout,
    earliestMs: search.earliestMs,
    durationMin: search.durationMin,
    fromPercent: base.startPercent,
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
  readonly fromPercent: number;
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
      (context.fromPercent < READY_START_PERCENT
        ? ` to bring glycogen from ${context.fromPercent.toFixed(1)} % to at least ${READY_START_PERCENT} % by the start.`
        : ` to start with fuller stores, so glycogen stays at or above ${MINIMUM_DURING_PERCENT} % during the workout.`),
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
        `${ratePerHour} g/h, to keep glycogen at or above ${MINIMUM_DURING_PERCENT} % during the workout.`,
    });
  }
  return items;
}

/**
 * # The glycogen model
 *
 * A deterministic bookkeeping of an athlete's carbohydrate stores in steps of
 * 15 minutes (docs/science.md §3). Pure functions only: no database, no
 * clock, no I/O. Every number the athlete sees can be recomputed from the
 * inputs below and the constants in glycogen.constants.ts, where each value
 * is given with its source.
 *
 * ## State
 * Three pools, in grams:
 * - liver glycogen L, 0 to 100 g (a fed liver holds about 90–160 g;
 *   Gonzalez et al. 2016, Am J Physiol Endocrinol Metab 311:E543);
 * - muscle glycogen M, from a floor of 25 % to 6 g per kg of body mass
 *   (muscle carries most of the body's 300–700 g; Areta & Hopkins 2018,
 *   Sports Med 48:2091; the floor is what the muscles keep, see
 *   MUSCLE_FLOOR_FRACTION), with 70 kg assumed when no weight is known;
 * - the gut pool G: carbohydrate eaten and already released from the food,
 *   not yet taken up into the blood.
 * Liver and muscle are kept apart because only the liver feeds blood glucose:
 * an empty liver during exercise is the bonk, whatever muscle holds.
 * A user's chain starts at 80 % of each ceiling with an empty gut
 * (`initialState`), a week before the first day asked for, and runs forward.
 *
 * ## Food
 * Each item releases its carbohydrate from the time it was logged along a
 * triangular rate profile (lag, peak, end per absorption type: gels within an
 * hour, a mixed meal over three hours, a heavy meal over six). The release in
 * a step is the exact integral of the triangle over that step (absorption.ts),
 * so an item never releases more than it holds. Uptake from the gut is capped
 * at 22.5 g per step, 90 g/h, the most mixed glucose–fructose intake the gut
 * passes (Jeukendrup 2014, Sports Med 44 Suppl 1:S25); what the cap holds
 * back stays in G for later steps, it is neither lost nor counted twice.
 *
 * ## Demand
 * - At rest, a fed-state use of 2.5 g per step (10 g/h), covered by uptake
 *   first; what uptake leaves, the liver gives up to 1.125 g per step
 *   (4.5 g/h), and gluconeogenesis with the lower fasted use the rest
 *   (constants' sources in glycogen.constants.ts). Muscle does not drain at
 *   rest.
 * - During exercise, from the mechanical work: kcal = kJ of work (about 24 %
 *   gross efficiency), a share f(IF) of it carbohydrate, rising with
 *   intensity (Romijn et al. 1993, Am J Physiol 265:E380; van Loon et al.
 *   2001, J Physiol 536:295); grams = kcal × f / 4. A recorded workout's
 *   stopped time (1 − moving fraction) counts as rest (exercise.ts).
 *
 * ## One step, in this order
 * ρ is the step's resting fraction: the minutes no workout covers, plus the
 * stopped share of the minutes one covers, over 15.
 * 1. Add the step's release to G; uptake U = min(G, 22.5); G −= U.
 * 2. Resting use ρ × 2.5 g from U first; the liver gives what U leaves, up
 *    to ρ × 1.125 g and what it holds; the rest is `gluconeogenesisG`.
 * 3. Exercise demand E: the liver's share 0.25·E from what is left of U
 *    first, then from L, and what L lacks is the liver's deficit (the bonk,
 *    never moved to muscle). Of the uptake still left, the part 1 − ρ
 *    (exercise time) spares muscle by half, up to the muscle's share 0.75·E;
 *    the rest of that share comes from M down to its floor, and what that
 *    lacks is the muscle's deficit. Food during exercise so spares the liver
 *    first and muscle only in part (Coyle et al. 1986, J Appl Physiol
 *    61:165; Jeukendrup et al. 1999, Am J Physiol 276:E672; Stellingwerff et
 *    al. 2007, Pflügers Arch 454:635).
 * 4. Uptake left over: the part ρ is stored 30 % in L and 70 % in M, muscle
 *    taking at most ρ × its synthesis rate, what one store cannot take going
 *    to the other and what neither can take to `spilledG`; of the part 1 − ρ,
 *    what did not spare muscle is oxidised in place of fat, also `spilledG`
 *    (oxidised, not stored).
 * Muscle synthesis rate: muscle lays down glycogen at about 5–10 mmol per kg
 * of wet muscle an hour at best (Jentjens & Jeukendrup 2003, Sports Med
 * 33:117), far slower than the gut can deliver; the model takes 8, over a
 * muscle mass of 40 % of body mass (9.072 g a step at 70 kg), falling in a
 * straight line from 70 % of M_max to 0 at M_max as glycogen inhibits its own
 * synthesis (`muscleSynthesisLimitG`). The limit is off on a balanced day
 * (`restingUse: false`), whose intake is an assumption, not a timed meal.
 *
 * ## Invariants (checked on random inputs in test/unit/glycogen-properties.test.ts)
 * - Mass balance over any run of steps:
 *   (L + M + G)_end − (L + M + G)_start = Σ releasedG − Σ (demandG − deficitG
 *   − gluconeogenesisG) − Σ spilledG. Release counts food as it leaves the
 *   item; eaten-but-unreleased carbohydrate (an item's pending part) is not
 *   yet in G, so over a run that ends after every item's release window
 *   Σ releasedG equals the carbohydrate eaten in the run.
 * - Cumulative release and uptake never decrease and never exceed what was
 *   eaten; uptake per step ≤ 22.5 g; 0 ≤ L ≤ L_max and M_floor ≤ M ≤ M_max
 *   (from a start within them; a start below the floor never drains).
 * - More food never lowers a later L, M or L + M; a higher IF or a longer
 *   workout never raises a later L + M; the drain is continuous in IF.
 * - The order meals are given in does not change any result (they are put in
 *   a canonical order before summing, so results are bit-for-bit equal).
 * - Continuing from any step's state gives bit-for-bit the same later steps
 *   as one run: every quantity of a step depends only on the state entering
 *   it and on absolute times, never on where the run started.
 *
 * ## Conventions the rules above leave open
 * - Food eaten before `startAt`: only its release from `startAt` on is
 *   counted. What it released earlier is the caller's to carry in the start
 *   state (`start.gutG` and the stores), as the stored end of the previous
 *   day does. Callers pass such items so their tail is not lost.
 * - A workout covering part of a step demands in proportion to the minutes it
 *   covers, and resting use applies to the uncovered minutes.
 * - Overlapping exercise periods add their demands; resting use applies only
 *   to the minutes none of them covers (a stopped share counts as covered by
 *   the period's moving fraction only).
 * - `startAt` must be on the 15-minute UTC grid. Local midnight is on it in
 *   every present-day time zone (all offsets are whole quarter hours), and a
 *   common grid is what lets a stored day's end state start the next day.
 */
import {
  EXERCISE_LIVER_SHARE,
  EXERCISE_MUSCLE_SPARING_SHARE,
  LIVER_MAX_G,
  MUSCLE_FLOOR_FRACTION,
  MUSCLE_MAX_G_PER_KG,
  MUSCLE_SYNTHESIS_MAX_FRACTION_PER_H,
  MUSCLE_SYNTHESIS_TAPER_FROM_FRACTION,
  RESTING_LIVER_OUTPUT_PER_STEP_G,
  RESTING_USE_PER_STEP_G,
  START_FILL_FRACTION,
  STEP_MS,
  STEPS_PER_HOUR,
  STORAGE_LIVER_SHARE,
  UPTAKE_CAP_PER_STEP_G,
} from './glycogen.constants.ts';
import { activeSteps, releaseBetween, type MealInput } from './absorption.ts';
import { exerciseCarbohydrateG, type ExerciseInput } from './exercise.ts';

export type { MealInput } from './absorption.ts';
export type { ExerciseInput } from './exercise.ts';

/** Store ceilings, grams. */
export interface GlycogenCapacity {
  readonly liverG: number;
  readonly muscleG: number;
}

/** The muscle floor for a capacity: MUSCLE_FLOOR_FRACTION of M_max. */
export function muscleFloorG(capacity: GlycogenCapacity): number {
  return MUSCLE_FLOOR_FRACTION * capacity.muscleG;
}

/** A state brought within a (new, smaller) capacity: a store above its ceiling is at the ceiling. */
export function clampToCapacity(state: GlycogenState, capacity: GlycogenCapacity): GlycogenState {
  if (state.liverG <= capacity.liverG && state.muscleG <= capacity.muscleG) return state;
  return {
    liverG: Math.min(state.liverG, capacity.liverG),
    muscleG: Math.min(state.muscleG, capacity.muscleG),
    gutG: state.gutG,
  };
}

/** The model's state between steps, grams. */
export interface GlycogenState {
  readonly liverG: number;
  readonly muscleG: number;
  readonly gutG: number;
}

export interface GlycogenSimulationInput {
  readonly capacity: GlycogenCapacity;
  /** State at `startAt`. */
  readonly start: GlycogenState;
  /** Epoch ms, on the 15-minute grid. */
  readonly startAt: number;
  /** Number of 15-minute steps to run. */
  readonly steps: number;
  /** In any order; items eaten before `startAt` count only with their release from `startAt` on. */
  readonly meals: readonly MealInput[];
  /** In any order; may overlap each other and step boundaries. */
  readonly exercise: readonly ExerciseInput[];
  /**
   * Whether resting use is counted (default true). A past day without food
   * logged is balanced: unlogged food covered its resting use, and the muscle
   * synthesis limit is off, since the day's intake is a bookkeeping
   * assumption, not a timed meal (docs/science.md §3).
   */
  readonly restingUse?: boolean;
}

/** The state at the end of one step and what happened during it, grams. */
export interface GlycogenPoint {
  /** End of the step, epoch ms. */
  readonly atMs: number;
  readonly liverG: number;
  readonly muscleG: number;
  readonly gutG: number;
  /** Released from food into the gut pool during the step. */
  readonly releasedG: number;
  /** Taken up from the gut pool (≤ 22.5). */
  readonly uptakeG: number;
  /** Whole demand: exercise plus resting use for the minutes without exercise. */
  readonly demandG: number;
  /** Exercise part of `demandG`. */
  readonly exerciseG: number;
  /** Exercise demand that neither uptake nor the stores could meet: `liverDeficitG + muscleDeficitG`. */
  readonly deficitG: number;
  /** The liver's share of exercise demand that uptake and the liver could not meet (the bonk). */
  readonly liverDeficitG: number;
  /** The muscle's share of exercise demand that muscle above its floor could not meet. */
  readonly muscleDeficitG: number;
  /** Resting use that neither uptake nor the liver met: gluconeogenesis and the lower fasted use. */
  readonly gluconeogenesisG: number;
  /** Uptake left after demand that was not stored: neither store could hold it, or it was oxidised during exercise. */
  readonly spilledG: number;
}

export interface GlycogenTotals {
  readonly releasedG: number;
  readonly uptakeG: number;
  readonly demandG: number;
  readonly exerciseG: number;
  /** Demand met from uptake or stores: demand − deficit − gluconeogenesis. */
  readonly metG: number;
  readonly deficitG: number;
  readonly gluconeogenesisG: number;
  readonly spilledG: number;
}

export interface GlycogenSimulation {
  readonly points: readonly GlycogenPoint[];
  /** State after the last step (the start state when `steps` is 0). */
  readonly end: GlycogenState;
  readonly totals: GlycogenTotals;
}

/** Store ceilings for a body mass: L_max 100 g, M_max 6 g/kg. */
export function capacityFor(massKg: number): GlycogenCapacity {
  if (!(massKg > 0) || !Number.isFinite(massKg)) throw new RangeError(`body mass must be positive, got ${massKg}`);
  return { liverG: LIVER_MAX_G, muscleG: MUSCLE_MAX_G_PER_KG * massKg };
}

/** The state a user's chain starts from: 80 % of each ceiling, empty gut. */
export function initialState(capacity: GlycogenCapacity): GlycogenState {
  return {
    liverG: START_FILL_FRACTION * capacity.liverG,
    muscleG: START_FILL_FRACTION * capacity.muscleG,
    gutG: 0,
  };
}

/** (L + M) / (L_max + M_max), as a percentage 0–100. The gut pool is not counted: it is not stored yet. */
export function percentOf(state: Pick<GlycogenState, 'liverG' | 'muscleG'>, capacity: GlycogenCapacity): number {
  return (100 * (state.liverG + state.muscleG)) / (capacity.liverG + capacity.muscleG);
}

/** Runs the model step by step; see the description at the top of this file. */
export function simulateGlycogen(input: GlycogenSimulationInput): GlycogenSimulation {
  validateInput(input);
  const { capacity, startAt, steps } = input;
  const releasedPerStep = gutReleasePerStep(input);
  const { exercisePerStep, coveredMsPerStep } = exercisePerStepG(input);

  const restingUse = input.restingUse ?? true;
  const muscleFloor = muscleFloorG(capacity);
  let liver = input.start.liverG;
  let muscle = input.start.muscleG;
  let gut = input.start.gutG;
  const points: GlycogenPoint[] = [];
  const totals = {
    releasedG: 0,
    uptakeG: 0,
    demandG: 0,
    exerciseG: 0,
    metG: 0,
    deficitG: 0,
    gluconeogenesisG: 0,
    spilledG: 0,
  };

  for (let k = 0; k < steps; k += 1) {
    // 1. Release into the gut, then uptake up to the cap; the rest waits in G.
    const releasedG = releasedPerStep[k] as number;
    gut += releasedG;
    const uptakeG = Math.min(gut, UPTAKE_CAP_PER_STEP_G);
    gut -= uptakeG;

    // 2. Resting use for the resting fraction ρ: from uptake, then the liver up to its output, then gluconeogenesis.
    const restFraction = 1 - (coveredMsPerStep[k] as number) / STEP_MS;
    const restingG = restingUse ? RESTING_USE_PER_STEP_G * restFraction : 0;
    const restingFromUptake = Math.min(uptakeG, restingG);
    const restingUncovered = restingG - restingFromUptake;
    const restingFromLiver = Math.min(restingUncovered, RESTING_LIVER_OUTPUT_PER_STEP_G * restFraction, liver);
    liver = restingFromLiver === liver ? 0 : liver - restingFromLiver;
    const gluconeogenesisG = restingUncovered - restingFromLiver;

    // 3. Exercise: the liver's share from uptake, then the liver; the muscle's share from muscle above its floor.
    const exerciseG = exercisePerStep[k] as number;
    const liverShare = exerciseG * EXERCISE_LIVER_SHARE;
    const liverShareFromUptake = Math.min(uptakeG - restingFromUptake, liverShare);
    const fromLiver = Math.min(liverShare - liverShareFromUptake, liver);
    liver = fromLiver === liver ? 0 : liver - fromLiver;
    const liverDeficitG = liverShare - liverShareFromUptake - fromLiver;
    // Uptake beyond the liver's share, in the exercise part of the step: half spares muscle, half replaces fat.
    const leftover = uptakeG - restingFromUptake - liverShareFromUptake;
    const exerciseLeftover = leftover * (1 - restFraction);
    const muscleShare = exerciseG - liverShare;
    const spared = Math.min(muscleShare, exerciseLeftover * EXERCISE_MUSCLE_SPARING_SHARE);
    const fromMuscle = Math.min(muscleShare - spared, Math.max(0, muscle - muscleFloor));
    muscle = fromMuscle > 0 && fromMuscle === muscle - muscleFloor ? muscleFloor : muscle - fromMuscle;
    const muscleDeficitG = muscleShare - spared - fromMuscle;
    const deficitG = liverDeficitG + muscleDeficitG;

    // 4. Leftover uptake of the resting part stored 30 % liver / 70 % muscle; of the exercise part, what did not spare muscle is oxidised.
    const muscleLimitG = restingUse ? muscleSynthesisLimitG(muscle, capacity, restFraction) : Infinity;
    const stored = storeUptake(liver, muscle, leftover * restFraction, capacity, muscleLimitG);
    liver = stored.liverG;
    muscle = stored.muscleG;
    const spilledG = stored.spilledG + exerciseLeftover - spared;
    const demandG = exerciseG + restingG;

    points.push({
      atMs: startAt + (k + 1) * STEP_MS,
      liverG: liver,
      muscleG: muscle,
      gutG: gut,
      releasedG,
      uptakeG,
      demandG,
      exerciseG,
      deficitG,
      liverDeficitG,
      muscleDeficitG,
      gluconeogenesisG,
      spilledG,
    });
    totals.releasedG += releasedG;
    totals.uptakeG += uptakeG;
    totals.demandG += demandG;
    totals.exerciseG += exerciseG;
    totals.metG += demandG - deficitG - gluconeogenesisG;
    totals.deficitG += deficitG;
    totals.gluconeogenesisG += gluconeogenesisG;
    totals.spilledG += spilledG;
  }

  return { points, end: { liverG: liver, muscleG: muscle, gutG: gut }, totals };
}

/**
 * Split `grams` between liver and muscle: `liverShare` to the liver and the
 * rest to muscle, each up to the room it has; what one side cannot take goes
 * to the other; what neither can take is the rest. Draining and storing are
 * the same split, with the grams each store holds or the room left in it.
 */
function splitLiverMuscle(
  grams: number,
  liverShare: number,
  liverRoom: number,
  muscleRoom: number,
): { liverG: number; muscleG: number; restG: number } {
  const wantLiver = grams * liverShare;
  const wantMuscle = grams - wantLiver;
  const liver = Math.min(wantLiver, liverRoom);
  const muscle = Math.min(wantMuscle, muscleRoom);
  const liverShort = wantLiver - liver;
  const muscleShort = wantMuscle - muscle;
  const extraLiver = Math.min(muscleShort, liverRoom - liver);
  const extraMuscle = Math.min(liverShort, muscleRoom - muscle);
  return {
    liverG: liver + extraLiver,
    muscleG: muscle + extraMuscle,
    restG: liverShort - extraMuscle + (muscleShort - extraLiver),
  };
}

/**
 * The most muscle glycogen that can be laid down in a step whose resting
 * fraction is `restFraction`, grams: the fastest synthesis (8.64 % of M_max an
 * hour) up to 70 % full, falling in a straight line to 0 at M_max, times the
 * resting fraction (muscle refills at rest, not while it works). The slope is
 * at most 0.072 per step, so M + limit never decreases as M rises: a fuller
 * muscle never ends a step below an emptier one (more food never lowers a
 * later level).
 */
export function muscleSynthesisLimitG(muscleG: number, capacity: GlycogenCapacity, restFraction: number): number {
  const fastestPerStep = (MUSCLE_SYNTHESIS_MAX_FRACTION_PER_H / STEPS_PER_HOUR) * capacity.muscleG;
  const taperWidth = (1 - MUSCLE_SYNTHESIS_TAPER_FROM_FRACTION) * capacity.muscleG;
  const taper = Math.min(1, Math.max(0, (capacity.muscleG - muscleG) / taperWidth));
  return fastestPerStep * taper * restFraction;
}

/**
 * Stores `grams`, STORAGE_LIVER_SHARE to the liver and the rest to muscle, up
 * to `muscleLimitG` in muscle (its synthesis rate); what one store cannot take
 * goes to the other (the liver refills fast: it takes what muscle cannot);
 * what neither can take is spilled (oxidised).
 */
function storeUptake(
  liverG: number,
  muscleG: number,
  grams: number,
  capacity: GlycogenCapacity,
  muscleLimitG: number,
): { liverG: number; muscleG: number; spilledG: number } {
  if (grams <= 0) return { liverG, muscleG, spilledG: 0 };
  const roomLiver = capacity.liverG - liverG;
  const roomMuscle = capacity.muscleG - muscleG;
  const added = splitLiverMuscle(grams, STORAGE_LIVER_SHARE, roomLiver, Math.min(roomMuscle, muscleLimitG));
  return {
    // Exactly at the ceiling when filled, so rounding never overshoots it.
    liverG: added.liverG >= roomLiver ? capacity.liverG : liverG + added.liverG,
    muscleG: added.muscleG >= roomMuscle ? capacity.muscleG : muscleG + added.muscleG,
    spilledG: added.restG,
  };
}

/** Canonical order for summing, so the order meals were logged in cannot change a bit of the result. */
function compareMeals(a: MealInput, b: MealInput): number {
  return (
    a.atMs - b.atMs ||
    a.carbsG - b.carbsG ||
    (a.absorptionType < b.absorptionType ? -1 : a.absorptionType > b.absorptionType ? 1 : 0)
  );
}

function compareExercise(a: ExerciseInput, b: ExerciseInput): number {
  return (
    a.startMs - b.startMs ||
    a.endMs - b.endMs ||
    a.intensityFactor - b.intensityFactor ||
    a.watts - b.watts ||
    a.movingFraction - b.movingFraction
  );
}

/** Grams released into the gut in each step, summed over meals in canonical order. */
function gutReleasePerStep(input: GlycogenSimulationInput): number[] {
  const released = new Array<number>(input.steps).fill(0);
  for (const meal of [...input.meals].sort(compareMeals)) {
    const { first, last } = activeSteps(meal, input.startAt, input.steps);
    for (let k = first; k <= last; k += 1) {
      const stepStart = input.startAt + k * STEP_MS;
      released[k] = (released[k] as number) + releaseBetween(meal, stepStart, stepStart + STEP_MS);
    }
  }
  return released;
}

/**
 * Exercise demand per step (summed over periods in canonical order) and the
 * milliseconds of each step covered by at least one period, each counted at
 * the moving fraction of the period that first covers it (its stopped share
 * is rest).
 */
function exercisePerStepG(input: GlycogenSimulationInput): {
  exercisePerStep: number[];
  coveredMsPerStep: number[];
} {
  const { startAt, steps } = input;
  const exercisePerStep = new Array<number>(steps).fill(0);
  const coveredMsPerStep = new Array<number>(steps).fill(0);
  // Periods come in order of start, so the union of their coverage in a step
  // grows by whatever part of each lies past the furthest end seen so far.
  const coveredUntil = new Array<number>(steps).fill(-Infinity);
  for (const period of [...input.exercise].sort(compareExercise)) {
    const first = Math.max(0, Math.floor((period.startMs - startAt) / STEP_MS));
    const last = Math.min(steps - 1, Math.ceil((period.endMs - startAt) / STEP_MS) - 1);
    for (let k = first; k <= last; k += 1) {
      const stepStart = startAt + k * STEP_MS;
      const from = Math.max(period.startMs, stepStart);
      const to = Math.min(period.endMs, stepStart + STEP_MS);
      if (to <= from) continue;
      exercisePerStep[k] =
        (exercisePerStep[k] as number) +
        exerciseCarbohydrateG(period.watts, period.intensityFactor, ((to - from) / 60_000) * period.movingFraction);
      const until = coveredUntil[k] as number;
      coveredMsPerStep[k] =
        (coveredMsPerStep[k] as number) + Math.max(0, to - Math.max(from, until)) * period.movingFraction;
      coveredUntil[k] = Math.max(until, to);
    }
  }
  return { exercisePerStep, coveredMsPerStep };
}

function validateInput(input: GlycogenSimulationInput): void {
  const { capacity, start, startAt, steps } = input;
  const nonNegative = (value: number): boolean => Number.isFinite(value) && value >= 0;
  if (!(capacity.liverG > 0) || !(capacity.muscleG > 0) || !Number.isFinite(capacity.liverG + capacity.muscleG)) {
    throw new RangeError('capacities must be positive');
  }
  if (!nonNegative(start.liverG) || start.liverG > capacity.liverG) throw new RangeError('start.liverG out of range');
  if (!nonNegative(start.muscleG) || start.muscleG > capacity.muscleG) {
    throw new RangeError('start.muscleG out of range');
  }
  if (!nonNegative(start.gutG)) throw new RangeError('start.gutG must be ≥ 0');
  if (!Number.isSafeInteger(startAt) || startAt % STEP_MS !== 0) {
    throw new RangeError('startAt must be an epoch ms on the 15-minute grid');
  }
  if (!Number.isSafeInteger(steps) || steps < 0) throw new RangeError('steps must be a whole number ≥ 0');
  for (const meal of input.meals) {
    if (!Number.isFinite(meal.atMs) || !nonNegative(meal.carbsG)) throw new RangeError('invalid meal');
  }
  for (const period of input.exercise) {
    if (
      !Number.isFinite(period.startMs) ||
      !Number.isFinite(period.endMs) ||
      period.endMs < period.startMs ||
      !nonNegative(period.intensityFactor) ||
      !nonNegative(period.watts) ||
      !(period.movingFraction >= 0 && period.movingFraction <= 1)
    ) {
      throw new RangeError('invalid exercise period');
    }
  }
}

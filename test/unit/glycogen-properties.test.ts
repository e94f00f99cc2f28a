/**
 * The glycogen model's invariants on random days: meals at any second (some
 * before the run starts and still releasing), 0–150 g of any absorption type;
 * workouts at any second, 1 min to 4 h, IF 0.3–1.3 at IF × FTP (150–350 W),
 * moving 50–100 % of the time; any start state within the stores (muscle
 * possibly below its floor). Fixed seed and bounded runs, so a failure
 * reproduces; fast-check prints the shrunk counterexample.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { releasedFraction } from '../../server/src/modules/derived/absorption.ts';
import { assessWorkoutFuel } from '../../server/src/modules/derived/fuel-plan.ts';
import {
  ABSORPTION_PROFILES,
  RESTING_USE_PER_STEP_G,
  STEP_MS,
  UPTAKE_CAP_PER_STEP_G,
  type AbsorptionType,
} from '../../server/src/modules/derived/glycogen.constants.ts';
import {
  capacityFor,
  muscleFloorG,
  muscleSynthesisLimitG,
  simulateGlycogen,
  type ExerciseInput,
  type GlycogenPoint,
  type GlycogenSimulationInput,
  type MealInput,
} from '../../server/src/modules/derived/glycogen.model.ts';

const RUNS = { numRuns: 200, seed: 20_250_310 };
const START = Date.UTC(2025, 2, 10, 4);
/** 16 hours. */
const STEPS = 64;
const END = START + STEPS * STEP_MS;
const TYPES = Object.keys(ABSORPTION_PROFILES) as AbsorptionType[];
/** Float noise allowed in sums of a few hundred grams. */
const EPS = 1e-6;

const mealArb: fc.Arbitrary<MealInput> = fc
  .record({
    offsetSecs: fc.integer({ min: -6 * 3600, max: STEPS * 900 }),
    carbsG: fc.double({ min: 0, max: 150, noNaN: true }),
    absorptionType: fc.constantFrom(...TYPES),
  })
  .map(({ offsetSecs, carbsG, absorptionType }) => ({ atMs: START + offsetSecs * 1000, carbsG, absorptionType }));

const workoutArb: fc.Arbitrary<ExerciseInput> = fc
  .record({
    offsetSecs: fc.integer({ min: 0, max: STEPS * 900 }),
    durationSecs: fc.integer({ min: 60, max: 4 * 3600 }),
    intensityFactor: fc.double({ min: 0.3, max: 1.3, noNaN: true }),
    ftpWatts: fc.integer({ min: 150, max: 350 }),
    movingFraction: fc.double({ min: 0.5, max: 1, noNaN: true }),
  })
  .map(({ offsetSecs, durationSecs, intensityFactor, ftpWatts, movingFraction }) => ({
    startMs: START + offsetSecs * 1000,
    endMs: START + (offsetSecs + durationSecs) * 1000,
    intensityFactor,
    watts: intensityFactor * ftpWatts,
    movingFraction,
  }));

const scenarioArb: fc.Arbitrary<GlycogenSimulationInput> = fc
  .record({
    massKg: fc.integer({ min: 50, max: 90 }),
    liverFraction: fc.double({ min: 0, max: 1, noNaN: true }),
    muscleFraction: fc.double({ min: 0, max: 1, noNaN: true }),
    gutG: fc.double({ min: 0, max: 40, noNaN: true }),
    meals: fc.array(mealArb, { maxLength: 8 }),
    exercise: fc.array(workoutArb, { maxLength: 3 }),
  })
  .map(({ massKg, liverFraction, muscleFraction, gutG, meals, exercise }) => {
    const capacity = capacityFor(massKg);
    return {
      capacity,
      start: { liverG: liverFraction * capacity.liverG, muscleG: muscleFraction * capacity.muscleG, gutG },
      startAt: START,
      steps: STEPS,
      meals,
      exercise,
    };
  });

const stored = (point: Pick<GlycogenPoint, 'liverG' | 'muscleG'>): number => point.liverG + point.muscleG;

function fraction(meal: MealInput, atMs: number): number {
  return releasedFraction(ABSORPTION_PROFILES[meal.absorptionType], (atMs - meal.atMs) / 60_000);
}

/** Asserts that `harder` never has more L + M than `easier` at any step end. */
function neverAbove(harder: readonly GlycogenPoint[], easier: readonly GlycogenPoint[]): void {
  harder.forEach((point, k) => expect(stored(point)).toBeLessThanOrEqual(stored(easier[k] as GlycogenPoint) + 1e-9));
}

describe('glycogen model invariants (fast-check, fixed seed)', () => {
  it('balances mass at every step: Δ(L + M + G) = released − demand met from uptake or stores − spilled', () => {
    fc.assert(
      fc.property(scenarioArb, (input) => {
        const run = simulateGlycogen(input);
        const before = input.start.liverG + input.start.muscleG + input.start.gutG;
        let released = 0;
        let met = 0;
        let spilled = 0;
        for (const point of run.points) {
          released += point.releasedG;
          met += point.demandG - point.deficitG - point.gluconeogenesisG;
          spilled += point.spilledG;
          const now = point.liverG + point.muscleG + point.gutG;
          expect(Math.abs(now - before - (released - met - spilled))).toBeLessThan(EPS);
        }
        expect(run.totals.metG).toBeCloseTo(met, 6);
      }),
      RUNS,
    );
  });

  it('balances mass with food counted when eaten: Δ(L + M + G) + still unreleased = eaten + tail of earlier food − met − spilled', () => {
    fc.assert(
      fc.property(scenarioArb, (input) => {
        const run = simulateGlycogen(input);
        const inRun = input.meals.filter((meal) => meal.atMs >= START && meal.atMs < END);
        const earlier = input.meals.filter((meal) => meal.atMs < START);
        const eaten = inRun.reduce((sum, meal) => sum + meal.carbsG, 0);
        const pending = inRun.reduce((sum, meal) => sum + meal.carbsG * (1 - fraction(meal, END)), 0);
        const tail = earlier.reduce(
          (sum, meal) => sum + meal.carbsG * (fraction(meal, END) - fraction(meal, START)),
          0,
        );
        const delta =
          run.end.liverG +
          run.end.muscleG +
          run.end.gutG -
          (input.start.liverG + input.start.muscleG + input.start.gutG);
        expect(Math.abs(delta + pending - (eaten + tail - run.totals.metG - run.totals.spilledG))).toBeLessThan(EPS);
      }),
      RUNS,
    );
  });

  it('keeps cumulative release and uptake monotone and within what was eaten, uptake ≤ 22.5 g, stores within bounds', () => {
    fc.assert(
      fc.property(scenarioArb, (input) => {
        const run = simulateGlycogen(input);
        let released = 0;
        let uptake = 0;
        for (const point of run.points) {
          expect(point.releasedG).toBeGreaterThanOrEqual(0);
          expect(point.uptakeG).toBeGreaterThanOrEqual(0);
          expect(point.uptakeG).toBeLessThanOrEqual(UPTAKE_CAP_PER_STEP_G);
          released += point.releasedG;
          uptake += point.uptakeG;
          const eatenSoFar = input.meals
            .filter((meal) => meal.atMs < point.atMs)
            .reduce((sum, meal) => sum + meal.carbsG, 0);
          expect(released).toBeLessThanOrEqual(eatenSoFar + EPS);
          expect(uptake).toBeLessThanOrEqual(input.start.gutG + released + EPS);
          expect(point.liverG).toBeGreaterThanOrEqual(0);
          expect(point.liverG).toBeLessThanOrEqual(input.capacity.liverG);
          // Muscle never drains below its floor; a start below it never drains further.
          expect(point.muscleG).toBeGreaterThanOrEqual(
            Math.min(input.start.muscleG, muscleFloorG(input.capacity)) - 1e-9,
          );
          expect(point.muscleG).toBeLessThanOrEqual(input.capacity.muscleG);
          expect(point.gutG).toBeGreaterThanOrEqual(0);
        }
      }),
      RUNS,
    );
  });

  it('never stores more in muscle in a step than its synthesis rate allows, and that rate binds on some days', () => {
    let binding = 0;
    fc.assert(
      fc.property(scenarioArb, (input) => {
        const run = simulateGlycogen(input);
        let muscleBefore = input.start.muscleG;
        for (const point of run.points) {
          // The step's resting fraction ρ, from its resting use: demand − exercise = ρ × 2.5 g.
          const restFraction = (point.demandG - point.exerciseG) / RESTING_USE_PER_STEP_G;
          const limit = muscleSynthesisLimitG(muscleBefore, input.capacity, restFraction);
          expect(point.muscleG - muscleBefore).toBeLessThanOrEqual(limit + 1e-9);
          if (limit > 0 && point.muscleG - muscleBefore > limit - 1e-9) binding += 1;
          muscleBefore = point.muscleG;
        }
      }),
      RUNS,
    );
    expect(binding).toBeGreaterThan(0);
  });

  it('slows muscle synthesis as the store fills: the limit is continuous, never rises with M, and M + limit never falls', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 50, max: 90 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (massKg, a, b, restFraction) => {
          const capacity = capacityFor(massKg);
          const [low, high] = [Math.min(a, b) * capacity.muscleG, Math.max(a, b) * capacity.muscleG];
          const limitLow = muscleSynthesisLimitG(low, capacity, restFraction);
          const limitHigh = muscleSynthesisLimitG(high, capacity, restFraction);
          expect(limitHigh).toBeLessThanOrEqual(limitLow + 1e-12);
          expect(high + limitHigh).toBeGreaterThanOrEqual(low + limitLow - 1e-9);
          // Lipschitz: 0.072 of the gap at most per step.
          expect(limitLow - limitHigh).toBeLessThanOrEqual(0.072 * (high - low) + 1e-9);
        },
      ),
      RUNS,
    );
    expect(muscleSynthesisLimitG(420, capacityFor(70), 1)).toBe(0);
  });

  it('does not limit synthesis on a balanced day (food not logged, assumed to restore what the day’s workouts used)', () => {
    const capacity = capacityFor(70);
    const input: GlycogenSimulationInput = {
      capacity,
      start: { liverG: 60, muscleG: 210, gutG: 0 },
      startAt: START,
      steps: 4,
      meals: [{ atMs: START, carbsG: 60, absorptionType: 'RAPID' }],
      exercise: [],
    };
    const limited = simulateGlycogen(input);
    const balanced = simulateGlycogen({ ...input, restingUse: false });
    // Second step: 22.5 g taken up. Limited: 20 g after resting use, muscle capped at 9.072 g.
    // Balanced: no resting use, 70 % of 22.5 g = 15.75 g to muscle, above the limit.
    const gain = (run: typeof limited) => (run.points[1]?.muscleG ?? 0) - (run.points[0]?.muscleG ?? 0);
    expect(gain(limited)).toBeCloseTo(muscleSynthesisLimitG(210 + 8.75, capacity, 1), 9);
    expect(gain(balanced)).toBeCloseTo(15.75, 9);
  });

  it('never lowers a later L, M or L + M when a meal is added', () => {
    fc.assert(
      fc.property(scenarioArb, mealArb, (input, extra) => {
        const base = simulateGlycogen(input);
        const more = simulateGlycogen({ ...input, meals: [...input.meals, extra] });
        neverAbove(base.points, more.points);
        base.points.forEach((point, k) => {
          const fed = more.points[k] as GlycogenPoint;
          expect(point.liverG).toBeLessThanOrEqual(fed.liverG + 1e-9);
          expect(point.muscleG).toBeLessThanOrEqual(fed.muscleG + 1e-9);
        });
      }),
      RUNS,
    );
  });

  it('never lets the liver’s share move to muscle: liver deficit whenever the liver is empty during exercise', () => {
    fc.assert(
      fc.property(scenarioArb, (input) => {
        const run = simulateGlycogen({ ...input, meals: [] });
        let muscleBefore = input.start.muscleG;
        for (const point of run.points) {
          // Without food, muscle gives at most its own 75 % share of exercise demand.
          expect(muscleBefore - point.muscleG).toBeLessThanOrEqual(0.75 * point.exerciseG + 1e-9);
          muscleBefore = point.muscleG;
        }
      }),
      RUNS,
    );
  });

  it('judges a workout the same whatever order meals are given in', () => {
    fc.assert(
      fc.property(scenarioArb, workoutArb, fc.nat(), (input, workout, seed) => {
        const exercise = [...input.exercise, workout];
        const window = { startMs: workout.startMs, endMs: Math.min(workout.endMs, END) };
        const judge = (meals: readonly MealInput[]) =>
          assessWorkoutFuel(simulateGlycogen({ ...input, meals, exercise }), input, window);
        const shuffled = [...input.meals].sort(
          (a, b) => ((a.atMs * 31 + seed) % 97) - ((b.atMs * 31 + seed) % 97) || a.carbsG - b.carbsG,
        );
        expect(judge(shuffled)).toEqual(judge([...input.meals].reverse()));
      }),
      RUNS,
    );
  });

  it('never raises a later L + M when a workout is made harder', () => {
    fc.assert(
      fc.property(scenarioArb, workoutArb, fc.double({ min: 0, max: 0.5, noNaN: true }), (input, workout, extraIf) => {
        const easy = simulateGlycogen({ ...input, exercise: [...input.exercise, workout] });
        const hard = simulateGlycogen({
          ...input,
          exercise: [
            ...input.exercise,
            {
              ...workout,
              intensityFactor: workout.intensityFactor + extraIf,
              watts: (workout.watts / workout.intensityFactor) * (workout.intensityFactor + extraIf),
            },
          ],
        });
        neverAbove(hard.points, easy.points);
      }),
      RUNS,
    );
  });

  it('never raises a later L + M when a workout is made longer', () => {
    fc.assert(
      fc.property(scenarioArb, workoutArb, fc.integer({ min: 1, max: 2 * 3600 }), (input, workout, extraSecs) => {
        const short = simulateGlycogen({ ...input, exercise: [...input.exercise, workout] });
        const long = simulateGlycogen({
          ...input,
          exercise: [...input.exercise, { ...workout, endMs: workout.endMs + extraSecs * 1000 }],
        });
        neverAbove(long.points, short.points);
      }),
      RUNS,
    );
  });

  it('gives bit-for-bit the same result whatever order meals and workouts are given in', () => {
    const permuted = scenarioArb.chain((input) =>
      fc.tuple(
        fc.constant(input),
        fc.shuffledSubarray([...input.meals, ...input.meals.slice(0, 2)], {
          minLength: input.meals.length + Math.min(2, input.meals.length),
        }),
        fc.shuffledSubarray([...input.exercise], { minLength: input.exercise.length }),
      ),
    );
    fc.assert(
      fc.property(permuted, ([input, meals, exercise]) => {
        // Duplicated meals (the same item logged twice) in both runs, in different orders.
        const withDuplicates = { ...input, meals: [...input.meals, ...input.meals.slice(0, 2)] };
        expect(simulateGlycogen({ ...withDuplicates, meals, exercise })).toEqual(simulateGlycogen(withDuplicates));
      }),
      RUNS,
    );
  });

  it('gives bit-for-bit the same later steps when continued from any step’s state', () => {
    fc.assert(
      fc.property(scenarioArb, fc.integer({ min: 0, max: STEPS }), (input, split) => {
        const whole = simulateGlycogen(input);
        const at = split === 0 ? input.start : (whole.points[split - 1] as GlycogenPoint);
        const rest = simulateGlycogen({
          ...input,
          start: { liverG: at.liverG, muscleG: at.muscleG, gutG: at.gutG },
          startAt: START + split * STEP_MS,
          steps: STEPS - split,
        });
        expect(rest.points).toEqual(whole.points.slice(split));
        expect(rest.end).toEqual(whole.end);
      }),
      RUNS,
    );
  });
});

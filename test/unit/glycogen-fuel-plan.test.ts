/**
 * Planned-workout fuel: status from the start and minimum percent, advice
 * before (FAST items 60–90 min ahead) and during (RAPID items every 20 min),
 * and the promise that logging exactly the advice and asking again gives
 * `ready`, checked here by an independent re-simulation.
 */
import { describe, expect, it } from 'vitest';
import {
  assessWorkoutFuel,
  fuelStatus,
  planWorkoutFuel,
  type WorkoutFuelPlanOptions,
} from '../../server/src/modules/derived/fuel-plan.ts';
import { RESTING_DEMAND_PER_STEP_G, STEP_MS } from '../../server/src/modules/derived/glycogen.constants.ts';
import { capacityFor, simulateGlycogen } from '../../server/src/modules/derived/glycogen.model.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** 2025-03-10 05:00 UTC; the workouts start at 08:00. */
const T0 = Date.UTC(2025, 2, 10, 5);
const RIDE_START = T0 + 3 * HOUR;

function options(
  start: { liverG: number; muscleG: number },
  durationMin: number,
  intensityFactor: number,
): WorkoutFuelPlanOptions {
  const workout = { startMs: RIDE_START, endMs: RIDE_START + durationMin * MINUTE };
  return {
    simulation: {
      capacity: capacityFor(70),
      start: { ...start, gutG: 0 },
      startAt: T0,
      meals: [],
      exercise: [{ ...workout, intensityFactor, ftpWatts: 250 }],
      restingPerStepG: RESTING_DEMAND_PER_STEP_G,
    },
    workout,
  };
}

/** Re-simulates with the advice logged as meals, the way the service would on the next request. */
function resimulate(
  input: WorkoutFuelPlanOptions,
  advice: readonly {
    atMs: number;
    carbsG: number;
    absorptionType: 'RAPID' | 'FAST' | 'BALANCED' | 'DENSE' | 'HYPER_LOAD';
  }[],
) {
  const steps = Math.ceil((input.workout.endMs - input.simulation.startAt) / STEP_MS);
  const meals = [
    ...input.simulation.meals,
    ...advice.map(({ atMs, carbsG, absorptionType }) => ({ atMs, carbsG, absorptionType })),
  ];
  const run = simulateGlycogen({ ...input.simulation, meals, steps });
  return assessWorkoutFuel(run, input.simulation, input.workout);
}

describe('fuel status', () => {
  it.each([
    [70, 20, 'ready'],
    [95, 45, 'ready'],
    [69.9, 20, 'top_up'],
    [50, 20, 'top_up'],
    [49.9, 40, 'at_risk'],
    [80, 19.9, 'at_risk'],
  ] as const)('start %s %% and minimum %s %% is %s', (start, minimum, status) => {
    expect(fuelStatus(start, minimum)).toBe(status);
  });
});

describe('a 3-hour ride at IF 0.8 on low stores', () => {
  // 40 + 230 g at 05:00, 3 h of resting: 258 g of 520 at 08:00, 49.6 %.
  const input = options({ liverG: 40, muscleG: 230 }, 180, 0.8);
  const plan = planWorkoutFuel(input);

  it('is at risk: under 50 % at the start and emptied during the ride', () => {
    expect(plan.status).toBe('at_risk');
    expect(plan.startPercent).toBeCloseTo(49.615, 2);
    expect(plan.minPercent).toBeLessThan(20);
  });

  it('advises FAST items 60–90 min before the start', () => {
    const before = plan.advice.filter((item) => item.atMs < RIDE_START);
    expect(before.length).toBeGreaterThan(0);
    for (const item of before) {
      expect(item.absorptionType).toBe('FAST');
      expect(RIDE_START - item.atMs).toBeGreaterThanOrEqual(60 * MINUTE);
      expect(RIDE_START - item.atMs).toBeLessThanOrEqual(90 * MINUTE);
      expect(item.reason).toMatch(/70 %/);
    }
    // At least the grams missing to 70 % (364 g of 520 against 258 g).
    expect(before.reduce((sum, item) => sum + item.carbsG, 0)).toBeGreaterThanOrEqual(364 - 258);
  });

  it('advises RAPID items every 20 min during the ride at 30–60 g/h, at most 90 g/h past 2.5 h', () => {
    const during = plan.advice.filter((item) => item.atMs >= RIDE_START);
    expect(during.length).toBeGreaterThan(0);
    during.forEach((item, i) => {
      expect(item.absorptionType).toBe('RAPID');
      expect(item.atMs).toBe(RIDE_START + (i + 1) * 20 * MINUTE);
      const gramsPerHour = item.carbsG * 3;
      expect(gramsPerHour).toBeGreaterThanOrEqual(30);
      expect(gramsPerHour).toBeLessThanOrEqual(item.atMs - RIDE_START >= 150 * MINUTE ? 90 : 60);
    });
    expect(during.at(-1)?.atMs).toBeLessThanOrEqual(input.workout.endMs - 20 * MINUTE);
  });

  it('is ready once exactly the advised items are logged and the model runs again', () => {
    const again = resimulate(input, plan.advice);
    expect(again.status).toBe('ready');
    expect(again.startPercent).toBeGreaterThanOrEqual(70);
    expect(again.minPercent).toBeGreaterThanOrEqual(20);
    expect(again).toEqual(plan.withAdvice);
    expect(plan.shortfallReason).toBeNull();
    // Asking again with the items logged gives ready and no further advice.
    const next = planWorkoutFuel({
      ...input,
      simulation: { ...input.simulation, meals: plan.advice.map(({ reason: _reason, ...meal }) => meal) },
    });
    expect(next.status).toBe('ready');
    expect(next.advice).toEqual([]);
  });
});

describe('a well-fuelled short ride', () => {
  it('is ready with no advice', () => {
    const plan = planWorkoutFuel(options({ liverG: 90, muscleG: 380 }, 60, 0.75));
    expect(plan.status).toBe('ready');
    expect(plan.advice).toEqual([]);
    expect(plan.withAdvice).toEqual({
      status: plan.status,
      startPercent: plan.startPercent,
      minPercent: plan.minPercent,
      endPercent: plan.endPercent,
    });
  });
});

describe('a short ride that starts between 50 and 70 %', () => {
  // 60 + 265 g at 05:00, 313 g (60.2 %) at 08:00; 1 h at IF 0.7 never gets near 20 %.
  const input = options({ liverG: 60, muscleG: 265 }, 60, 0.7);
  const plan = planWorkoutFuel(input);

  it('needs a top-up before the start only, split so each step’s release fits the uptake cap', () => {
    expect(plan.status).toBe('top_up');
    expect(plan.advice.every((item) => item.absorptionType === 'FAST' && item.atMs < RIDE_START)).toBe(true);
    for (const item of plan.advice) expect(item.carbsG).toBeLessThanOrEqual(30);
    const steps = Math.ceil((RIDE_START - T0) / STEP_MS);
    const run = simulateGlycogen({ ...input.simulation, meals: plan.advice, steps });
    for (const point of run.points) expect(point.releasedG).toBeLessThanOrEqual(22.5);
  });

  it('is ready with the advice logged', () => {
    expect(resimulate(input, plan.advice).status).toBe('ready');
  });
});

describe('advice that cannot make a workout ready', () => {
  it('says so: 6 h at threshold from half-empty stores drains more than 90 g/h can replace', () => {
    const input = options({ liverG: 50, muscleG: 220 }, 360, 1.0);
    const plan = planWorkoutFuel(input);
    expect(plan.status).toBe('at_risk');
    expect(plan.withAdvice.status).toBe('at_risk');
    expect(plan.shortfallReason).toMatch(/below 20 %/);
    expect(plan.advice.length).toBeGreaterThan(0);
    for (const item of plan.advice)
      expect(item.reason).toMatch(/Even with all of the advice the workout stays at risk/);
    // Best effort: the top of the during range past 2.5 h.
    expect(Math.max(...plan.advice.filter((item) => item.atMs >= RIDE_START).map((item) => item.carbsG))).toBe(30);
    expect(resimulate(input, plan.advice)).toEqual(plan.withAdvice);
  });

  it('says so when 70 % cannot be reached by the start, and still fuels the ride to keep it above 20 %', () => {
    const input = options({ liverG: 10, muscleG: 60 }, 120, 0.7);
    const plan = planWorkoutFuel(input);
    expect(plan.withAdvice.status).toBe('at_risk');
    expect(plan.shortfallReason).toMatch(/cannot reach 70 % by the start/);
    expect(plan.withAdvice.minPercent).toBeGreaterThanOrEqual(20);
    expect(plan.advice.some((item) => item.absorptionType === 'RAPID')).toBe(true);
    // No more before the start than the gut can take up by 30 min into the ride.
    const before = plan.advice.filter((item) => item.atMs < RIDE_START);
    expect(before.reduce((sum, item) => sum + item.carbsG, 0)).toBeLessThanOrEqual(180);
    expect(resimulate(input, plan.advice)).toEqual(plan.withAdvice);
  });

  it('gives no during items for a workout of 75 min or less, and no item before `notBeforeMs`', () => {
    const input = { ...options({ liverG: 60, muscleG: 230 }, 75, 0.9), notBeforeMs: RIDE_START - 70 * MINUTE };
    const plan = planWorkoutFuel(input);
    expect(plan.advice.length).toBeGreaterThan(0);
    for (const item of plan.advice) {
      expect(item.atMs).toBeLessThan(RIDE_START);
      expect(item.atMs).toBeGreaterThanOrEqual(RIDE_START - 70 * MINUTE);
    }
    expect(resimulate(input, plan.advice)).toEqual(plan.withAdvice);
  });
});

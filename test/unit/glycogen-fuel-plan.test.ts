/**
 * Planned-workout fuel: status judged per store (the liver below 20 g, muscle
 * at its floor or starting low), advice before (FAST items 60–90 min ahead)
 * and during (RAPID items every 20 min), and the promise that logging exactly
 * the advice and asking again gives `ready`, checked here by an independent
 * re-simulation.
 */
import { describe, expect, it } from 'vitest';
import {
  assessWorkoutFuel,
  judgeFuel,
  planWorkoutFuel,
  type WorkoutFuelPlanOptions,
} from '../../server/src/modules/derived/fuel-plan.ts';
import { STEP_MS } from '../../server/src/modules/derived/glycogen.constants.ts';
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
      exercise: [{ ...workout, intensityFactor, watts: intensityFactor * 250, movingFraction: 1 }],
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

describe('fuel status, liver and muscle judged apart', () => {
  const capacity = capacityFor(70);
  // M_max 420 g: 70 % is 294 g, 50 % 210 g, the floor 105 g.
  it.each([
    [
      'ready',
      null,
      [
        { liverG: 60, muscleG: 294 },
        { liverG: 20, muscleG: 106 },
      ],
    ],
    [
      'top_up',
      'muscle',
      [
        { liverG: 60, muscleG: 293.9 },
        { liverG: 40, muscleG: 200 },
      ],
    ],
    [
      'at_risk',
      'muscle',
      [
        { liverG: 60, muscleG: 209.9 },
        { liverG: 40, muscleG: 200 },
      ],
    ],
    [
      'at_risk',
      'muscle',
      [
        { liverG: 60, muscleG: 400 },
        { liverG: 40, muscleG: 105 },
      ],
    ],
    [
      'at_risk',
      'liver',
      [
        { liverG: 60, muscleG: 400 },
        { liverG: 19.9, muscleG: 380 },
      ],
    ],
    // Both fail: the first to fail is named, the liver on a tie.
    [
      'at_risk',
      'liver',
      [
        { liverG: 19, muscleG: 400 },
        { liverG: 10, muscleG: 105 },
      ],
    ],
    [
      'at_risk',
      'muscle',
      [
        { liverG: 60, muscleG: 400 },
        { liverG: 30, muscleG: 105 },
        { liverG: 10, muscleG: 105 },
      ],
    ],
    [
      'at_risk',
      'liver',
      [
        { liverG: 60, muscleG: 200 },
        { liverG: 10, muscleG: 200 },
      ].reverse(),
    ],
  ] as const)('is %s (%s) for %j', (status, limitingStore, levels) => {
    expect(judgeFuel(levels, capacity)).toEqual({ status, limitingStore });
  });
});

describe('an empty liver is never hidden by muscle (worked example D)', () => {
  // L 43.5, M 400 at 06:00: L 30 at the 09:00 start (82.7 % combined); 2 h at IF 0.8, nothing eaten: the liver is
  // at 13.9 g by 09:30.
  const workout = { startMs: Date.UTC(2025, 2, 10, 9), endMs: Date.UTC(2025, 2, 10, 11) };
  const input: WorkoutFuelPlanOptions = {
    simulation: {
      capacity: capacityFor(70),
      start: { liverG: 43.5, muscleG: 400, gutG: 0 },
      startAt: workout.startMs - 3 * HOUR,
      meals: [],
      exercise: [{ ...workout, intensityFactor: 0.8, watts: 200, movingFraction: 1 }],
    },
    workout,
  };
  const plan = planWorkoutFuel(input);

  it('is at risk with the liver limiting, though the combined level stays above 39 %', () => {
    expect(plan.startPercent).toBeCloseTo(82.69, 2);
    expect(plan.minPercent).toBeCloseTo(39.71, 2);
    expect(plan.status).toBe('at_risk');
    expect(plan.limitingStore).toBe('liver');
    expect(plan.lowest.liverG).toBe(0);
  });

  it('advises food during the ride for the liver, and eating exactly that makes it ready', () => {
    const during = plan.advice.filter((item) => item.atMs >= workout.startMs);
    expect(during.length).toBeGreaterThan(0);
    for (const item of during) expect(item.reason).toMatch(/liver at or above 20 g/);
    const again = resimulate(input, plan.advice);
    expect(again.status).toBe('ready');
    expect(again.lowest.liverG).toBeGreaterThanOrEqual(20);
  });
});

describe('a 3-hour ride at IF 0.7 after a morning without food', () => {
  // L 40, M 300 at 05:00; 3 h of rest take the liver to 26.5 g by the 08:00 start.
  const input = options({ liverG: 40, muscleG: 300 }, 180, 0.7);
  const plan = planWorkoutFuel(input);

  it('is at risk: the liver runs out during the ride', () => {
    expect(plan.status).toBe('at_risk');
    expect(plan.limitingStore).toBe('liver');
    expect(plan.start.liverG).toBeCloseTo(26.5, 9);
    expect(plan.lowest.liverG).toBe(0);
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

  it('advises any FAST items 60–90 min before the start', () => {
    for (const item of plan.advice.filter((advice) => advice.atMs < RIDE_START)) {
      expect(item.absorptionType).toBe('FAST');
      expect(RIDE_START - item.atMs).toBeGreaterThanOrEqual(60 * MINUTE);
      expect(RIDE_START - item.atMs).toBeLessThanOrEqual(90 * MINUTE);
    }
  });

  it('is ready once exactly the advised items are logged and the model runs again', () => {
    const again = resimulate(input, plan.advice);
    expect(again.status).toBe('ready');
    expect(again.lowest.liverG).toBeGreaterThanOrEqual(20);
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
    expect(plan.limitingStore).toBeNull();
    expect(plan.advice).toEqual([]);
    expect(plan.withAdvice).toEqual({
      status: plan.status,
      limitingStore: null,
      startPercent: plan.startPercent,
      minPercent: plan.minPercent,
      endPercent: plan.endPercent,
      start: plan.start,
      lowest: plan.lowest,
    });
  });
});

describe('a short ride that starts with muscle between 50 and 70 %', () => {
  // M 265 g (63.1 % of 420) at 05:00 and at 08:00; 1 h at IF 0.7 keeps the liver above 20 g.
  const input = options({ liverG: 60, muscleG: 265 }, 60, 0.7);
  const plan = planWorkoutFuel(input);

  it('needs a top-up before the start only, for muscle, split so each step’s release fits the uptake cap', () => {
    expect(plan.status).toBe('top_up');
    expect(plan.limitingStore).toBe('muscle');
    expect(plan.advice.every((item) => item.absorptionType === 'FAST' && item.atMs < RIDE_START)).toBe(true);
    for (const item of plan.advice) {
      expect(item.carbsG).toBeLessThanOrEqual(30);
      expect(item.reason).toMatch(/muscle glycogen from 63\.1 % to at least 70 %/);
    }
    // At least the grams missing to 70 % of M_max (294 g against 265 g), at 70 % of them stored in muscle.
    expect(plan.advice.reduce((sum, item) => sum + item.carbsG, 0)).toBeGreaterThanOrEqual((294 - 265) / 0.7);
    const steps = Math.ceil((RIDE_START - T0) / STEP_MS);
    const run = simulateGlycogen({ ...input.simulation, meals: plan.advice, steps });
    for (const point of run.points) expect(point.releasedG).toBeLessThanOrEqual(22.5);
  });

  it('is ready with the advice logged', () => {
    expect(resimulate(input, plan.advice).status).toBe('ready');
  });
});

describe('advice that cannot make a workout ready', () => {
  it('says so: 6 h at threshold from half-empty stores runs muscle down to its floor whatever is eaten', () => {
    const input = options({ liverG: 50, muscleG: 220 }, 360, 1.0);
    const plan = planWorkoutFuel(input);
    expect(plan.status).toBe('at_risk');
    expect(plan.withAdvice.status).toBe('at_risk');
    expect(plan.withAdvice.limitingStore).toBe('muscle');
    expect(plan.shortfallReason).toMatch(/Muscle glycogen runs down to its floor/);
    expect(plan.advice.length).toBeGreaterThan(0);
    for (const item of plan.advice)
      expect(item.reason).toMatch(/Even with all of the advice the workout stays at risk/);
    // Best effort: the top of the during range past 2.5 h.
    expect(Math.max(...plan.advice.filter((item) => item.atMs >= RIDE_START).map((item) => item.carbsG))).toBe(30);
    expect(resimulate(input, plan.advice)).toEqual(plan.withAdvice);
  });

  it('says so when muscle cannot reach 70 % by the start, and still keeps the liver at or above 20 g', () => {
    const input = options({ liverG: 10, muscleG: 200 }, 120, 0.7);
    const plan = planWorkoutFuel(input);
    expect(plan.limitingStore).toBe('liver');
    expect(plan.withAdvice.status).toBe('top_up');
    expect(plan.shortfallReason).toMatch(/cannot reach 70 % by the start/);
    expect(plan.withAdvice.lowest.liverG).toBeGreaterThanOrEqual(20);
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

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ctlEnteringDay,
  hasTrainingHistory,
  rampTooSteep,
  stressSportOf,
  sumDailyStress,
  trainingLoadSeries,
  weeklyCtlRamp,
  workoutStress,
  type DatedStress,
  type StressMethod,
  type StressProfile,
  type TrainingLoadDay,
} from '../../server/src/modules/derived/training-load.model.ts';
import { addDays } from '../../server/src/lib/dates.ts';
import { trainingStressScore } from '../../server/src/modules/workouts/power-metrics.ts';

const fullProfile: StressProfile = { ftp: 250, restingHr: 50, thresholdHr: 170 };
const noProfile: StressProfile = { ftp: null, restingHr: null, thresholdHr: null };

function expectWithin(actual: number, expected: number, tolerance: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(tolerance);
}

describe('workout stress: power method (Allen & Coggan TSS)', () => {
  it('scores hours × (NP / FTP)² × 100: 90 min at NP 200 W, FTP 250 W is 96', () => {
    const stress = workoutStress(
      { sport: 'cycling', durationSecs: 5400, normalizedPower: 200, avgPower: 180, avgHr: 150 },
      fullProfile,
    );
    expect(stress?.method).toBe('power');
    expect(stress?.intensityFactor).toBeCloseTo(0.8, 12);
    expect(stress?.tss).toBeCloseTo(96, 10);
  });

  it('agrees with the TSS the workouts module stores', () => {
    const stress = workoutStress({ sport: 'cycling', durationSecs: 4321, normalizedPower: 231 }, fullProfile);
    const stored = trainingStressScore({ secs: 4321, normalizedPower: 231, ftpWatts: 250 });
    expect(stress?.tss).toBeCloseTo(stored as number, 9);
  });

  it('falls back to average power without NP: 1 h at 180 W, FTP 240 W is 56.25', () => {
    const stress = workoutStress({ sport: 'cycling', durationSecs: 3600, avgPower: 180 }, { ...fullProfile, ftp: 240 });
    expect(stress).toEqual({ tss: 56.25, intensityFactor: 0.75, method: 'power' });
  });

  it('does not clamp the power intensity: 30 min at 1.2 × FTP is 72', () => {
    const stress = workoutStress({ sport: 'cycling', durationSecs: 1800, normalizedPower: 300 }, fullProfile);
    expect(stress?.tss).toBeCloseTo(0.5 * 1.2 ** 2 * 100, 10);
  });

  it('falls through to heart rate without FTP, or when the power is 0', () => {
    const workout = { sport: 'cycling', durationSecs: 3600, normalizedPower: 200, avgHr: 150 };
    expect(workoutStress(workout, { ...fullProfile, ftp: null })?.method).toBe('heart_rate');
    expect(workoutStress({ ...workout, normalizedPower: 0 }, fullProfile)?.method).toBe('heart_rate');
  });
});

describe('workout stress: heart-rate method (reserve relative to threshold)', () => {
  it('scores (avgHr − rest) / (threshold − rest): 1 h at 150 bpm, rest 50, threshold 170 is 69.44', () => {
    // IF = 100 / 120 = 0.8333…; TSS = 1 × 0.69444… × 100.
    const stress = workoutStress({ sport: 'running', durationSecs: 3600, avgHr: 150 }, fullProfile);
    expect(stress?.method).toBe('heart_rate');
    expect(stress?.intensityFactor).toBeCloseTo(100 / 120, 12);
    expect(stress?.tss).toBeCloseTo(69.4444, 4);
  });

  it('clamps the intensity factor at 1.5: 2 h at 240 bpm is 450, not 501', () => {
    // Unclamped IF would be 190 / 120 = 1.583.
    const stress = workoutStress({ sport: 'running', durationSecs: 7200, avgHr: 240 }, fullProfile);
    expect(stress).toEqual({ tss: 450, intensityFactor: 1.5, method: 'heart_rate' });
  });

  it('clamps the intensity factor at 0 for an average below resting', () => {
    const stress = workoutStress({ sport: 'walking', durationSecs: 3600, avgHr: 45 }, fullProfile);
    expect(stress).toEqual({ tss: 0, intensityFactor: 0, method: 'heart_rate' });
  });

  it('needs both resting and threshold heart rate in the profile', () => {
    const workout = { sport: 'running', durationSecs: 3600, avgHr: 150 };
    expect(workoutStress(workout, { ...fullProfile, thresholdHr: null })?.method).toBe('estimate');
    expect(workoutStress(workout, { ...fullProfile, restingHr: null })?.method).toBe('estimate');
    expect(workoutStress(workout, { ftp: null, restingHr: 60, thresholdHr: 60 })?.method).toBe('estimate');
  });
});

describe('workout stress: estimate by sport', () => {
  // One hour each: TSS = IF² × 100.
  const cases: [sport: string, subSport: string | null, intensity: number][] = [
    ['cycling', null, 0.65],
    ['ride', null, 0.65],
    ['cycling', 'indoorCycling', 0.65],
    ['running', null, 0.75],
    ['run', null, 0.75],
    ['fitnessEquipment', 'treadmill', 0.75],
    ['swimming', null, 0.7],
    ['swim', null, 0.7],
    ['rowing', null, 0.7],
    ['fitnessEquipment', 'indoorRowing', 0.7],
    ['row', null, 0.7],
    ['cross_country_skiing', null, 0.65],
    ['crossCountrySkiing', null, 0.65],
    ['ski', null, 0.65],
    ['walking', null, 0.5],
    ['walk', null, 0.5],
    ['hiking', null, 0.5],
    ['hike', null, 0.5],
    ['training', null, 0.6],
    ['training', 'strengthTraining', 0.6],
    ['strength', null, 0.6],
    ['training', 'yoga', 0.4],
    ['yoga', null, 0.4],
    ['generic', null, 0.4],
    ['multisport', null, 0.4],
    ['other', null, 0.4],
    ['tennis', null, 0.4],
  ];

  it.each(cases)('%s (%s) uses IF %f', (sport, subSport, intensity) => {
    const stress = workoutStress({ sport, subSport, durationSecs: 3600 }, noProfile);
    expect(stress?.method).toBe('estimate');
    expect(stress?.intensityFactor).toBe(intensity);
    expect(stress?.tss).toBeCloseTo(intensity ** 2 * 100, 10);
  });

  it('scales with hours: a 90-minute run is 1.5 × 0.75² × 100 = 84.375', () => {
    expect(workoutStress({ sport: 'running', durationSecs: 5400 }, noProfile)?.tss).toBeCloseTo(84.375, 10);
  });

  it('maps sport names case- and separator-insensitively', () => {
    expect(stressSportOf('CROSS-COUNTRY skiing')).toBe('ski');
    expect(stressSportOf('training', 'flexibility_training')).toBe('yoga');
  });
});

describe('workout stress: duration', () => {
  it('prefers durationSecs, then moving time, then elapsed time', () => {
    const walk = { sport: 'walking', movingSecs: 3600, elapsedSecs: 7200 };
    expect(workoutStress(walk, noProfile)?.tss).toBeCloseTo(25, 10);
    expect(workoutStress({ ...walk, movingSecs: null }, noProfile)?.tss).toBeCloseTo(50, 10);
    expect(workoutStress({ ...walk, durationSecs: 1800 }, noProfile)?.tss).toBeCloseTo(12.5, 10);
  });

  it('is unknown (null) without any duration, rather than 0', () => {
    expect(workoutStress({ sport: 'running', avgHr: 150 }, fullProfile)).toBeNull();
  });
});

describe('ATL, CTL and TSB (Banister impulse-response, Performance Manager constants)', () => {
  it('reproduces the worked example: TSS 100 on two days in a row', () => {
    const series = trainingLoadSeries(
      [
        { date: '2026-03-01', tss: 100, method: 'power' },
        { date: '2026-03-02', tss: 100, method: 'power' },
      ],
      { fromDate: '2026-03-01', toDate: '2026-03-02' },
    );
    const [day1, day2] = series;
    expectWithin(day1?.atl as number, 14.2857, 0.0001);
    expectWithin(day1?.ctl as number, 2.381, 0.0001);
    expect(day1?.tsb).toBe(0);
    expectWithin(day2?.atl as number, 26.5306, 0.0001);
    expectWithin(day2?.ctl as number, 4.7052, 0.0001);
    expectWithin(day2?.tsb as number, -11.9048, 0.0001);
  });

  it('gives one entry per day, with TSS 0 and no method on a day without workouts', () => {
    const series = trainingLoadSeries([{ date: '2026-03-01', tss: 70, method: 'estimate' }], {
      fromDate: '2026-02-27',
      toDate: '2026-03-03',
    });
    expect(series.map((day) => day.date)).toEqual([
      '2026-02-27',
      '2026-02-28',
      '2026-03-01',
      '2026-03-02',
      '2026-03-03',
    ]);
    expect(series[0]).toEqual({ date: '2026-02-27', tss: 0, atl: 0, ctl: 0, tsb: 0, method: null });
    expect(series[3]).toMatchObject({ tss: 0, method: null });
    expect(series[3]?.atl).toBeCloseTo(10 * (6 / 7), 12);
  });

  it('counts data before fromDate when no stored state is given', () => {
    const daily = [{ date: '2026-01-01', tss: 100, method: 'power' as const }];
    const [first] = trainingLoadSeries(daily, { fromDate: '2026-01-03', toDate: '2026-01-03' });
    expect(first?.ctl).toBeCloseTo((100 / 42) * (41 / 42) ** 2, 12);
  });

  it("sums a day's workouts and names the day's method, or 'mixed'", () => {
    const daily = sumDailyStress([
      { date: '2026-05-01', tss: 40, method: 'power' },
      { date: '2026-05-01', tss: 20, method: 'power' },
      { date: '2026-05-02', tss: 30, method: 'power' },
      { date: '2026-05-02', tss: 25, method: 'heart_rate' },
    ]);
    expect(daily.get('2026-05-01')).toEqual({ tss: 60, method: 'power' });
    expect(daily.get('2026-05-02')).toEqual({ tss: 55, method: 'mixed' });
  });

  it('takes a map of daily totals or a list of workouts alike', () => {
    const workouts: DatedStress[] = [
      { date: '2026-05-01', tss: 40, method: 'power' },
      { date: '2026-05-01', tss: 20, method: 'estimate' },
      { date: '2026-05-04', tss: 90, method: 'heart_rate' },
    ];
    const range = { fromDate: '2026-04-30', toDate: '2026-05-06' };
    expect(trainingLoadSeries(sumDailyStress(workouts), range)).toEqual(trainingLoadSeries(workouts, range));
  });

  it('refuses a stored state that is not of the day before fromDate, and negative TSS', () => {
    expect(() =>
      trainingLoadSeries([], {
        fromDate: '2026-05-03',
        toDate: '2026-05-04',
        previous: { date: '2026-05-01', atl: 1, ctl: 1 },
      }),
    ).toThrow(RangeError);
    expect(() =>
      trainingLoadSeries([{ date: '2026-05-03', tss: -1, method: 'power' }], {
        fromDate: '2026-05-03',
        toDate: '2026-05-04',
      }),
    ).toThrow(RangeError);
  });

  it('continuing from a stored day equals a full run, for any TSS sequence', () => {
    const method = fc.constantFrom<StressMethod>('power', 'heart_rate', 'estimate');
    const day = fc.option(
      fc.array(fc.record({ tss: fc.double({ min: 0, max: 400, noNaN: true }), method }), {
        minLength: 1,
        maxLength: 3,
      }),
    );
    fc.assert(
      fc.property(
        fc.array(day, { minLength: 2, maxLength: 150 }),
        fc.nat(),
        fc.integer({ min: 0, max: 20 }),
        (days, split, leadingDays) => {
          const start = '2025-12-20';
          const workouts = days.flatMap((workoutsOfDay, index) =>
            (workoutsOfDay ?? []).map((workout) => ({ ...workout, date: addDays(start, index) })),
          );
          const from = addDays(start, -leadingDays);
          const to = addDays(start, days.length - 1);
          const full = trainingLoadSeries(workouts, { fromDate: from, toDate: to });
          const k = 1 + (split % (full.length - 1));
          const stored = full[k - 1] as (typeof full)[number];
          const resumed = trainingLoadSeries(workouts, {
            fromDate: addDays(from, k),
            toDate: to,
            previous: { date: stored.date, atl: stored.atl, ctl: stored.ctl },
          });
          expect(resumed).toEqual(full.slice(k));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('ramp signal: CTL up more than 8 in 7 days', () => {
  // From 0, seven days of TSS x raise CTL by x·(1 − (41/42)^7) ≈ 0.1553·x, so the line is x ≈ 51.5.
  const week = (tss: number) =>
    Array.from({ length: 7 }, (_, index) => ({ date: addDays('2026-06-01', index), tss, method: 'power' as const }));
  const range = { fromDate: '2026-05-31', toDate: '2026-06-07' };
  /** A first workout long enough ago that the 42-day history rule is met. */
  const longAgo = '2026-01-01';

  it('flags a rise above 8', () => {
    const series = trainingLoadSeries(week(55), range);
    expect(weeklyCtlRamp(series, '2026-06-07')).toBeCloseTo(55 * (1 - (41 / 42) ** 7), 10);
    expect(rampTooSteep(series, '2026-06-07', longAgo)).toBe(true);
  });

  it('does not flag a rise of 8 or less', () => {
    const series = trainingLoadSeries(week(50), range);
    expect(weeklyCtlRamp(series, '2026-06-07')).toBeLessThan(8);
    expect(rampTooSteep(series, '2026-06-07', longAgo)).toBe(false);
  });

  it('does not flag a steady load', () => {
    const steady = Array.from({ length: 200 }, (_, index) => ({
      date: addDays('2026-01-01', index),
      tss: 80,
      method: 'power' as const,
    }));
    const series = trainingLoadSeries(steady, { fromDate: '2026-01-01', toDate: addDays('2026-01-01', 199) });
    expect(rampTooSteep(series, addDays('2026-01-01', 199), '2026-01-01')).toBe(false);
  });

  it('is unknown (null) when the series does not reach 7 days back', () => {
    const series = trainingLoadSeries(week(55), { fromDate: '2026-06-01', toDate: '2026-06-07' });
    expect(rampTooSteep(series, '2026-06-07', longAgo)).toBeNull();
  });

  it("does not read a new athlete's first week of 5 × 100 TSS as a ramp (docs/science.md §1)", () => {
    const first = '2026-06-01';
    const days = Array.from({ length: 5 }, (_, index) => ({
      date: addDays(first, index),
      tss: 100,
      method: 'power' as const,
    }));
    const series = trainingLoadSeries(days, { fromDate: addDays(first, -7), toDate: addDays(first, 4) });
    const dayFive = addDays(first, 4);
    // CTL 0 → 100·(1 − (41/42)^5) = 11.35 in under a week: above 8, yet only 4 days of history.
    expect(weeklyCtlRamp(series, dayFive)).toBeCloseTo(11.3512, 4);
    expect(rampTooSteep(series, dayFive, first)).toBeNull();
    expect(rampTooSteep(series, dayFive, null)).toBeNull();
  });

  it('counts from 42 days of history on: the same rise is steep on day 42, not on day 41', () => {
    const first = '2026-01-01';
    // One easy ride on the first day, then nothing until a hard week ending on day 41 or 42.
    const block = (lastDay: number) => [
      { date: first, tss: 20, method: 'power' as const },
      ...Array.from({ length: 7 }, (_, index) => ({
        date: addDays(first, lastDay - 6 + index),
        tss: 100,
        method: 'power' as const,
      })),
    ];
    for (const lastDay of [41, 42]) {
      const date = addDays(first, lastDay);
      const series = trainingLoadSeries(block(lastDay), { fromDate: first, toDate: date });
      expect(hasTrainingHistory(first, date)).toBe(lastDay >= 42);
      expect(weeklyCtlRamp(series, date)).toBeGreaterThan(8);
      expect(rampTooSteep(series, date, first)).toBe(lastDay >= 42 ? true : null);
    }
  });
});

describe('CTL entering a day', () => {
  it("is the day before's CTL, recovered from the day's own CTL and TSS", () => {
    const days = [
      { date: '2026-06-01', tss: 100, method: 'power' as const },
      { date: '2026-06-02', tss: 100, method: 'power' as const },
      { date: '2026-06-04', tss: 37.5, method: 'power' as const },
    ];
    const series = trainingLoadSeries(days, { fromDate: '2026-06-01', toDate: '2026-06-05' });
    expect(ctlEnteringDay(series[0] as TrainingLoadDay)).toBe(0);
    for (let index = 1; index < series.length; index += 1) {
      const day = series[index] as TrainingLoadDay;
      expect(ctlEnteringDay(day)).toBeCloseTo((series[index - 1] as TrainingLoadDay).ctl, 12);
      // The worked example: day 2's TSB −11.9048 was computed from CTL 2.3810.
      if (index === 1) expect(ctlEnteringDay(day)).toBeCloseTo(2.381, 4);
    }
  });
});

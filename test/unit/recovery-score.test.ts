import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays } from '../../server/src/lib/dates.ts';
import {
  loadScoreOfFormPercent,
  recoveryForDay,
  recoverySeries,
  scoreComponents,
  type RecoveryInputs,
  type WellnessDay,
} from '../../server/src/modules/derived/recovery.model.ts';

const HOUR = 3600;

/** The model's worked example, as summary statistics. */
const workedExample: RecoveryInputs = {
  date: '2026-09-30',
  hrv: {
    today: Math.log(55),
    week: { count: 7, mean: Math.log(55), sd: 0 },
    baseline: { count: 60, mean: Math.log(60), sd: 0.1 },
  },
  restingHr: { today: 51, baseline: { count: 60, mean: 48, sd: 2 } },
  sleep: { secs: 7 * HOUR, sleepScore: null, needSecs: 8 * HOUR },
  checkIn: { mood: 4, fatigue: 3, soreness: 2, motivation: 4 },
  load: { tsb: -10, ctl: 50, daysSinceFirstWorkout: 120 },
};
const noCheckIn = { mood: null, fatigue: null, soreness: null, motivation: null };
const noLoad = { tsb: null, ctl: null, daysSinceFirstWorkout: null };
/** Load at a form of `percent` of a CTL of 50, with a long training history. */
const formAt = (percent: number) => ({ tsb: percent / 2, ctl: 50, daysSinceFirstWorkout: 120 });

/**
 * Raw wellness days that summarise to the worked example on `today`: HRV of
 * 60·e^±0.1 ms (29 of each) and 60 ms on one day in the 60-day baseline, so
 * μ60 = ln 60 and σ60 = 0.10 exactly; 55 ms on each of the last 7 days;
 * resting HR 50/46 (29 each) and 48 once in the previous 60 days (mean 48,
 * SD 2), 51 today.
 */
function workedExampleHistory(today: string): WellnessDay[] {
  const days: WellnessDay[] = [];
  for (let back = 66; back >= 0; back -= 1) {
    const hrvIndex = back - 7; // 0..58 in the baseline, 59 is missing.
    const hrv =
      back <= 6 ? 55 : hrvIndex === 59 ? null : hrvIndex === 0 ? 60 : 60 * Math.exp(hrvIndex % 2 === 1 ? 0.1 : -0.1);
    const rhrIndex = back - 1; // 0..58 in the baseline, 59 is missing.
    const restingHr =
      back === 0 ? 51 : back > 60 || rhrIndex === 59 ? null : rhrIndex === 0 ? 48 : rhrIndex % 2 === 1 ? 50 : 46;
    days.push({ date: addDays(today, -back), hrv, restingHr });
  }
  days[days.length - 1] = {
    ...(days[days.length - 1] as WellnessDay),
    sleepSecs: 7 * HOUR,
    mood: 4,
    fatigue: 3,
    soreness: 2,
    motivation: 4,
  };
  return days;
}

describe('recovery score: the worked example', () => {
  it('scores each component as the model says', () => {
    const day = scoreComponents(workedExample);
    expect(day.components.hrv.zToday).toBeCloseTo(-0.8701, 4);
    expect(day.components.hrv.zTrend).toBeCloseTo(-0.8701, 4);
    expect(day.components.hrv.score).toBe(43.9);
    expect(day.components.restingHr.z).toBe(1.5);
    expect(day.components.restingHr.score).toBe(25);
    expect(day.components.sleep.score).toBe(75);
    expect(day.components.subjective.score).toBe(68.75);
    // TSB −10 at CTL 50 is −20 % of fitness, inside the optimal zone: 100 − 0.5·10.
    expect(day.components.load.value).toBe(-20);
    expect(day.components.load.score).toBe(95);
  });

  it('weights them to 58.99, maintain, and names HRV', () => {
    const day = scoreComponents(workedExample);
    expect(Math.abs((day.score as number) - 58.99)).toBeLessThanOrEqual(0.5);
    expect(day.score).toBe(58.99);
    expect(day.status).toBe('maintain');
    expect(day.explanation).toBe("HRV below your normal range lowered today's score most.");
    expect(day.components.hrv).toMatchObject({ weight: 0.35, available: true, reason: null });
    expect(day.components.hrv.contribution).toBeCloseTo(0.35 * 43.9, 10);
  });

  it('renormalises to 50.49 without the check-in and load', () => {
    const day = scoreComponents({ ...workedExample, checkIn: noCheckIn, load: noLoad });
    expect(day.score).toBe(50.49);
    expect(day.status).toBe('maintain');
    expect(day.components.hrv.weight).toBeCloseTo(0.35 / 0.75, 12);
    expect(day.components.subjective).toMatchObject({ available: false, weight: 0, contribution: 0, score: null });
    expect(day.components.load.reason).toBe('no workouts yet');
  });

  it('shows the HRV baseline in ln units and in ms, with the ±0.5 SD normal range', () => {
    const { hrv } = scoreComponents(workedExample).components;
    expect(hrv.valueMs).toBeCloseTo(55, 10);
    expect(hrv.baseline?.low).toBeCloseTo(Math.log(60) - 0.05, 12);
    expect(hrv.baseline?.high).toBeCloseTo(Math.log(60) + 0.05, 12);
    expect(hrv.baseline?.ms.mean).toBeCloseTo(60, 10);
    expect(hrv.baseline?.ms.low).toBeCloseTo(60 * Math.exp(-0.05), 10);
    expect(hrv.detail).toBe(
      'Today 55.0 ms, below your normal 57.1–63.1 ms; 7-day mean 55.0 ms (7 readings), below it too',
    );
  });

  it('comes out of a raw 67-day history the same way', () => {
    const today = '2026-09-30';
    const day = recoveryForDay({
      date: today,
      history: workedExampleHistory(today),
      tsb: -10,
      ctl: 50,
      daysSinceFirstWorkout: 120,
    });
    expect(day.components.hrv.baseline?.days).toBe(59);
    expect(day.components.hrv.baseline?.mean).toBeCloseTo(Math.log(60), 6);
    expect(day.components.hrv.baseline?.sd).toBeCloseTo(0.1, 9);
    expect(day.components.hrv.days).toBe(7);
    expect(day.components.hrv.value).toBeCloseTo(Math.log(55), 6);
    expect(day.components.hrv.trend).toBeCloseTo(Math.log(55), 6);
    expect(day.components.restingHr.baseline).toMatchObject({ days: 59 });
    expect(day.components.restingHr.baseline?.mean).toBeCloseTo(48, 9);
    expect(day.components.restingHr.baseline?.sd).toBeCloseTo(2, 9);
    expect(day.components.hrv.score).toBe(43.9);
    expect(day.components.restingHr.score).toBe(25);
    expect(day.components.sleep.score).toBe(75);
    expect(day.components.subjective.score).toBe(68.75);
    expect(day.components.load.score).toBe(95);
    expect(Math.abs((day.score as number) - 58.99)).toBeLessThanOrEqual(0.5);
    expect(day.status).toBe('maintain');
    expect(day.explanation).toMatch(/^HRV below your normal range/);
  });
});

/**
 * The docs' "one bad morning": a 60-day baseline of μ60 = ln 60, σ60 = 0.10
 * (the worked example's), six days at 60·e^0.04 ms and today at 60·e^−0.36 ms,
 * 3.6 SD below the baseline mean.
 */
function badMorningHistory(today: string): WellnessDay[] {
  return workedExampleHistory(today).map((day, index) =>
    index >= 60 ? { ...day, hrv: index === 66 ? 60 * Math.exp(-0.36) : 60 * Math.exp(0.04) } : day,
  );
}

describe('recovery score: one bad morning (today 3.6 SD below the baseline)', () => {
  const today = '2026-09-30';
  const day = recoveryForDay({
    date: today,
    history: badMorningHistory(today),
    tsb: -10,
    ctl: 50,
    daysSinceFirstWorkout: 120,
  });
  const { hrv } = day.components;

  it("scores today's part 0 and the 7-day trend 64.86: the component is their mean, 32.43", () => {
    expect(hrv.zToday).toBeCloseTo(-3.6, 5);
    expect(hrv.todayScore).toBe(0);
    expect(hrv.zTrend).toBeCloseTo(-0.171429, 5);
    expect(hrv.trendScore).toBeCloseTo(64.857143, 4);
    expect(hrv.score).toBe(32.43);
    expect(hrv.value).toBeCloseTo(Math.log(60) - 0.36, 6);
    expect(hrv.trendMs).toBeCloseTo(58.98, 2);
  });

  it('does not read as within normal: the detail and the explanation say today is below the range', () => {
    expect(hrv.detail).toBe(
      'Today 41.9 ms, below your normal 57.1–63.1 ms; 7-day mean 59.0 ms (7 readings), within it',
    );
    expect(day.explanation).toBe("HRV below your normal range lowered today's score most.");
    // The old model judged only the 7-day mean: 64.86, "within normal". Here the HRV part loses twice as much.
    expect(hrv.score as number).toBeLessThan(64.86 / 2 + 0.01);
  });

  it('names the 7-day trend when it, not today, is below the range', () => {
    const inputs: RecoveryInputs = {
      ...workedExample,
      hrv: {
        today: Math.log(60),
        week: { count: 7, mean: Math.log(60) - 0.2, sd: null },
        baseline: { count: 60, mean: Math.log(60), sd: 0.1 },
      },
    };
    const scored = scoreComponents(inputs);
    // today 70, trend 70 − 60 = 10: mean 40.
    expect(scored.components.hrv.score).toBe(40);
    expect(scored.explanation).toBe("HRV's 7-day trend below your normal range lowered today's score most.");
  });
});

describe('recovery score: the components', () => {
  it('floors the HRV SD at 0.10: half a floored SD below the mean scores 55', () => {
    const inputs: RecoveryInputs = {
      ...workedExample,
      hrv: {
        today: Math.log(60) - 0.05,
        week: { count: 3, mean: Math.log(60) - 0.05, sd: null },
        baseline: { count: 14, mean: Math.log(60), sd: 0.03 },
      },
    };
    expect(scoreComponents(inputs).components.hrv.score).toBe(55);
  });

  it('floors the resting HR SD at 1 bpm', () => {
    const inputs: RecoveryInputs = {
      ...workedExample,
      restingHr: { today: 50, baseline: { count: 20, mean: 48, sd: 0.2 } },
    };
    expect(scoreComponents(inputs).components.restingHr.score).toBe(10);
  });

  it('averages a device sleep score in, and uses it alone when no duration is known', () => {
    const withScore = scoreComponents({
      ...workedExample,
      sleep: { secs: 7 * HOUR, sleepScore: 85, needSecs: 8 * HOUR },
    });
    expect(withScore.components.sleep.score).toBe(80);
    const scoreOnly = scoreComponents({ ...workedExample, sleep: { secs: null, sleepScore: 62, needSecs: 8 * HOUR } });
    expect(scoreOnly.components.sleep.score).toBe(62);
  });

  it('scores sleep of half the need or less as 0, and more than the need as 100', () => {
    const sleep = (secs: number) =>
      scoreComponents({ ...workedExample, sleep: { secs, sleepScore: null, needSecs: 8 * HOUR } }).components.sleep
        .score;
    expect(sleep(4 * HOUR)).toBe(0);
    expect(sleep(3 * HOUR)).toBe(0);
    expect(sleep(9 * HOUR)).toBe(100);
  });

  it('averages only the check-in answers given', () => {
    const day = scoreComponents({
      ...workedExample,
      checkIn: { mood: 5, fatigue: null, soreness: 5, motivation: null },
    });
    expect(day.components.subjective.score).toBe(50);
  });

  it('scores form as a percentage of fitness by zone (the worked example of the form zones)', () => {
    const load = (percent: number) =>
      scoreComponents({ ...workedExample, load: formAt(percent) }).components.load.score;
    expect(load(20)).toBe(100); // fresh
    expect(load(0)).toBe(100); // grey zone
    expect(load(-10)).toBe(100); // the optimal zone's fresh edge
    expect(load(-20)).toBe(95); // optimal training: not penalised beyond a nudge
    expect(load(-30)).toBe(90); // the optimal zone's deep edge
    expect(load(-40)).toBe(60); // high risk: 3 points per percent
    expect(load(-60)).toBe(0);
    expect(load(-90)).toBe(0);
    // CTL 58, ATL 88 entering the day: TSB −30 is −51.7 % of fitness.
    expect(
      scoreComponents({ ...workedExample, load: { tsb: -30, ctl: 58, daysSinceFirstWorkout: 120 } }).components.load
        .score,
    ).toBe(Math.round((90 - 3 * ((100 * 30) / 58 - 30)) * 100) / 100);
  });

  it('is continuous and never rises as form falls', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -150, max: 80, noNaN: true }),
        fc.double({ min: 0, max: 5, noNaN: true }),
        (p, d) => {
          expect(loadScoreOfFormPercent(p - d)).toBeLessThanOrEqual(loadScoreOfFormPercent(p));
          // Piecewise linear with slopes of at most 3 points per percent: no jump anywhere.
          expect(loadScoreOfFormPercent(p) - loadScoreOfFormPercent(p - d)).toBeLessThanOrEqual(3 * d + 1e-9);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('counts CTL below 10 as 10, so a nearly untrained athlete is not swung by hundreds of percent', () => {
    const day = scoreComponents({ ...workedExample, load: { tsb: -4, ctl: 5, daysSinceFirstWorkout: 120 } });
    expect(day.components.load.value).toBe(-40);
    expect(day.components.load.score).toBe(60);
  });

  it("says the form, TSB, CTL and zone in the load's detail", () => {
    expect(scoreComponents(workedExample).components.load.detail).toBe(
      'Form -20 % of fitness (TSB -10.0, CTL 50.0): the optimal training zone (-10 to -30 %)',
    );
    expect(scoreComponents({ ...workedExample, load: formAt(-45) }).components.load.detail).toMatch(
      /^Form -45 % of fitness .*: the high-risk zone \(below -30 %\)$/,
    );
  });

  it('names the component that cost the most points, with its direction', () => {
    const good: RecoveryInputs = {
      ...workedExample,
      // HRV z = 0.6 (score 88, above the ±0.05 range); everything else scores 100.
      hrv: {
        today: Math.log(60) + 0.06,
        week: { count: 7, mean: Math.log(60) + 0.06, sd: null },
        baseline: { count: 60, mean: Math.log(60), sd: 0.1 },
      },
      restingHr: { today: 46, baseline: { count: 60, mean: 48, sd: 2 } },
      sleep: { secs: 8 * HOUR, sleepScore: null, needSecs: 8 * HOUR },
      checkIn: { mood: 5, fatigue: 1, soreness: 1, motivation: 5 },
      load: formAt(30),
    };
    expect(scoreComponents(good).explanation).toBe("HRV, though above your normal range, lowered today's score most.");
    expect(
      scoreComponents({ ...good, restingHr: { today: 54, baseline: { count: 60, mean: 48, sd: 2 } } }).explanation,
    ).toBe("Resting heart rate above your normal range lowered today's score most.");
    expect(
      scoreComponents({ ...good, sleep: { secs: 5 * HOUR, sleepScore: null, needSecs: 8 * HOUR } }).explanation,
    ).toBe("Sleep short of your need (5.0 of 8.0 h) lowered today's score most.");
    expect(scoreComponents({ ...good, checkIn: { mood: 2, fatigue: 4, soreness: 5, motivation: 2 } }).explanation).toBe(
      "Soreness in your check-in (5 of 5) lowered today's score most.",
    );
    expect(scoreComponents({ ...good, load: formAt(-60) }).explanation).toBe(
      "Fatigue from recent training (form -60 % of fitness, below -30 %) lowered today's score most.",
    );
  });

  it('decides the status on the unrounded score: 69.996 shows as 70 but is maintain', () => {
    // HRV 69.99 (weight 0.7) and resting HR 70.01 (weight 0.3): 48.993 + 21.003 = 69.996.
    const day = scoreComponents({
      date: '2026-09-30',
      hrv: {
        today: Math.log(60) - 0.1 / 3000,
        week: { count: 7, mean: Math.log(60) - 0.1 / 3000, sd: null },
        baseline: { count: 60, mean: Math.log(60), sd: 0.1 },
      },
      restingHr: { today: 48 - 2 / 3000, baseline: { count: 60, mean: 48, sd: 2 } },
      sleep: { secs: null, sleepScore: null, needSecs: 8 * HOUR },
      checkIn: noCheckIn,
      load: noLoad,
    });
    expect(day.components.hrv.score).toBe(69.99);
    expect(day.components.restingHr.score).toBe(70.01);
    expect(day.score).toBe(70);
    expect(day.status).toBe('maintain');
  });
});

describe('recovery score: missing data', () => {
  it('drops a missing component and renormalises the others (no sleep: 53.65, maintain)', () => {
    const day = scoreComponents({ ...workedExample, sleep: { secs: null, sleepScore: null, needSecs: 8 * HOUR } });
    const used = [day.components.hrv, day.components.restingHr, day.components.subjective, day.components.load];
    expect(used.reduce((sum, component) => sum + component.weight, 0)).toBeCloseTo(1, 12);
    expect(day.components.hrv.weight).toBeCloseTo(0.35 / 0.75, 12);
    expect(day.components.restingHr.weight).toBeCloseTo(0.15 / 0.75, 12);
    expect(day.components.sleep).toMatchObject({ available: false, weight: 0, score: null });
    expect(day.components.sleep.reason).toMatch(/no sleep/);
    // (0.35·43.90 + 0.15·25 + 0.10·68.75 + 0.15·95) / 0.75 = 53.6533…
    const formula = (0.35 * 43.9 + 0.15 * 25 + 0.1 * 68.75 + 0.15 * 95) / 0.75;
    expect(day.score).toBe(Math.round(formula * 100) / 100);
    expect(day.score).toBe(53.65);
    expect(day.status).toBe('maintain');
  });

  it('is insufficient_data with a null score when the baselines are too short', () => {
    const today = '2026-09-30';
    const history = Array.from({ length: 10 }, (_, back) => ({
      date: addDays(today, -back),
      hrv: 60,
      restingHr: 48,
      sleepSecs: 8 * HOUR,
    }));
    const day = recoveryForDay({ date: today, history });
    expect(day.score).toBeNull();
    expect(day.status).toBe('insufficient_data');
    expect(day.components.hrv.reason).toBe('3 HRV readings in the 60-day baseline, 14 needed');
    expect(day.components.restingHr.reason).toBe('9 resting heart rates in the previous 60 days, 14 needed');
    expect(day.components.sleep).toMatchObject({ available: true, score: 100, weight: 0, contribution: 0 });
    expect(day.explanation).toMatch(/^Not enough data for a score yet/);
  });

  it('needs a reading today or 3 HRV readings in the last 7 days', () => {
    const history = workedExampleHistory('2026-09-30').map((day, index) =>
      // Indices 60..66 are the last 7 days (66 is today); keep two of them, not today's.
      index >= 60 && index !== 63 && index !== 64 ? { ...day, hrv: null } : day,
    );
    const day = recoveryForDay({ date: '2026-09-30', history, tsb: -10, ctl: 50, daysSinceFirstWorkout: 120 });
    expect(day.components.hrv.available).toBe(false);
    expect(day.components.hrv.reason).toBe('no HRV today and 2 readings in the last 7 days, 3 needed');
    expect(day.status).not.toBe('insufficient_data');
  });

  it("scores today's reading alone when the week has too few for a trend, and the trend alone without one today", () => {
    const todayOnly = recoveryForDay({
      date: '2026-09-30',
      history: workedExampleHistory('2026-09-30').map((day, index) =>
        index >= 60 && index !== 65 && index !== 66 ? { ...day, hrv: null } : day,
      ),
    }).components.hrv;
    expect(todayOnly).toMatchObject({ available: true, score: 43.9, trend: null, trendScore: null, days: 2 });
    expect(todayOnly.detail).toBe(
      'Today 55.0 ms, below your normal 57.1–63.1 ms; 2 readings in the last 7 days, too few for a trend',
    );
    const trendOnly = recoveryForDay({
      date: '2026-09-30',
      history: workedExampleHistory('2026-09-30').map((day, index) => (index === 66 ? { ...day, hrv: null } : day)),
    }).components.hrv;
    expect(trendOnly).toMatchObject({ available: true, score: 43.9, value: null, todayScore: null, days: 6 });
    expect(trendOnly.detail).toBe(
      'No HRV reading today; 7-day mean 55.0 ms (6 readings) against your normal 57.1–63.1 ms',
    );
  });

  it('is insufficient_data with only the check-in and sleep (no HRV, no resting HR)', () => {
    const day = scoreComponents({
      ...workedExample,
      hrv: { today: null, week: { count: 0, mean: null, sd: null }, baseline: { count: 0, mean: null, sd: null } },
      restingHr: { today: null, baseline: { count: 0, mean: null, sd: null } },
      load: noLoad,
    });
    expect(day.components.sleep.available).toBe(true);
    expect(day.components.subjective.available).toBe(true);
    expect(day.score).toBeNull();
    expect(day.status).toBe('insufficient_data');
    expect(day.explanation).toMatch(/needs HRV/);
  });

  it('is insufficient_data with HRV alone, and scores HRV with resting HR', () => {
    const hrvOnly = scoreComponents({
      ...workedExample,
      restingHr: { today: null, baseline: { count: 60, mean: 48, sd: 2 } },
      sleep: { secs: null, sleepScore: null, needSecs: 8 * HOUR },
      checkIn: noCheckIn,
      load: noLoad,
    });
    expect(hrvOnly.status).toBe('insufficient_data');
    expect(hrvOnly.explanation).toMatch(/besides HRV or resting heart rate/);
    const physiological = scoreComponents({
      ...workedExample,
      sleep: { secs: null, sleepScore: null, needSecs: 8 * HOUR },
      checkIn: noCheckIn,
      load: noLoad,
    });
    expect(physiological.score).toBe(Math.round((0.7 * 43.9 + 0.3 * 25) * 100) / 100);
  });

  it('leaves the load out until 42 days of training history', () => {
    const today = '2026-09-30';
    const history = workedExampleHistory(today);
    const loadByDate = new Map([
      [addDays(today, -1), { tsb: -10, ctl: 50 }],
      [today, { tsb: -10, ctl: 50 }],
    ]);
    const [before, on] = recoverySeries(history, {
      fromDate: addDays(today, -1),
      toDate: today,
      loadByDate,
      firstWorkoutDate: addDays(today, -42),
    });
    expect(before?.components.load).toMatchObject({ available: false, score: null, weight: 0 });
    expect(before?.components.load.reason).toBe('41 days of training history, 42 needed');
    expect(on?.components.load).toMatchObject({ available: true, score: 95, value: -20 });
    expect(
      recoveryForDay({ date: today, history, tsb: -10, ctl: 50, daysSinceFirstWorkout: 41 }).components.load.available,
    ).toBe(false);
  });
});

/**
 * 90 days: HRV 60·e^±0.08 ms and resting HR 46/48/50 bpm, 8 h of sleep each
 * night; on days 70–76 HRV falls to 42 ms and resting HR rises to 56 bpm,
 * then both return.
 */
function ninetyDays(start: string): WellnessDay[] {
  return Array.from({ length: 90 }, (_, index) => {
    const strained = index >= 70 && index <= 76;
    return {
      date: addDays(start, index),
      hrv: strained ? 42 : 60 * Math.exp(index % 2 === 0 ? 0.08 : -0.08),
      restingHr: strained ? 56 : [46, 48, 50][index % 3],
      sleepSecs: 8 * HOUR,
    };
  });
}

describe('recovery score over time', () => {
  const start = '2026-01-01';
  const history = ninetyDays(start);
  const series = recoverySeries(history, { fromDate: addDays(start, 66), toDate: addDays(start, 89) });
  const onDay = (index: number) => series[index - 66] as (typeof series)[number];

  it('falls when HRV drops below the normal range and resting HR rises, and rises back when they return', () => {
    const before = onDay(69);
    expect(before.status).toBe('ready');
    for (let index = 70; index <= 76; index += 1) {
      expect(onDay(index).score as number).toBeLessThan(before.score as number);
      expect(onDay(index).components.restingHr.value).toBeGreaterThan(
        onDay(index).components.restingHr.baseline?.high as number,
      );
    }
    const worst = onDay(76);
    expect(worst.components.hrv.value).toBeLessThan(worst.components.hrv.baseline?.low as number);
    expect(worst.status).toBe('recover');
    expect(worst.explanation).toBe("HRV below your normal range lowered today's score most.");
    // Falling day by day while the 7-day HRV window fills with the low values.
    for (let index = 71; index <= 76; index += 1) {
      expect(onDay(index).score as number).toBeLessThanOrEqual(onDay(index - 1).score as number);
    }
    // A week after the last strained day the 7-day window holds only normal values again.
    const after = onDay(84);
    expect(after.status).toBe('ready');
    expect(after.score as number).toBeGreaterThanOrEqual((before.score as number) - 5);
    expect(after.score as number).toBeGreaterThan((worst.score as number) + 30);
  });

  it('gives each day exactly what recoveryForDay gives it', () => {
    for (const day of series) {
      expect(recoveryForDay({ date: day.date, history })).toEqual(day);
    }
  });

  it('gives the same days from any start date (a recompute from a changed date equals a full one)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            hrv: fc.option(fc.double({ min: 10, max: 200, noNaN: true }), { freq: 3 }),
            restingHr: fc.option(fc.integer({ min: 35, max: 80 }), { freq: 3 }),
            sleepSecs: fc.option(fc.integer({ min: 0, max: 12 * HOUR })),
            mood: fc.option(fc.integer({ min: 1, max: 5 })),
          }),
          { minLength: 70, maxLength: 140 },
        ),
        fc.nat(),
        (values, split) => {
          const days = values.map((value, index) => ({ ...value, date: addDays(start, index) }));
          const last = addDays(start, days.length - 1);
          const full = recoverySeries(days, { fromDate: start, toDate: last });
          const k = split % full.length;
          expect(recoverySeries(days, { fromDate: addDays(start, k), toDate: last })).toEqual(full.slice(k));
          const one = full[k] as (typeof full)[number];
          expect(recoveryForDay({ date: one.date, history: days })).toEqual(one);
        },
      ),
      { numRuns: 60 },
    );
  });
});

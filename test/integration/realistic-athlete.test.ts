/**
 * Issue 21's realistic athlete (test/support/realistic-athlete.ts), seeded
 * once through the real API, then checked the way a coach would check the
 * numbers: the liver over a normal night, the stores through a training camp,
 * a recorded ride's drain, tomorrow's 2.5 h ride and an untimed 4 h ride
 * (status, limiting store, in-ride advice by the guidelines, the short plan),
 * and recovery through a bad week and after a single-day HRV crash. Every
 * number comes from the REST answers (docs/science.md §2 and §3).
 */
import {
  FUEL_STATUSES,
  type FuelTimeline,
  type PlannedWorkoutFuel,
  type RecommendationList,
  type RecoveryDay,
  type TrainingLoad,
} from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { addDays } from '../../server/src/lib/dates.ts';
import { call } from '../support/http.ts';
import { REALISTIC_ZONE, eatAdvice, type RealisticAthlete } from '../support/realistic-athlete.ts';
import { startRealisticAthleteServer } from '../support/realistic-athlete-server.ts';
import { waitForRecompute } from '../support/recompute.ts';
import type { TestServer } from '../support/test-server.ts';

let server: TestServer;
let athlete: User;
let token: string;
let seeded: RealisticAthlete;

beforeAll(async () => {
  ({ server, athlete, token, seeded } = await startRealisticAthleteServer());
}, 300_000);
afterAll(async () => {
  await server?.stop();
});

async function get<T>(path: string): Promise<T> {
  const res = await call<T>(server.url, 'GET', path, { token });
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

const timeline = (from: string, to: string) => get<FuelTimeline>(`/api/fuel/timeline?from=${from}&to=${to}`);
const fuelOf = (id: string) => get<PlannedWorkoutFuel>(`/api/planned-workouts/${id}/fuel`);

/** Every recovery day from `from` to `to`, by date (following the cursor). */
async function recoveryDays(from: string, to: string): Promise<Map<string, RecoveryDay>> {
  const days = new Map<string, RecoveryDay>();
  let cursor: string | null = null;
  do {
    const page: { items: RecoveryDay[]; nextCursor: string | null } = await get(
      `/api/recovery?from=${from}&to=${to}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    for (const day of page.items) days.set(day.date, day);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return days;
}

type Point = FuelTimeline['points'][number];
/** The point ending at `clock` (local `HH:MM`) on `date`. */
function pointAt(points: readonly Point[], date: string, clock: string): Point {
  const point = points.find((candidate) => candidate.at.slice(0, 10) === date && candidate.at.slice(11, 16) === clock);
  if (!point) throw new Error(`no timeline point at ${date} ${clock}`);
  return point;
}
/** Points whose step ends in (from, to], both ISO instants. */
function pointsBetween(points: readonly Point[], from: string, to: string): Point[] {
  const start = Date.parse(from);
  const end = Date.parse(to);
  return points.filter((point) => Date.parse(point.at) > start && Date.parse(point.at) <= end);
}
const atLocal = (points: readonly Point[], date: string, clock: string) => pointAt(points, date, clock).at;

describe('the fixture', () => {
  it('is the athlete the issue describes: 67 days of wellness, 27 rides with power (6 in the camp, each with a 30-minute stop), meals on most days', async () => {
    const profile = await get<{ weight: number; ftp: number; timeZone: string }>('/api/profile');
    expect(profile).toMatchObject({ weight: 70, ftp: 250, timeZone: REALISTIC_ZONE });
    const wellness = await get<{ items: unknown[] }>(
      `/api/wellness?from=${seeded.firstDay}&to=${seeded.today}&limit=100`,
    );
    expect(wellness.items).toHaveLength(67);
    const workouts = await get<{
      items: { localDate: string; elapsedSecs: number; movingSecs: number; avgPower: number | null }[];
    }>(`/api/workouts?from=${seeded.firstDay}&to=${seeded.today}&limit=100`);
    expect(workouts.items).toHaveLength(27);
    for (const workout of workouts.items) expect(workout.avgPower).toBeGreaterThan(0);
    const campRides = workouts.items.filter((workout) => seeded.campDates.includes(workout.localDate));
    expect(campRides).toHaveLength(6);
    for (const ride of campRides) {
      expect(ride.elapsedSecs).toBeGreaterThanOrEqual(3.5 * 3600);
      expect(ride.elapsedSecs - ride.movingSecs).toBe(1800);
    }
    const mealDays = new Set(seeded.meals.map((meal) => meal.date));
    expect(mealDays.size).toBeGreaterThanOrEqual(60);
  });
});

describe('the liver and muscle at rest', () => {
  it('drops the liver by roughly 40–50 % over a normal night (dinner to breakfast), not to 0; muscle does not drain', async () => {
    const { dinnerDate, breakfastDate } = seeded.normalNight;
    const night = await timeline(dinnerDate, breakfastDate);
    expect(night.incompleteLogDates).toEqual([]);
    const evening = pointsBetween(
      night.points,
      atLocal(night.points, dinnerDate, '19:00'),
      atLocal(night.points, breakfastDate, '00:00'),
    );
    const eveningLiver = Math.max(...evening.map((point) => point.liverG));
    const beforeBreakfast = pointAt(night.points, breakfastDate, '07:30');
    const drop = (eveningLiver - beforeBreakfast.liverG) / eveningLiver;
    expect(beforeBreakfast.liverG).toBeGreaterThan(0);
    expect(drop).toBeGreaterThanOrEqual(0.35);
    expect(drop).toBeLessThanOrEqual(0.55);

    // From dinner to breakfast no step lowers muscle glycogen: the resting body draws on the liver.
    const overnight = pointsBetween(night.points, atLocal(night.points, dinnerDate, '19:00'), beforeBreakfast.at);
    for (let i = 1; i < overnight.length; i += 1) {
      expect((overnight[i] as Point).muscleG).toBeGreaterThanOrEqual((overnight[i - 1] as Point).muscleG - 1e-9);
    }
  });
});

describe('the training camp', () => {
  const campTimeline = () => timeline(seeded.campDates[0] as string, seeded.campDates.at(-1) as string);

  it('ends each camp day below 100 % (real resting use)', async () => {
    const camp = await campTimeline();
    expect(camp.workouts.filter((workout) => workout.kind === 'recorded')).toHaveLength(seeded.campDates.length);
    for (const date of seeded.campDates) {
      expect(pointAt(camp.points, date, '22:00').percent, `${date} 22:00`).toBeLessThan(100);
    }
  });

  it('never draws muscle below its floor (25 %, never 0 g) nor the liver below 0 during the camp', async () => {
    const camp = await campTimeline();
    const muscleFloor = 0.25 * camp.capacity.muscleG;
    for (const point of camp.points) {
      expect(point.muscleG, point.at).toBeGreaterThanOrEqual(muscleFloor - 1e-9);
      expect(point.muscleG, point.at).toBeGreaterThan(0);
      expect(point.liverG, point.at).toBeGreaterThanOrEqual(0);
    }
  });
});

describe('a recorded ride on a day with food logged', () => {
  it('draws the ride’s drain from the stores', async () => {
    const date = seeded.foodAndRideDate;
    const day = await timeline(date, date);
    expect(day.assumptions.some((line) => line.startsWith(`${date}: no food logged`))).toBe(false);
    const [ride] = day.workouts.filter((workout) => workout.kind === 'recorded');
    expect(ride).toBeDefined();
    const seededRide = seeded.rides.find((candidate) => candidate.date === date);
    expect(seededRide?.movingSecs).toBe(7200);
    const start = pointAt(day.points, date, '14:00');
    const end = pointAt(day.points, date, '16:00');
    // 2 h at ~175 W is ~1.26 MJ of work, ~1,400 kcal of energy: far more than 50 g of glycogen.
    expect(start.totalG - end.totalG).toBeGreaterThan(50);
    expect(end.muscleG).toBeLessThan(start.muscleG);
  });
});

describe('tomorrow’s 2.5 h ride and the untimed 4 h ride', () => {
  const hoursOf = (durationSecs: number | null) => (durationSecs ?? 0) / 3600;
  const duringRate = (fuel: PlannedWorkoutFuel, hours: number) =>
    fuel.advice.filter((item) => item.phase === 'during').reduce((sum, item) => sum + item.carbsG, 0) / hours;

  it('has a status of the four, names the limiting store when not ready, and a ready ride keeps the liver above 20 g', async () => {
    const horizon = await timeline(seeded.today, addDays(seeded.today, 13));
    for (const planned of [seeded.shortRide, seeded.longRide]) {
      const fuel = await fuelOf(planned.id);
      expect(FUEL_STATUSES).toContain(fuel.status);
      if (fuel.status === 'top_up' || fuel.status === 'at_risk') {
        expect(['liver', 'muscle']).toContain(fuel.limitingStore);
        // The advice names the store too.
        expect(fuel.plan.map((line) => line.text).join(' ')).toMatch(new RegExp(String(fuel.limitingStore), 'i'));
      } else expect(fuel.limitingStore).toBeNull();
      const drawn = horizon.workouts.find((workout) => workout.id === planned.id);
      expect(drawn?.fuelStatus).toBe(fuel.status);
      expect(drawn?.limitingStore).toBe(fuel.limitingStore);
      if (fuel.status === 'ready' && drawn) {
        for (const point of pointsBetween(horizon.points, drawn.start, drawn.end)) {
          expect(point.liverG, `${planned.title} ${point.at}`).toBeGreaterThanOrEqual(20);
        }
      }
    }
  });

  it('fills the days ahead with the athlete’s usual meals (two weeks logged), so neither ride is `not_logged`', async () => {
    const ahead = await timeline(seeded.tomorrow, addDays(seeded.today, 3));
    expect(ahead.meals.filter((meal) => meal.source === 'assumed').length).toBeGreaterThanOrEqual(3);
    for (const planned of [seeded.shortRide, seeded.longRide]) {
      expect((await fuelOf(planned.id)).status).not.toBe('not_logged');
    }
  });

  it('advises 30–60 g/h during the 2.5 h ride, with before and during lines in its plan', async () => {
    const fuel = await fuelOf(seeded.shortRide.id);
    expect(fuel.advice.some((item) => item.phase === 'during')).toBe(true);
    const rate = duringRate(fuel, hoursOf(seeded.shortRide.durationSecs));
    expect(rate).toBeGreaterThanOrEqual(30);
    expect(rate).toBeLessThanOrEqual(60);
    expect(fuel.plan.some((line) => line.phase === 'before')).toBe(true);
    expect(fuel.plan.some((line) => line.phase === 'during')).toBe(true);
  });

  it('advises more than 60 and at most 90 g/h of glucose + fructose during the 4 h ride, with before and during lines', async () => {
    const fuel = await fuelOf(seeded.longRide.id);
    const rate = duringRate(fuel, hoursOf(seeded.longRide.durationSecs));
    expect(rate).toBeGreaterThan(60);
    expect(rate).toBeLessThanOrEqual(90);
    const words = [...fuel.plan.map((line) => line.text), ...fuel.advice.map((item) => item.reason)].join(' ');
    expect(words).toMatch(/glucose/i);
    expect(words).toMatch(/fructose/i);
    expect(fuel.plan.some((line) => line.phase === 'before')).toBe(true);
    expect(fuel.plan.some((line) => line.phase === 'during')).toBe(true);
  });

  it('gives the untimed 4 h ride, days ahead, a pre-workout top-up (not "too little time") and no assumed meal inside it', async () => {
    const fuel = await fuelOf(seeded.longRide.id);
    const day = await timeline(seeded.longRide.date, seeded.longRide.date);
    const ride = day.workouts.find((workout) => workout.id === seeded.longRide.id);
    if (!ride) throw new Error('the 4 h ride is on its day’s timeline');
    const [startMs, endMs] = [Date.parse(ride.start), Date.parse(ride.end)];
    // The usual meals count before it; what is missing of the 2 g/kg is at most 1 g/kg an hour before: a FAST top-up.
    const before = fuel.plan.find((line) => line.phase === 'before')?.text ?? '';
    expect(before).not.toContain('too little time');
    const topUp = fuel.advice.filter((item) => item.phase === 'before');
    expect(topUp).toHaveLength(1);
    expect(topUp[0]).toMatchObject({ absorptionType: 'FAST' });
    expect(Date.parse(topUp[0]?.at ?? '')).toBe(startMs - 3_600_000);
    expect(topUp[0]?.carbsG).toBeLessThanOrEqual(70);
    // An assumed meal in the ride's time is eaten after it; the plan counts nothing as eaten in the ride.
    const inRide = day.meals.filter((meal) => Date.parse(meal.at) >= startMs && Date.parse(meal.at) < endMs);
    expect(inRide).toEqual([]);
    expect(day.meals.some((meal) => meal.source === 'assumed' && Date.parse(meal.at) === endMs)).toBe(true);
    expect(fuel.plan.find((line) => line.phase === 'during')?.text).not.toContain('logged');
  });

  it('never shows the stores above 100 % (or above either capacity) in the next 14 days', async () => {
    const horizon = await timeline(seeded.today, addDays(seeded.today, 13));
    expect(horizon.points.length).toBeGreaterThanOrEqual(14 * 92);
    for (const point of horizon.points) {
      expect(point.percent, point.at).toBeLessThanOrEqual(100);
      expect(point.liverG, point.at).toBeLessThanOrEqual(horizon.capacity.liverG);
      expect(point.muscleG, point.at).toBeLessThanOrEqual(horizon.capacity.muscleG);
    }
  });
});

describe('training load', () => {
  it('counts every ride from its power, and the camp leaves the athlete fatigued (TSB well below 0) before the form comes back', async () => {
    const load = await get<TrainingLoad>(`/api/training-load?from=${seeded.firstDay}&to=${seeded.today}`);
    const ridden = load.items.filter((day) => day.tss > 0);
    expect(ridden.map((day) => day.date)).toEqual(seeded.rides.map((ride) => ride.date));
    for (const day of ridden) expect(day.method, day.date).toBe('power');
    const byDate = new Map(load.items.map((day) => [day.date, day]));
    const afterCamp = byDate.get(addDays(seeded.campDates.at(-1) as string, 1));
    const beforeCamp = byDate.get(seeded.campDates[0] as string);
    // TSB of a day is the form entering it: the day after the camp carries six long days of fatigue.
    expect(afterCamp?.tsb).toBeLessThan(-10);
    expect(afterCamp?.ctl).toBeGreaterThan(beforeCamp?.ctl ?? Infinity);
    expect(byDate.get(seeded.today)?.tsb).toBeGreaterThan(afterCamp?.tsb ?? Infinity);
  });
});

describe('recovery', () => {
  it('reads `recover` or `maintain` through the bad week, naming HRV', async () => {
    const days = await recoveryDays(seeded.badWeekDates[0] as string, seeded.today);
    // From the bad week's third day on, three or more bad nights are in the 7-day HRV window.
    for (const date of seeded.badWeekDates.slice(2)) {
      const day = days.get(date);
      expect(['recover', 'maintain'], date).toContain(day?.status);
      expect(day?.explanation, date).toMatch(/HRV/);
    }
  });

  it('does not call a single-day HRV crash (−3.6 SD) "within normal"', async () => {
    const days = await recoveryDays(seeded.hrvCrashDate, seeded.hrvCrashDate);
    const day = days.get(seeded.hrvCrashDate);
    expect(day?.components.hrv.available).toBe(true);
    // Below the normal range's lower edge (−0.5 SD) scores below 70 − 30 × 0.5 = 55 (docs/science.md §2).
    expect(day?.components.hrv.score).toBeLessThan(55);
    expect(day?.explanation).not.toMatch(/within/i);
  });

  it('after three or more days in `recover`, suggests rest or at most 60 minutes easy before tomorrow’s ride', async () => {
    const days = await recoveryDays(addDays(seeded.today, -2), seeded.today);
    for (const date of [addDays(seeded.today, -2), addDays(seeded.today, -1), seeded.today]) {
      expect(days.get(date)?.status, date).toBe('recover');
    }
    const open = await get<RecommendationList>('/api/recommendations');
    const easier = open.items.find(
      (item) => item.kind === 'easier_workout' && item.plannedWorkoutId === seeded.shortRide.id,
    );
    expect(easier).toBeDefined();
    const action: Record<string, unknown> = { ...easier?.action };
    if (typeof action['durationSecs'] === 'number') expect(action['durationSecs']).toBeLessThanOrEqual(3600);
    else expect(easier?.body).toMatch(/rest/i);
  });
});

// Last: it logs food, which changes what the checks above read.
describe('eating the advice', () => {
  it('makes both rides `ready` when eaten exactly as advised (the existing invariant)', async () => {
    const before = [await fuelOf(seeded.shortRide.id), await fuelOf(seeded.longRide.id)];
    await eatAdvice(server.url, token, before);
    await waitForRecompute(server.db, athlete.id, undefined, 60_000);
    for (const planned of [seeded.shortRide, seeded.longRide]) {
      expect((await fuelOf(planned.id)).status, planned.title).toBe('ready');
    }
  });
});

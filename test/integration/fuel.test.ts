/**
 * The glycogen (fuel) chain as stored and served: the timeline honours
 * `logged_at` offsets and days of 23 and 25 hours; a past day without food
 * draws its recorded ride; a ride the log cannot fuel marks the day
 * incomplete instead of drawing an empty body; a capacity change shows at
 * once; and a planned workout's status names the store that limits it, and
 * its advice (items with their phase, and a short plan), eaten as advised,
 * makes it `ready`; the usual intake fills the future days where nothing is
 * logged or planned, planned items replace it slot by slot, and without a
 * usual intake or anything logged before a planned workout its status is
 * `not_logged` (docs/science.md §3).
 */
import type { FuelTimeline, PlannedWorkout, PlannedWorkoutFuel } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { addDays, formatInZone, localDateOf, zonedTimeMs } from '../../server/src/lib/dates.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { waitForRecompute } from '../support/recompute.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { seedWorkout } from '../support/training-data.ts';

let server: TestServer;
let athlete: User;
let token: string;
const ZONE = 'Europe/Berlin';

beforeAll(async () => {
  server = await startTestServer();
  athlete = await makeUser(server.db, { timeZone: ZONE });
  token = (
    await mintToken(server.db, athlete, {
      scopes: ['nutrition:read', 'nutrition:write', 'planning:read', 'planning:write', 'profile:write'],
    })
  ).token;
  expect((await call(server.url, 'PATCH', '/api/profile', { token, body: { weight: 70, ftp: 250 } })).status).toBe(200);
});
afterAll(async () => {
  await server.stop();
});

const settled = () => waitForRecompute(server.db, athlete.id);

async function timeline(from: string, to: string): Promise<FuelTimeline> {
  const res = await call<FuelTimeline>(server.url, 'GET', `/api/fuel/timeline?from=${from}&to=${to}`, { token });
  expect(res.status).toBe(200);
  return res.body;
}

describe('fuel timeline', () => {
  it('has 92, 96 and 100 steps on DST days and takes logged_at in its own offset', async () => {
    // A meal logged in New York time on a past Berlin day: 08:00-05:00 is 14:00 in Berlin.
    const res = await call(server.url, 'POST', '/api/nutrition', {
      token,
      body: {
        date: '2026-03-28',
        items: [{ name: 'Rice', carbs: 80, logged_at: '2026-03-28T08:00:00-05:00', absorptionType: 'FAST' }],
      },
    });
    expect(res.status).toBe(201);
    await settled();

    const spring = await timeline('2026-03-28', '2026-03-30');
    expect(spring.points).toHaveLength(96 + 92 + 96);
    expect(spring.capacity).toEqual({ liverG: 100, muscleG: 420 });
    expect(spring.meals).toEqual([
      { at: '2026-03-28T14:00:00+01:00', name: 'Rice', carbsG: 80, absorptionType: 'FAST', source: 'logged' },
    ]);
    const before = spring.points.find((point) => point.at === '2026-03-28T14:00:00+01:00');
    const after = spring.points.find((point) => point.at === '2026-03-28T15:30:00+01:00');
    // Nothing rises before the meal; 80 g FAST is all taken up within 90 minutes, less 15 g of resting use (10 g/h).
    expect((after?.totalG ?? 0) + (after?.gutG ?? 0) - (before?.totalG ?? 0) - (before?.gutG ?? 0)).toBeCloseTo(
      80 - 15,
      1,
    );
    expect(spring.points.at(-1)?.at).toBe('2026-03-31T00:00:00+02:00');
    for (const point of spring.points) {
      expect(point.percent).toBeGreaterThanOrEqual(0);
      expect(point.percent).toBeLessThanOrEqual(100);
    }
    // The next past day had no food logged: taken as balanced, and said so.
    expect(spring.assumptions).toContain(
      '2026-03-29: no food logged, taken as balanced (resting use covered; recorded workouts drain and are refilled after).',
    );
    expect(spring.incompleteLogDates).toEqual([]);

    const autumn = await timeline('2026-10-24', '2026-10-26');
    expect(autumn.points).toHaveLength(96 + 100 + 96);
  });

  it('refuses a range over 14 days', async () => {
    const res = await call(server.url, 'GET', '/api/fuel/timeline?from=2026-03-01&to=2026-03-15', { token });
    expect(res.status).toBe(400);
  });
});

describe('recorded workouts in the chain', () => {
  let rider: User;
  let riderToken: string;
  const today = () => localDateOf(new Date(), ZONE);

  beforeAll(async () => {
    rider = await makeUser(server.db, { timeZone: ZONE });
    riderToken = (await mintToken(server.db, rider, { scopes: ['nutrition:read', 'nutrition:write', 'profile:write'] }))
      .token;
    // Worked example F on a past day without food: 180 W average, NP 200 (IF 0.8), moving 2 h of 2 h 30 min.
    const quiet = addDays(today(), -3);
    await seedWorkout(server.db, rider, {
      name: 'Café ride',
      startTime: new Date(zonedTimeMs(quiet, '09:00', ZONE)),
      localDate: quiet,
      elapsedSecs: 9000,
      movingSecs: 7200,
      avgPower: 180,
      normalizedPower: 200,
    });
    // Six hours at 250 W after 40 g of toast: more than the stores hold.
    const epic = addDays(today(), -2);
    await seedWorkout(server.db, rider, {
      name: 'Epic',
      startTime: new Date(zonedTimeMs(epic, '08:00', ZONE)),
      localDate: epic,
      elapsedSecs: 6 * 3600,
      movingSecs: 6 * 3600,
      avgPower: 250,
      normalizedPower: 250,
    });
    const toast = { name: 'Toast', carbs: 40, logged_at: new Date(zonedTimeMs(epic, '07:00', ZONE)).toISOString() };
    expect(
      (await call(server.url, 'POST', '/api/nutrition', { token: riderToken, body: { date: epic, items: [toast] } }))
        .status,
    ).toBe(201);
    // The profile change recomputes the whole chain.
    expect(
      (await call(server.url, 'PATCH', '/api/profile', { token: riderToken, body: { weight: 70, ftp: 250 } })).status,
    ).toBe(200);
    await waitForRecompute(server.db, rider.id);
  });

  async function riderTimeline(date: string): Promise<FuelTimeline> {
    const res = await call<FuelTimeline>(server.url, 'GET', `/api/fuel/timeline?from=${date}&to=${date}`, {
      token: riderToken,
    });
    expect(res.status).toBe(200);
    return res.body;
  }

  it('draws a past day’s ride without food logged, stops at rest, then the assumed refill (worked examples F, G)', async () => {
    const day = await riderTimeline(addDays(today(), -3));
    const at = (clock: string) => day.points.find((point) => point.at.slice(11, 16) === clock);
    // The days before are balanced and empty of workouts: the chain's start state, 80 g and 336 g.
    expect(at('09:00')).toMatchObject({ liverG: 80, muscleG: 336 });
    // The ride's own drain: 58.05 g from the liver, 174.15 g from muscle, nothing at rest (the day is balanced).
    expect(at('11:30')?.liverG).toBeCloseTo(21.95, 2);
    expect(at('11:30')?.muscleG).toBeCloseTo(161.85, 2);
    expect(day.points.at(-1)?.liverG).toBeCloseTo(91.61, 1);
    expect(day.points.at(-1)?.muscleG).toBeCloseTo(324.39, 1);
    expect(day.incompleteLogDates).toEqual([]);
  });

  it('holds the stores at their floors and marks the day when the log cannot fuel a recorded ride', async () => {
    const date = addDays(today(), -2);
    const day = await riderTimeline(date);
    expect(day.incompleteLogDates).toEqual([date]);
    expect(day.assumptions.some((line) => line.includes('"Epic"') && line.includes('the log is incomplete'))).toBe(
      true,
    );
    const lowest = Math.min(...day.points.map((point) => point.muscleG));
    expect(lowest).toBe(105);
    for (const point of day.points) expect(point.liverG).toBeGreaterThanOrEqual(0);
  });

  it('shows a smaller capacity at once, never above 100 %, before any recompute', async () => {
    const date = addDays(today(), -3);
    const before = await riderTimeline(date);
    expect(Math.max(...before.points.map((point) => point.muscleG))).toBeGreaterThan(5 * 60);
    // A lighter rider (50 kg: muscle 300 g) without a recompute: the stored days were drawn for 70 kg.
    await server.db.updateTable('users').set({ weightKg: 50 }).where('id', '=', rider.id).execute();
    const after = await riderTimeline(date);
    expect(after.capacity).toEqual({ liverG: 100, muscleG: 300 });
    for (const point of after.points) {
      expect(point.muscleG).toBeLessThanOrEqual(300);
      expect(point.percent).toBeLessThanOrEqual(100);
    }
  });
});

describe('usual intake', () => {
  let eater: User;
  let eaterToken: string;
  let ride: PlannedWorkout;
  const today = () => localDateOf(new Date(), ZONE);
  const tomorrow = () => addDays(today(), 1);
  const atLocal = (date: string, time: string) => formatInZone(zonedTimeMs(date, time, ZONE), ZONE);

  async function eaterTimeline(from: string, to: string): Promise<FuelTimeline> {
    const res = await call<FuelTimeline>(server.url, 'GET', `/api/fuel/timeline?from=${from}&to=${to}`, {
      token: eaterToken,
    });
    expect(res.status).toBe(200);
    return res.body;
  }

  beforeAll(async () => {
    eater = await makeUser(server.db, { timeZone: ZONE });
    eaterToken = (
      await mintToken(server.db, eater, {
        scopes: ['nutrition:read', 'nutrition:write', 'planning:read', 'planning:write', 'profile:write'],
      })
    ).token;
    expect(
      (await call(server.url, 'PATCH', '/api/profile', { token: eaterToken, body: { weight: 70, ftp: 250 } })).status,
    ).toBe(200);
    // Three logged days: breakfast 07:00/07:30/08:00, lunch 12:00/12:30/13:00, dinner 18:30/19:00/19:30; medians
    // 07:30 70 g BALANCED, 12:30 95 g BALANCED, 19:00 120 g DENSE.
    const days: [number, string, number, string, number, string, number][] = [
      [-3, '07:00', 60, '12:00', 90, '18:30', 120],
      [-2, '07:30', 80, '12:30', 100, '19:00', 110],
      [-1, '08:00', 70, '13:00', 95, '19:30', 130],
    ];
    for (const [offset, breakfastAt, breakfastG, lunchAt, lunchG, dinnerAt, dinnerG] of days) {
      const date = addDays(today(), offset);
      const items = [
        { name: 'Oats', carbs: breakfastG, meal: 'BREAKFAST', logged_at: atLocal(date, breakfastAt) },
        { name: 'Sandwich', carbs: lunchG, meal: 'LUNCH', logged_at: atLocal(date, lunchAt) },
        { name: 'Pasta', carbs: dinnerG, meal: 'DINNER', logged_at: atLocal(date, dinnerAt), absorptionType: 'DENSE' },
      ];
      expect(
        (await call(server.url, 'POST', '/api/nutrition', { token: eaterToken, body: { date, items } })).status,
      ).toBe(201);
    }
    // Tomorrow: lunch planned (it replaces the usual lunch) and a ride in the afternoon.
    const lunch = {
      name: 'Rice',
      carbs: 50,
      meal: 'LUNCH',
      logged_at: atLocal(tomorrow(), '12:00'),
      absorptionType: 'FAST',
      planned: true,
    };
    expect(
      (
        await call(server.url, 'POST', '/api/nutrition', {
          token: eaterToken,
          body: { date: tomorrow(), items: [lunch] },
        })
      ).status,
    ).toBe(201);
    const created = await call<PlannedWorkout>(server.url, 'POST', '/api/planned-workouts', {
      token: eaterToken,
      body: {
        date: tomorrow(),
        timeOfDay: '15:00',
        sport: 'ride',
        title: 'Tempo',
        durationSecs: 5400,
        trainingStress: 100,
      },
    });
    expect(created.status).toBe(201);
    ride = created.body;
    await waitForRecompute(server.db, eater.id);
  });

  it('assumes the usual meals where nothing is logged or planned, the planned lunch replacing the usual one', async () => {
    const day = await eaterTimeline(tomorrow(), tomorrow());
    expect(day.meals).toEqual([
      {
        at: atLocal(tomorrow(), '07:30'),
        name: 'Usual breakfast',
        carbsG: 70,
        absorptionType: 'BALANCED',
        source: 'assumed',
      },
      { at: atLocal(tomorrow(), '12:00'), name: 'Rice', carbsG: 50, absorptionType: 'FAST', source: 'planned' },
      {
        at: atLocal(tomorrow(), '19:00'),
        name: 'Usual dinner',
        carbsG: 120,
        absorptionType: 'DENSE',
        source: 'assumed',
      },
    ]);
    // The assumed breakfast is eaten by the model: the stores and gut rise over its three hours (without it the
    // liver alone would give 12 × 1.125 g at rest).
    const point = (clock: string) => day.points.find((candidate) => candidate.at.slice(11, 16) === clock);
    const stock = (clock: string) => (point(clock)?.totalG ?? 0) + (point(clock)?.gutG ?? 0);
    expect(stock('10:30') - stock('07:30')).toBeGreaterThan(30);
    expect(day.assumptions.some((line) => line.startsWith(`${tomorrow()}: usual meals assumed`))).toBe(true);

    // The day after: all three usual meals.
    const after = await eaterTimeline(addDays(tomorrow(), 1), addDays(tomorrow(), 1));
    expect(after.meals.map((meal) => [meal.at.slice(11, 16), meal.carbsG, meal.source])).toEqual([
      ['07:30', 70, 'assumed'],
      ['12:30', 95, 'assumed'],
      ['19:00', 120, 'assumed'],
    ]);
    // Today: only after now (as of the last recompute, a moment ago).
    const now = Date.now();
    for (const meal of (await eaterTimeline(today(), today())).meals.filter(
      (candidate) => candidate.source === 'assumed',
    )) {
      expect(Date.parse(meal.at)).toBeGreaterThan(now - 60_000);
    }
  });

  it('judges the planned ride with the assumed meals, the timeline as the endpoint', async () => {
    const fuel = await call<PlannedWorkoutFuel>(server.url, 'GET', `/api/planned-workouts/${ride.id}/fuel`, {
      token: eaterToken,
    });
    expect(fuel.status).toBe(200);
    expect(fuel.body.status).not.toBe('not_logged');
    const day = await eaterTimeline(tomorrow(), tomorrow());
    expect(day.workouts).toMatchObject([
      { kind: 'planned', id: ride.id, fuelStatus: fuel.body.status, limitingStore: fuel.body.limitingStore },
    ]);
  });

  it('shows a lighter rider (70 → 64 kg) within 100 % at once, before any recompute', async () => {
    const from = addDays(today(), -1);
    const before = await eaterTimeline(from, tomorrow());
    expect(Math.max(...before.points.map((point) => point.muscleG))).toBeGreaterThan(6 * 64);
    await server.db.updateTable('users').set({ weightKg: 64 }).where('id', '=', eater.id).execute();
    const after = await eaterTimeline(from, tomorrow());
    expect(after.capacity).toEqual({ liverG: 100, muscleG: 384 });
    for (const point of after.points) {
      expect(point.muscleG).toBeLessThanOrEqual(384);
      expect(point.percent).toBeLessThanOrEqual(100);
    }
    const fuel = await call<PlannedWorkoutFuel>(server.url, 'GET', `/api/planned-workouts/${ride.id}/fuel`, {
      token: eaterToken,
    });
    for (const level of [fuel.body.start, fuel.body.minimum, fuel.body.end]) {
      expect(level.percent).toBeLessThanOrEqual(100);
      expect(level.muscleG).toBeLessThanOrEqual(384);
    }
  });

  it('moves an assumed meal inside a planned ride to its end, and counts it nowhere as in-ride food', async () => {
    // In 3 days a 2 h ride from 12:00 covers the usual 12:30 lunch (95 g): the athlete eats it at 14:00.
    const date = addDays(today(), 3);
    const created = await call<PlannedWorkout>(server.url, 'POST', '/api/planned-workouts', {
      token: eaterToken,
      body: { date, timeOfDay: '12:00', sport: 'ride', title: 'Lunch ride', durationSecs: 7200, trainingStress: 120 },
    });
    expect(created.status).toBe(201);
    await waitForRecompute(server.db, eater.id);
    const day = await eaterTimeline(date, date);
    // The stored assumed meals are the moved ones: the timeline shows the lunch where the model eats it.
    expect(day.meals.map((meal) => [meal.at.slice(11, 16), meal.carbsG, meal.source])).toEqual([
      ['07:30', 70, 'assumed'],
      ['14:00', 95, 'assumed'],
      ['19:00', 120, 'assumed'],
    ]);
    expect(day.assumptions.find((line) => line.startsWith(`${date}: usual meals assumed`))).toContain(
      'lunch 14:00 95 g',
    );
    const fuel = await call<PlannedWorkoutFuel>(server.url, 'GET', `/api/planned-workouts/${created.body.id}/fuel`, {
      token: eaterToken,
    });
    expect(fuel.status).toBe(200);
    const during = fuel.body.plan.find((line) => line.phase === 'during')?.text ?? '';
    // 2 h at IF sqrt(120 / 200) = 0.77: 45 g/h, 15 g at minutes 20, 40, ..., 100, none covered by the lunch.
    expect(during).toMatch(/^During: 45 g\/h from /);
    expect(during).not.toContain('logged');
    expect(
      fuel.body.advice.filter((item) => item.phase === 'during').map((item) => [item.at.slice(11, 16), item.carbsG]),
    ).toEqual([
      ['12:20', 15],
      ['12:40', 15],
      ['13:00', 15],
      ['13:20', 15],
      ['13:40', 15],
    ]);
  });
});

describe('planned workout fuel', () => {
  it('advises what to eat, and eating exactly that makes the workout ready', async () => {
    const tomorrow = addDays(localDateOf(new Date(), ZONE), 1);
    const created = await call<PlannedWorkout>(server.url, 'POST', '/api/planned-workouts', {
      token,
      body: {
        date: tomorrow,
        timeOfDay: '10:00',
        sport: 'ride',
        title: 'Long ride',
        durationSecs: 3 * 3600,
        trainingStress: 192,
      },
    });
    expect(created.status).toBe(201);
    await settled();

    // No usual intake (one logged day, months ago) and nothing logged or planned before the ride: no status from a
    // missing log, and only the in-ride part of the advice.
    const unlogged = await call<PlannedWorkoutFuel>(
      server.url,
      'GET',
      `/api/planned-workouts/${created.body.id}/fuel`,
      { token },
    );
    expect(unlogged.status).toBe(200);
    expect(unlogged.body).toMatchObject({ status: 'not_logged', limitingStore: null });
    for (const item of unlogged.body.advice) expect(item.phase).toBe('during');
    const unloggedDay = await timeline(tomorrow, tomorrow);
    expect(unloggedDay.workouts).toMatchObject([
      { id: created.body.id, fuelStatus: 'not_logged', limitingStore: null },
    ]);

    // A small breakfast planned for the day: the stores are judged again.
    const breakfast = {
      name: 'Toast',
      carbs: 30,
      meal: 'BREAKFAST',
      logged_at: formatInZone(zonedTimeMs(tomorrow, '07:00', ZONE), ZONE),
      absorptionType: 'FAST',
      planned: true,
    };
    expect(
      (await call(server.url, 'POST', '/api/nutrition', { token, body: { date: tomorrow, items: [breakfast] } }))
        .status,
    ).toBe(201);
    await settled();
    const first = await call<PlannedWorkoutFuel>(server.url, 'GET', `/api/planned-workouts/${created.body.id}/fuel`, {
      token,
    });
    expect(first.status).toBe(200);
    expect(first.body.status).not.toBe('ready');
    expect(first.body.limitingStore).not.toBeNull();
    expect(first.body.advice.length).toBeGreaterThan(0);
    expect(first.body.minimum.percent).toBeLessThanOrEqual(first.body.end.percent);
    // Each item's phase is its time against the ride (10:00–13:00 Berlin); reasons are a few words.
    const rideStart = zonedTimeMs(tomorrow, '10:00', ZONE);
    for (const item of first.body.advice) {
      const atMs = Date.parse(item.at);
      expect(item.phase).toBe(atMs < rideStart ? 'before' : 'during');
      expect(item.reason.length).toBeLessThanOrEqual(40);
    }
    // 3 h at IF 0.8 (stress 192): 2.5 g/kg (175 g) in the 4 h before, less the 30 g breakfast planned at 07:00,
    // more than 1 g/kg short, so a meal of 145 g at 07:00; 90 g/h of glucose + fructose from 10:20.
    expect(first.body.advice[0]).toMatchObject({
      at: `${tomorrow}T07:00:00+01:00`,
      phase: 'before',
      carbsG: 145,
      absorptionType: 'BALANCED',
    });
    const during = first.body.advice.filter((item) => item.phase === 'during');
    expect(during[0]?.at).toBe(`${tomorrow}T10:20:00+01:00`);
    expect(during.every((item) => item.carbsG === 30 && item.absorptionType === 'RAPID')).toBe(true);
    // The short plan: a line each for before, during and after, in the athlete's clock.
    expect(first.body.plan.map((line) => line.phase)).toEqual(['before', 'during', 'after']);
    expect(first.body.plan[0]?.text).toContain('145 g of carbohydrate at 07:00');
    expect(first.body.plan[1]?.text).toMatch(/^During: 90 g\/h from 10:20, 30 g every 20 min .*glucose \+ fructose/);
    expect(first.body.start.liverG + first.body.start.muscleG).toBeCloseTo(first.body.start.totalG, 1);

    // The timeline judges the workout as the endpoint does.
    expect((await timeline(tomorrow, tomorrow)).workouts).toMatchObject([
      { id: created.body.id, fuelStatus: first.body.status, limitingStore: first.body.limitingStore },
    ]);

    // Log exactly the advised items, each on its own local date (the breakfast stays: the app sends its whole day).
    const byDate = new Map<string, Record<string, unknown>[]>([[tomorrow, [breakfast]]]);
    for (const item of first.body.advice) {
      const date = item.at.slice(0, 10);
      byDate.set(date, [
        ...(byDate.get(date) ?? []),
        {
          name: `${item.absorptionType} carbs`,
          carbs: item.carbsG,
          logged_at: item.at,
          absorptionType: item.absorptionType,
        },
      ]);
    }
    for (const [date, items] of byDate) {
      expect([200, 201]).toContain(
        (await call(server.url, 'POST', '/api/nutrition', { token, body: { date, items } })).status,
      );
    }
    await settled();

    const again = await call<PlannedWorkoutFuel>(server.url, 'GET', `/api/planned-workouts/${created.body.id}/fuel`, {
      token,
    });
    expect(again.body.status).toBe('ready');
    expect(again.body.limitingStore).toBeNull();
    expect(again.body.advice).toEqual([]);
    expect(again.body.start.muscleG).toBeGreaterThanOrEqual(0.7 * 420);
    // Still a plan, now saying that what is logged covers it.
    expect(again.body.plan.map((line) => line.phase)).toEqual(['before', 'during', 'after']);
    expect(again.body.plan[1]?.text).toMatch(
      /^During: 90 g\/h; the \d+ g logged or planned in the workout count and cover it\.$/,
    );

    const day = await timeline(tomorrow, tomorrow);
    expect(day.workouts).toMatchObject([
      { kind: 'planned', id: created.body.id, title: 'Long ride', fuelStatus: 'ready', limitingStore: null },
    ]);
  });

  it('is not_logged for a new athlete with no food at all, never at_risk, and suggests no fuel advice', async () => {
    const newcomer = await makeUser(server.db, { timeZone: ZONE });
    const newcomerToken = (
      await mintToken(server.db, newcomer, {
        scopes: ['nutrition:read', 'planning:read', 'planning:write', 'recommendations:read'],
      })
    ).token;
    const tomorrow = addDays(localDateOf(new Date(), ZONE), 1);
    const created = await call<PlannedWorkout>(server.url, 'POST', '/api/planned-workouts', {
      token: newcomerToken,
      body: {
        date: tomorrow,
        timeOfDay: '09:00',
        sport: 'ride',
        title: 'First ride',
        durationSecs: 3 * 3600,
        trainingStress: 200,
      },
    });
    expect(created.status).toBe(201);
    await waitForRecompute(server.db, newcomer.id);

    const fuel = await call<PlannedWorkoutFuel>(server.url, 'GET', `/api/planned-workouts/${created.body.id}/fuel`, {
      token: newcomerToken,
    });
    expect(fuel.status).toBe(200);
    expect(fuel.body).toMatchObject({ status: 'not_logged', limitingStore: null });
    expect(fuel.body.advice.filter((item) => item.phase !== 'during')).toEqual([]);
    expect(fuel.body.assumptions.some((line) => line.includes('log or plan meals for a fuel status'))).toBe(true);
    const day = await call<FuelTimeline>(server.url, 'GET', `/api/fuel/timeline?from=${tomorrow}&to=${tomorrow}`, {
      token: newcomerToken,
    });
    expect(day.body.meals).toEqual([]);
    expect(day.body.workouts).toMatchObject([{ id: created.body.id, fuelStatus: 'not_logged', limitingStore: null }]);
    const open = await call<{ items: { kind: string }[] }>(server.url, 'GET', '/api/recommendations', {
      token: newcomerToken,
    });
    expect(open.status).toBe(200);
    expect(open.body.items.filter((item) => item.kind === 'fuel_advice')).toEqual([]);
  });

  it('is not found for another user', async () => {
    const other = await makeUser(server.db);
    const otherToken = (await mintToken(server.db, other, { scopes: ['planning:write', 'planning:read'] })).token;
    const created = await call<PlannedWorkout>(server.url, 'POST', '/api/planned-workouts', {
      token: otherToken,
      body: { date: '2030-01-01', sport: 'run', title: 'Theirs', durationSecs: 1800 },
    });
    const res = await call(server.url, 'GET', `/api/planned-workouts/${created.body.id}/fuel`, { token });
    expect(res.status).toBe(404);
  });
});

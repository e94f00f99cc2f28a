/**
 * The glycogen (fuel) chain as stored and served: the timeline honours
 * `logged_at` offsets and days of 23 and 25 hours, and a planned workout's
 * advice, eaten as advised, makes it `ready` (docs/science.md's promise).
 */
import type { FuelTimeline, PlannedWorkout, PlannedWorkoutFuel } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { addDays, localDateOf } from '../../server/src/lib/dates.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { waitForRecompute } from '../support/recompute.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

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
      { at: '2026-03-28T14:00:00+01:00', name: 'Rice', carbsG: 80, absorptionType: 'FAST' },
    ]);
    const before = spring.points.find((point) => point.at === '2026-03-28T14:00:00+01:00');
    const after = spring.points.find((point) => point.at === '2026-03-28T15:30:00+01:00');
    // Nothing rises before the meal; 80 g FAST is all taken up within 90 minutes (minus 6 g of resting use).
    expect((after?.totalG ?? 0) + (after?.gutG ?? 0) - (before?.totalG ?? 0) - (before?.gutG ?? 0)).toBeCloseTo(
      80 - 6,
      1,
    );
    expect(spring.points.at(-1)?.at).toBe('2026-03-31T00:00:00+02:00');
    for (const point of spring.points) {
      expect(point.percent).toBeGreaterThanOrEqual(0);
      expect(point.percent).toBeLessThanOrEqual(100);
    }
    // The next past day had no food logged: taken as balanced, and said so.
    expect(spring.assumptions).toContain(
      '2026-03-29: no food logged, taken as balanced (the day ends where it started).',
    );

    const autumn = await timeline('2026-10-24', '2026-10-26');
    expect(autumn.points).toHaveLength(96 + 100 + 96);
  });

  it('refuses a range over 14 days', async () => {
    const res = await call(server.url, 'GET', '/api/fuel/timeline?from=2026-03-01&to=2026-03-15', { token });
    expect(res.status).toBe(400);
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

    const first = await call<PlannedWorkoutFuel>(server.url, 'GET', `/api/planned-workouts/${created.body.id}/fuel`, {
      token,
    });
    expect(first.status).toBe(200);
    expect(first.body.status).not.toBe('ready');
    expect(first.body.advice.length).toBeGreaterThan(0);
    expect(first.body.start.percent < 70 || first.body.minimum.percent < 20).toBe(true);
    expect(first.body.minimum.percent).toBeLessThanOrEqual(first.body.end.percent);

    // Log exactly the advised items, each on its own local date.
    const byDate = new Map<string, { name: string; carbs: number; logged_at: string; absorptionType: string }[]>();
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
      expect((await call(server.url, 'POST', '/api/nutrition', { token, body: { date, items } })).status).toBe(201);
    }
    await settled();

    const again = await call<PlannedWorkoutFuel>(server.url, 'GET', `/api/planned-workouts/${created.body.id}/fuel`, {
      token,
    });
    expect(again.body.status).toBe('ready');
    expect(again.body.advice).toEqual([]);
    expect(again.body.start.percent).toBeGreaterThanOrEqual(70);
    expect(again.body.minimum.percent).toBeGreaterThanOrEqual(20);

    const day = await timeline(tomorrow, tomorrow);
    expect(day.workouts).toMatchObject([{ kind: 'planned', id: created.body.id, title: 'Long ride' }]);
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

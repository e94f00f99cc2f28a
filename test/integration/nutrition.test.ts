import { createPacerClient, type NutritionDay, type NutritionLog } from '@pacer/client-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OauthClient, User } from '../../server/src/db/tables.ts';
import { makeApp, makeUser, mintToken } from '../support/factories.ts';
import { asProblem, call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
let athlete: User;
let token: string;
let watchApp: OauthClient;
let watchToken: string;

beforeAll(async () => {
  server = await startTestServer();
  athlete = await makeUser(server.db, { timeZone: 'Europe/Berlin' });
  token = (await mintToken(server.db, athlete, { scopes: ['nutrition:read', 'nutrition:write'] })).token;
  watchApp = await makeApp(server.db, athlete, 'Food diary');
  watchToken = (await mintToken(server.db, athlete, { scopes: ['nutrition:write'], client: watchApp })).token;
});
afterAll(async () => {
  await server.stop();
});

const sdk = () => createPacerClient({ baseUrl: server.url, accessToken: token });

const gel = { name: 'Gel', carbs: 25, logged_at: '2026-11-20T09:30:00+01:00', absorptionType: 'RAPID' as const };
const oats = {
  name: 'Porridge',
  carbs: 60,
  protein: 12,
  fat: 8,
  fiber: 6,
  sugar: 10,
  calories: 360,
  waterMl: 250,
  quantity: 1,
  meal: 'BREAKFAST' as const,
  logged_at: '2026-11-20T07:15:00+01:00',
};

describe('POST /api/nutrition', () => {
  it("creates this app's log with 201 and every item field, defaulting absorptionType to BALANCED", async () => {
    const res = await sdk().nutrition.upsertNutrition({
      body: { date: '2026-11-20', items: [oats, gel], rawJson: { v: 1 } },
    });
    expect(res.status).toBe(201);
    if (res.status !== 201) throw new Error('unreachable');
    expect(res.body.items).toHaveLength(2);
    expect(res.body.items[0]).toMatchObject({
      ...oats,
      absorptionType: 'BALANCED',
      logged_at: '2026-11-20T07:15:00.000+01:00',
    });
    expect(res.body.items[1]).toMatchObject({
      name: 'Gel',
      absorptionType: 'RAPID',
      logged_at: '2026-11-20T09:30:00.000+01:00',
    });
    expect(res.body.totals).toEqual({ calories: 360, carbs: 85, protein: 12, fat: 8, waterMl: 250 });
    expect(res.body.rawJson).toEqual({ v: 1 });
  });

  it("replaces only the calling app's items for the date", async () => {
    await call(server.url, 'POST', '/api/nutrition', {
      token: watchToken,
      body: {
        date: '2026-11-20',
        items: [{ name: 'Banana', carbs: 27, logged_at: '2026-11-20T11:00:00+01:00', absorptionType: 'FAST' }],
      },
    });
    const replaced = await call<NutritionLog>(server.url, 'POST', '/api/nutrition', {
      token,
      body: { date: '2026-11-20', items: [gel] },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.items.map((item) => item.name)).toEqual(['Gel']);
    expect(replaced.body.rawJson).toEqual({ v: 1 });

    const list = await sdk().nutrition.listNutrition({ query: { from: '2026-11-20', to: '2026-11-20' } });
    if (list.status !== 200) throw new Error('list failed');
    const [day] = list.body.items;
    expect(day?.items.map((item) => [item.name, item.source])).toEqual([
      ['Gel', replaced.body.source],
      ['Banana', watchApp.clientId],
    ]);
    expect(day?.totals.carbs).toBe(52);
    expect(day?.sources.map((source) => source.source).sort()).toEqual(
      [replaced.body.source, watchApp.clientId].sort(),
    );
  });

  it("an empty item list clears the app's items and keeps the day's other apps", async () => {
    await call(server.url, 'POST', '/api/nutrition', { token, body: { date: '2026-11-20', items: [] } });
    const list = await call<{ items: NutritionDay[] }>(
      server.url,
      'GET',
      '/api/nutrition?from=2026-11-20&to=2026-11-20',
      { token },
    );
    expect(list.body.items[0]?.items.map((item) => item.name)).toEqual(['Banana']);
  });

  it('sending the same data twice creates no duplicate', async () => {
    const body = { date: '2026-11-18', items: [gel, oats] };
    expect((await call(server.url, 'POST', '/api/nutrition', { token, body })).status).toBe(201);
    expect((await call(server.url, 'POST', '/api/nutrition', { token, body })).status).toBe(200);
    const list = await call<{ items: NutritionDay[] }>(
      server.url,
      'GET',
      '/api/nutrition?from=2026-11-18&to=2026-11-18',
      { token },
    );
    expect(list.body.items[0]?.items).toHaveLength(2);
  });

  it('takes the date from a timestamp in its own offset, or in the profile zone for Z', async () => {
    const offset = await call<NutritionLog>(server.url, 'POST', '/api/nutrition', {
      token,
      body: { date: '2026-11-15T23:30:00-05:00', items: [] },
    });
    expect(offset.body.date).toBe('2026-11-15');
    // 23:30Z is 00:30 the next day in Berlin.
    const utc = await call<NutritionLog>(server.url, 'POST', '/api/nutrition', {
      token,
      body: { date: '2026-11-16T23:30:00Z', items: [] },
    });
    expect(utc.body.date).toBe('2026-11-17');
  });

  it.each([
    ['a logged_at without offset', { ...gel, logged_at: '2026-11-20T09:30:00' }, 'items.0.logged_at'],
    ['a missing logged_at', { name: 'Gel', carbs: 20 }, 'items.0.logged_at'],
    ['an unknown absorptionType', { ...gel, absorptionType: 'SLOW' }, 'items.0.absorptionType'],
    ['an unknown meal', { ...gel, meal: 'BRUNCH' }, 'items.0.meal'],
    ['negative carbs', { ...gel, carbs: -1 }, 'items.0.carbs'],
    ['an empty name', { ...gel, name: '' }, 'items.0.name'],
    ['an unknown item key', { ...gel, glycemicIndex: 80 }, 'items.0.glycemicIndex'],
  ])('refuses %s with 400 naming the field', async (_label, item, path) => {
    const res = await call(server.url, 'POST', '/api/nutrition', {
      token,
      body: { date: '2026-11-21', items: [item] },
    });
    expect(res.status).toBe(400);
    expect(asProblem(res.body).errors?.map((error) => error.path)).toContain(path);
  });

  it('refuses more than 200 items, a missing items list and a bad date', async () => {
    const many = await call(server.url, 'POST', '/api/nutrition', {
      token,
      body: { date: '2026-11-21', items: Array.from({ length: 201 }, () => gel) },
    });
    expect(many.status).toBe(400);
    expect(asProblem(many.body).errors?.[0]?.path).toBe('items');
    const missing = await call(server.url, 'POST', '/api/nutrition', { token, body: { date: '2026-11-21' } });
    expect(asProblem(missing.body).errors?.map((error) => error.path)).toEqual(['items']);
    const badDate = await call(server.url, 'POST', '/api/nutrition', {
      token,
      body: { date: '21.11.2026', items: [] },
    });
    expect(asProblem(badDate.body).errors?.map((error) => error.path)).toEqual(['date']);
    const list = await call<{ items: NutritionDay[] }>(
      server.url,
      'GET',
      '/api/nutrition?from=2026-11-21&to=2026-11-21',
      { token },
    );
    expect(list.body.items).toEqual([]);
  });

  it('a failed replace leaves the stored items as they were', async () => {
    await call(server.url, 'POST', '/api/nutrition', { token, body: { date: '2026-11-12', items: [gel] } });
    const bad = await call(server.url, 'POST', '/api/nutrition', {
      token,
      body: { date: '2026-11-12', items: [oats, { ...gel, carbs: 'lots' }] },
    });
    expect(bad.status).toBe(400);
    const list = await call<{ items: NutritionDay[] }>(
      server.url,
      'GET',
      '/api/nutrition?from=2026-11-12&to=2026-11-12',
      { token },
    );
    expect(list.body.items[0]?.items.map((item) => item.name)).toEqual(['Gel']);
  });
});

describe('planned items', () => {
  it('are stored and listed as planned, left out of the totals, and counted once sent again as eaten', async () => {
    const dinner = {
      name: 'Rice and chicken',
      carbs: 110,
      protein: 40,
      calories: 700,
      meal: 'DINNER' as const,
      logged_at: '2026-11-22T19:00:00+01:00',
      planned: true,
    };
    const planned = await sdk().nutrition.upsertNutrition({ body: { date: '2026-11-22', items: [oats, dinner] } });
    expect(planned.status).toBe(201);
    if (planned.status !== 201) throw new Error('unreachable');
    expect(planned.body.items.map((item) => [item.name, item.planned])).toEqual([
      ['Porridge', false],
      ['Rice and chicken', true],
    ]);
    // Only the porridge was eaten.
    expect(planned.body.totals).toEqual({ calories: 360, carbs: 60, protein: 12, fat: 8, waterMl: 250 });
    const listed = await call<{ items: NutritionDay[] }>(
      server.url,
      'GET',
      '/api/nutrition?from=2026-11-22&to=2026-11-22',
      { token },
    );
    expect(listed.body.items[0]?.items.find((item) => item.name === 'Rice and chicken')?.planned).toBe(true);
    expect(listed.body.items[0]?.totals.carbs).toBe(60);

    // The app confirms the dinner: sent again with planned false (or without the flag), it counts.
    const eaten = await call<NutritionLog>(server.url, 'POST', '/api/nutrition', {
      token,
      body: { date: '2026-11-22', items: [oats, { ...dinner, planned: false }] },
    });
    expect(eaten.status).toBe(200);
    expect(eaten.body.items.every((item) => !item.planned)).toBe(true);
    expect(eaten.body.totals).toEqual({ calories: 1060, carbs: 170, protein: 52, fat: 8, waterMl: 250 });
  });

  it('refuses a planned flag that is not a boolean', async () => {
    const res = await call(server.url, 'POST', '/api/nutrition', {
      token,
      body: { date: '2026-11-22', items: [{ ...gel, planned: 'yes' }] },
    });
    expect(res.status).toBe(400);
  });
});

describe('GET /api/nutrition', () => {
  it('pages merged days oldest first', async () => {
    for (const date of ['2026-10-01', '2026-10-02', '2026-10-03']) {
      await call(server.url, 'POST', '/api/nutrition', {
        token,
        body: { date, items: [{ ...gel, logged_at: `${date}T10:00:00+02:00` }] },
      });
      await call(server.url, 'POST', '/api/nutrition', {
        token: watchToken,
        body: { date, items: [{ ...oats, logged_at: `${date}T08:00:00+02:00` }] },
      });
    }
    const first = await sdk().nutrition.listNutrition({ query: { from: '2026-10-01', to: '2026-10-03', limit: 2 } });
    if (first.status !== 200) throw new Error('list failed');
    expect(first.body.items.map((day) => day.date)).toEqual(['2026-10-01', '2026-10-02']);
    expect(first.body.items[0]?.items.map((item) => item.name)).toEqual(['Porridge', 'Gel']);
    const second = await sdk().nutrition.listNutrition({
      query: { from: '2026-10-01', to: '2026-10-03', limit: 2, cursor: first.body.nextCursor ?? '' },
    });
    if (second.status !== 200) throw new Error('list failed');
    expect(second.body.items.map((day) => day.date)).toEqual(['2026-10-03']);
    expect(second.body.nextCursor).toBeNull();
  });

  it("never shows another user's days", async () => {
    const other = await makeUser(server.db);
    const otherToken = (await mintToken(server.db, other, { scopes: ['nutrition:read', 'nutrition:write'] })).token;
    await call(server.url, 'POST', '/api/nutrition', { token: otherToken, body: { date: '2026-09-09', items: [gel] } });
    const mine = await call<{ items: NutritionDay[] }>(
      server.url,
      'GET',
      '/api/nutrition?from=2026-09-09&to=2026-09-09',
      { token },
    );
    expect(mine.body.items).toEqual([]);
  });

  it('a write-only token cannot read (403 insufficient_scope)', async () => {
    const res = await call(server.url, 'GET', '/api/nutrition', { token: watchToken });
    expect(res.status).toBe(403);
    expect(asProblem(res.body).code).toBe('insufficient_scope');
  });
});

describe('nutrition under concurrency', () => {
  it('20 simultaneous identical upserts of a new date leave one log with one copy of the items', async () => {
    const body = { date: '2026-06-01', items: [gel, oats] };
    const results = await Promise.all(
      Array.from({ length: 20 }, () => call(server.url, 'POST', '/api/nutrition', { token, body })),
    );
    expect(results.filter((res) => res.status === 201)).toHaveLength(1);
    expect(results.filter((res) => res.status === 200)).toHaveLength(19);
    const logs = await server.db
      .selectFrom('nutritionLogs')
      .selectAll()
      .where('userId', '=', athlete.id)
      .where('date', '=', '2026-06-01')
      .execute();
    expect(logs).toHaveLength(1);
    const items = await server.db
      .selectFrom('nutritionItems')
      .selectAll()
      .where('logId', '=', logs[0]?.id ?? '')
      .execute();
    expect(items).toHaveLength(2);
  });

  it('two apps writing the same date at once both keep their items', async () => {
    await Promise.all([
      call(server.url, 'POST', '/api/nutrition', { token, body: { date: '2026-06-02', items: [gel] } }),
      call(server.url, 'POST', '/api/nutrition', { token: watchToken, body: { date: '2026-06-02', items: [oats] } }),
    ]);
    const list = await call<{ items: NutritionDay[] }>(
      server.url,
      'GET',
      '/api/nutrition?from=2026-06-02&to=2026-06-02',
      { token },
    );
    expect(list.body.items[0]?.items.map((item) => item.name).sort()).toEqual(['Gel', 'Porridge']);
  });
});

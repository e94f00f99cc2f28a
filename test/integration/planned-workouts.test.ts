import { randomUUID } from 'node:crypto';
import { createPacerClient } from '@pacer/client-sdk';
import type { PlannedStep, PlannedStructure, PlannedWorkout } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { dayIn } from '../support/dates.ts';
import { makeApp, makeUser, mintToken } from '../support/factories.ts';
import { asProblem, call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const TIME_ZONE = 'America/Los_Angeles';

let server: TestServer;
let athlete: User;
let token: string;
let clientId: string;

beforeAll(async () => {
  server = await startTestServer();
  athlete = await makeUser(server.db, { timeZone: TIME_ZONE });
  const minted = await mintToken(server.db, athlete, { scopes: ['planning:read', 'planning:write'] });
  token = minted.token;
  clientId = minted.clientId;
});
afterAll(async () => {
  await server.stop();
});

const sdk = (accessToken = token) => createPacerClient({ baseUrl: server.url, accessToken });

const sweetSpot: PlannedStructure = {
  steps: [
    {
      type: 'warmup',
      duration: { type: 'time', secs: 900 },
      target: { type: 'power', minPercentFtp: 50, maxPercentFtp: 70 },
      label: 'Spin up',
    },
    {
      type: 'interval',
      repeat: 3,
      label: '3 x 12 min sweet spot',
      steps: [
        {
          type: 'work',
          duration: { type: 'time', secs: 720 },
          target: { type: 'power', minPercentFtp: 88, maxPercentFtp: 94 },
        },
        { type: 'recovery', duration: { type: 'time', secs: 300 }, target: { type: 'heartRateZone', zone: 1 } },
      ],
    },
    {
      type: 'steady',
      duration: { type: 'distance', meters: 5000 },
      target: { type: 'pace', minSecsPerKm: 270, maxSecsPerKm: 300 },
    },
    { type: 'cooldown', duration: { type: 'time', secs: 600 } },
  ],
};

const fullWorkout = {
  date: '2026-12-05',
  timeOfDay: '06:30',
  sport: 'ride',
  title: 'Sweet spot 3 x 12',
  description: 'Stay seated, cadence 85-95.',
  durationSecs: 5400,
  trainingStress: 82.5,
  structure: sweetSpot,
} as const;

async function create(body: Record<string, unknown>, accessToken = token): Promise<PlannedWorkout> {
  const res = await call<PlannedWorkout>(server.url, 'POST', '/api/planned-workouts', { token: accessToken, body });
  if (res.status !== 201) throw new Error(`create answered ${String(res.status)}: ${JSON.stringify(res.body)}`);
  return res.body;
}

describe('POST /api/planned-workouts', () => {
  it('creates a workout with 201 and every field, the structure exactly as sent', async () => {
    const res = await sdk().plannedWorkouts.createPlannedWorkout({ body: fullWorkout });
    expect(res.status).toBe(201);
    if (res.status !== 201) throw new Error('unreachable');
    expect(res.body).toEqual({
      ...fullWorkout,
      id: expect.any(String) as string,
      source: clientId,
      createdAt: expect.any(String) as string,
      updatedAt: expect.any(String) as string,
    });
    const read = await sdk().plannedWorkouts.getPlannedWorkout({ params: { id: res.body.id } });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it('creates a workout from date, sport and title alone; the rest is null', async () => {
    const created = await create({ date: '2026-12-06', sport: 'run', title: 'Easy run' });
    expect(created).toMatchObject({
      timeOfDay: null,
      description: null,
      durationSecs: null,
      trainingStress: null,
      structure: null,
    });
  });

  it('records the calling app as the source', async () => {
    const coach = await makeApp(server.db, athlete, 'Coach app');
    const coachToken = (await mintToken(server.db, athlete, { scopes: ['planning:write'], client: coach })).token;
    const created = await create({ date: '2026-12-07', sport: 'swim', title: 'Drills' }, coachToken);
    expect(created.source).toBe(coach.clientId);
  });

  it("reads a timestamp date in its own offset, and a Z timestamp in the profile's time zone", async () => {
    const withOffset = await create({ date: '2026-12-08T23:30:00+09:00', sport: 'run', title: 'Offset' });
    expect(withOffset.date).toBe('2026-12-08');
    // 05:00Z on the 9th is 21:00 on the 8th in Los Angeles.
    const utc = await create({ date: '2026-12-09T05:00:00Z', sport: 'run', title: 'UTC' });
    expect(utc.date).toBe('2026-12-08');
  });

  it('accepts 100 steps in all, counting interval blocks and their parts, and every target and duration kind', async () => {
    const block: PlannedStep = {
      type: 'interval',
      repeat: 100,
      steps: [
        {
          type: 'work',
          duration: { type: 'distance', meters: 400 },
          target: { type: 'pace', minSecsPerKm: 180, maxSecsPerKm: 180 },
        },
        { type: 'recovery', duration: { type: 'time', secs: 90 } },
        { type: 'steady', duration: { type: 'time', secs: 60 }, target: { type: 'heartRateZone', zone: 2 } },
      ],
    };
    // 24 blocks of 1 + 3 = 96 steps, plus 4 simple steps = 100.
    const steps: PlannedStep[] = [
      ...Array.from({ length: 24 }, () => block),
      ...sweetSpot.steps.filter((step) => step.type !== 'interval'),
      {
        type: 'work',
        duration: { type: 'time', secs: 1200 },
        target: { type: 'power', minPercentFtp: 400, maxPercentFtp: 400 },
      },
    ];
    const created = await create({ date: '2026-12-10', sport: 'run', title: 'Track', structure: { steps } });
    expect(created.structure?.steps).toHaveLength(28);
    expect(created.structure).toEqual({ steps });
  });

  it.each([
    ['title', ''],
    ['title', '   '],
    ['title', 'x'.repeat(201)],
    ['sport', 'cycling'],
    ['sport', null],
    ['date', '2026-02-30'],
    ['date', 'tomorrow'],
    ['timeOfDay', '24:00'],
    ['timeOfDay', '7:30'],
    ['timeOfDay', '07:60'],
    ['timeOfDay', '07:30:00'],
    ['durationSecs', 0],
    ['durationSecs', 86_401],
    ['durationSecs', 3600.5],
    ['trainingStress', -1],
    ['trainingStress', 1000.1],
    ['description', 'x'.repeat(10_001)],
    ['structure', []],
    ['structure', 'warmup then intervals'],
  ])('refuses %s = %j with 400 naming the field and stores nothing', async (field, value) => {
    const body = { date: '2026-11-01', sport: 'ride', title: 'Refused', [field]: value };
    const res = await call(server.url, 'POST', '/api/planned-workouts', { token, body });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = asProblem(res.body);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors?.map((error) => error.path)).toEqual([field]);
    const list = await sdk().plannedWorkouts.listPlannedWorkouts({ query: { from: '2026-11-01', to: '2026-11-01' } });
    expect(list.status === 200 && list.body.items).toEqual([]);
  });

  it.each(['date', 'sport', 'title'])('refuses a body without %s', async (field) => {
    const body: Record<string, unknown> = { date: '2026-11-01', sport: 'ride', title: 'Refused' };
    delete body[field];
    const res = await call(server.url, 'POST', '/api/planned-workouts', { token, body });
    expect(res.status).toBe(400);
    expect(asProblem(res.body).errors?.map((error) => error.path)).toEqual([field]);
  });

  it('refuses unknown keys by name', async () => {
    const res = await call(server.url, 'POST', '/api/planned-workouts', {
      token,
      body: { date: '2026-11-01', sport: 'ride', title: 'x', notes: 'n', plannedDurationSecs: 60 },
    });
    expect(res.status).toBe(400);
    expect(asProblem(res.body).errors?.map((error) => error.path)).toEqual(
      expect.arrayContaining(['notes', 'plannedDurationSecs']),
    );
  });

  const warmup = { type: 'warmup', duration: { type: 'time', secs: 600 } };
  const work = { type: 'work', duration: { type: 'time', secs: 60 } };
  const interval = (steps: unknown[], repeat = 4) => ({ type: 'interval', repeat, steps });
  it.each<[string, unknown, string]>([
    ['no steps', { steps: [] }, 'structure.steps'],
    ['an unknown key in the structure', { steps: [warmup], poolLength: 25 }, 'structure.poolLength'],
    ['an unknown step type', { steps: [{ ...warmup, type: 'sprint' }] }, 'structure.steps.0.type'],
    ['an unknown key in a step', { steps: [{ ...warmup, cadence: 90 }] }, 'structure.steps.0.cadence'],
    ['a step without a duration', { steps: [{ type: 'cooldown' }] }, 'structure.steps.0.duration'],
    [
      'an unknown duration kind',
      { steps: [{ ...warmup, duration: { type: 'laps', laps: 3 } }] },
      'structure.steps.0.duration.type',
    ],
    [
      'a zero-second duration',
      { steps: [{ ...warmup, duration: { type: 'time', secs: 0 } }] },
      'structure.steps.0.duration.secs',
    ],
    [
      'a fractional-second duration',
      { steps: [{ ...warmup, duration: { type: 'time', secs: 1.5 } }] },
      'structure.steps.0.duration.secs',
    ],
    [
      'a step over a day',
      { steps: [{ ...warmup, duration: { type: 'time', secs: 86_401 } }] },
      'structure.steps.0.duration.secs',
    ],
    [
      'a negative distance',
      { steps: [{ ...warmup, duration: { type: 'distance', meters: -5 } }] },
      'structure.steps.0.duration.meters',
    ],
    [
      'seconds on a distance',
      { steps: [{ ...warmup, duration: { type: 'distance', secs: 60 } }] },
      'structure.steps.0.duration.meters',
    ],
    [
      'an unknown target kind',
      { steps: [{ ...warmup, target: { type: 'rpe', value: 7 } }] },
      'structure.steps.0.target.type',
    ],
    [
      'a power range upside down',
      { steps: [{ ...warmup, target: { type: 'power', minPercentFtp: 80, maxPercentFtp: 60 } }] },
      'structure.steps.0.target.maxPercentFtp',
    ],
    [
      'a power target over 400% FTP',
      { steps: [{ ...warmup, target: { type: 'power', minPercentFtp: 300, maxPercentFtp: 450 } }] },
      'structure.steps.0.target.maxPercentFtp',
    ],
    [
      'heart-rate zone 6',
      { steps: [{ ...warmup, target: { type: 'heartRateZone', zone: 6 } }] },
      'structure.steps.0.target.zone',
    ],
    [
      'heart-rate zone 0',
      { steps: [{ ...warmup, target: { type: 'heartRateZone', zone: 0 } }] },
      'structure.steps.0.target.zone',
    ],
    [
      'a pace faster than 1:00/km',
      { steps: [{ ...warmup, target: { type: 'pace', minSecsPerKm: 30, maxSecsPerKm: 300 } }] },
      'structure.steps.0.target.minSecsPerKm',
    ],
    [
      'a pace range upside down',
      { steps: [{ ...warmup, target: { type: 'pace', minSecsPerKm: 300, maxSecsPerKm: 270 } }] },
      'structure.steps.0.target.maxSecsPerKm',
    ],
    ['repeat 0', { steps: [interval([work], 0)] }, 'structure.steps.0.repeat'],
    ['repeat 101', { steps: [interval([work], 101)] }, 'structure.steps.0.repeat'],
    ['an interval without parts', { steps: [interval([])] }, 'structure.steps.0.steps'],
    [
      'an interval with 21 parts',
      { steps: [interval(Array.from({ length: 21 }, () => work))] },
      'structure.steps.0.steps',
    ],
    [
      'an interval inside an interval (depth 3)',
      { steps: [interval([interval([work])])] },
      'structure.steps.0.steps.0.type',
    ],
    ['a warm-up inside an interval', { steps: [interval([warmup])] }, 'structure.steps.0.steps.0.type'],
    ['101 simple steps', { steps: Array.from({ length: 101 }, () => work) }, 'structure.steps'],
    [
      '101 steps in all, counting interval parts',
      { steps: [...Array.from({ length: 20 }, () => interval([work, work, work, work])), work] },
      'structure.steps',
    ],
  ])('refuses a structure with %s, naming the path', async (_case, structure, path) => {
    const res = await call(server.url, 'POST', '/api/planned-workouts', {
      token,
      body: { date: '2026-11-02', sport: 'ride', title: 'Bad structure', structure },
    });
    expect(res.status).toBe(400);
    expect(asProblem(res.body).code).toBe('validation_failed');
    expect(asProblem(res.body).errors?.map((error) => error.path)).toContain(path);
  });

  it('answers a retried create with the same Idempotency-Key with the first workout, storing one', async () => {
    const body = { date: '2026-11-05', sport: 'run', title: 'Retried' };
    const headers = { 'idempotency-key': randomUUID() };
    const first = await call<PlannedWorkout>(server.url, 'POST', '/api/planned-workouts', { token, body, headers });
    const retry = await call<PlannedWorkout>(server.url, 'POST', '/api/planned-workouts', { token, body, headers });
    expect([first.status, retry.status]).toEqual([201, 201]);
    expect(retry.body).toEqual(first.body);
    const list = await sdk().plannedWorkouts.listPlannedWorkouts({ query: { from: '2026-11-05', to: '2026-11-05' } });
    expect(list.status === 200 && list.body.items.map((item) => item.id)).toEqual([first.body.id]);
  });

  it('needs planning:write (403 otherwise) and a token (401)', async () => {
    const reader = (await mintToken(server.db, athlete, { scopes: ['planning:read'] })).token;
    const body = { date: '2026-11-03', sport: 'ride', title: 'Forbidden' };
    const forbidden = await call(server.url, 'POST', '/api/planned-workouts', { token: reader, body });
    expect(forbidden.status).toBe(403);
    expect(asProblem(forbidden.body).code).toBe('insufficient_scope');
    const anonymous = await call(server.url, 'POST', '/api/planned-workouts', { body });
    expect(anonymous.status).toBe(401);
    const list = await sdk().plannedWorkouts.listPlannedWorkouts({ query: { from: '2026-11-03', to: '2026-11-03' } });
    expect(list.status === 200 && list.body.items).toEqual([]);
  });
});

describe('GET /api/planned-workouts/{id}', () => {
  it('answers 404 for an unknown id and 400 naming id for a malformed one', async () => {
    const unknown = await sdk().plannedWorkouts.getPlannedWorkout({ params: { id: randomUUID() } });
    expect(unknown.status).toBe(404);
    expect(asProblem(unknown.body).code).toBe('not_found');
    const malformed = await call(server.url, 'GET', '/api/planned-workouts/not-a-uuid', { token });
    expect(malformed.status).toBe(400);
    expect(asProblem(malformed.body).errors?.map((error) => error.path)).toEqual(['id']);
  });

  it('needs planning:read', async () => {
    const created = await create({ date: '2026-11-04', sport: 'run', title: 'Scoped' });
    const writer = (await mintToken(server.db, athlete, { scopes: ['planning:write'] })).token;
    const res = await call(server.url, 'GET', `/api/planned-workouts/${created.id}`, { token: writer });
    expect(res.status).toBe(403);
    const list = await call(server.url, 'GET', '/api/planned-workouts', { token: writer });
    expect(list.status).toBe(403);
  });
});

describe('PATCH /api/planned-workouts/{id}', () => {
  it('merges top-level fields: present overwrite, null clears, absent keep', async () => {
    const created = await create(fullWorkout);
    const res = await sdk().plannedWorkouts.updatePlannedWorkout({
      params: { id: created.id },
      body: { title: 'Sweet spot 2 x 20', timeOfDay: null, description: null, trainingStress: 90 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...created,
      title: 'Sweet spot 2 x 20',
      timeOfDay: null,
      description: null,
      trainingStress: 90,
      updatedAt: expect.any(String) as string,
    });
    const read = await sdk().plannedWorkouts.getPlannedWorkout({ params: { id: created.id } });
    expect(read.body).toEqual(res.body);
  });

  it('replaces the structure whole, and null removes it', async () => {
    const created = await create(fullWorkout);
    const replacement: PlannedStructure = { steps: [{ type: 'steady', duration: { type: 'time', secs: 3600 } }] };
    const replaced = await call<PlannedWorkout>(server.url, 'PATCH', `/api/planned-workouts/${created.id}`, {
      token,
      body: { structure: replacement },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.structure).toEqual(replacement);
    const removed = await call<PlannedWorkout>(server.url, 'PATCH', `/api/planned-workouts/${created.id}`, {
      token,
      body: { structure: null },
    });
    expect(removed.body.structure).toBeNull();
    expect(removed.body.title).toBe(fullWorkout.title);
  });

  it('moves a workout to another date and sport', async () => {
    const created = await create({ date: '2026-12-11', sport: 'run', title: 'Moved' });
    const res = await call<PlannedWorkout>(server.url, 'PATCH', `/api/planned-workouts/${created.id}`, {
      token,
      body: { date: '2026-12-12T07:00:00-08:00', sport: 'walk' },
    });
    expect(res.body).toMatchObject({ date: '2026-12-12', sport: 'walk' });
  });

  it('answers the unchanged workout for an empty patch', async () => {
    const created = await create({ date: '2026-12-13', sport: 'row', title: 'Untouched' });
    const res = await call(server.url, 'PATCH', `/api/planned-workouts/${created.id}`, { token, body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
  });

  it.each([
    ['date', null],
    ['sport', null],
    ['title', null],
    ['durationSecs', -60],
    ['structure', { steps: [{ type: 'interval', repeat: 2, steps: [] }] }],
  ])('refuses %s = %j and keeps the stored workout', async (field, value) => {
    const created = await create({ date: '2026-12-14', sport: 'ski', title: 'Kept' });
    const res = await call(server.url, 'PATCH', `/api/planned-workouts/${created.id}`, {
      token,
      body: { [field]: value },
    });
    expect(res.status).toBe(400);
    expect(asProblem(res.body).errors?.[0]?.path.split('.')[0]).toBe(field);
    const read = await sdk().plannedWorkouts.getPlannedWorkout({ params: { id: created.id } });
    expect(read.body).toEqual(created);
  });

  it('refuses unknown keys by name, id and source included', async () => {
    const created = await create({ date: '2026-12-15', sport: 'hike', title: 'Hike' });
    const res = await call(server.url, 'PATCH', `/api/planned-workouts/${created.id}`, {
      token,
      body: { id: randomUUID(), source: 'me', title: 'Renamed' },
    });
    expect(res.status).toBe(400);
    expect(asProblem(res.body).errors?.map((error) => error.path)).toEqual(expect.arrayContaining(['id', 'source']));
  });

  it('answers 404 for an unknown id', async () => {
    const res = await call(server.url, 'PATCH', `/api/planned-workouts/${randomUUID()}`, {
      token,
      body: { title: 'Ghost' },
    });
    expect(res.status).toBe(404);
  });

  it('needs planning:write', async () => {
    const created = await create({ date: '2026-12-16', sport: 'yoga', title: 'Flow' });
    const reader = (await mintToken(server.db, athlete, { scopes: ['planning:read'] })).token;
    const res = await call(server.url, 'PATCH', `/api/planned-workouts/${created.id}`, {
      token: reader,
      body: { title: 'Changed' },
    });
    expect(res.status).toBe(403);
    expect((await sdk().plannedWorkouts.getPlannedWorkout({ params: { id: created.id } })).body).toEqual(created);
  });
});

describe('DELETE /api/planned-workouts/{id}', () => {
  it('deletes with 204 and no body; the workout is then gone (404) and a second delete is 404', async () => {
    const created = await create({ date: '2026-12-17', sport: 'strength', title: 'Gym' });
    const res = await sdk().plannedWorkouts.deletePlannedWorkout({ params: { id: created.id } });
    expect(res.status).toBe(204);
    const raw = await call(server.url, 'DELETE', `/api/planned-workouts/${created.id}`, { token });
    expect(raw.status).toBe(404);
    const read = await sdk().plannedWorkouts.getPlannedWorkout({ params: { id: created.id } });
    expect(read.status).toBe(404);
  });

  it('needs planning:write and keeps the workout otherwise', async () => {
    const created = await create({ date: '2026-12-18', sport: 'other', title: 'Stays' });
    const reader = (await mintToken(server.db, athlete, { scopes: ['planning:read'] })).token;
    const res = await call(server.url, 'DELETE', `/api/planned-workouts/${created.id}`, { token: reader });
    expect(res.status).toBe(403);
    expect((await sdk().plannedWorkouts.getPlannedWorkout({ params: { id: created.id } })).status).toBe(200);
  });
});

describe("another user's planned workouts", () => {
  it('are not found (404, never 403) for read, change and delete, and stay untouched', async () => {
    const other = await makeUser(server.db);
    const otherToken = (await mintToken(server.db, other, { scopes: ['planning:read', 'planning:write'] })).token;
    const theirs = await create({ date: '2026-12-19', sport: 'ride', title: 'Theirs' }, otherToken);

    const read = await call(server.url, 'GET', `/api/planned-workouts/${theirs.id}`, { token });
    expect(read.status).toBe(404);
    expect(asProblem(read.body).code).toBe('not_found');
    const changed = await call(server.url, 'PATCH', `/api/planned-workouts/${theirs.id}`, {
      token,
      body: { title: 'Mine now' },
    });
    expect(changed.status).toBe(404);
    const deleted = await call(server.url, 'DELETE', `/api/planned-workouts/${theirs.id}`, { token });
    expect(deleted.status).toBe(404);

    const still = await sdk(otherToken).plannedWorkouts.getPlannedWorkout({ params: { id: theirs.id } });
    expect(still.status).toBe(200);
    expect(still.body).toEqual(theirs);
  });

  it('never appear in a list', async () => {
    const other = await makeUser(server.db);
    const otherToken = (await mintToken(server.db, other, { scopes: ['planning:read', 'planning:write'] })).token;
    await create({ date: '2026-10-15', sport: 'ride', title: 'Theirs' }, otherToken);
    const mine = await sdk().plannedWorkouts.listPlannedWorkouts({ query: { from: '2026-10-01', to: '2026-10-31' } });
    expect(mine.status === 200 && mine.body.items).toEqual([]);
    const list = await sdk(otherToken).plannedWorkouts.listPlannedWorkouts({
      query: { from: '2026-10-01', to: '2026-10-31' },
    });
    expect(list.status === 200 && list.body.items.map((item) => item.title)).toEqual(['Theirs']);
  });
});

describe('GET /api/planned-workouts', () => {
  it('orders by date, then start time (untimed first), then id, and pages through ties without gaps or repeats', async () => {
    const planner = await makeUser(server.db, { timeZone: TIME_ZONE });
    const plannerToken = (await mintToken(server.db, planner, { scopes: ['planning:read', 'planning:write'] })).token;
    const specs = [
      ['2026-09-02', '17:00'],
      ['2026-09-01', null],
      ['2026-09-02', null],
      ['2026-09-02', '06:00'],
      ['2026-09-02', '06:00'],
      ['2026-09-02', null],
      ['2026-09-03', '05:30'],
      ['2026-09-02', '06:00'],
      ['2026-09-01', '23:59'],
    ] as const;
    const created: PlannedWorkout[] = [];
    for (const [date, timeOfDay] of specs) {
      created.push(
        await create({ date, timeOfDay, sport: 'run', title: `${date} ${timeOfDay ?? 'any'}` }, plannerToken),
      );
    }
    const expected = [...created]
      .sort(
        (a, b) =>
          a.date.localeCompare(b.date) ||
          (a.timeOfDay ?? '').localeCompare(b.timeOfDay ?? '') ||
          (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      )
      .map((item) => item.id);

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await sdk(plannerToken).plannedWorkouts.listPlannedWorkouts({
        query: { from: '2026-09-01', to: '2026-09-30', limit: 2, ...(cursor ? { cursor } : {}) },
      });
      if (res.status !== 200) throw new Error(`status ${String(res.status)}`);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items.map((item) => item.id));
      cursor = res.body.nextCursor ?? undefined;
      pages += 1;
    } while (cursor);
    expect(seen).toEqual(expected);
    expect(pages).toBe(5);

    const whole = await sdk(plannerToken).plannedWorkouts.listPlannedWorkouts({
      query: { from: '2026-09-01', to: '2026-09-30' },
    });
    expect(whole.status === 200 && whole.body.items.map((item) => item.id)).toEqual(expected);
    expect(whole.status === 200 && whole.body.nextCursor).toBeNull();
  });

  it('keeps to the date range, both ends inclusive', async () => {
    const planner = await makeUser(server.db, { timeZone: TIME_ZONE });
    const plannerToken = (await mintToken(server.db, planner, { scopes: ['planning:read', 'planning:write'] })).token;
    for (const date of ['2026-08-09', '2026-08-10', '2026-08-20', '2026-08-21']) {
      await create({ date, sport: 'swim', title: date }, plannerToken);
    }
    const res = await sdk(plannerToken).plannedWorkouts.listPlannedWorkouts({
      query: { from: '2026-08-10', to: '2026-08-20' },
    });
    expect(res.status === 200 && res.body.items.map((item) => item.date)).toEqual(['2026-08-10', '2026-08-20']);
  });

  it("defaults to today and the 29 days after it in the user's time zone", async () => {
    const planner = await makeUser(server.db, { timeZone: 'Asia/Tokyo' });
    const plannerToken = (await mintToken(server.db, planner, { scopes: ['planning:read', 'planning:write'] })).token;
    for (const offset of [-1, 0, 29, 30]) {
      await create({ date: dayIn('Asia/Tokyo', offset), sport: 'run', title: String(offset) }, plannerToken);
    }
    const res = await sdk(plannerToken).plannedWorkouts.listPlannedWorkouts({ query: {} });
    expect(res.status === 200 && res.body.items.map((item) => item.title)).toEqual(['0', '29']);
    // With only `to`, the range is the 30 days ending there, as in every date-keyed list.
    const back = await sdk(plannerToken).plannedWorkouts.listPlannedWorkouts({
      query: { to: dayIn('Asia/Tokyo', 29) },
    });
    expect(back.status === 200 && back.body.items.map((item) => item.title)).toEqual(['0', '29']);
  });

  it('refuses a range over 366 days, an inverted range, a bad limit, a forged cursor and unknown parameters', async () => {
    const tooLong = await call(server.url, 'GET', '/api/planned-workouts?from=2026-01-01&to=2027-01-02', { token });
    expect(tooLong.status).toBe(400);
    expect(asProblem(tooLong.body).code).toBe('date_range_too_large');
    const inverted = await call(server.url, 'GET', '/api/planned-workouts?from=2026-06-01&to=2026-05-01', { token });
    expect(inverted.status).toBe(400);
    expect(asProblem(inverted.body).errors?.[0]?.path).toBe('from');
    for (const limit of ['0', '201', 'ten']) {
      const res = await call(server.url, 'GET', `/api/planned-workouts?limit=${limit}`, { token });
      expect(res.status).toBe(400);
      expect(asProblem(res.body).errors?.[0]?.path).toBe('limit');
    }
    const dateOnly = Buffer.from(JSON.stringify({ d: '2026-01-01' })).toString('base64url');
    const badDate = Buffer.from(JSON.stringify({ d: '2026-02-30', t: '', i: randomUUID() })).toString('base64url');
    const badId = Buffer.from(JSON.stringify({ d: '2026-01-01', t: '', i: 'x' })).toString('base64url');
    for (const cursor of ['not-ours', dateOnly, badDate, badId]) {
      const res = await call(server.url, 'GET', `/api/planned-workouts?cursor=${cursor}`, { token });
      expect(res.status).toBe(400);
      expect(asProblem(res.body).code).toBe('invalid_cursor');
    }
    const unknown = await call(server.url, 'GET', '/api/planned-workouts?sport=ride', { token });
    expect(unknown.status).toBe(400);
    expect(asProblem(unknown.body).errors?.[0]?.path).toBe('sport');
  });
});

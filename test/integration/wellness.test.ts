import { createPacerClient, type WellnessRecord } from '@pacer/client-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { makeApp, makeUser, mintToken } from '../support/factories.ts';
import { asProblem, call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
let athlete: User;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  athlete = await makeUser(server.db, { timeZone: 'America/New_York' });
  token = (await mintToken(server.db, athlete, { scopes: ['health:read', 'health:write'] })).token;
});
afterAll(async () => {
  await server.stop();
});

const sdk = () => createPacerClient({ baseUrl: server.url, accessToken: token });

describe('POST /api/wellness', () => {
  it('creates a record with 201, then updates it with 200', async () => {
    const first = await sdk().wellness.upsertWellness({ body: { date: '2026-10-01', hrv: 62.5, restingHr: 48 } });
    expect(first.status).toBe(201);
    const second = await sdk().wellness.upsertWellness({ body: { date: '2026-10-01', sleepSecs: 27_000 } });
    expect(second.status).toBe(200);
    if (second.status !== 200) throw new Error('unreachable');
    expect(second.body).toMatchObject({ date: '2026-10-01', hrv: 62.5, restingHr: 48, sleepSecs: 27_000 });
  });

  it('answers without an ETag: no answer body is hashed on its way out', async () => {
    const res = await call(server.url, 'POST', '/api/wellness', { token, body: { date: '2026-09-20', hrv: 60 } });
    expect(res.status).toBe(201);
    expect(res.headers.get('etag')).toBeNull();
    const list = await call(server.url, 'GET', '/api/wellness?from=2026-09-20&to=2026-09-20', { token });
    expect(list.status).toBe(200);
    expect(list.headers.get('etag')).toBeNull();
  });

  it('merges: present fields overwrite, null clears, absent fields keep their value', async () => {
    await sdk().wellness.upsertWellness({ body: { date: '2026-10-02', hrv: 50, restingHr: 50, weight: 70.2 } });
    const res = await sdk().wellness.upsertWellness({ body: { date: '2026-10-02', hrv: 55, restingHr: null } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ hrv: 55, restingHr: null, weight: 70.2 });
  });

  it('accepts the widened field set and answers every field', async () => {
    const body = {
      date: '2026-10-03',
      sleepDeepSecs: 5400,
      sleepLightSecs: 12_000,
      sleepRemSecs: 6000,
      sleepAwakeSecs: 900,
      sleepScore: 84,
      bodyFat: 14.5,
      vo2max: 58,
      spO2: 97,
      respiration: 14.2,
      steps: 12_345,
      stress: 31,
      mood: 4,
      fatigue: 2,
      soreness: 3,
      motivation: 5,
      comments: 'Legs heavy after intervals',
    };
    const res = await sdk().wellness.upsertWellness({ body });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject(body);
  });

  it('keeps rawJson per source app', async () => {
    const app = await makeApp(server.db, athlete, 'Sleep tracker');
    const appToken = (await mintToken(server.db, athlete, { scopes: ['health:write'], client: app })).token;
    await call(server.url, 'POST', '/api/wellness', {
      token,
      body: { date: '2026-10-04', hrv: 60, rawJson: { device: 'strap' } },
    });
    const res = await call<WellnessRecord>(server.url, 'POST', '/api/wellness', {
      token: appToken,
      body: { date: '2026-10-04', rawJson: { ring: { nested_key: 1 } } },
    });
    expect(res.status).toBe(200);
    expect(Object.values(res.body.rawJsonBySource)).toHaveLength(2);
    expect(res.body.rawJsonBySource[app.clientId]).toEqual({ ring: { nested_key: 1 } });
    expect(res.body.hrv).toBe(60);
  });

  it('uses the offset of a timestamp date, and the profile time zone for Z', async () => {
    const withOffset = await call<WellnessRecord>(server.url, 'POST', '/api/wellness', {
      token,
      body: { date: '2026-11-20T23:30:00-05:00', hrv: 40 },
    });
    expect(withOffset.body.date).toBe('2026-11-20');
    const otherOffset = await call<WellnessRecord>(server.url, 'POST', '/api/wellness', {
      token,
      body: { date: '2026-11-21T01:30:00+09:00', hrv: 41 },
    });
    expect(otherOffset.body.date).toBe('2026-11-21');
    // 03:00Z on the 22nd is 22:00 on the 21st in New York (the profile's zone).
    const utc = await call<WellnessRecord>(server.url, 'POST', '/api/wellness', {
      token,
      body: { date: '2026-11-22T03:00:00Z', hrv: 42 },
    });
    expect(utc.body.date).toBe('2026-11-21');
    expect(utc.status).toBe(200);
  });

  it.each([
    ['hrv', 0],
    ['hrv', 301],
    ['restingHr', 10],
    ['restingHr', 55.5],
    ['sleepSecs', 90_000],
    ['weight', 5],
    ['spO2', 101],
    ['mood', 6],
    ['steps', -1],
  ])('refuses %s = %s with 400 naming the field', async (field, value) => {
    const res = await call(server.url, 'POST', '/api/wellness', {
      token,
      body: { date: '2026-10-05', [field]: value },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = asProblem(res.body);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors?.map((error) => error.path)).toEqual([field]);
  });

  it('refuses unknown keys by name', async () => {
    const res = await call(server.url, 'POST', '/api/wellness', {
      token,
      body: { date: '2026-10-05', hrv: 50, heartRateVariability: 50, foo: 'bar' },
    });
    expect(res.status).toBe(400);
    const paths = asProblem(res.body).errors?.map((error) => error.path);
    expect(paths).toEqual(expect.arrayContaining(['heartRateVariability', 'foo']));
    const list = await sdk().wellness.listWellness({ query: { from: '2026-10-05', to: '2026-10-05' } });
    expect(list.status === 200 && list.body.items).toEqual([]);
  });

  it.each(['2026-02-30', '2026-13-01', '20261001', 'yesterday', '2026-10-01T25:00:00Z', ''])(
    'refuses the date %j',
    async (date) => {
      const res = await call(server.url, 'POST', '/api/wellness', { token, body: { date, hrv: 50 } });
      expect(res.status).toBe(400);
      expect(asProblem(res.body).errors?.[0]?.path).toBe('date');
    },
  );

  it('refuses a body without a date', async () => {
    const res = await call(server.url, 'POST', '/api/wellness', { token, body: { hrv: 50 } });
    expect(res.status).toBe(400);
    expect(asProblem(res.body).errors?.map((error) => error.path)).toEqual(['date']);
  });

  it('refuses invalid JSON with 400 invalid_json', async () => {
    const res = await call(server.url, 'POST', '/api/wellness', { token, rawBody: '{"date": "2026-10-01",' });
    expect(res.status).toBe(400);
    expect(asProblem(res.body).code).toBe('invalid_json');
  });

  it('refuses a non-JSON content type with 415', async () => {
    const res = await call(server.url, 'POST', '/api/wellness', {
      token,
      rawBody: 'date=2026-10-01&hrv=50',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(res.status).toBe(415);
    expect(asProblem(res.body).code).toBe('unsupported_media_type');
  });

  it('refuses a body over 1 MiB with 413 and stores nothing', async () => {
    const rawJson = { blob: 'x'.repeat(1024 * 1024) };
    const res = await call(server.url, 'POST', '/api/wellness', {
      token,
      body: { date: '2026-10-06', hrv: 50, rawJson },
    });
    expect(res.status).toBe(413);
    expect(asProblem(res.body).code).toBe('payload_too_large');
    const list = await sdk().wellness.listWellness({ query: { from: '2026-10-06', to: '2026-10-06' } });
    expect(list.status === 200 && list.body.items).toEqual([]);
  });

  it('refuses a JSON array or scalar body', async () => {
    for (const rawBody of ['[]', '"2026-10-01"', 'null']) {
      const res = await call(server.url, 'POST', '/api/wellness', { token, rawBody });
      expect(res.status).toBe(400);
    }
  });
});

describe('GET /api/wellness', () => {
  it('lists a range oldest first with cursor pagination', async () => {
    for (let day = 1; day <= 5; day += 1) {
      await sdk().wellness.upsertWellness({ body: { date: `2026-09-0${day}`, restingHr: 40 + day } });
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await sdk().wellness.listWellness({
        query: { from: '2026-09-01', to: '2026-09-05', limit: 2, ...(cursor ? { cursor } : {}) },
      });
      if (res.status !== 200) throw new Error(`status ${String(res.status)}`);
      seen.push(...res.body.items.map((item) => item.date));
      cursor = res.body.nextCursor ?? undefined;
      pages += 1;
    } while (cursor);
    expect(seen).toEqual(['2026-09-01', '2026-09-02', '2026-09-03', '2026-09-04', '2026-09-05']);
    expect(pages).toBe(3);
  });

  it('refuses a range over 366 days, an inverted range, a bad limit and a forged cursor', async () => {
    const tooLong = await call(server.url, 'GET', '/api/wellness?from=2025-01-01&to=2026-06-01', { token });
    expect(tooLong.status).toBe(400);
    expect(asProblem(tooLong.body).code).toBe('date_range_too_large');
    const inverted = await call(server.url, 'GET', '/api/wellness?from=2026-06-01&to=2026-05-01', { token });
    expect(inverted.status).toBe(400);
    expect(asProblem(inverted.body).errors?.[0]?.path).toBe('from');
    const limit = await call(server.url, 'GET', '/api/wellness?limit=500', { token });
    expect(limit.status).toBe(400);
    expect(asProblem(limit.body).errors?.[0]?.path).toBe('limit');
    const cursor = await call(server.url, 'GET', '/api/wellness?cursor=not-ours', { token });
    expect(cursor.status).toBe(400);
    expect(asProblem(cursor.body).code).toBe('invalid_cursor');
    const unknown = await call(server.url, 'GET', '/api/wellness?form=2026-01-01', { token });
    expect(unknown.status).toBe(400);
    expect(asProblem(unknown.body).errors?.[0]?.path).toBe('form');
  });

  it("never shows another user's records", async () => {
    const other = await makeUser(server.db);
    const otherToken = (await mintToken(server.db, other, { scopes: ['health:read', 'health:write'] })).token;
    await call(server.url, 'POST', '/api/wellness', { token: otherToken, body: { date: '2026-08-15', hrv: 99 } });
    const mine = await call<{ items: WellnessRecord[] }>(
      server.url,
      'GET',
      '/api/wellness?from=2026-08-01&to=2026-08-31',
      { token },
    );
    expect(mine.body.items).toEqual([]);
    const theirs = await call<{ items: WellnessRecord[] }>(
      server.url,
      'GET',
      '/api/wellness?from=2026-08-01&to=2026-08-31',
      {
        token: otherToken,
      },
    );
    expect(theirs.body.items.map((item) => item.hrv)).toEqual([99]);
  });
});

describe('wellness under concurrency', () => {
  it('20 simultaneous identical upserts of a new date leave exactly one record', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        call(server.url, 'POST', '/api/wellness', { token, body: { date: '2026-07-01', hrv: 70 } }),
      ),
    );
    const statuses = results.map((res) => res.status).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(19);
    const rows = await server.db
      .selectFrom('wellness')
      .selectAll()
      .where('userId', '=', athlete.id)
      .where('date', '=', '2026-07-01')
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('concurrent updates of different fields both survive', async () => {
    await call(server.url, 'POST', '/api/wellness', { token, body: { date: '2026-07-02' } });
    const fields = ['hrv', 'restingHr', 'sleepSecs', 'weight', 'steps', 'stress', 'mood', 'fatigue'] as const;
    const values = {
      hrv: 61,
      restingHr: 44,
      sleepSecs: 28_000,
      weight: 68.4,
      steps: 9000,
      stress: 20,
      mood: 4,
      fatigue: 2,
    };
    await Promise.all(
      fields.map((field) =>
        call(server.url, 'POST', '/api/wellness', { token, body: { date: '2026-07-02', [field]: values[field] } }),
      ),
    );
    const list = await sdk().wellness.listWellness({ query: { from: '2026-07-02', to: '2026-07-02' } });
    if (list.status !== 200) throw new Error('list failed');
    expect(list.body.items[0]).toMatchObject(values);
  });
});

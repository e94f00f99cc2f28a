import { createPacerClient } from '@pacer/client-sdk';
import type { PlannedWorkout, Profile } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { dayIn } from '../support/dates.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { asProblem, call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

interface Athlete {
  readonly user: User;
  readonly token: string;
  readonly sdk: ReturnType<typeof createPacerClient>;
}

/** A fresh athlete per test, so tests never see each other's profile changes. */
async function makeAthlete(timeZone = 'Europe/Berlin'): Promise<Athlete> {
  const user = await makeUser(server.db, { timeZone, name: 'Ada' });
  const token = (await mintToken(server.db, user, { scopes: ['profile:read', 'profile:write'] })).token;
  return { user, token, sdk: createPacerClient({ baseUrl: server.url, accessToken: token }) };
}

async function profileOf(athlete: Athlete): Promise<Profile> {
  const res = await athlete.sdk.profile.getProfile();
  if (res.status !== 200) throw new Error(`GET /api/profile answered ${String(res.status)}`);
  return res.body;
}

async function patch(athlete: Athlete, body: unknown) {
  return call<Profile>(server.url, 'PATCH', '/api/profile', { token: athlete.token, body });
}

describe('GET /api/profile', () => {
  it("answers a new account's profile: e-mail, time zone, empty metrics and nutrition on", async () => {
    const athlete = await makeAthlete('America/New_York');
    expect(await profileOf(athlete)).toEqual({
      id: athlete.user.id,
      email: athlete.user.email,
      name: 'Ada',
      timeZone: 'America/New_York',
      weight: null,
      ftp: null,
      maxHr: null,
      restingHr: null,
      thresholdHr: null,
      sex: null,
      birthDate: null,
      featureFlags: { nutrition: true },
      updatedAt: expect.any(String) as string,
    });
  });

  it('needs profile:read (403 otherwise) and a token (401)', async () => {
    const athlete = await makeAthlete();
    const writer = (await mintToken(server.db, athlete.user, { scopes: ['profile:write', 'health:read'] })).token;
    const forbidden = await call(server.url, 'GET', '/api/profile', { token: writer });
    expect(forbidden.status).toBe(403);
    expect(asProblem(forbidden.body).code).toBe('insufficient_scope');
    expect(forbidden.headers.get('www-authenticate')).toContain('scope="profile:read"');
    const anonymous = await call(server.url, 'GET', '/api/profile');
    expect(anonymous.status).toBe(401);
  });
});

describe('PATCH /api/profile', () => {
  const full = {
    name: 'Ada Lovelace',
    timeZone: 'Pacific/Auckland',
    weight: 61.5,
    ftp: 245,
    maxHr: 188,
    restingHr: 44,
    thresholdHr: 171,
    sex: 'female',
    birthDate: '1990-12-10',
    featureFlags: { nutrition: false },
  } as const;

  it('stores every field and answers the stored profile, which GET then shows', async () => {
    const athlete = await makeAthlete();
    const res = await athlete.sdk.profile.updateProfile({ body: full });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ...full, email: athlete.user.email });
    expect(await profileOf(athlete)).toEqual(res.body);
  });

  it('merges: present fields overwrite, null clears, absent fields keep their value', async () => {
    const athlete = await makeAthlete();
    await athlete.sdk.profile.updateProfile({ body: full });
    const res = await athlete.sdk.profile.updateProfile({
      body: { ftp: 260, weight: null, sex: null, birthDate: null, name: null },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ftp: 260,
      weight: null,
      sex: null,
      birthDate: null,
      name: null,
      timeZone: 'Pacific/Auckland',
      maxHr: 188,
      restingHr: 44,
      thresholdHr: 171,
      featureFlags: { nutrition: false },
    });
  });

  it('merges feature flags flag by flag and keeps them when absent', async () => {
    const athlete = await makeAthlete();
    expect((await patch(athlete, { featureFlags: { nutrition: false } })).body.featureFlags).toEqual({
      nutrition: false,
    });
    expect((await patch(athlete, { featureFlags: {} })).body.featureFlags).toEqual({ nutrition: false });
    expect((await patch(athlete, { ftp: 200 })).body.featureFlags).toEqual({ nutrition: false });
    expect((await patch(athlete, { featureFlags: { nutrition: true } })).body.featureFlags).toEqual({
      nutrition: true,
    });
  });

  it('answers the unchanged profile for an empty patch', async () => {
    const athlete = await makeAthlete();
    const before = await profileOf(athlete);
    const res = await patch(athlete, {});
    expect(res.status).toBe(200);
    expect(res.body).toEqual(before);
  });

  it('stores a time zone in its canonical spelling', async () => {
    const athlete = await makeAthlete();
    expect((await patch(athlete, { timeZone: 'america/new_york' })).body.timeZone).toBe('America/New_York');
    expect((await patch(athlete, { timeZone: 'utc' })).body.timeZone).toBe('UTC');
  });

  it.each(['Mars/Olympus_Mons', 'Europe/Nowhere', '+01:00', '-05:00', 'GMT+25', '', null])(
    'refuses the time zone %j with 400 naming timeZone',
    async (timeZone) => {
      const athlete = await makeAthlete();
      const res = await patch(athlete, { timeZone, ftp: 250 });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(asProblem(res.body).errors?.map((error) => error.path)).toEqual(['timeZone']);
      expect(await profileOf(athlete)).toMatchObject({ timeZone: 'Europe/Berlin', ftp: null });
    },
  );

  it('reads dates in the new time zone once it is changed', async () => {
    const athlete = await makeAthlete('UTC');
    await patch(athlete, { timeZone: 'Pacific/Auckland' });
    const planner = (await mintToken(server.db, athlete.user, { scopes: ['planning:write'] })).token;
    // 20:00Z on the 1st is already the 2nd in Auckland (UTC+13 in December).
    const res = await call<PlannedWorkout>(server.url, 'POST', '/api/planned-workouts', {
      token: planner,
      body: { date: '2026-12-01T20:00:00Z', sport: 'run', title: 'Easy run' },
    });
    expect(res.status).toBe(201);
    expect(res.body.date).toBe('2026-12-02');
  });

  it.each([
    ['weight', 19.9],
    ['weight', 400.1],
    ['ftp', 19],
    ['ftp', 1001],
    ['ftp', 250.5],
    ['maxHr', 99],
    ['maxHr', 251],
    ['restingHr', 19],
    ['restingHr', 151],
    ['thresholdHr', 59],
    ['thresholdHr', 241],
    ['sex', 'unknown'],
    ['sex', 'F'],
    ['birthDate', '1990-02-30'],
    ['birthDate', '1899-12-31'],
    ['birthDate', '10/12/1990'],
    ['name', ''],
    ['name', 'x'.repeat(201)],
    ['weight', '61.5'],
    ['featureFlags', { nutrition: 'yes' }],
    ['featureFlags', null],
  ])('refuses %s = %j with 400 naming the field and stores nothing', async (field, value) => {
    const athlete = await makeAthlete();
    const before = await profileOf(athlete);
    const res = await patch(athlete, { [field]: value });
    expect(res.status).toBe(400);
    const problem = asProblem(res.body);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors?.map((error) => error.path.split('.')[0])).toEqual([field]);
    expect(await profileOf(athlete)).toEqual(before);
  });

  it("refuses a birth date after today in the user's time zone, and accepts today", async () => {
    // Kiritimati (UTC+14) is the first place where a day begins.
    const athlete = await makeAthlete('Pacific/Kiritimati');
    const tomorrow = await patch(athlete, { birthDate: dayIn('Pacific/Kiritimati', 1) });
    expect(tomorrow.status).toBe(400);
    expect(asProblem(tomorrow.body).errors).toEqual([{ path: 'birthDate', message: 'must not be in the future' }]);
    const today = await patch(athlete, { birthDate: dayIn('Pacific/Kiritimati') });
    expect(today.status).toBe(200);
  });

  it('checks a birth date against the time zone sent in the same patch', async () => {
    const athlete = await makeAthlete('Pacific/Kiritimati');
    // Pago Pago (UTC-11) is 25 hours behind Kiritimati: Kiritimati's today is its future.
    const res = await patch(athlete, { timeZone: 'Pacific/Pago_Pago', birthDate: dayIn('Pacific/Kiritimati') });
    expect(res.status).toBe(400);
    expect(asProblem(res.body).errors?.map((error) => error.path)).toEqual(['birthDate']);
    expect((await profileOf(athlete)).timeZone).toBe('Pacific/Kiritimati');
  });

  it('refuses a threshold heart rate at or above the stored maximum, naming thresholdHr', async () => {
    const athlete = await makeAthlete();
    await patch(athlete, { maxHr: 185 });
    for (const thresholdHr of [185, 190]) {
      const res = await patch(athlete, { thresholdHr });
      expect(res.status).toBe(400);
      expect(asProblem(res.body).errors).toEqual([{ path: 'thresholdHr', message: 'must be below maxHr (185 bpm)' }]);
    }
    expect((await patch(athlete, { thresholdHr: 184 })).status).toBe(200);
  });

  it('refuses a maximum heart rate at or below the stored threshold, naming maxHr', async () => {
    const athlete = await makeAthlete();
    await patch(athlete, { thresholdHr: 170 });
    const res = await patch(athlete, { maxHr: 165 });
    expect(res.status).toBe(400);
    expect(asProblem(res.body).errors).toEqual([{ path: 'maxHr', message: 'must be above thresholdHr (170 bpm)' }]);
    expect((await profileOf(athlete)).maxHr).toBeNull();
  });

  it('refuses threshold and maximum sent together in the wrong order, and a resting rate above either', async () => {
    const athlete = await makeAthlete();
    const together = await patch(athlete, { thresholdHr: 180, maxHr: 175 });
    expect(together.status).toBe(400);
    expect(asProblem(together.body).errors?.map((error) => error.path)).toEqual(['thresholdHr']);
    await patch(athlete, { thresholdHr: 120, maxHr: 140 });
    const resting = await patch(athlete, { restingHr: 130 });
    expect(resting.status).toBe(400);
    expect(asProblem(resting.body).errors?.map((error) => error.path)).toEqual(['restingHr']);
    const restingAboveMax = await patch(athlete, { restingHr: 145 });
    expect(asProblem(restingAboveMax.body).errors?.map((error) => error.path)).toEqual(['restingHr']);
  });

  it('accepts any threshold once the maximum is cleared', async () => {
    const athlete = await makeAthlete();
    await patch(athlete, { maxHr: 170, thresholdHr: 160 });
    const res = await patch(athlete, { maxHr: null, thresholdHr: 175 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ maxHr: null, thresholdHr: 175 });
  });

  it('keeps the heart-rate order under concurrent patches that are each valid alone', async () => {
    const athlete = await makeAthlete();
    await patch(athlete, { thresholdHr: 150, maxHr: 200 });
    const [raise, lower] = await Promise.all([patch(athlete, { thresholdHr: 190 }), patch(athlete, { maxHr: 180 })]);
    expect([raise.status, lower.status].sort()).toEqual([200, 400]);
    const stored = await profileOf(athlete);
    expect(stored.thresholdHr ?? 0).toBeLessThan(stored.maxHr ?? 0);
  });

  it('refuses unknown keys by name, e-mail included (it is read-only), and stores nothing', async () => {
    const athlete = await makeAthlete();
    const res = await patch(athlete, {
      ftp: 300,
      email: 'new@example.test',
      weightKg: 70,
      featureFlags: { nutrition: false, beta: true },
    });
    expect(res.status).toBe(400);
    expect(asProblem(res.body).errors?.map((error) => error.path)).toEqual(
      expect.arrayContaining(['email', 'weightKg', 'featureFlags.beta']),
    );
    expect(await profileOf(athlete)).toMatchObject({ email: athlete.user.email, ftp: null });
  });

  it('needs profile:write (403 otherwise, nothing stored)', async () => {
    const athlete = await makeAthlete();
    const reader = (await mintToken(server.db, athlete.user, { scopes: ['profile:read'] })).token;
    const res = await call(server.url, 'PATCH', '/api/profile', { token: reader, body: { ftp: 300 } });
    expect(res.status).toBe(403);
    expect(asProblem(res.body).code).toBe('insufficient_scope');
    expect((await profileOf(athlete)).ftp).toBeNull();
  });

  it("changes only the caller's own profile", async () => {
    const athlete = await makeAthlete();
    const other = await makeAthlete();
    await patch(other, { ftp: 333, name: 'Other' });
    expect(await profileOf(athlete)).toMatchObject({ ftp: null, name: 'Ada' });
    expect(await profileOf(other)).toMatchObject({ ftp: 333, name: 'Other' });
  });

  it('refuses a body that is not JSON with 415 and a malformed one with 400', async () => {
    const athlete = await makeAthlete();
    const form = await call(server.url, 'PATCH', '/api/profile', {
      token: athlete.token,
      rawBody: 'ftp=300',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
    const broken = await call(server.url, 'PATCH', '/api/profile', { token: athlete.token, rawBody: '{"ftp": 3' });
    expect(broken.status).toBe(400);
    expect(asProblem(broken.body).code).toBe('invalid_json');
  });
});

/**
 * `Idempotency-Key` on REST writes (docs/design.md §3 "REST conventions"): the same
 * key and body replay the first response for 24 h; the same key with another
 * body is a 422; while the first request runs, 409. Keys are scoped to the
 * token's app and user and live in PostgreSQL, so every process sees them.
 */
import type { Problem, WellnessRecord } from '@pacer/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { purgeExpired } from '../../server/src/modules/maintenance/maintenance.service.ts';
import { makeApp, makeUser, mintToken } from '../support/factories.ts';
import { oneHourRide, rideSamples } from '../support/fit-fixtures.ts';
import { call, type JsonResponse } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait.ts';
import { startPacerProcess } from '../support/webhooks-cluster.ts';

let server: TestServer;
let athlete: User;
let token: string;
/** Public client id of `token`'s app (the athlete's developer client). */
let clientId: string;

beforeAll(async () => {
  server = await startTestServer();
  athlete = await makeUser(server.db);
  ({ token, clientId } = await mintToken(server.db, athlete, { scopes: ['health:read', 'health:write'] }));
});
afterAll(async () => {
  await server.stop();
});

let keyCounter = 0;
/** A fresh key per test, so tests never see each other's keys. */
const newKey = () => `test-key-${Date.now()}-${++keyCounter}`;

function postWellness<T = WellnessRecord>(
  key: string | undefined,
  body: unknown,
  options: { token?: string; url?: string } = {},
): Promise<JsonResponse<T>> {
  return call<T>(options.url ?? server.url, 'POST', '/api/wellness', {
    token: options.token ?? token,
    body,
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });
}

/**
 * Whether a request with `key` is in flight: its claim is uncommitted (the
 * request is one transaction), so it shows as the transaction-level
 * advisory lock the claim holds (idempotency.repository.ts).
 */
async function keyInFlight(key: string, appClientId = clientId): Promise<boolean> {
  const lockName = `idempotency:${athlete.id}:${appClientId}:${key}`;
  const { rows } = await sql<{ held: boolean }>`
    select exists (
      select 1 from pg_locks
      where locktype = 'advisory' and granted and objsubid = 1
        and ((classid::bigint << 32) | objid::bigint) = hashtextextended(${lockName}, 0)
    ) as held`.execute(server.db);
  return rows[0]?.held === true;
}

async function storedKey(key: string) {
  return server.db.selectFrom('idempotencyKeys').selectAll().where('key', '=', key).executeTakeFirst();
}

async function wellnessRow(user: User, date: string) {
  return server.db
    .selectFrom('wellness')
    .selectAll()
    .where('userId', '=', user.id)
    .where('date', '=', date)
    .executeTakeFirst();
}

describe('replay', () => {
  it('replays the first response (status, body, content type) for the same key and body, without a second write', async () => {
    const key = newKey();
    const body = { date: '2026-09-01', hrv: 61, restingHr: 47 };
    const first = await postWellness(key, body);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const before = await wellnessRow(athlete, '2026-09-01');

    const second = await postWellness(key, body);
    // A second write would have answered 200 (an update of the existing day).
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const after = await wellnessRow(athlete, '2026-09-01');
    expect(after?.updatedAt).toEqual(before?.updatedAt);
  });

  it('treats a body with its keys in another order as the same body', async () => {
    const key = newKey();
    const first = await postWellness(key, { date: '2026-09-02', hrv: 50, rawJson: { a: 1, b: { c: 2, d: 3 } } });
    const second = await postWellness(key, { rawJson: { b: { d: 3, c: 2 }, a: 1 }, hrv: 50, date: '2026-09-02' });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
  });

  it('replays from another process on the same database', async () => {
    const other = await startTestServer({}, { database: server.database });
    try {
      const key = newKey();
      const body = { date: '2026-09-03', steps: 9000 };
      const first = await postWellness(key, body);
      const second = await postWellness(key, body, { url: other.url });
      expect(second.status).toBe(first.status);
      expect(second.body).toEqual(first.body);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
    } finally {
      await other.stop();
    }
  });

  it('replays a refused request too: a validation error is the answer to that body', async () => {
    const key = newKey();
    const first = await postWellness<Problem>(key, { date: '2026-09-04', hrv: 9999 });
    const second = await postWellness<Problem>(key, { date: '2026-09-04', hrv: 9999 });
    expect(first.status).toBe(400);
    expect(second.status).toBe(400);
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect({ ...second.body, requestId: undefined }).toEqual({ ...first.body, requestId: undefined });
  });

  it('runs every request again when no key is sent', async () => {
    const body = { date: '2026-09-05', hrv: 40 };
    expect((await postWellness(undefined, body)).status).toBe(201);
    expect((await postWellness(undefined, body)).status).toBe(200);
  });
});

describe('conflicts', () => {
  it('refuses the same key with a different body with 422 idempotency_key_reused, and writes nothing', async () => {
    const key = newKey();
    expect((await postWellness(key, { date: '2026-09-10', hrv: 55 })).status).toBe(201);
    const reused = await postWellness<Problem>(key, { date: '2026-09-10', hrv: 80 });
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toContain('application/problem+json');
    expect(reused.body.code).toBe('idempotency_key_reused');
    expect((await wellnessRow(athlete, '2026-09-10'))?.hrv).toBe(55);
  });

  it('refuses the same key on another route with 422', async () => {
    const key = newKey();
    expect((await postWellness(key, { date: '2026-09-11', hrv: 55 })).status).toBe(201);
    const other = await call<Problem>(server.url, 'POST', '/api/nutrition', {
      token: (await mintToken(server.db, athlete, { scopes: ['nutrition:write'] })).token,
      body: { date: '2026-09-11', items: [] },
      headers: { 'idempotency-key': key },
    });
    // Another token of the same user and developer app: same scope, so the key is the same key.
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
  });

  it('answers 409 idempotency_in_progress with Retry-After while the first request with the key still runs', async () => {
    const key = newKey();
    const body = { date: '2026-09-12', hrv: 66 };
    let first: Promise<JsonResponse<WellnessRecord>> | undefined;
    // Hold the first request inside its handler: its upsert waits for this lock.
    await server.db.transaction().execute(async (trx) => {
      await sql`LOCK TABLE wellness IN SHARE ROW EXCLUSIVE MODE`.execute(trx);
      first = postWellness(key, body);
      await waitFor(() => keyInFlight(key), 'the first request to claim the key');
      const second = await postWellness<Problem>(key, body);
      expect(second.status).toBe(409);
      expect(second.body.code).toBe('idempotency_in_progress');
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    });
    const done = await first;
    expect(done?.status).toBe(201);
    const third = await postWellness(key, body);
    expect(third.status).toBe(201);
    expect(third.headers.get('idempotent-replayed')).toBe('true');
  });

  it('lets exactly one of many concurrent requests with one key run', async () => {
    const key = newKey();
    const body = { date: '2026-09-13', hrv: 70 };
    const answers = await Promise.all(Array.from({ length: 10 }, () => postWellness(key, body)));
    const statuses = answers.map((answer) => answer.status);
    const ran = answers.filter((answer) => answer.status === 201 && !answer.headers.get('idempotent-replayed'));
    expect(ran).toHaveLength(1);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
  });
});

describe('scope', () => {
  it("does not collide with another user's key", async () => {
    const key = newKey();
    const other = await makeUser(server.db);
    const otherToken = (await mintToken(server.db, other, { scopes: ['health:write'] })).token;
    const body = { date: '2026-09-20', hrv: 58 };
    expect((await postWellness(key, body)).status).toBe(201);
    const theirs = await postWellness(key, body, { token: otherToken });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect((await wellnessRow(other, '2026-09-20'))?.hrv).toBe(58);
  });

  it("does not collide with another app's key for the same user", async () => {
    const key = newKey();
    const app = await makeApp(server.db, athlete, 'Another app');
    const appToken = (await mintToken(server.db, athlete, { scopes: ['health:write'], client: app })).token;
    const body = { date: '2026-09-21', hrv: 59 };
    expect((await postWellness(key, body)).status).toBe(201);
    const fromApp = await postWellness(key, body, { token: appToken });
    // The app's request ran: it updated the day the first request created.
    expect(fromApp.status).toBe(200);
    expect(fromApp.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('failures and expiry', () => {
  it('releases the key when the request fails with a 5xx, so a retry runs', async () => {
    const key = newKey();
    const body = { date: '2026-09-25', comments: 'explode' };
    await sql`ALTER TABLE wellness ADD CONSTRAINT test_explode CHECK (comments IS DISTINCT FROM 'explode')`.execute(
      server.db,
    );
    let failed: JsonResponse<Problem>;
    try {
      failed = await postWellness<Problem>(key, body);
    } finally {
      await sql`ALTER TABLE wellness DROP CONSTRAINT test_explode`.execute(server.db);
    }
    expect(failed.status).toBe(500);
    expect(await storedKey(key)).toBeUndefined();
    const retried = await postWellness(key, body);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  it('runs the request again once the stored key has expired (24 h)', async () => {
    const key = newKey();
    const body = { date: '2026-09-26', hrv: 45 };
    const first = await postWellness(key, body);
    expect(first.status).toBe(201);
    const stored = await storedKey(key);
    expect(stored?.state).toBe('completed');
    const ttlMs = (stored?.expiresAt.getTime() ?? 0) - (stored?.createdAt.getTime() ?? 0);
    expect(ttlMs).toBe(86_400_000);
    await server.db
      .updateTable('idempotencyKeys')
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where('key', '=', key)
      .execute();
    const again = await postWellness(key, body);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  });

  it('takes over a key whose first request was abandoned (its process died: lease over)', async () => {
    const key = newKey();
    const body = { date: '2026-09-27', hrv: 46 };
    await server.db
      .insertInto('idempotencyKeys')
      .values({
        userId: athlete.id,
        clientId,
        key,
        claimId: '00000000-0000-4000-8000-000000000000',
        fingerprint: 'abandoned',
        method: 'POST',
        path: '/api/wellness',
        requestContentLength: null,
        bodySha256: null,
        state: 'in_progress',
        responseStatus: null,
        responseContentType: null,
        responseBody: null,
        completedAt: null,
        leaseExpiresAt: new Date(Date.now() - 1000),
        expiresAt: new Date(Date.now() + 3_600_000),
      })
      .execute();
    const answer = await postWellness(key, body);
    expect(answer.status).toBe(201);
    expect((await storedKey(key))?.state).toBe('completed');
  });

  it('leaves neither the writes nor the key of a request whose process was killed: the retry runs at once, and once', async () => {
    const planner = await mintToken(server.db, athlete, { scopes: ['planning:read', 'planning:write'] });
    const key = newKey();
    const title = `Killed mid-write ${key}`;
    const body = { date: '2026-12-20', sport: 'run', title };
    const doomed = await startPacerProcess('api', server.databaseUrl);
    try {
      let first: Promise<unknown> | undefined;
      // Hold the request at its insert (the key is claimed by then), and kill its process there.
      await server.db.transaction().execute(async (trx) => {
        await sql`LOCK TABLE planned_workouts IN SHARE ROW EXCLUSIVE MODE`.execute(trx);
        first = call(doomed.url ?? '', 'POST', '/api/planned-workouts', {
          token: planner.token,
          body,
          headers: { 'idempotency-key': key },
        }).catch((error: unknown) => error);
        await waitFor(() => keyInFlight(key, planner.clientId), 'the request to claim the key');
        await doomed.kill();
      });
      await first;
    } finally {
      await doomed.kill();
    }
    // PostgreSQL rolls the dead request's transaction back: nothing of it was committed.
    expect(await storedKey(key)).toBeUndefined();
    const rowsOf = () =>
      server.db
        .selectFrom('plannedWorkouts')
        .select('id')
        .where('userId', '=', athlete.id)
        .where('title', '=', title)
        .execute();
    expect(await rowsOf()).toHaveLength(0);
    // The retry is not refused while a lease runs out: it runs (once the dead backend has let go).
    let retried: JsonResponse<{ id: string }> | undefined;
    await waitFor(async () => {
      retried = await call<{ id: string }>(server.url, 'POST', '/api/planned-workouts', {
        token: planner.token,
        body,
        headers: { 'idempotency-key': key },
      });
      return retried.status !== 409;
    }, 'the retry to run');
    expect(retried?.status).toBe(201);
    expect(retried?.headers.get('idempotent-replayed')).toBeNull();
    expect(await rowsOf()).toEqual([{ id: retried?.body.id }]);
    const again = await call<{ id: string }>(server.url, 'POST', '/api/planned-workouts', {
      token: planner.token,
      body,
      headers: { 'idempotency-key': key },
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await rowsOf()).toHaveLength(1);
  });

  it('the maintenance purge deletes expired keys and keeps live ones', async () => {
    const expired = newKey();
    const live = newKey();
    await postWellness(expired, { date: '2026-09-28', hrv: 47 });
    await postWellness(live, { date: '2026-09-29', hrv: 48 });
    await server.db
      .updateTable('idempotencyKeys')
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where('key', '=', expired)
      .execute();
    const removed = await purgeExpired(server.db, 0);
    expect(removed.idempotencyKeys).toBeGreaterThanOrEqual(1);
    expect(await storedKey(expired)).toBeUndefined();
    expect(await storedKey(live)).toBeDefined();
  });
});

describe('multipart uploads', () => {
  let uploadToken: string;
  beforeAll(async () => {
    uploadToken = (await mintToken(server.db, athlete, { scopes: ['workout:write'] })).token;
  });

  /** A fresh FormData per call, as a retrying client builds it: a new boundary each time. */
  async function upload(key: string, bytes: Uint8Array, name: string) {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(bytes)]), 'ride.fit');
    form.set('name', name);
    const response = await fetch(`${server.url}/api/workouts/upload-fit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${uploadToken}`, 'idempotency-key': key },
      body: form,
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as unknown };
  }

  it('replays an upload retried with the same key and file, keeping the SHA-256 the route computed', async () => {
    const key = newKey();
    const ride = oneHourRide();
    const first = await upload(key, ride.bytes, 'Morning ride');
    expect(first.status).toBe(201);
    const retry = await upload(key, ride.bytes, 'Morning ride');
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const stored = await storedKey(key);
    expect(stored?.bodySha256).toBe((first.body as { file: { sha256: string } }).file.sha256);
  });

  it('refuses the same key with a file of another length with 422', async () => {
    const key = newKey();
    const ride = oneHourRide({ startTime: new Date('2026-11-12T06:00:00Z') });
    expect((await upload(key, ride.bytes, 'Ride')).status).toBe(201);
    const shorter = oneHourRide({ startTime: new Date('2026-11-12T06:00:00Z'), samples: rideSamples(1800) });
    const other = await upload(key, shorter.bytes, 'Ride');
    expect(other.status).toBe(422);
    expect((other.body as Problem).code).toBe('idempotency_key_reused');
  });
  it('answers 409 while the first upload with the key is still streaming its body', async () => {
    const key = newKey();
    const ride = oneHourRide({ startTime: new Date('2026-11-13T06:00:00Z') });
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(ride.bytes)]), 'ride.fit');
    form.set('name', 'Slow upload');
    const encoded = new Request('http://localhost/', { method: 'POST', body: form });
    const bytes = Buffer.from(await encoded.arrayBuffer());
    const { request } = await import('node:http');
    // Send the headers and half the body now, the rest after the retry.
    const req = request(`${server.url}/api/workouts/upload-fit`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${uploadToken}`,
        'idempotency-key': key,
        'content-type': encoded.headers.get('content-type') ?? '',
        'content-length': String(bytes.length),
      },
    });
    const answered = new Promise<number>((resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
    });
    req.write(bytes.subarray(0, bytes.length >> 1));
    await waitFor(() => keyInFlight(key), 'the upload to claim the key');
    const retry = await upload(key, ride.bytes, 'Slow upload');
    expect(retry.status).toBe(409);
    expect((retry.body as Problem).code).toBe('idempotency_in_progress');
    req.end(bytes.subarray(bytes.length >> 1));
    expect(await answered).toBe(201);
    const replayed = await upload(key, ride.bytes, 'Slow upload');
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('key format', () => {
  it.each([
    ['too long', 'k'.repeat(256)],
    ['with a space', 'my key'],
    ['with a non-ASCII character', 'clé'],
  ])('refuses a key %s with 400 validation_failed', async (_case, key) => {
    const answer = await call<Problem>(server.url, 'POST', '/api/wellness', {
      token,
      body: { date: '2026-09-30', hrv: 50 },
      headers: { 'idempotency-key': key },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('validation_failed');
    expect(answer.body.errors?.[0]?.path).toBe('Idempotency-Key');
    expect(await wellnessRow(athlete, '2026-09-30')).toBeUndefined();
  });

  it('accepts a 255-character key', async () => {
    expect((await postWellness('k'.repeat(255), { date: '2026-09-30', hrv: 50 })).status).toBe(201);
  });

  it('ignores the key on reads', async () => {
    const key = newKey();
    const answer = await call(server.url, 'GET', '/api/wellness?from=2026-09-01&to=2026-09-30', {
      token,
      headers: { 'idempotency-key': key },
    });
    expect(answer.status).toBe(200);
    expect(await storedKey(key)).toBeUndefined();
  });
});

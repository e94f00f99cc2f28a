/**
 * Derived data is kept current (docs/design.md §3 "Derived data"): every input
 * write (REST, webhook, MCP) appends a change record in its own transaction;
 * the worker's drainer serves a user's records in one run that recomputes
 * training load, recovery, fuel and recommendations from the earliest changed
 * date and deletes the records in the transaction that stores the numbers.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecoveryDay, TrainingLoad } from '@pacer/contract';
import type { Db, DbOrTrx } from '../../server/src/db/database.ts';
import type { User } from '../../server/src/db/tables.ts';
import type { Actor } from '../../server/src/lib/actor.ts';
import { addDays } from '../../server/src/lib/dates.ts';
import { recomputeUser, recordDayRollovers } from '../../server/src/modules/derived/recompute.service.ts';
import { listUsersWithChanges } from '../../server/src/modules/changes/changes.repository.ts';
import { upsertNutritionDay } from '../../server/src/modules/nutrition/nutrition.service.ts';
import { upsertWellnessDay } from '../../server/src/modules/wellness/wellness.service.ts';
import { upsertWorkoutWithFile } from '../../server/src/modules/workouts/workouts.repository.ts';
import { tryLockUserForRecompute } from '../../server/src/modules/derived/recompute.repository.ts';
import { recoveryForDay } from '../../server/src/modules/derived/recovery.model.ts';
import { makeUser, makeWebhookApp, mintToken } from '../support/factories.ts';
import { oneHourRide } from '../support/fit-fixtures.ts';
import { call } from '../support/http.ts';
import { connectWithToken, toolResult } from '../support/mcp-client.ts';
import { waitForRecompute } from '../support/recompute.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait.ts';
import { startPacerProcess } from '../support/webhooks-cluster.ts';
import { deliver } from '../support/webhooks.ts';
import { uploadedWorkoutRow } from '../support/training-data.ts';

const today = () => new Date().toISOString().slice(0, 10);

async function changesOf(db: DbOrTrx, userId: string) {
  return db
    .selectFrom('derivedChanges')
    .select(['kind', 'fromDate'])
    .where('userId', '=', userId)
    .orderBy('id')
    .execute();
}

async function storedRecoveryDays(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('dailyRecovery')
    .select((eb) => eb.fn.countAll<number>().as('days'))
    .where('userId', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.days);
}

/** The row version of each stored day of a derived table: a day rewritten by a run gets a new one. */
async function rowVersions(
  db: Db,
  table: 'daily_training_load' | 'daily_recovery' | 'fuel_days',
  userId: string,
): Promise<Map<string, string>> {
  const { rows } = await sql<{ date: string; version: string }>`
    select date::text as date, xmin::text as version from ${sql.table(table)} where user_id = ${userId}`.execute(db);
  return new Map(rows.map((row) => [row.date, row.version]));
}

/** The days of `after` whose row version differs from `before` (a day new in `after` counts). */
function rewrittenDays(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...after].filter(([date, version]) => before.get(date) !== version).map(([date]) => date);
}

describe('change records and runs (an API process: no drainer, runs are called here)', () => {
  let api: TestServer;
  beforeAll(async () => {
    api = await startTestServer({ PACER_ROLE: 'api' });
  });
  afterAll(async () => {
    await api.stop();
  });

  async function athlete(): Promise<{ user: User; token: string }> {
    const user = await makeUser(api.db);
    const { token } = await mintToken(api.db, user, {
      scopes: ['health:write', 'health:read', 'profile:write', 'planning:write'],
    });
    return { user, token };
  }

  it('each input write appends one change record with what changed and from which date', async () => {
    expect(api.runtime.derived).toBeUndefined();
    const { user, token } = await athlete();
    const wellness = await call(api.url, 'POST', '/api/wellness', { token, body: { date: '2026-10-03', hrv: 60 } });
    expect(wellness.status).toBe(201);
    const plan = { date: '2026-10-05', sport: 'ride', title: 'Ride', durationSecs: 3600 };
    expect((await call(api.url, 'POST', '/api/planned-workouts', { token, body: plan })).status).toBe(201);
    expect((await call(api.url, 'PATCH', '/api/profile', { token, body: { ftp: 250 } })).status).toBe(200);
    expect(await changesOf(api.db, user.id)).toEqual([
      { kind: 'wellness', fromDate: '2026-10-03' },
      { kind: 'planned_workouts', fromDate: '2026-10-05' },
      { kind: 'profile', fromDate: '0001-01-01' },
    ]);
  });

  it('a write and its change record commit together or not at all, in the transaction passed down', async () => {
    const { user } = await athlete();
    const actor: Actor = { userId: user.id, timeZone: 'UTC', source: 'test-app', scopes: [] };
    const nutrition = {
      date: '2026-10-04',
      items: [
        {
          name: 'Rice',
          carbs: 80,
          logged_at: '2026-10-04T12:00:00Z',
          absorptionType: 'BALANCED' as const,
          planned: false,
        },
      ],
    };
    const rolledBack = new Error('the caller gives up');
    const written = api.db.transaction().execute(async (trx) => {
      await upsertWellnessDay({ db: trx }, actor, { date: '2026-10-03', hrv: 60 });
      await upsertNutritionDay({ db: trx }, actor, nutrition);
      // Inside the caller's transaction both writes and both records are there...
      expect(await changesOf(trx, user.id)).toHaveLength(2);
      throw rolledBack;
    });
    await expect(written).rejects.toBe(rolledBack);
    // ...and its rollback takes both away.
    expect(await changesOf(api.db, user.id)).toEqual([]);
    expect(await api.db.selectFrom('wellness').select('date').where('userId', '=', user.id).execute()).toEqual([]);
    expect(await api.db.selectFrom('nutritionLogs').select('date').where('userId', '=', user.id).execute()).toEqual([]);

    await api.db.transaction().execute(async (trx) => {
      await upsertWellnessDay({ db: trx }, actor, { date: '2026-10-03', hrv: 60 });
      await upsertNutritionDay({ db: trx }, actor, nutrition);
    });
    expect(await changesOf(api.db, user.id)).toEqual([
      { kind: 'wellness', fromDate: '2026-10-03' },
      // An item may have been eaten the day before the log's date: from the day before.
      { kind: 'nutrition', fromDate: '2026-10-03' },
    ]);
  });

  it('a FIT upload appends its change record with the workout, once: not when the same bytes come again', async () => {
    const { user } = await athlete();
    const rest = await mintToken(api.db, user, { scopes: ['workout:write'] });
    const fit = oneHourRide();
    const send = async (name: string) => {
      const form = new FormData();
      form.append('file', new Blob([fit.bytes as Uint8Array<ArrayBuffer>]), 'ride.fit');
      form.append('name', name);
      const res = await fetch(`${api.url}/api/workouts/upload-fit`, {
        method: 'POST',
        headers: { authorization: `Bearer ${rest.token}` },
        body: form,
      });
      return { status: res.status, body: (await res.json()) as { id: string; localDate: string } };
    };
    const created = await send('Ride');
    expect(created.status).toBe(201);
    expect(await changesOf(api.db, user.id)).toEqual([{ kind: 'workouts', fromDate: created.body.localDate }]);
    // A relabel changes no derived number.
    const relabelled = await send('Ride, renamed');
    expect(relabelled.status).toBe(200);
    expect(relabelled.body.id).toBe(created.body.id);
    expect(await changesOf(api.db, user.id)).toHaveLength(1);
  });

  it("an upload's statement that only relabels (it lost the race to create) appends no change record", async () => {
    const { user } = await athlete();
    const row = uploadedWorkoutRow({
      userId: user.id,
      fileSha256: 'a'.repeat(64),
      fileSize: 3,
      name: 'Ride',
      source: 'test-app',
      sport: 'cycling',
      startTime: '2026-10-06T07:00:00.000Z',
      localDate: '2026-10-06',
    });
    const bytes = Buffer.from([1, 2, 3]);
    const first = await upsertWorkoutWithFile(api.db, row, {}, bytes);
    const again = { ...row, name: 'Ride again', metadata: '{"device":"other"}' };
    const second = await upsertWorkoutWithFile(api.db, again, { name: again.name }, bytes);
    expect([first.created, second.created]).toEqual([true, false]);
    // It takes the name it was sent, and keeps the metadata it was not.
    expect(second.workout.id).toBe(first.workout.id);
    expect([second.workout.name, second.workout.metadata]).toEqual(['Ride again', {}]);
    expect(await changesOf(api.db, user.id)).toEqual([{ kind: 'workouts', fromDate: '2026-10-06' }]);
  });

  it('a refused write appends no change record', async () => {
    const { user, token } = await athlete();
    const refused = await call(api.url, 'POST', '/api/wellness', { token, body: { date: '2026-10-03', hrv: 'high' } });
    expect(refused.status).toBe(400);
    expect(await changesOf(api.db, user.id)).toEqual([]);
  });

  it("the drainer's poll finds a user once the records have settled, but not one it is told to leave out", async () => {
    const { user, token } = await athlete();
    const body = { date: today(), hrv: 60 };
    expect((await call(api.url, 'POST', '/api/wellness', { token, body })).status).toBe(201);
    const settle = { quietMs: 100, maxWaitMs: 60_000 };
    // Fresh: neither quiet for long enough nor old enough.
    expect(await listUsersWithChanges(api.db, 1000, { quietMs: 60_000, maxWaitMs: 60_000 })).not.toContain(user.id);
    await waitFor(async () => (await listUsersWithChanges(api.db, 1000, settle)).includes(user.id), 'settled');
    expect(await listUsersWithChanges(api.db, 1000, settle, [user.id])).not.toContain(user.id);
    const other = await athlete();
    expect((await call(api.url, 'POST', '/api/wellness', { token: other.token, body })).status).toBe(201);
    await waitFor(async () => (await listUsersWithChanges(api.db, 1000, settle)).includes(other.user.id), 'settled');
    // The longest-waiting first.
    const found = await listUsersWithChanges(api.db, 1000, settle, [other.user.id]);
    expect(found).toContain(user.id);
    expect(found).not.toContain(other.user.id);
    const both = await listUsersWithChanges(api.db, 1000, settle);
    expect(both.indexOf(user.id)).toBeLessThan(both.indexOf(other.user.id));
    await recomputeUser(api.db, user.id);
    await recomputeUser(api.db, other.user.id);
    expect(await listUsersWithChanges(api.db, 1000, settle)).not.toContain(user.id);
  });

  it('serves a burst of concurrent writes in one run, from the earliest changed date', async () => {
    const { user, token } = await athlete();
    const end = today();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        call(api.url, 'POST', '/api/wellness', { token, body: { date: addDays(end, -index), hrv: 50 + (index % 9) } }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
    expect(await changesOf(api.db, user.id)).toHaveLength(40);

    const run = await recomputeUser(api.db, user.id);
    expect(run).toMatchObject({ changes: 40, changedFrom: addDays(end, -39), from: addDays(end, -39), to: end });
    // The one run consumed every record: a second finds nothing to do.
    expect(await recomputeUser(api.db, user.id)).toBeUndefined();
    expect(await changesOf(api.db, user.id)).toEqual([]);
    expect(await storedRecoveryDays(api.db, user.id)).toBe(40);
  });

  it('recomputes from the earliest changed date on, writes the days that moved, and leaves the days before it as they were', async () => {
    const { user, token } = await athlete();
    const end = today();
    for (let back = 20; back >= 0; back--) {
      const body = { date: addDays(end, -back), hrv: 55 + (back % 5), restingHr: 50 };
      expect((await call(api.url, 'POST', '/api/wellness', { token, body })).status).toBe(201);
    }
    expect(await recomputeUser(api.db, user.id)).toMatchObject({ changes: 21, from: addDays(end, -20) });
    const before = await rowVersions(api.db, 'daily_recovery', user.id);
    expect(before.size).toBe(21);

    for (const back of [5, 12, 7]) {
      const body = { date: addDays(end, -back), hrv: 70 };
      expect((await call(api.url, 'POST', '/api/wellness', { token, body })).status).toBe(200);
    }
    const changedFrom = addDays(end, -12);
    expect(await recomputeUser(api.db, user.id)).toMatchObject({ changes: 3, changedFrom, from: changedFrom });
    const after = await rowVersions(api.db, 'daily_recovery', user.id);
    // Before the changed date nothing is touched; from it on, the days whose numbers moved are rewritten
    // (the changed days themselves at least; a later day whose score came out the same keeps its row).
    const rewritten = rewrittenDays(before, after);
    expect(rewritten.every((date) => date >= changedFrom)).toBe(true);
    expect(rewritten).toEqual(expect.arrayContaining([5, 12, 7].map((back) => addDays(end, -back))));
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
  });

  it('a run writes only the derived days whose numbers changed: a sleep value moves its own day alone', async () => {
    const { user, token } = await athlete();
    const end = today();
    for (let back = 20; back >= 0; back--) {
      const body = { date: addDays(end, -back), hrv: 55 + (back % 5), restingHr: 50, sleepSecs: 28_000 };
      expect((await call(api.url, 'POST', '/api/wellness', { token, body })).status).toBe(201);
    }
    expect(await recomputeUser(api.db, user.id)).toMatchObject({ changes: 21, from: addDays(end, -20) });
    const before = await rowVersions(api.db, 'daily_recovery', user.id);

    // Sleep is scored on its own night only: the days after it are recomputed but come out the same.
    const body = { date: addDays(end, -10), sleepSecs: 20_000 };
    expect((await call(api.url, 'POST', '/api/wellness', { token, body })).status).toBe(200);
    expect(await recomputeUser(api.db, user.id)).toMatchObject({ changes: 1, from: addDays(end, -10), days: 11 });
    const after = await rowVersions(api.db, 'daily_recovery', user.id);
    expect(rewrittenDays(before, after)).toEqual([addDays(end, -10)]);
    const [day] = await api.db
      .selectFrom('dailyRecovery')
      .select('components')
      .where('userId', '=', user.id)
      .where('date', '=', addDays(end, -10))
      .execute();
    expect(day?.components.sleep.value).toBe(20_000);

    // The same values again: the run finds nothing to write.
    expect((await call(api.url, 'POST', '/api/wellness', { token, body })).status).toBe(200);
    expect(await recomputeUser(api.db, user.id)).toMatchObject({ changes: 1 });
    expect(rewrittenDays(after, await rowVersions(api.db, 'daily_recovery', user.id))).toEqual([]);
  });

  it('a run rewrites only what its changes feed: wellness recovery, a weight fuel too, a workout all three', async () => {
    const user = await makeUser(api.db);
    const scopes = ['health:write', 'nutrition:write', 'workout:write'] as const;
    const { token } = await mintToken(api.db, user, { scopes: [...scopes] });
    const end = today();
    for (let back = 10; back >= 0; back--) {
      const body = { date: addDays(end, -back), hrv: 55 + (back % 5), restingHr: 50, weight: 70 };
      expect((await call(api.url, 'POST', '/api/wellness', { token, body })).status).toBe(201);
    }
    expect(await recomputeUser(api.db, user.id)).toMatchObject({ changes: 11, from: addDays(end, -10) });
    const versions = async () => ({
      load: await rowVersions(api.db, 'daily_training_load', user.id),
      recovery: await rowVersions(api.db, 'daily_recovery', user.id),
      fuel: await rowVersions(api.db, 'fuel_days', user.id),
    });
    const first = await versions();
    expect(first.load.size).toBe(11);
    expect(first.fuel.size).toBeGreaterThan(11);

    // A wellness day without a weight feeds recovery only: training load and fuel keep their rows.
    const hrv = { date: addDays(end, -4), hrv: 80 };
    expect((await call(api.url, 'POST', '/api/wellness', { token, body: hrv })).status).toBe(200);
    expect(await changesOf(api.db, user.id)).toEqual([{ kind: 'wellness', fromDate: addDays(end, -4) }]);
    expect(await recomputeUser(api.db, user.id)).toMatchObject({
      changes: 1,
      outputs: { recovery: addDays(end, -4) },
      from: addDays(end, -4),
    });
    const second = await versions();
    expect(rewrittenDays(first.load, second.load)).toEqual([]);
    expect(rewrittenDays(first.fuel, second.fuel)).toEqual([]);
    const recoveryRewritten = rewrittenDays(first.recovery, second.recovery);
    expect(recoveryRewritten).toContain(addDays(end, -4));
    expect(recoveryRewritten.every((date) => date >= addDays(end, -4))).toBe(true);

    // A weight is a body mass the fuel model reads (no weight in the profile): fuel is rewritten from that day.
    const weight = { date: addDays(end, -2), weight: 64 };
    expect((await call(api.url, 'POST', '/api/wellness', { token, body: weight })).status).toBe(200);
    expect(await changesOf(api.db, user.id)).toEqual([{ kind: 'body_mass', fromDate: addDays(end, -2) }]);
    expect(await recomputeUser(api.db, user.id)).toMatchObject({
      outputs: { recovery: addDays(end, -2), fuel: addDays(end, -2) },
    });
    const third = await versions();
    expect(rewrittenDays(second.load, third.load)).toEqual([]);
    const fuelRewritten = rewrittenDays(second.fuel, third.fuel);
    expect(fuelRewritten.length).toBeGreaterThan(0);
    expect(fuelRewritten.every((date) => date >= addDays(end, -2))).toBe(true);

    // Meals feed fuel only.
    const meal = {
      date: addDays(end, -1),
      items: [{ name: 'Rice', carbs: 80, logged_at: `${addDays(end, -1)}T12:00:00Z`, absorptionType: 'BALANCED' }],
    };
    expect((await call(api.url, 'POST', '/api/nutrition', { token, body: meal })).status).toBeLessThan(300);
    expect(await recomputeUser(api.db, user.id)).toMatchObject({ outputs: { fuel: addDays(end, -2) }, from: null });
    const fourth = await versions();
    expect(rewrittenDays(third.load, fourth.load)).toEqual([]);
    expect(rewrittenDays(third.recovery, fourth.recovery)).toEqual([]);

    // A workout feeds all three, from its day on.
    const form = new FormData();
    form.append('file', new Blob([oneHourRide().bytes as Uint8Array<ArrayBuffer>]), 'ride.fit');
    const upload = await fetch(`${api.url}/api/workouts/upload-fit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expect(upload.status).toBe(201);
    const [change] = await changesOf(api.db, user.id);
    expect(change?.kind).toBe('workouts');
    const run = await recomputeUser(api.db, user.id);
    expect(run?.outputs).toEqual({
      trainingLoad: change?.fromDate,
      recovery: change?.fromDate,
      fuel: change?.fromDate,
    });
    const fifth = await versions();
    expect(rewrittenDays(fourth.load, fifth.load).length).toBeGreaterThan(0);
  });

  it('never runs one user in two places at once: a run finding the user held leaves the records for later', async () => {
    const { user, token } = await athlete();
    const body = { date: today(), hrv: 61, restingHr: 49 };
    expect((await call(api.url, 'POST', '/api/wellness', { token, body })).status).toBe(201);

    // Another worker's run holds the user (its transaction holds the per-user lock) while this one tries.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const otherRun = api.db.transaction().execute(async (trx) => {
      expect(await tryLockUserForRecompute(trx, user.id)).toBe(true);
      holding();
      await released;
    });
    await held;
    expect(await recomputeUser(api.db, user.id)).toBeUndefined();
    expect(await changesOf(api.db, user.id)).toHaveLength(1);
    release();
    await otherRun;

    expect(await recomputeUser(api.db, user.id)).toMatchObject({ changes: 1 });
    expect(await storedRecoveryDays(api.db, user.id)).toBe(1);
  });

  it('takes the change records of a user who is gone (no foreign key holds them back) and computes nothing for them', async () => {
    const { user, token } = await athlete();
    expect((await call(api.url, 'POST', '/api/wellness', { token, body: { date: today(), hrv: 58 } })).status).toBe(
      201,
    );
    // The user's row deleted by hand, as an operator would: the rows of their data go with it, not the records.
    await sql`delete from users where id = ${user.id}`.execute(api.db);
    await sql`insert into derived_changes (user_id, kind, from_date) values (${user.id}, 'day_rollover', ${today()})`.execute(
      api.db,
    );
    expect(await changesOf(api.db, user.id)).toHaveLength(2);
    expect(await listUsersWithChanges(api.db, 1000, { quietMs: 0, maxWaitMs: 0 })).toContain(user.id);

    expect(await recomputeUser(api.db, user.id)).toBeUndefined();
    expect(await changesOf(api.db, user.id)).toEqual([]);
    expect(await storedRecoveryDays(api.db, user.id)).toBe(0);
    expect(await listUsersWithChanges(api.db, 1000, { quietMs: 0, maxWaitMs: 0 })).not.toContain(user.id);
  });

  it('the hourly rollover brings a user whose numbers end before their today forward from their last day', async () => {
    const { user, token } = await athlete();
    const end = today();
    const body = { date: addDays(end, -3), hrv: 60, restingHr: 50 };
    expect((await call(api.url, 'POST', '/api/wellness', { token, body })).status).toBe(201);
    // Computed three days ago: the stored days end there.
    const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000);
    expect(await recomputeUser(api.db, user.id, threeDaysAgo)).toMatchObject({ to: addDays(end, -3) });

    expect(await recordDayRollovers(api.db)).toBeGreaterThanOrEqual(1);
    expect(await changesOf(api.db, user.id)).toEqual([{ kind: 'day_rollover', fromDate: addDays(end, -3) }]);
    expect(await recomputeUser(api.db, user.id)).toMatchObject({ changedFrom: addDays(end, -3), to: end });
    expect(await storedRecoveryDays(api.db, user.id)).toBe(4);
  });
});

describe('a worker killed in the middle of a run', () => {
  it('leaves the change records, and the next worker serves them exactly once', async () => {
    const api = await startTestServer({ PACER_ROLE: 'api' });
    const blocker = new pg.Client({ connectionString: api.databaseUrl });
    await blocker.connect();
    let worker = await startPacerProcess('worker', api.databaseUrl, { PACER_DERIVED_POLL_MS: '50' });
    try {
      const user = await makeUser(api.db);
      const { token } = await mintToken(api.db, user, { scopes: ['health:write'] });
      // The run will stop at the recovery rows: training load written, records taken, nothing committed.
      await blocker.query('begin');
      await blocker.query('lock table daily_recovery in access exclusive mode');
      const date = today();
      expect((await call(api.url, 'POST', '/api/wellness', { token, body: { date, hrv: 58 } })).status).toBe(201);
      // The run's backend waiting for the lock: nothing else in this database takes one on the table.
      // (pg_stat_activity may still show the statement before: the next one waits as it is parsed.)
      const blockedRun = async () => {
        const { rows } = await blocker.query<{ pid: number }>(
          `select pid from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
        );
        return rows[0]?.pid;
      };
      await waitFor(async () => (await blockedRun()) !== undefined, 'the run to wait on the recovery rows', 30_000);
      const runPid = await blockedRun();

      await worker.kill();
      await blocker.query('commit');
      // The killed worker's transaction rolls back as its backend finds the client gone.
      await waitFor(async () => {
        const { rows } = await blocker.query('select 1 from pg_stat_activity where pid = $1', [runPid]);
        return rows.length === 0;
      }, 'the killed run to end');
      expect(await changesOf(api.db, user.id)).toEqual([{ kind: 'wellness', fromDate: date }]);
      expect(await storedRecoveryDays(api.db, user.id)).toBe(0);
      const load = await api.db.selectFrom('dailyTrainingLoad').select('date').where('userId', '=', user.id).execute();
      expect(load).toEqual([]);

      worker = await startPacerProcess('worker', api.databaseUrl, { PACER_DERIVED_POLL_MS: '50' });
      await waitForRecompute(api.db, user.id);
      expect(await storedRecoveryDays(api.db, user.id)).toBe(1);
      expect(await changesOf(api.db, user.id)).toEqual([]);
    } finally {
      await worker.stop();
      await blocker.end();
      await api.stop();
    }
  }, 120_000);
});

describe('in the default deployment (API and drainer in one process)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  /** Wait until the user's change records are served and `check` holds. */
  const settled = (user: User, check?: () => Promise<void>) => waitForRecompute(server.db, user.id, check);

  async function recoveryOf(token: string, date: string): Promise<RecoveryDay | undefined> {
    const res = await call<{ items: RecoveryDay[] }>(server.url, 'GET', `/api/recovery?from=${date}&to=${date}`, {
      token,
    });
    expect(res.status).toBe(200);
    return res.body.items[0];
  }

  it('REST wellness writes give each day a stored recovery score that the model explains', async () => {
    const user = await makeUser(server.db);
    const { token } = await mintToken(server.db, user, { scopes: ['health:write', 'health:read'] });
    const end = today();
    const history = [];
    for (let back = 40; back >= 0; back--) {
      const day = {
        date: addDays(end, -back),
        hrv: 60 + ((back * 7) % 11) - 5,
        restingHr: 48 + (back % 3),
        sleepSecs: 7 * 3600 + (back % 4) * 900,
      };
      history.push(day);
      expect((await call(server.url, 'POST', '/api/wellness', { token, body: day })).status).toBe(201);
    }
    await settled(user, async () => expect(await recoveryOf(token, end)).toBeDefined());

    const stored = await recoveryOf(token, end);
    const expected = recoveryForDay({ date: end, history });
    expect(stored?.status).toBe(expected.status);
    expect(stored?.score).toBeCloseTo(expected.score ?? Number.NaN, 2);
    expect(stored?.explanation).toBe(expected.explanation);
    expect(stored?.components.hrv.available).toBe(true);
    expect(stored?.components.hrv.baseline?.low).toBeLessThan(stored?.components.hrv.baseline?.high ?? 0);
  });

  it('a FIT upload adds the workout day to the training load, and an FTP change re-scores it by power', async () => {
    const user = await makeUser(server.db);
    const rest = await mintToken(server.db, user, { scopes: ['workout:write', 'workout:read', 'profile:write'] });
    const fit = oneHourRide();
    const form = new FormData();
    form.append('file', new Blob([fit.bytes as Uint8Array<ArrayBuffer>]), 'ride.fit');
    const upload = await fetch(`${server.url}/api/workouts/upload-fit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rest.token}` },
      body: form,
    });
    const workout = (await upload.json()) as {
      localDate: string;
      normalizedPower: number | null;
      movingSecs: number | null;
      elapsedSecs: number;
    };
    const load = async () =>
      (
        await call<TrainingLoad>(
          server.url,
          'GET',
          `/api/training-load?from=${workout.localDate}&to=${workout.localDate}`,
          { token: rest.token },
        )
      ).body.items[0];
    await settled(user, async () => expect((await load())?.tss).toBeGreaterThan(0));
    expect(await load()).toMatchObject({ method: 'estimate', atl: expect.any(Number), ctl: expect.any(Number) });

    expect((await call(server.url, 'PATCH', '/api/profile', { token: rest.token, body: { ftp: 250 } })).status).toBe(
      200,
    );
    await settled(user, async () => expect((await load())?.method).toBe('power'));
    // Coggan: TSS = hours × (NP / FTP)² × 100, over the moving time.
    const hours = (workout.movingSecs ?? workout.elapsedSecs) / 3600;
    const intensity = (workout.normalizedPower ?? 0) / 250;
    expect((await load())?.tss).toBeCloseTo(hours * intensity ** 2 * 100, 1);
  });

  it('a webhook event and an MCP write trigger the same recompute', async () => {
    const user = await makeUser(server.db);
    const { client, webhookSecret } = await makeWebhookApp(server.db, user, 'Pusher');
    await mintToken(server.db, user, { scopes: ['health:write'], client });
    const read = await mintToken(server.db, user, { scopes: ['health:read'] });
    const date = today();
    const ack = await deliver(
      server,
      client.clientId,
      { event: 'wellness.upsert', user: user.id, data: { date, hrv: 55, sleepSecs: 25_000 } },
      { secret: webhookSecret },
    );
    expect(ack.status).toBe(200);
    await settled(user, async () =>
      expect((await recoveryOf(read.token, date))?.components.sleep.available).toBe(true),
    );

    const mcp = await mintToken(server.db, user, { scopes: ['health:write'], resource: server.config.mcpResource });
    const assistant = await connectWithToken(server.config.mcpResource, mcp.token);
    toolResult(
      await assistant.callTool({
        name: 'log_wellness',
        arguments: { date, mood: 1, fatigue: 5, soreness: 5, motivation: 1 },
      }),
    );
    await settled(user, async () => expect((await recoveryOf(read.token, date))?.components.subjective.score).toBe(0));
    await assistant.close();
  });

  it('coalesces a burst of 100 writes into far fewer runs', async () => {
    const user = await makeUser(server.db);
    const { token } = await mintToken(server.db, user, { scopes: ['health:write'] });
    const end = today();
    const runsBefore = server.runtime.derived?.runs ?? 0;
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        call(server.url, 'POST', '/api/wellness', {
          token,
          body: { date: addDays(end, -index), hrv: 50 + (index % 20) },
        }),
      ),
    );
    expect(answers.every((answer) => answer.status === 201)).toBe(true);
    await settled(user);
    const runs = (server.runtime.derived?.runs ?? 0) - runsBefore;
    console.log(`100 writes -> ${runs} runs`);
    expect(runs).toBeGreaterThan(0);
    expect(runs).toBeLessThanOrEqual(25);
    expect(await storedRecoveryDays(server.db, user.id)).toBe(100);
  });
});

/**
 * Derived data is kept current (issue "Keeping it current"): every input
 * write (REST, webhook, MCP) asks for a recompute in its own transaction; a
 * pg-boss worker recomputes training load and recovery from the changed date
 * on and stores them; the GETs read what is stored. A burst of writes is
 * coalesced into a few jobs per user.
 */
import { addDays } from '../../server/src/lib/dates.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecoveryDay, TrainingLoad } from '@pacer/contract';
import type { User } from '../../server/src/db/tables.ts';
import { recoveryForDay } from '../../server/src/modules/derived/recovery.model.ts';
import { makeUser, makeWebhookApp, mintToken } from '../support/factories.ts';
import { oneHourRide } from '../support/fit-fixtures.ts';
import { call } from '../support/http.ts';
import { connectWithToken, toolResult } from '../support/mcp-client.ts';
import { waitForRecompute } from '../support/recompute.ts';
import {
  cloneTemplateDatabase,
  databaseUrlFor,
  dropDatabase,
  startTestServer,
  type TestServer,
} from '../support/test-server.ts';
import { startPacerProcess } from '../support/webhooks-cluster.ts';
import { sql } from 'kysely';
import { createDb, createPool } from '../../server/src/db/database.ts';
import {
  RECOMPUTE_JOB_MARK_SECS,
  takeRecomputeRequest,
} from '../../server/src/modules/derived/recompute.repository.ts';
import { deliver } from '../support/webhooks.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

const today = () => new Date().toISOString().slice(0, 10);

/** Wait until the user's recompute request is served and `check` holds. */
const settled = (user: User, check?: () => Promise<void>) => waitForRecompute(server.db, user.id, check);

async function recoveryOf(token: string, date: string): Promise<RecoveryDay | undefined> {
  const res = await call<{ items: RecoveryDay[] }>(server.url, 'GET', `/api/recovery?from=${date}&to=${date}`, {
    token,
  });
  expect(res.status).toBe(200);
  return res.body.items[0];
}

describe('recompute on write', () => {
  it('sends no job while one queued for the user vouches for the request, and one again once a run took it', async () => {
    // An API process alone: no worker takes the jobs, so what each write sent stays to be counted.
    const database = await cloneTemplateDatabase();
    const db = createDb(createPool({ connectionString: databaseUrlFor(database), maxConnections: 2 }));
    const api = await startPacerProcess('api', databaseUrlFor(database));
    try {
      const user = await makeUser(db);
      const { token } = await mintToken(db, user, { scopes: ['health:write'] });
      const write = async (date: string) => {
        const res = await call(api.url ?? '', 'POST', '/api/wellness', { token, body: { date, hrv: 60 } });
        expect(res.status).toBe(201);
      };
      const jobs = async () =>
        db
          .selectFrom(sql<{ state: string }>`pgboss.job`.as('job'))
          .select(['job.state'])
          .where(sql.ref('job.name'), '=', 'analytics.recompute-user')
          .where(sql.ref('job.singleton_key'), '=', user.id)
          .execute();
      const request = () =>
        db.selectFrom('analyticsRecomputeRequests').selectAll().where('userId', '=', user.id).executeTakeFirst();

      await write('2026-10-01');
      await write('2026-09-20');
      await write('2026-09-25');
      // One job, marked on the request; the later writes moved the request's date back and sent none.
      expect((await jobs()).map((job) => job.state)).toEqual(['created']);
      expect(await request()).toMatchObject({ fromDate: '2026-09-20', jobQueuedAt: expect.any(Date) });

      // A worker takes the job, and its run takes the request: the next write cannot count on that run.
      await sql`update pgboss.job set state = 'active', started_on = now()
        where name = 'analytics.recompute-user' and singleton_key = ${user.id}`.execute(db);
      expect(await takeRecomputeRequest(db, user.id)).toMatchObject({ fromDate: '2026-09-20' });
      expect((await request())?.jobQueuedAt).toBeNull();
      await write('2026-09-10');
      await write('2026-09-11');
      expect((await jobs()).map((job) => job.state).sort()).toEqual(['active', 'created']);

      // A mark older than RECOMPUTE_JOB_MARK_SECS vouches for nothing (its job may be lost): a write sends one.
      await sql`update pgboss.job set state = 'active', started_on = now()
        where name = 'analytics.recompute-user' and singleton_key = ${user.id}`.execute(db);
      await db
        .updateTable('analyticsRecomputeRequests')
        .set({ jobQueuedAt: sql<Date>`now() - make_interval(secs => ${RECOMPUTE_JOB_MARK_SECS + 1})` })
        .where('userId', '=', user.id)
        .execute();
      await write('2026-09-12');
      expect((await jobs()).map((job) => job.state).sort()).toEqual(['active', 'active', 'created']);
    } finally {
      await api.stop();
      await db.destroy();
      await dropDatabase(database);
    }
  });

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
          {
            token: rest.token,
          },
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

  it('coalesces a burst of 100 writes into a few jobs for the user', async () => {
    const user = await makeUser(server.db);
    const { token } = await mintToken(server.db, user, { scopes: ['health:write'] });
    const end = today();
    const writes = Array.from({ length: 100 }, (_, index) =>
      call(server.url, 'POST', '/api/wellness', {
        token,
        body: { date: addDays(end, -index), hrv: 50 + (index % 20) },
      }),
    );
    const answers = await Promise.all(writes);
    expect(answers.every((answer) => answer.status === 201)).toBe(true);
    await settled(user);
    const { rows } = await server.runtime.database.pool.query<{ count: string }>(
      `select count(*) from pgboss.job where name = 'analytics.recompute-user' and singleton_key = $1`,
      [user.id],
    );
    const jobs = Number(rows[0]?.count);
    console.log(`100 writes -> ${jobs} recompute jobs`);
    expect(jobs).toBeGreaterThan(0);
    expect(jobs).toBeLessThanOrEqual(10);
    const stored = await server.db
      .selectFrom('dailyRecovery')
      .select((eb) => eb.fn.countAll<number>().as('days'))
      .where('userId', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(stored.days).toBe(100);
  });
});

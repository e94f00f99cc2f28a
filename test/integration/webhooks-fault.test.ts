/**
 * Fault test of incoming webhooks (issue 5, docs/design.md §3 "Incoming
 * webhooks"): two API processes and one worker process of the real binary on
 * one database; 2,000 matched deliveries sent across both API processes; the
 * worker is killed with SIGKILL while it holds jobs and a new one is started.
 * Afterwards every delivery is `processed` exactly once in effect: each
 * answered 200 with `secretMatched`, every row is `processed` with no error,
 * its job completed, nothing left queued, processing or dead-lettered, each
 * event's data written once (created by the attempt that settled it, never
 * re-applied), and only the deliveries the killed worker was in the middle of
 * took a second attempt.
 */
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb, createPool, type Db } from '../../server/src/db/database.ts';
import type { User } from '../../server/src/db/tables.ts';
import { makeUser, makeWebhookApp, mintToken } from '../support/factories.ts';
import { deliveriesByState, jobsByState } from '../support/queue-state.ts';
import { startPacerProcess, type PacerProcess } from '../support/webhooks-cluster.ts';
import { cloneTemplateDatabase, databaseUrlFor, dropDatabase } from '../support/test-server.ts';
import { sleep } from '../support/wait.ts';

const DELIVERIES = 2000;
const USERS = 4;
const IN_FLIGHT = 20;
/** Kill the worker once this many deliveries are processed (and it holds jobs). */
const KILL_AFTER = 400;
/** Deliveries acknowledged before the first worker starts. */
const BACKLOG_BEFORE_WORKER = 1000;
/** Workers started and killed at most, should each one hold no job at the moment of its kill. */
const MAX_KILLS = 5;
/** Jobs held by the dead worker come back after `expireInSeconds` plus a supervise pass of the new worker. */
const DRAIN_TIMEOUT_MS = 200_000;

const processes: PacerProcess[] = [];
let database: string | undefined;
let db: Db | undefined;

afterAll(async () => {
  for (const child of processes.reverse()) await child.stop();
  await db?.destroy();
  if (database !== undefined) await dropDatabase(database);
}, 60_000);

function dateOf(index: number): string {
  const day = new Date(Date.UTC(2020, 0, 1) + Math.floor(index / USERS) * 86_400_000);
  return day.toISOString().slice(0, 10);
}

describe('webhook processing survives a worker killed mid-batch', () => {
  it('processes every one of 2,000 deliveries sent to two API processes exactly once, across a kill -9 of the worker', async () => {
    database = await cloneTemplateDatabase();
    const databaseUrl = databaseUrlFor(database);
    db = createDb(createPool({ connectionString: databaseUrl, maxConnections: 4 }));

    const owner = await makeUser(db);
    const { client, webhookSecret } = await makeWebhookApp(db, owner);
    const users: User[] = [];
    for (let i = 0; i < USERS; i++) {
      const user = await makeUser(db);
      await mintToken(db, user, { scopes: ['health:write'], client });
      users.push(user);
    }

    // One process first (it checks migrations and pg-boss's schema), then the others together.
    const firstApi = await startPacerProcess('api', databaseUrl);
    processes.push(firstApi);
    const secondApi = await startPacerProcess('api', databaseUrl);
    processes.push(secondApi);
    const apis = [firstApi, secondApi];

    const statuses = new Map<number, number>();
    const acknowledged: { index: number; deliveryId: string | null; secretMatched: unknown }[] = [];
    let next = 0;
    const send = async () => {
      while (next < DELIVERIES) {
        const index = next++;
        const api = apis[index % apis.length]!;
        const response = await fetch(`${api.url}/api/webhooks/oauth/${client.clientId}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-webhook-secret': webhookSecret },
          body: JSON.stringify({
            event: 'wellness.upsert',
            user: users[index % USERS]!.id,
            data: { date: dateOf(index), steps: index, restingHr: 40 + (index % 50) },
          }),
        });
        const text = await response.text();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        acknowledged.push({
          index,
          deliveryId: response.headers.get('x-webhook-delivery-id'),
          secretMatched:
            response.status === 200 ? (JSON.parse(text) as { secretMatched: unknown }).secretMatched : null,
        });
      }
    };
    let sendFailed: unknown;
    const sending = Promise.all(Array.from({ length: IN_FLIGHT }, send));
    // A failed send must not leave an unhandled rejection while the kill below runs; it is awaited later.
    sending.catch((error: unknown) => (sendFailed = error ?? 'send failed'));

    // The worker starts once a backlog has built up, so it is busy with full batches when it is
    // killed (on a fast machine a worker that keeps up with ingest is often idle between jobs).
    while (acknowledged.length < BACKLOG_BEFORE_WORKER) {
      if (sendFailed !== undefined) await sending;
      await sleep(20);
    }
    const firstWorker = await startPacerProcess('worker', databaseUrl);
    processes.push(firstWorker);

    // Wait until the worker is well into the stream and holds jobs, then kill it without warning.
    // A worker can settle its whole batch between our look at the job table and the SIGKILL; then it
    // held nothing, which proves nothing, so a fresh worker is started and killed the same way.
    let processedBeforeKill = 0;
    let midAttempt: string[] = [];
    let heldJobs = 0;
    let stateAtKill: Record<string, number> = {};
    let worker = firstWorker;
    let killedAt = 0;
    for (let kills = 0; heldJobs === 0; kills++) {
      if (kills > 0) {
        if (kills >= MAX_KILLS) throw new Error(`the worker held no job at any of ${MAX_KILLS} kills`);
        worker = await startPacerProcess('worker', databaseUrl);
        processes.push(worker);
      }
      const killDeadline = Date.now() + 120_000;
      for (;;) {
        processedBeforeKill = (await deliveriesByState(db, client.clientId))['processed'] ?? 0;
        const active = (await jobsByState(db, 'webhooks.deliver'))['active'] ?? 0;
        if (processedBeforeKill >= KILL_AFTER && active > 0) break;
        if (sendFailed !== undefined) await sending;
        if (processedBeforeKill >= DELIVERIES) throw new Error('every delivery was processed before the kill');
        if (Date.now() > killDeadline) throw new Error(`only ${processedBeforeKill} deliveries processed`);
        await sleep(10);
      }
      await worker.kill();
      killedAt = Date.now();
      // PostgreSQL rolls back the dead worker's open transactions once it notices its connections are
      // gone; a COMMIT already on the wire may still land. Nothing else moves a delivery out of
      // `processing` until a worker runs again, so wait until what it left behind stops changing.
      heldJobs = -1;
      for (let stable = false; !stable;) {
        await sleep(500);
        const processing = await db
          .selectFrom('webhookDeliveries')
          .select('id')
          .where('clientId', '=', client.clientId)
          .where('state', '=', 'processing')
          .orderBy('id')
          .execute();
        const active = (await jobsByState(db, 'webhooks.deliver'))['active'] ?? 0;
        const ids = processing.map((row) => row.id);
        stable = active === heldJobs && ids.join() === midAttempt.join();
        midAttempt = ids;
        heldJobs = active;
      }
      stateAtKill = await deliveriesByState(db, client.clientId);
    }
    // The kill hit a worker holding jobs: they stay `active` until their expiry.
    expect(heldJobs).toBeGreaterThan(0);

    const secondWorker = await startPacerProcess('worker', databaseUrl);
    processes.push(secondWorker);
    const secondWorkerAt = Date.now();

    await sending;
    const sentAt = Date.now();
    expect(Object.fromEntries(statuses)).toEqual({ 200: DELIVERIES });
    expect(acknowledged.every((ack) => ack.secretMatched === true)).toBe(true);
    const deliveryIds = new Set(acknowledged.map((ack) => ack.deliveryId));
    expect(deliveryIds.size).toBe(DELIVERIES);
    expect(deliveryIds.has(null)).toBe(false);

    // Drain: deliveries the dead worker held come back once their job expires.
    // A delivery is marked processed before its worker reports the job
    // complete to pg-boss, so both are waited for.
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    let counts = await deliveriesByState(db, client.clientId);
    let jobs = await jobsByState(db, 'webhooks.deliver');
    while (
      ((counts['processed'] ?? 0) < DELIVERIES || (jobs['completed'] ?? 0) < DELIVERIES) &&
      Date.now() < deadline
    ) {
      await sleep(250);
      counts = await deliveriesByState(db, client.clientId);
      jobs = await jobsByState(db, 'webhooks.deliver');
    }
    const drainedAt = Date.now();
    expect(counts).toEqual({ processed: DELIVERIES });

    const rows = await db
      .selectFrom('webhookDeliveries')
      .select(['id', 'state', 'attempts', 'secretMatched', 'errorCode', 'result', 'finishedAt'])
      .where('clientId', '=', client.clientId)
      .execute();
    expect(rows).toHaveLength(DELIVERIES);
    expect(new Set(rows.map((row) => row.id))).toEqual(deliveryIds);
    for (const row of rows) {
      expect(row).toMatchObject({ state: 'processed', secretMatched: true, errorCode: null });
      expect(row.finishedAt).not.toBeNull();
      // Applied once, by the attempt that settled it: the data row did not exist before that attempt.
      expect(row.result).toMatchObject({ applied: [{ date: expect.any(String), created: true }], skipped: [] });
    }
    // Only a delivery the killed worker was in the middle of took a second attempt, and exactly one.
    const attempts: Record<number, number> = {};
    for (const row of rows) attempts[row.attempts] = (attempts[row.attempts] ?? 0) + 1;
    const retried = rows.filter((row) => row.attempts > 1).map((row) => row.id);
    expect(new Set(retried)).toEqual(new Set(midAttempt));
    expect(Object.keys(attempts).every((count) => count === '1' || count === '2')).toBe(true);

    // Every job completed; none left to run, none expired into the dead-letter queue.
    expect(jobs).toEqual({ completed: DELIVERIES });
    expect(await jobsByState(db, 'webhooks.dead-letter')).toEqual({});

    // The data: one row per (user, date) with the values sent, written once (a re-application bumps updated_at).
    const wellness = await db
      .selectFrom('wellness')
      .select(['userId', 'date', 'steps', 'restingHr'])
      .select(sql<boolean>`updated_at = created_at`.as('writtenOnce'))
      .where(
        'userId',
        'in',
        users.map((user) => user.id),
      )
      .execute();
    expect(wellness).toHaveLength(DELIVERIES);
    const stored = new Map(wellness.map((row) => [`${row.userId}/${row.date}`, row]));
    for (let index = 0; index < DELIVERIES; index++) {
      expect(stored.get(`${users[index % USERS]!.id}/${dateOf(index)}`)).toEqual({
        userId: users[index % USERS]!.id,
        date: dateOf(index),
        steps: index,
        restingHr: 40 + (index % 50),
        writtenOnce: true,
      });
    }

    console.info(
      JSON.stringify({
        processedBeforeKill,
        stateAtKill,
        jobsHeldByKilledWorker: heldJobs,
        midAttempt: midAttempt.length,
        drainedMsAfterSecondWorker: drainedAt - secondWorkerAt,
        attempts,
        allSentMsAfterKill: sentAt - killedAt,
        drainedMsAfterKill: drainedAt - killedAt,
      }),
    );
  }, 300_000);
});

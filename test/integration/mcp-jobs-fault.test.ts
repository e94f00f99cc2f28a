/**
 * Fault test of MCP async jobs (`generate_report` and friends): an API
 * process and a worker process of the real binary on one database, report jobs
 * started through the real MCP endpoint for an athlete with a year of data,
 * and the worker killed with SIGKILL while it runs some of them; a new worker
 * is started. Afterwards every job is `completed` exactly once: one report per
 * job under the job's id, nothing failed or dead-lettered, nothing left to run
 * in pg-boss, and only the jobs the killed worker held were handed out again;
 * the ones it was in the middle of took a second attempt that kept the
 * `started_at` of their first.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { AsyncJobStatus } from '@pacer/contract';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb, createPool, type Db } from '../../server/src/db/database.ts';
import { asyncJobDeadLetterQueue, asyncJobQueue } from '../../server/src/queue/queues.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { connectWithToken, toolResult } from '../support/mcp-client.ts';
import { jobsByState, queueJobs } from '../support/queue-state.ts';
import { cloneTemplateDatabase, databaseUrlFor, dropDatabase } from '../support/test-server.ts';
import { seedTrainingYear } from '../support/training-data.ts';
import { startPacerProcess, type PacerProcess } from '../support/webhooks-cluster.ts';
import { sleep } from '../support/wait.ts';

/** Report jobs started when the worker has nothing queued to take. */
const JOBS_PER_ROUND = 40;
/** `generate_report` calls in flight at once. */
const IN_FLIGHT = 4;
/** Kill the worker once this many jobs have completed (they must not run again) and it runs one. */
const KILL_AFTER = 10;
/** Workers started and killed at most, should each one run no job at the moment of its kill. */
const MAX_KILLS = 4;
/** Waiting for a worker to be seen running a job (it takes a queued backlog at 4 jobs per 5 s poll). */
const KILL_WAIT_MS = 40_000;
/**
 * A killed worker's jobs come back once their heartbeat is stale (10 s) and a monitor pass (every 10 s)
 * fails them, after a retry delay; the queued backlog drains at a batch of 4 per 5 s poll.
 */
const DRAIN_TIMEOUT_MS = 80_000;
const END_DATE = '2026-11-20';
const REPORT_TYPES = ['WEEKLY_TRAINING', 'LAST_3_WORKOUTS'] as const;

const processes: PacerProcess[] = [];
let database: string | undefined;
let db: Db | undefined;
let mcp: Client | undefined;

afterAll(async () => {
  await mcp?.close();
  for (const child of processes.reverse()) await child.stop();
  await db?.destroy();
  if (database !== undefined) await dropDatabase(database);
}, 60_000);

interface JobState {
  readonly id: string;
  readonly status: string;
  readonly attempts: number;
  readonly startedAt: Date | null;
}

async function jobStates(db: Db, userId: string): Promise<JobState[]> {
  const rows = await db
    .selectFrom('asyncJobs')
    .select(['id', 'status', 'attempts', 'startedAt'])
    .where('userId', '=', userId)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ ...row, startedAt: row.startedAt === null ? null : new Date(row.startedAt) }));
}

function countByStatus(jobs: readonly JobState[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const job of jobs) counts[job.status] = (counts[job.status] ?? 0) + 1;
  return counts;
}

/**
 * The pg-boss jobs a worker holds, as `<async job id>:<retry count>`: a job a dead worker held stays
 * `active` with the same retry count until the monitor fails it, and is a new delivery once retried.
 */
async function heldDeliveries(db: Db): Promise<string[]> {
  return (await queueJobs(db, asyncJobQueue.name))
    .filter((job) => job.state === 'active')
    .map((job) => `${String(job.data['jobId'])}:${String(job.retryCount)}`)
    .sort();
}

describe('MCP async jobs survive a worker killed mid-job', () => {
  it('a worker killed with SIGKILL while an async job runs leaves the job to another worker, which completes it exactly once', async () => {
    database = await cloneTemplateDatabase();
    const databaseUrl = databaseUrlFor(database);
    db = createDb(createPool({ connectionString: databaseUrl, maxConnections: 4 }));
    const athlete = await makeUser(db);
    await seedTrainingYear(db, athlete, { endDate: END_DATE });

    const api = await startPacerProcess('api', databaseUrl);
    processes.push(api);
    const mcpUrl = `${api.url!}/mcp`;
    const { token } = await mintToken(db, athlete, {
      scopes: ['analysis:read', 'workout:read', 'health:read'],
      resource: mcpUrl,
    });
    mcp = await connectWithToken(mcpUrl, token, 'mcp-jobs-fault');
    const client = mcp;

    const started: string[] = [];
    const sendReports = async (count: number) => {
      let next = 0;
      const send = async () => {
        while (next < count) {
          const index = next++;
          const accepted = toolResult<{ report_id: string }>(
            await client.callTool({
              name: 'generate_report',
              arguments: { type: REPORT_TYPES[index % REPORT_TYPES.length], end_date: END_DATE },
            }),
          );
          expect(accepted).toMatchObject({ job_type: 'report', status: 'queued' });
          started.push(accepted.report_id);
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, send));
    };

    // Kill the worker the moment it is seen running a job. A job can complete between that look and the
    // SIGKILL; then the kill interrupted nothing, which proves nothing, so a fresh worker is started (on
    // what the last one left queued, or on a fresh batch of jobs) and killed the same way.
    const killedMidRun = new Map<string, JobState>();
    /** The deliveries (pg-boss `active` jobs) killed workers held, running or not. */
    const heldAtKills = new Set<string>();
    const kills: Record<string, unknown>[] = [];
    let killedAt = 0;
    for (let round = 0; killedMidRun.size === 0; round++) {
      if (round >= MAX_KILLS) throw new Error(`the worker ran no job at any of ${MAX_KILLS} kills`);
      const worker = await startPacerProcess('worker', databaseUrl);
      processes.push(worker);
      const backlog = countByStatus(await jobStates(db, athlete.id))['queued'] ?? 0;
      let sent = false;
      let sendFailed: unknown;
      const sending = (backlog > 0 ? Promise.resolve() : sendReports(JOBS_PER_ROUND)).then(() => (sent = true));
      // A failed call must not leave an unhandled rejection while the kill below runs; it is awaited later.
      sending.catch((error: unknown) => (sendFailed = error ?? 'send failed'));

      const deadline = Date.now() + KILL_WAIT_MS;
      let seen: Record<string, number>;
      for (;;) {
        seen = countByStatus(await jobStates(db, athlete.id));
        if ((seen['running'] ?? 0) > 0 && (seen['completed'] ?? 0) >= KILL_AFTER) break;
        if (sendFailed !== undefined) await sending;
        // The worker finished everything without being seen running a job: nothing to kill in this round.
        if (sent && seen['queued'] === undefined && seen['running'] === undefined) break;
        if (Date.now() > deadline) {
          throw new Error(`no job seen running within ${KILL_WAIT_MS} ms: ${JSON.stringify(seen)}\n${worker.output()}`);
        }
      }
      await worker.kill();
      killedAt = Date.now();
      await sending;

      // PostgreSQL rolls back the dead worker's open transactions once it notices its connections are
      // gone; a COMMIT already on the wire may still land. Nothing else moves a job out of `running`, or
      // a pg-boss job out of `active`, until a worker runs again, so wait until that stops changing.
      let running: JobState[] = [];
      let held: string[] | undefined;
      const settleDeadline = Date.now() + 15_000;
      for (let stable = false; !stable;) {
        if (Date.now() > settleDeadline) throw new Error("the killed worker's jobs did not settle");
        await sleep(250);
        const nowRunning = (await jobStates(db, athlete.id)).filter((job) => job.status === 'running');
        const nowHeld = await heldDeliveries(db);
        stable =
          nowHeld.join() === held?.join() &&
          nowRunning.map((job) => job.id).join() === running.map((job) => job.id).join();
        running = nowRunning;
        held = nowHeld;
      }
      for (const job of running) killedMidRun.set(job.id, job);
      const newlyHeld = (held ?? []).filter((delivery) => !heldAtKills.has(delivery));
      for (const delivery of newlyHeld) heldAtKills.add(delivery);
      kills.push({ seen, held: newlyHeld.length, running: running.length });
    }
    const killedIds = [...killedMidRun.keys()];
    // The killed worker held every job it was running; each of them had started its first attempt.
    expect(killedIds.every((id) => heldAtKills.has(`${id}:0`))).toBe(true);
    for (const job of killedMidRun.values()) {
      expect(job.attempts).toBe(1);
      expect(job.startedAt).not.toBeNull();
    }

    const newWorker = await startPacerProcess('worker', databaseUrl);
    processes.push(newWorker);
    const newWorkerAt = Date.now();

    // Drain: the killed worker's jobs come back once pg-boss's monitor sees their heartbeat stop.
    const drainDeadline = Date.now() + DRAIN_TIMEOUT_MS;
    let counts: Record<string, number>;
    let queue: Record<string, number>;
    for (;;) {
      counts = countByStatus(await jobStates(db, athlete.id));
      queue = await jobsByState(db, asyncJobQueue.name);
      if ((counts['failed'] ?? 0) > 0 || Date.now() > drainDeadline) break;
      if (counts['completed'] === started.length && queue['completed'] === started.length) break;
      await sleep(100);
    }
    const drainedAt = Date.now();
    expect(counts, newWorker.output()).toEqual({ completed: started.length });
    // Nothing left to run or retry, and nothing went to the dead-letter queue.
    expect(queue).toEqual({ completed: started.length });
    expect(await jobsByState(db, asyncJobDeadLetterQueue.name)).toEqual({});
    // pg-boss handed out again exactly the deliveries the killed workers held, each once.
    const retried = (await queueJobs(db, asyncJobQueue.name)).filter((job) => job.retryCount > 0);
    expect(
      new Set(
        retried.flatMap((job) =>
          Array.from({ length: job.retryCount }, (_, n) => `${String(job.data['jobId'])}:${String(n)}`),
        ),
      ),
    ).toEqual(heldAtKills);

    const jobs = await db.selectFrom('asyncJobs').selectAll().where('userId', '=', athlete.id).orderBy('id').execute();
    expect(jobs.map((job) => job.id)).toEqual([...started].sort());
    for (const job of jobs) {
      expect(job).toMatchObject({ status: 'completed', type: 'report', error: null, progress: null });
      expect(job.completedAt).not.toBeNull();
      expect(job.result).toMatchObject({ report_id: job.id, type: job.input['type'], period_to: END_DATE });
      const killed = killedMidRun.get(job.id);
      if (killed) {
        // One attempt more than the one the kill interrupted, and started when the first one was.
        expect(job.attempts).toBe(killed.attempts + 1);
        expect(new Date(job.startedAt!)).toEqual(killed.startedAt);
      } else {
        expect(job.attempts).toBe(1);
      }
    }

    // One report per job, under the job's id: the interrupted attempt wrote nothing.
    const reports = await db
      .selectFrom('reports')
      .select(['id', 'type'])
      .where('userId', '=', athlete.id)
      .orderBy('id')
      .execute();
    expect(reports).toEqual(jobs.map((job) => ({ id: job.id, type: job.input['type'] })));

    // What the caller polling the killed job sees.
    const killedId = killedIds[0]!;
    const status = toolResult<AsyncJobStatus>(
      await client.callTool({ name: 'get_async_job_status', arguments: { job_type: 'report', job_id: killedId } }),
    );
    expect(status).toMatchObject({
      job_id: killedId,
      status: 'completed',
      completed: true,
      failed: false,
      started_at: killedMidRun.get(killedId)!.startedAt!.toISOString(),
      result: { report_id: killedId },
    });

    const runMs = jobs
      .filter((job) => !killedMidRun.has(job.id))
      .map((job) => new Date(job.completedAt!).getTime() - new Date(job.startedAt!).getTime())
      .sort((a, b) => a - b);
    console.info(
      JSON.stringify({
        jobs: started.length,
        kills,
        killedWhileRunning: killedIds.length,
        deliveriesHeldByKilledWorkers: heldAtKills.size,
        jobRunMs: { median: runMs[Math.floor(runMs.length / 2)], max: runMs.at(-1) },
        drainSecondsAfterNewWorker: (drainedAt - newWorkerAt) / 1000,
        drainSecondsAfterKill: (drainedAt - killedAt) / 1000,
      }),
    );
  }, 150_000);
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueue } from '../../server/src/queue/boss.ts';
import { purgeExpiredQueue } from '../../server/src/queue/queues.ts';
import { makeUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { ZodError } from 'zod';
import { waitFor } from '../support/wait.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

async function jobsInQueue(): Promise<{ id: string; state: string }[]> {
  const result = await sql<{
    id: string;
    state: string;
  }>`SELECT id::text, state::text FROM pgboss.job WHERE name = ${purgeExpiredQueue.name}`.execute(server.db);
  return result.rows;
}

describe('queue contracts (pg-boss)', () => {
  it('a job enqueued in a transaction that rolls back never exists', async () => {
    const before = (await jobsInQueue()).length;
    await expect(
      server.db.transaction().execute(async (trx) => {
        await enqueue(server.runtime.boss, trx, purgeExpiredQueue, { graceDays: 0 });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await jobsInQueue()).toHaveLength(before);
  });

  it('a job enqueued in a committed transaction is processed by the worker at once', async () => {
    const user = await makeUser(server.db);
    await server.db
      .insertInto('sessions')
      .values([
        { idHash: 'expired-session', userId: user.id, expiresAt: new Date(Date.now() - 60_000) },
        { idHash: 'live-session', userId: user.id, expiresAt: new Date(Date.now() + 60_000) },
      ])
      .execute();
    const jobId = await server.db
      .transaction()
      .execute((trx) => enqueue(server.runtime.boss, trx, purgeExpiredQueue, { graceDays: 0 }));
    expect(jobId).toBeTruthy();
    const job = await waitFor(async () => {
      const found = await server.runtime.boss.getJobById(purgeExpiredQueue.name, String(jobId));
      return found?.state === 'completed' ? found : undefined;
    }, 'the purge job to complete');
    expect(job.state).toBe('completed');
    const left = await server.db.selectFrom('sessions').select('idHash').where('userId', '=', user.id).execute();
    expect(left.map((row) => row.idHash)).toEqual(['live-session']);
  });

  it('refuses a payload the queue contract does not accept, before anything is stored', async () => {
    const before = (await jobsInQueue()).length;
    await expect(enqueue(server.runtime.boss, server.db, purgeExpiredQueue, { graceDays: -3 })).rejects.toThrow(
      ZodError,
    );
    expect(await jobsInQueue()).toHaveLength(before);
  });

  it('installs the hourly purge schedule', async () => {
    const schedules = await server.runtime.boss.getSchedules();
    expect(schedules.map((schedule) => [schedule.name, schedule.cron])).toContainEqual([
      purgeExpiredQueue.name,
      '17 * * * *',
    ]);
  });
});

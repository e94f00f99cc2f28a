import { afterAll, describe, expect, it } from 'vitest';
import { enqueue } from '../../server/src/queue/boss.ts';
import { purgeExpiredQueue } from '../../server/src/queue/queues.ts';
import { call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait.ts';

const started: TestServer[] = [];
afterAll(async () => {
  // Stop the processes that share a database first, the owner of the database last.
  for (const server of started.reverse()) await server.stop();
});

async function jobState(server: TestServer, id: string): Promise<string | undefined> {
  return (await server.runtime.boss.getJobById(purgeExpiredQueue.name, id))?.state;
}

describe('PACER_ROLE', () => {
  it('an api process serves HTTP but runs no jobs; a worker process on the same database runs them and serves nothing', async () => {
    const api = await startTestServer({ PACER_ROLE: 'api' });
    started.push(api);
    expect((await call(api.url, 'GET', '/readyz')).status).toBe(200);

    const jobId = String(await enqueue(api.runtime.boss, api.db, purgeExpiredQueue, { graceDays: 1 }));
    // Nothing in the api process could take it: pg-boss there runs no worker of any queue.
    expect(api.runtime.boss.getWipData({ includeInternal: true })).toEqual([]);
    expect(await jobState(api, jobId)).toBe('created');

    const worker = await startTestServer({ PACER_ROLE: 'worker' }, { database: api.database });
    started.push(worker);
    expect(worker.runtime.url).toBeUndefined();
    await waitFor(async () => (await jobState(api, jobId)) === 'completed', 'the worker to complete the job');
  });
});

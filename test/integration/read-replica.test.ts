/**
 * Reads from a streaming replica (issue 23; README "Operating at scale",
 * docs/design.md §2 "Reads from a replica"). A real PostgreSQL primary and a
 * real streaming replica of it (`initdb`, `pg_basebackup -R`) on loopback
 * ports; three API processes of the real binary with `DATABASE_URL` on the
 * primary and `PACER_DATABASE_READ_URL` on the replica. Which server served a
 * read is told by each server's own `pg_stat_statements` counts of the
 * wellness page query (`list_wellness_records`), the statement behind both
 * `GET /api/wellness` and the MCP tool `get_wellness`.
 *
 * Shown: GET routes and MCP read tools read on the replica and not on the
 * primary; a caller who just wrote (REST or MCP) reads its write at once,
 * through another API process, while the replica replays 3 s late, and a
 * caller who did not write still reads the replica's older state; a replica
 * lagging past `PACER_READ_MAX_LAG_MS` is left for the primary, and taken
 * back once it caught up; when the replica stops, GETs keep answering 200 and
 * `/readyz` reports it unreachable (the time this takes is printed), and
 * reads go back to it once it is started again.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createDb, createPool, type Db } from '../../server/src/db/database.ts';
import type { User } from '../../server/src/db/tables.ts';
import { ALL_DATA_SCOPES, makeUser, mintToken, type MintedToken } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { connectWithToken, toolResult } from '../support/mcp-client.ts';
import { postgresBinDir, startStreamingReplica, type StreamingReplica } from '../support/streaming-replica.ts';
import { startPacerProcess, type PacerProcess } from '../support/webhooks-cluster.ts';
import { sleep, waitFor } from '../support/wait.ts';

const bin = postgresBinDir();
if (bin === undefined) {
  // Debian's postgresql package provides them (the machine's PostgreSQL, and .ci/run's).
  console.warn('read-replica.test.ts skipped: no initdb/pg_basebackup under /usr/lib/postgresql/<version>/bin');
}

/** The replica's replay delay while read-your-writes is shown. */
const REPLAY_DELAY_MS = 3000;

interface Readiness {
  readonly status: string;
  readonly replica: string;
  readonly replicaLagMs: number | null;
}

interface WellnessPage {
  readonly items: readonly { readonly date: string; readonly hrv: number | null }[];
}

/** How many times `server` has run the wellness page query, by its own `pg_stat_statements`. */
async function wellnessReads(server: Db): Promise<number> {
  const { rows } = await sql<{ calls: number }>`select coalesce(sum(calls), 0)::int as calls
      from pg_stat_statements where query like '%prepared:list_wellness_records%'`.execute(server);
  return rows[0]?.calls ?? 0;
}

async function readiness(api: PacerProcess): Promise<Readiness> {
  const response = await call<Readiness>(api.url ?? '', 'GET', '/readyz');
  expect(response.status).toBe(200);
  return response.body;
}

describe.skipIf(bin === undefined)('reads from a streaming replica', () => {
  let cluster: StreamingReplica;
  let primary: Db;
  let replica: Db;
  /** Two processes that keep reading the replica however far it lags (read-your-writes is shown on them). */
  let apiA: PacerProcess;
  let apiB: PacerProcess;
  /** A process that leaves the replica past 1 s of lag. */
  let apiC: PacerProcess;
  let user: User;
  let writer: MintedToken;
  let reader: MintedToken;
  let mcpReader: Client;
  let mcpWriter: Client;
  /** Processes a test starts for itself. */
  const others: PacerProcess[] = [];
  const figures: Record<string, string> = {};

  const counts = async () => ({ primary: await wellnessReads(primary), replica: await wellnessReads(replica) });
  const list = async (api: PacerProcess, token: MintedToken, from: string, to: string) => {
    const response = await call<WellnessPage>(api.url ?? '', 'GET', `/api/wellness?from=${from}&to=${to}`, {
      token: token.token,
    });
    expect(response.status).toBe(200);
    return response.body.items;
  };
  const post = async (api: PacerProcess, token: MintedToken, date: string, hrv: number) => {
    const response = await call(api.url ?? '', 'POST', '/api/wellness', { token: token.token, body: { date, hrv } });
    expect(response.status).toBeLessThan(300);
  };

  beforeAll(async () => {
    cluster = await startStreamingReplica(bin as string);
    const replicaEnv = {
      PACER_DATABASE_READ_URL: cluster.replicaUrl,
      PACER_RATE_LIMIT_PER_MINUTE: '0',
      PACER_READ_YOUR_WRITES_MS: '5000',
    };
    // The first process migrates the primary; the others find it migrated.
    apiA = await startPacerProcess('api', cluster.primaryUrl, { ...replicaEnv, PACER_READ_MAX_LAG_MS: '60000' });
    [apiB, apiC] = await Promise.all([
      startPacerProcess('api', cluster.primaryUrl, { ...replicaEnv, PACER_READ_MAX_LAG_MS: '60000' }),
      startPacerProcess('api', cluster.primaryUrl, { ...replicaEnv, PACER_READ_MAX_LAG_MS: '1000' }),
    ]);
    const primaryPool = createPool({ connectionString: cluster.primaryUrl, maxConnections: 2 });
    const replicaPool = createPool({ connectionString: cluster.replicaUrl, maxConnections: 2 });
    // The replica is stopped on purpose below: its idle connections end then.
    replicaPool.on('error', () => undefined);
    primaryPool.on('error', () => undefined);
    primary = createDb(primaryPool);
    replica = createDb(replicaPool);
    user = await makeUser(primary, { timeZone: 'UTC' });
    writer = await mintToken(primary, user, { scopes: ALL_DATA_SCOPES });
    reader = await mintToken(primary, user, { scopes: ALL_DATA_SCOPES });
    const mcpResource = `${apiA.url ?? ''}/mcp`;
    const mcpReadToken = await mintToken(primary, user, { scopes: ALL_DATA_SCOPES, resource: mcpResource });
    const mcpWriteToken = await mintToken(primary, user, { scopes: ALL_DATA_SCOPES, resource: mcpResource });
    mcpReader = await connectWithToken(mcpResource, mcpReadToken.token);
    mcpWriter = await connectWithToken(mcpResource, mcpWriteToken.token);
  }, 180_000);

  afterAll(async () => {
    await mcpReader?.close();
    await mcpWriter?.close();
    await Promise.all([apiA?.stop(), apiB?.stop(), apiC?.stop(), ...others.map((api) => api.stop())]);
    await primary?.destroy();
    await replica?.destroy();
    await cluster?.destroy();
    if (Object.keys(figures).length > 0) console.log(`read replica figures: ${JSON.stringify(figures)}`);
  }, 60_000);

  it('reports the replica and its replay lag in /readyz', async () => {
    for (const api of [apiA, apiB, apiC]) {
      // A sample on a busy machine can find the replica a moment behind (`lagging`) or slow to answer within
      // REPLICA_CONNECT_TIMEOUT_MS (`unreachable`); an idle replica settles at `ok` with a lag under a second.
      const ready = await waitFor(
        async () => {
          const now = await readiness(api);
          return now.replica === 'ok' && now.replicaLagMs !== null && now.replicaLagMs < 1000 ? now : undefined;
        },
        'the replica ok with a lag under 1 s in /readyz',
        15_000,
      );
      expect(ready).toMatchObject({ status: 'ok', replica: 'ok' });
      expect(ready.replicaLagMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('serves GET routes and MCP read tools from the replica, not the primary', async () => {
    for (const [index, date] of ['2026-05-01', '2026-05-02', '2026-05-03'].entries()) {
      await post(apiA, writer, date, 50 + index);
    }
    // The reader never wrote; wait until the replica has replayed the writer's days.
    await waitFor(
      async () =>
        Number(
          (
            await sql<{ n: number }>`select count(*)::int as n from wellness where user_id = ${user.id}`.execute(
              replica,
            )
          ).rows[0]?.n,
        ) === 3,
      'the replica to replay the three days',
    );
    const before = await counts();
    for (let i = 0; i < 40; i += 1) {
      const items = await list(i % 2 === 0 ? apiA : apiB, reader, '2026-05-01', '2026-05-31');
      expect(items.map((item) => item.date)).toEqual(['2026-05-01', '2026-05-02', '2026-05-03']);
    }
    for (let i = 0; i < 10; i += 1) {
      const page = toolResult<WellnessPage>(
        await mcpReader.callTool({ name: 'get_wellness', arguments: { from: '2026-05-01', to: '2026-05-31' } }),
      );
      expect(page.items).toHaveLength(3);
    }
    const after = await counts();
    const served = { replica: after.replica - before.replica, primary: after.primary - before.primary };
    figures['readsOnReplica'] = `${served.replica} of ${served.replica + served.primary}`;
    expect(served).toEqual({ replica: 50, primary: 0 });
  });

  it('lets a caller who just wrote read it at once, on another process, while the replica replays late', async () => {
    await cluster.delayReplay(REPLAY_DELAY_MS);
    // The delay holds: a day written now is not on the replica yet.
    await post(apiA, writer, '2026-06-01', 61);
    expect((await list(apiB, reader, '2026-06-01', '2026-06-30')).map((item) => item.date)).toEqual([]);

    // REST: the writer's write on A, its read on B straight after.
    const before = await counts();
    await post(apiA, writer, '2026-06-02', 62);
    const own = await list(apiB, writer, '2026-06-01', '2026-06-30');
    expect(own.map((item) => [item.date, item.hrv])).toEqual([
      ['2026-06-01', 61],
      ['2026-06-02', 62],
    ]);
    // Another token of the same user reads the replica, still behind.
    expect((await list(apiB, reader, '2026-06-01', '2026-06-30')).map((item) => item.date)).toEqual([]);
    const after = await counts();
    expect({ primary: after.primary - before.primary, replica: after.replica - before.replica }).toEqual({
      primary: 1,
      replica: 1,
    });

    // MCP: a write tool, then a read tool on the same token.
    await mcpWriter.callTool({ name: 'log_wellness', arguments: { date: '2026-06-03', hrv: 63 } });
    const page = toolResult<WellnessPage>(
      await mcpWriter.callTool({ name: 'get_wellness', arguments: { from: '2026-06-03', to: '2026-06-03' } }),
    );
    expect(page.items.map((item) => item.hrv)).toEqual([63]);

    // Past the window (5 s), the writer reads the replica again, which has replayed by then (3 s).
    await sleep(5200);
    const later = await counts();
    expect((await list(apiB, writer, '2026-06-01', '2026-06-30')).map((item) => item.date)).toEqual([
      '2026-06-01',
      '2026-06-02',
      '2026-06-03',
    ]);
    expect((await counts()).replica - later.replica).toBe(1);
  }, 60_000);

  it('reads on the primary while the replica lags past PACER_READ_MAX_LAG_MS, and on the replica once it caught up', async () => {
    // The replay delay (3 s) is still on: C (limit 1 s) finds the replica lagging after a write.
    await post(apiA, writer, '2026-07-01', 71);
    const lagging = await waitFor(
      async () => {
        const ready = await readiness(apiC);
        return ready.replica === 'lagging' ? ready : undefined;
      },
      'C to find the replica lagging',
      REPLAY_DELAY_MS,
    );
    figures['lagSeenMs'] = String(lagging.replicaLagMs);
    expect(lagging.replicaLagMs).toBeGreaterThan(1000);
    // The reader never wrote, yet sees the new day: C read it on the primary.
    expect((await list(apiC, reader, '2026-07-01', '2026-07-31')).map((item) => item.date)).toEqual(['2026-07-01']);
    // A and B (limit 60 s) still read the replica, which has not replayed the day yet.
    expect((await list(apiB, reader, '2026-07-01', '2026-07-31')).map((item) => item.date)).toEqual([]);

    await cluster.delayReplay(0);
    await waitFor(async () => (await readiness(apiC)).replica === 'ok', 'C to take the replica back', 10_000);
    const before = await counts();
    expect((await list(apiC, reader, '2026-07-01', '2026-07-31')).map((item) => item.date)).toEqual(['2026-07-01']);
    expect((await counts()).replica - before.replica).toBe(1);
  }, 30_000);

  it('keeps answering GETs from the primary when the replica stops, and goes back to it when it returns', async () => {
    const answers: { status: number; ms: number; at: number }[] = [];
    let running = true;
    const readLoop = async (api: PacerProcess) => {
      while (running) {
        const started = performance.now();
        const response = await call(api.url ?? '', 'GET', '/api/wellness?from=2026-05-01&to=2026-05-31', {
          token: reader.token,
        });
        answers.push({ status: response.status, ms: performance.now() - started, at: started });
      }
    };
    const loops = [apiA, apiB, apiA, apiB].map((api) => readLoop(api));
    await sleep(500);
    const stopAt = performance.now();
    const stopped = cluster.stopReplica();
    const unreachable = await waitFor(
      async () => {
        const states = await Promise.all([apiA, apiB].map(async (api) => (await readiness(api)).replica));
        return states.every((state) => state === 'unreachable') ? performance.now() : undefined;
      },
      'A and B to find the replica unreachable',
      10_000,
    );
    await stopped;
    await sleep(1000);
    running = false;
    await Promise.all(loops);

    const around = answers.filter((answer) => answer.at >= stopAt - 200);
    const slowest = Math.max(...around.map((answer) => answer.ms));
    figures['fallbackMs'] = String(Math.round(unreachable - stopAt));
    figures['getsDuringFallback'] = String(around.length);
    figures['slowestGetDuringFallbackMs'] = String(Math.round(slowest));
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    expect(around.length).toBeGreaterThan(10);

    // With the replica down, reads run on the primary.
    const primaryBefore = await wellnessReads(primary);
    await list(apiA, reader, '2026-05-01', '2026-05-31');
    expect((await wellnessReads(primary)) - primaryBefore).toBe(1);

    // A process started while the replica is down starts all the same, and reads on the primary.
    const apiD = await startPacerProcess('api', cluster.primaryUrl, {
      PACER_DATABASE_READ_URL: cluster.replicaUrl,
      PACER_RATE_LIMIT_PER_MINUTE: '0',
    });
    others.push(apiD);
    expect(await readiness(apiD)).toMatchObject({ status: 'ok', replica: 'unreachable', replicaLagMs: null });
    expect((await list(apiD, reader, '2026-05-01', '2026-05-31')).map((item) => item.date)).toEqual([
      '2026-05-01',
      '2026-05-02',
      '2026-05-03',
    ]);

    await cluster.startReplica();
    await waitFor(
      async () => (await readiness(apiD)).replica === 'ok',
      'the process started without the replica to take it',
      15_000,
    );
    await waitFor(
      async () =>
        (await Promise.all([apiA, apiB].map(async (api) => (await readiness(api)).replica))).every((s) => s === 'ok'),
      'A and B to take the replica back',
      15_000,
    );
    const before = await counts();
    await list(apiB, reader, '2026-05-01', '2026-05-31');
    const after = await counts();
    expect({ primary: after.primary - before.primary, replica: after.replica - before.replica }).toEqual({
      primary: 0,
      replica: 1,
    });
  }, 60_000);
});

/**
 * Pacer through a transaction-mode pooler (issue 23; README "Operating at
 * scale"): Debian's PgBouncer (1.18: no `max_prepared_statements`), started
 * here with `pool_mode=transaction` and a server pool of 10 per database, in
 * front of the test PostgreSQL. An empty database is migrated with
 * `npm run pacer -- migrate` (DATABASE_URL through PgBouncer, the session URL
 * direct); then two API processes and one worker of the real binary start
 * with `PACER_DB_PREPARED_STATEMENTS=false`, `PACER_MIGRATE_ON_START=false`,
 * DATABASE_URL through PgBouncer and `PACER_DATABASE_SESSION_URL` direct
 * (the worker's LISTEN). Traffic, spread over both APIs: REST writes with
 * Idempotency-Keys (some sent again: replays), FIT uploads, MCP tool calls
 * (writes with keys, reads), signed webhooks (some sent twice) processed by
 * the worker, and reads.
 *
 * Afterwards: every answer was 2xx (no error at all), every replay replayed,
 * every acknowledged write is stored exactly once (rows counted), every
 * webhook is processed once, the derived data is recomputed, no process
 * logged an error, and PgBouncer served more transactions than it has
 * server connections (it multiplexed).
 */
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDb, createPool, type Db } from '../../server/src/db/database.ts';
import type { User } from '../../server/src/db/tables.ts';
import { makeUser, makeWebhookApp, mintToken } from '../support/factories.ts';
import { buildFitActivity, rideSamples } from '../support/fit-fixtures.ts';
import { pgbouncerPath, startPgBouncer, type PgBouncer } from '../support/pgbouncer.ts';
import { runPacer } from '../support/process.ts';
import { waitForRecompute } from '../support/recompute.ts';
import { createEmptyDatabase, databaseUrlFor, dropDatabase, freePort } from '../support/test-server.ts';
import { deliveriesByState } from '../support/queue-state.ts';
import { waitFor } from '../support/wait.ts';
import { startPacerProcess, type PacerProcess } from '../support/webhooks-cluster.ts';
import { sign } from '../support/webhooks.ts';

const PGBOUNCER_INSTALLED = pgbouncerPath() !== undefined;
/** PgBouncer's server connections per database and user: well under the processes' pools together. */
const SERVER_POOL_SIZE = 10;
/** Requests in flight at once, over both API processes. */
const IN_FLIGHT = 16;
const MCP_PROTOCOL_VERSION = '2025-11-25';

const processes: PacerProcess[] = [];
let bouncer: PgBouncer | undefined;
let database: string | undefined;
let db: Db | undefined;

afterAll(async () => {
  for (const child of [...processes].reverse()) await child.stop();
  await bouncer?.stop();
  await db?.destroy();
  if (database !== undefined) await dropDatabase(database);
}, 60_000);

/** One request as sent and answered. */
interface Exchange {
  readonly what: string;
  readonly status: number;
  readonly text: string;
  readonly replayed: boolean;
}

/** A date per sequence number, from 2026-01-01 on. */
function dateOf(n: number): string {
  return new Date(Date.UTC(2026, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
}

/** The JSON-RPC answer of an MCP call, sent as JSON or as one SSE event. */
function rpcAnswer(text: string): { result?: { isError?: boolean; structuredContent?: Record<string, unknown> } } {
  const data = text.trimStart().startsWith('{')
    ? text
    : text
        .split('\n')
        .find((line) => line.startsWith('data:'))
        ?.slice('data:'.length);
  return JSON.parse(data ?? '{}') as { result?: { isError?: boolean; structuredContent?: Record<string, unknown> } };
}

/** A tool call that got no result, or a result that is an error. */
function toolFailed(text: string): boolean {
  const result = rpcAnswer(text).result;
  return result === undefined || result.isError === true;
}

/** Run `tasks` with at most `limit` at once. */
async function runAll(tasks: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) await tasks[next++]?.();
    }),
  );
}

/** What PgBouncer's console says of `database`: transactions served, server connections, clients' application names. */
async function bouncerState(
  pooler: PgBouncer,
  name: string,
): Promise<{ transactions: number; serverConnections: number; clients: string[] }> {
  const admin = new pg.Client({ connectionString: pooler.urlFor('pgbouncer') });
  await admin.connect();
  try {
    const stats = await admin.query<{ database: string; total_xact_count: string }>('SHOW STATS');
    const pools = await admin.query<{ database: string; sv_active: string; sv_idle: string; sv_used: string }>(
      'SHOW POOLS',
    );
    const clients = await admin.query<{ database: string; application_name: string }>('SHOW CLIENTS');
    const pool = pools.rows.find((row) => row.database === name);
    return {
      transactions: Number(stats.rows.find((row) => row.database === name)?.total_xact_count ?? 0),
      serverConnections: Number(pool?.sv_active ?? 0) + Number(pool?.sv_idle ?? 0) + Number(pool?.sv_used ?? 0),
      clients: clients.rows.filter((row) => row.database === name).map((row) => row.application_name),
    };
  } finally {
    await admin.end();
  }
}

async function countWhere(
  check: Db,
  table: 'wellness' | 'plannedWorkouts' | 'workouts',
  userId: string,
): Promise<number> {
  const row = await check
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('userId', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

describe.skipIf(!PGBOUNCER_INSTALLED)(
  `through PgBouncer in transaction mode${PGBOUNCER_INSTALLED ? '' : " (skipped: pgbouncer is not installed; Debian's `pgbouncer` package, which .ci/run installs)"}`,
  () => {
    it('serves 2 API processes and a worker with no error and stores every acknowledged write once', async () => {
      database = await createEmptyDatabase();
      const direct = databaseUrlFor(database);
      bouncer = await startPgBouncer({
        port: await freePort(),
        serverUrl: inject('adminDatabaseUrl'),
        poolMode: 'transaction',
        defaultPoolSize: SERVER_POOL_SIZE,
        maxClientConn: 500,
      });
      const pooled = bouncer.urlFor(database);
      const env = {
        DATABASE_URL: pooled,
        PACER_DATABASE_SESSION_URL: direct,
        PACER_DB_PREPARED_STATEMENTS: 'false',
        PACER_MIGRATE_ON_START: 'false',
      };

      // --- migrate, as an operator would before starting processes that do not ---
      const migrated = await runPacer(['migrate'], { ...process.env, ...env });
      expect(migrated.stderr).toBe('');
      expect(migrated.code).toBe(0);
      expect(migrated.stdout).toContain('database is up to date');
      // Migrating through the pooler alone is safe too: the migration lock is a transaction's
      // (db/migrate.ts), so two at once both succeed and leave no advisory lock held by a pooled connection.
      const throughPooler = { ...process.env, ...env, PACER_DATABASE_SESSION_URL: '' };
      const both = await Promise.all([runPacer(['migrate'], throughPooler), runPacer(['migrate'], throughPooler)]);
      expect(both.map((result) => [result.code, result.stderr])).toEqual([
        [0, ''],
        [0, ''],
      ]);
      const locks = new pg.Client({ connectionString: direct });
      await locks.connect();
      try {
        const { rows } = await locks.query<{ count: number }>(
          "select count(*)::int as count from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())",
        );
        expect(rows[0]?.count).toBe(0);
      } finally {
        await locks.end();
      }

      for (let i = 0; i < 2; i++) processes.push(await startPacerProcess('api', pooled, env));
      processes.push(await startPacerProcess('worker', pooled, { ...env, PACER_DERIVED_POLL_MS: '50' }));
      const apis = processes.flatMap((child) => (child.url === undefined ? [] : [child.url]));

      db = createDb(createPool({ connectionString: direct, maxConnections: 4 }));
      const check = db;
      const users: User[] = [await makeUser(check), await makeUser(check)];
      const restScopes = ['health:write', 'health:read', 'planning:write', 'planning:read', 'workout:write'] as const;
      const tokens = await Promise.all(
        users.map(async (user) => ({
          rest: (await mintToken(check, user, { scopes: [...restScopes] })).token,
          // An MCP token names one server as its resource (RFC 8707): one per API process, each its own base URL.
          mcp: await Promise.all(
            apis.map(
              async (api) =>
                (await mintToken(check, user, { scopes: ['planning:write', 'profile:read'], resource: `${api}/mcp` }))
                  .token,
            ),
          ),
        })),
      );
      const owner = await makeUser(check);
      const { client: webhookApp, webhookSecret } = await makeWebhookApp(check, owner);
      const webhookUsers = [await makeUser(check), await makeUser(check)];
      for (const user of webhookUsers) await mintToken(check, user, { scopes: ['health:write'], client: webhookApp });

      // --- traffic ---
      const exchanges: Exchange[] = [];
      let turn = 0;
      const send = async (what: string, path: string, init: RequestInit, apiIndex = turn++): Promise<Exchange> => {
        const api = apis[apiIndex % apis.length] ?? '';
        let exchange: Exchange;
        try {
          const response = await fetch(`${api}${path}`, { ...init, signal: AbortSignal.timeout(30_000) });
          exchange = {
            what,
            status: response.status,
            text: await response.text(),
            replayed: response.headers.get('idempotent-replayed') === 'true',
          };
        } catch (error) {
          exchange = { what, status: 0, text: String(error), replayed: false };
        }
        exchanges.push(exchange);
        return exchange;
      };
      const rest = (token: string, key?: string) => ({
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      });
      const mcpCall = (tokensByApi: readonly string[], id: number, name: string, args: Record<string, unknown>) => {
        // By the call's id: a replay goes where its first try went, with the same token.
        const apiIndex = id % apis.length;
        return send(
          `mcp ${name}`,
          '/mcp',
          {
            method: 'POST',
            headers: {
              authorization: `Bearer ${tokensByApi[apiIndex] ?? ''}`,
              accept: 'application/json, text/event-stream',
              'content-type': 'application/json',
              'mcp-protocol-version': MCP_PROTOCOL_VERSION,
            },
            body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
          },
          apiIndex,
        );
      };
      const WELLNESS = 40;
      const PLANNED = 15;
      const MCP_WRITES = 15;
      const UPLOADS = 4;
      const WEBHOOKS = 40;
      const replays: Exchange[][] = [];
      const tasks: (() => Promise<void>)[] = [];
      /** Send a keyed write; every fifth is sent again with the same key and body (a client that timed out). */
      const keyed = (seq: number, once: () => Promise<Exchange>) => async () => {
        const first = await once();
        if (seq % 5 === 0) replays.push([first, await once()]);
      };
      for (const u of users.keys()) {
        const token = tokens[u] ?? { rest: '', mcp: [] };
        for (let i = 0; i < WELLNESS; i++) {
          const body = JSON.stringify({
            date: dateOf(i),
            hrv: 50 + (i % 20),
            restingHr: 45 + (i % 10),
            steps: 1000 + i,
          });
          tasks.push(
            keyed(i, () =>
              send('wellness', '/api/wellness', { method: 'POST', headers: rest(token.rest, `w-${u}-${i}`), body }),
            ),
          );
        }
        for (let i = 0; i < PLANNED; i++) {
          const body = JSON.stringify({ date: dateOf(i), sport: 'ride', title: `rest ${u}-${i}`, durationSecs: 3600 });
          tasks.push(
            keyed(i, () =>
              send('planned', '/api/planned-workouts', {
                method: 'POST',
                headers: rest(token.rest, `p-${u}-${i}`),
                body,
              }),
            ),
          );
        }
        for (let i = 0; i < MCP_WRITES; i++) {
          const args = {
            date: dateOf(i),
            sport: 'run',
            title: `mcp ${u}-${i}`,
            durationSecs: 2700,
            idempotency_key: `m-${u}-${i}`,
          };
          tasks.push(keyed(i, () => mcpCall(token.mcp, i, 'create_planned_workout', args)));
          tasks.push(async () => void (await mcpCall(token.mcp, 1000 + i, 'get_profile', {})));
        }
        // One user's files one after another, as the API asks (a second file of a user's while one is being
        // decoded is refused with 429 fit_decode_in_progress): the uploads of different users still overlap.
        const uploads: (() => Promise<void>)[] = [];
        for (let i = 0; i < UPLOADS; i++) {
          const fit = buildFitActivity({
            startTime: new Date(Date.UTC(2026, 0, 1, 6) + (u * 100 + i) * 86_400_000),
            sport: 'cycling',
            subSport: 'road',
            samples: rideSamples(600),
          });
          const form = new FormData();
          form.append('file', new Blob([fit.bytes as Uint8Array<ArrayBuffer>]), 'activity.fit');
          // One encoding, so that a replay sends the same bytes (the boundary included).
          const encoded = new Response(form);
          const contentType = encoded.headers.get('content-type') ?? '';
          const body = new Uint8Array(await encoded.arrayBuffer());
          uploads.push(
            keyed(i * 5, () =>
              send('upload', '/api/workouts/upload-fit', {
                method: 'POST',
                headers: {
                  authorization: `Bearer ${token.rest}`,
                  'content-type': contentType,
                  'idempotency-key': `f-${u}-${i}`,
                },
                body,
              }),
            ),
          );
        }
        tasks.push(async () => {
          for (const upload of uploads) await upload();
        });
        for (let i = 0; i < 10; i++) {
          tasks.push(async () => {
            await send('read', `/api/wellness?from=${dateOf(0)}&to=${dateOf(WELLNESS)}`, { headers: rest(token.rest) });
          });
        }
      }
      for (let i = 0; i < WEBHOOKS; i++) {
        const user = webhookUsers[i % webhookUsers.length] as User;
        const data = { date: dateOf(Math.floor(i / webhookUsers.length)), steps: i, restingHr: 40 + (i % 50), hrv: 60 };
        const raw = JSON.stringify({ event: 'wellness.upsert', user: user.id, data });
        const deliver = () => {
          const timestamp = Math.floor(Date.now() / 1000);
          return send('webhook', `/api/webhooks/oauth/${webhookApp.clientId}`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-webhook-id': `wh-${i}`,
              'x-webhook-timestamp': String(timestamp),
              'x-webhook-signature': sign(webhookSecret, timestamp, raw),
            },
            body: raw,
          });
        };
        tasks.push(async () => {
          await deliver();
          // Every fourth sent twice: a sender retrying after a lost answer.
          if (i % 4 === 0) await deliver();
        });
      }
      // Interleaved, so that every kind runs beside every other.
      const shuffled = tasks
        .map((task, index) => ({ task, order: (index * 7919) % tasks.length }))
        .sort((a, b) => a.order - b.order);
      await runAll(
        shuffled.map((entry) => entry.task),
        IN_FLIGHT,
      );

      // Taken at once: the processes' pools close connections idle for 10 s.
      const atTrafficEnd = await bouncerState(bouncer, database);

      // --- no error at all ---
      const failed = exchanges.filter((exchange) => exchange.status < 200 || exchange.status >= 300);
      expect(failed.map((exchange) => `${exchange.what} ${exchange.status}: ${exchange.text.slice(0, 300)}`)).toEqual(
        [],
      );
      const toolErrors = exchanges.filter((exchange) => exchange.what.startsWith('mcp ') && toolFailed(exchange.text));
      expect(toolErrors.map((exchange) => exchange.text.slice(0, 300))).toEqual([]);
      // A replay answers what the first try answered, and says so (MCP's replay is in the result).
      for (const [first, again] of replays) {
        if (first?.what.startsWith('mcp ')) {
          expect(rpcAnswer(again?.text ?? '').result?.structuredContent?.['id']).toBe(
            rpcAnswer(first.text).result?.structuredContent?.['id'],
          );
        } else {
          expect(again?.replayed, `${first?.what} replay`).toBe(true);
          expect(again?.text).toBe(first?.text);
        }
      }

      // --- every acknowledged write stored exactly once ---
      for (const user of users) {
        expect(await countWhere(check, 'wellness', user.id)).toBe(WELLNESS);
        expect(await countWhere(check, 'plannedWorkouts', user.id)).toBe(PLANNED + MCP_WRITES);
        expect(await countWhere(check, 'workouts', user.id)).toBe(UPLOADS);
      }
      const titles = await check.selectFrom('plannedWorkouts').select('title').execute();
      expect(new Set(titles.map((row) => row.title)).size).toBe(titles.length);
      const files = await check.selectFrom('workouts').select('fileSha256').execute();
      expect(new Set(files.map((row) => row.fileSha256)).size).toBe(files.length);

      // --- every webhook processed once by the worker ---
      const deliveryStates = () => deliveriesByState(check, webhookApp.clientId);
      await waitFor(
        async () => (await deliveryStates())['processed'] === WEBHOOKS,
        'every webhook delivery to be processed',
        60_000,
      );
      const states = await deliveryStates();
      expect(Object.keys(states).filter((state) => state !== 'processed' && state !== 'ignored')).toEqual([]);
      for (const user of webhookUsers) {
        expect(await countWhere(check, 'wellness', user.id)).toBe(WEBHOOKS / webhookUsers.length);
      }

      // --- the derived data recomputed by the worker, through the pooler too ---
      for (const user of [...users, ...webhookUsers]) await waitForRecompute(check, user.id, undefined, 60_000);
      for (const user of users) {
        const load = await check.selectFrom('dailyTrainingLoad').select('date').where('userId', '=', user.id).execute();
        expect(load.length, 'training load days').toBeGreaterThan(0);
      }
      for (const user of [...users, ...webhookUsers]) {
        const recovery = await check.selectFrom('dailyRecovery').select('date').where('userId', '=', user.id).execute();
        expect(recovery.length, 'recovery days').toBeGreaterThan(0);
      }

      // --- no process logged an error; PgBouncer multiplexed ---
      for (const child of processes) expect(child.output(), child.role).not.toMatch(/"level":(50|60)/);
      expect(atTrafficEnd.transactions).toBeGreaterThan(exchanges.length);
      expect(atTrafficEnd.serverConnections).toBeLessThanOrEqual(SERVER_POOL_SIZE);
      // More client connections than server ones: they shared them, transaction by transaction.
      expect(atTrafficEnd.clients.length).toBeGreaterThan(SERVER_POOL_SIZE);
      // The worker's LISTEN is not among them: it is a session of its own, over the session URL.
      expect(atTrafficEnd.clients.filter((name) => name === 'pacer-queue-listen')).toEqual([]);
      const listening = await sql<{ count: number }>`
        select count(*)::int as count from pg_stat_activity
         where datname = current_database() and application_name = 'pacer-queue-listen'`.execute(check);
      expect(listening.rows[0]?.count).toBe(1);
    }, 300_000);
  },
);

/**
 * Issue 18's webhook figure: how much the database grows when anyone on the
 * internet posts 300 random ~1 MiB JSON bodies without the secret to an
 * app's public webhook URL, against the real server started as `npm start`
 * starts it (role `all`, default configuration, a fresh database on
 * DATABASE_URL, dropped at the end).
 *
 * Each of 3 rounds uses a new app and its own client address (a loopback
 * address of its own, so the rounds do not share a rate-limit window) and
 * measures `pg_database_size` before and after:
 * - attack: 300 POSTs of ~1 MiB random JSON, no secret, 6 in flight;
 * - reference (no attack): 300 legitimate deliveries of the same app's
 *   sender, small events with the right secret.
 * Printed: the growth per round (MB) as min/median/max, the answers by
 * status, and the ratio of the medians.
 *
 * PACER_BENCH_REPO: the checkout to start the server from (default this one),
 * so the same script measures the code before the change:
 *   PACER_BENCH_REPO=/work/main node --experimental-strip-types \
 *     --disable-warning=ExperimentalWarning --conditions=pacer-source test/bench/hostile-webhooks-bench.ts
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { BENCH_REPO, freePort, runPacerJson, spawnPacer, waitReady } from './bench-checkout.ts';
import { round, spreadOf } from './bench-support.ts';

const ROUNDS = 3;
const POSTS = 300;
const IN_FLIGHT = 6;
const BODY_BYTES = 1024 * 1024 - 64;
const MB = 1000 * 1000;

const adminUrl = process.env['DATABASE_URL'];
if (!adminUrl) throw new Error('set DATABASE_URL to a PostgreSQL the bench may create a database on');

const children = new Set<ChildProcess>();
let benchDatabase: string | undefined;
let dataDir: string | undefined;

async function adminQuery(text: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(text);
  } finally {
    await admin.end();
  }
}

async function cleanup(): Promise<void> {
  for (const child of children) child.kill('SIGKILL');
  if (benchDatabase) await adminQuery(`DROP DATABASE IF EXISTS "${benchDatabase}" WITH (FORCE)`).catch(() => undefined);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}

async function startServer(env: NodeJS.ProcessEnv, url: string): Promise<ChildProcess> {
  const child = spawnPacer(env);
  children.add(child);
  await waitReady(url, child, { timeoutMs: 60_000 });
  return child;
}

/** One POST from `localAddress`; its status. */
function post(url: string, localAddress: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        localAddress,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

function randomJson(bytes: number): string {
  const head = '{"event":"flood","pad":"';
  return `${head}${randomBytes(bytes)
    .toString('base64')
    .slice(0, bytes - head.length - 2)}"}`;
}

async function databaseSize(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ size: string }>('select pg_database_size(current_database()) as size');
  return Number(rows[0]?.size);
}

interface Phase {
  readonly grownBytes: number;
  readonly seconds: number;
  readonly statuses: Record<number, number>;
}

async function phase(pool: pg.Pool, send: (index: number) => Promise<number>): Promise<Phase> {
  const before = await databaseSize(pool);
  const started = performance.now();
  const statuses: Record<number, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < POSTS) {
        const status = await send(next++);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { grownBytes: (await databaseSize(pool)) - before, seconds, statuses };
}

function spreadLine(label: string, phases: readonly Phase[]): string {
  const mb = spreadOf(phases.map((p) => p.grownBytes / MB));
  const statuses = phases.map((p) => JSON.stringify(p.statuses)).join(' ');
  const seconds = phases.map((p) => round(p.seconds, 1)).join('/');
  return `${label}: database growth min ${round(mb.min)} / median ${round(mb.median)} / max ${round(mb.max)} MB; answers ${statuses}; took ${seconds} s`;
}

async function main(): Promise<void> {
  benchDatabase = `pacer_bench_hw_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE "${benchDatabase}"`);
  const databaseUrl = new URL(adminUrl as string);
  databaseUrl.pathname = `/${benchDatabase}`;
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'pacer-bench-hw-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    DATABASE_URL: databaseUrl.toString(),
    PACER_DATA_DIR: dataDir,
    PACER_PORT: String(port),
    PACER_HOST: '127.0.0.1',
    PACER_BASE_URL: url,
    PACER_ROLE: 'all',
    PACER_LOG_LEVEL: 'warn',
  };
  process.stdout.write(`hostile webhooks bench: server from ${BENCH_REPO}, database ${benchDatabase}\n`);
  await startServer(env, url);
  const pool = new pg.Pool({ connectionString: databaseUrl.toString(), max: 2 });
  try {
    const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
    await runPacerJson(env, [
      'user:create',
      '--email',
      email,
      '--password',
      randomBytes(16).toString('hex'),
      '--admin',
    ]);
    const attacks: Phase[] = [];
    const references: Phase[] = [];
    for (let index = 0; index < ROUNDS; index++) {
      const app = await runPacerJson<{ clientId: string; webhookSecret: string }>(env, [
        'app:create',
        '--name',
        `Bench app ${index}`,
        '--redirect-uri',
        'https://bench.example/callback',
        '--owner',
        email,
      ]);
      const target = `${url}/api/webhooks/oauth/${app.clientId}`;
      // Loopback addresses of their own: each phase starts in a fresh per-address window.
      attacks.push(await phase(pool, () => post(target, `127.0.${index + 1}.1`, randomJson(BODY_BYTES))));
      references.push(
        await phase(pool, (n) =>
          post(target, `127.0.${index + 1}.2`, JSON.stringify({ event: 'bench.reference', n }), {
            'x-webhook-secret': app.webhookSecret,
          }),
        ),
      );
      process.stdout.write(
        `  round ${index + 1}: attack +${round(attacks[index]!.grownBytes / MB)} MB, reference +${round(references[index]!.grownBytes / MB)} MB\n`,
      );
    }
    const attackMedian = spreadOf(attacks.map((p) => p.grownBytes)).median;
    const referenceMedian = spreadOf(references.map((p) => p.grownBytes)).median;
    process.stdout.write(`${spreadLine(`attack (${POSTS} x ~1 MiB, no secret)`, attacks)}\n`);
    process.stdout.write(`${spreadLine(`reference (${POSTS} small deliveries with the secret)`, references)}\n`);
    process.stdout.write(
      `ratio attack/reference (medians): ${referenceMedian > 0 ? round(attackMedian / referenceMedian, 1) : 'n/a (reference grew 0)'}\n`,
    );
    const { rows } = await pool.query<{ size: string }>("select pg_total_relation_size('webhook_deliveries') as size");
    process.stdout.write(
      `webhook_deliveries with TOAST and indexes at the end: ${round(Number(rows[0]?.size) / MB)} MB\n`,
    );
  } finally {
    await pool.end();
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void cleanup().then(() => process.exit(130));
  });
}
try {
  await main();
} finally {
  await cleanup();
}

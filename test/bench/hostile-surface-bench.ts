/**
 * Issue 18's "smaller" figures on a real server started as `npm start` would
 * (role `all`, a fresh database on DATABASE_URL, dropped at the end), from the
 * checkout in PACER_BENCH_REPO (default this one), so the same script measures
 * the code before the change (`PACER_BENCH_REPO=/work/main`):
 *
 * 1. Rows written by 500 tool calls with random bearer tokens on `/mcp` (10 at
 *    a time, one address), in `mcp_auth_failures` + `rate_limit_counters`;
 *    reference: 500 calls with one valid token.
 * 2. How long the server holds a slow-drip body (one byte a second to
 *    `POST /api/oauth/token`, which reads its body before any
 *    authentication), capped at PACER_BENCH_DRIP_CAP_S (default 400 s); the 3
 *    rounds run at once. Reference: the same body sent at once.
 * 3. The status of a 5,000-level JSON body on REST (`POST /api/wellness`) and `/mcp`.
 *
 * Run: node --experimental-strip-types --disable-warning=ExperimentalWarning
 *      --conditions=pacer-source test/bench/hostile-surface-bench.ts
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { BENCH_REPO, freePort, runPacerJson, spawnPacer, waitReady } from './bench-checkout.ts';
import { round, sleep } from './bench-support.ts';

const ROUNDS = 3;
const DRIP_CAP_S = Number(process.env['PACER_BENCH_DRIP_CAP_S'] ?? 400);
const ADMIN_URL = process.env['DATABASE_URL'];
if (!ADMIN_URL) throw new Error('set DATABASE_URL to a PostgreSQL the bench may create a database on');

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL as string);
  url.pathname = `/${name}`;
  return url.toString();
}

function spread(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `min ${round(sorted[0] ?? 0)} / median ${round(sorted[Math.floor(sorted.length / 2)] ?? 0)} / max ${round(sorted.at(-1) ?? 0)}`;
}

const TOOL_CALL = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'get_current_time', arguments: {} },
});

async function postMcp(url: string, token: string, body = TOOL_CALL): Promise<number> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
    },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

async function rowsNow(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'select (select count(*) from mcp_auth_failures)::int + (select count(*) from rate_limit_counters)::int as n',
  );
  return rows[0]?.n ?? 0;
}

async function rowsAdded(pool: pg.Pool, token: () => string, url: string): Promise<number> {
  const before = await rowsNow(pool);
  for (let sent = 0; sent < 500; sent += 10) {
    await Promise.all(Array.from({ length: 10 }, () => postMcp(url, token())));
  }
  // Refusals are recorded off the request path: let them land.
  await sleep(1000);
  return (await rowsNow(pool)) - before;
}

/** Seconds until the server closes a connection whose body arrives one byte a second (capped). */
function dripSeconds(url: string, gapMs: number): Promise<number> {
  const { hostname, port, host } = new URL(url);
  const body = 'grant_type=authorization_code&code=' + 'x'.repeat(2000);
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect({ host: hostname, port: Number(port) });
    let closed = false;
    const finish = () => {
      if (closed) return;
      closed = true;
      socket.destroy();
      resolve((performance.now() - started) / 1000);
    };
    socket.on('error', finish);
    socket.on('close', finish);
    socket.on('data', () => undefined);
    setTimeout(finish, DRIP_CAP_S * 1000).unref();
    socket.on('connect', () => {
      socket.write(
        `POST /api/oauth/token HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      if (gapMs === 0) {
        socket.write(body);
        socket.on('data', finish);
        return;
      }
      void (async () => {
        for (let index = 0; index < body.length && !closed; index += 1) {
          socket.write(body[index] as string);
          await sleep(gapMs);
        }
      })();
    });
  });
}

async function deepStatus(url: string, token: string, mcpToken: string): Promise<{ rest: number; mcp: number }> {
  const deep = `${'['.repeat(5000)}0${']'.repeat(5000)}`;
  const rest = await fetch(`${url}/api/wellness`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: `{"date":"2026-10-04","rawJson":{"a":${deep}}}`,
  });
  await rest.arrayBuffer();
  const mcp = await postMcp(
    url,
    mcpToken,
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_current_time","arguments":{"x":${deep}}}}`,
  );
  return { rest: rest.status, mcp };
}

async function main(): Promise<void> {
  const name = `pacer_bench_surface_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    DATABASE_URL: databaseUrl(name),
    PACER_PORT: String(port),
    PACER_BASE_URL: url,
    PACER_ROLE: 'all',
    PACER_LOG_LEVEL: 'warn',
    // Nothing is written into the checkout (it may be read-only): the key is given, the data dir is a temp one.
    PACER_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'pacer-bench-surface-')),
    PACER_SECRET_KEY: randomBytes(32).toString('base64'),
  };
  let server: ChildProcess | undefined;
  const pool = new pg.Pool({ connectionString: databaseUrl(name), max: 2 });
  try {
    server = spawnPacer(env);
    await waitReady(url, server);
    const email = `bench-${randomBytes(3).toString('hex')}@example.test`;
    await runPacerJson(env, ['user:create', '--email', email, '--password', 'a long bench password']);
    const field = (key: string) => (res: Record<string, unknown>) => String(res[key]);
    const mcpToken = await runPacerJson<Record<string, unknown>>(env, [
      'token:create',
      '--email',
      email,
      '--scope',
      'profile:read',
      '--resource',
      `${url}/mcp`,
    ]).then(field('access_token'));
    const restToken = await runPacerJson<Record<string, unknown>>(env, [
      'token:create',
      '--email',
      email,
      '--scope',
      'health:write',
    ]).then(field('access_token'));

    console.log(`checkout: ${BENCH_REPO}`);
    const attackRows: number[] = [];
    const referenceRows: number[] = [];
    for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex += 1) {
      referenceRows.push(await rowsAdded(pool, () => mcpToken, url));
      attackRows.push(await rowsAdded(pool, () => `pat_${randomBytes(32).toString('base64url')}`, url));
    }
    console.log(`/mcp, rows added by 500 random-token tool calls: ${spread(attackRows)}`);
    console.log(`/mcp, rows added by 500 valid-token tool calls (reference): ${spread(referenceRows)}`);

    const deep = await deepStatus(url, restToken, mcpToken);
    console.log(`5,000-level JSON body: REST ${deep.rest}, /mcp ${deep.mcp}`);

    const reference = await Promise.all(Array.from({ length: ROUNDS }, () => dripSeconds(url, 0)));
    console.log(`the same body sent at once (reference), s: ${spread(reference)}`);
    const drip = await Promise.all(Array.from({ length: ROUNDS }, () => dripSeconds(url, 1000)));
    console.log(`slow drip (1 byte/s) held open, s (cap ${DRIP_CAP_S}): ${spread(drip)}`);
  } finally {
    server?.kill('SIGTERM');
    await new Promise((resolve) => (server ? server.once('exit', resolve) : resolve(undefined)));
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

await main();

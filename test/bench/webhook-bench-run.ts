/**
 * Standalone runner of webhook-bench.ts (until `npm run bench` wires it in):
 * a fresh database on DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres),
 * the real server spawned on it (role `all`), a user and an app through the CLI,
 * then the webhook figures, printed as text and as one JSON line. The
 * database and temp dir are dropped afterwards.
 *
 * node --experimental-strip-types --disable-warning=ExperimentalWarning \
 *   --conditions=pacer-source test/bench/webhook-bench-run.ts
 * Knobs: PACER_BENCH_DURATION (s, default 10), PACER_BENCH_WARMUP (s, default 3),
 * PACER_BENCH_CONNECTIONS (default 10), PACER_BENCH_WEBHOOK_RATE (default 500),
 * PACER_BENCH_LAG_RATE (default 300), PACER_BENCH_LAG_DURATION (s, default 30).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { runWebhookBench } from './webhook-bench.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NODE_FLAGS = ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', '--conditions=pacer-source'];
const MAIN = path.join(ROOT, 'server/src/main.ts');
const ADMIN_URL = process.env['DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/postgres';
const num = (name: string, fallback: number) => Number(process.env[name] || fallback);

let interrupted = false;
process.once('SIGINT', () => (interrupted = true));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('port'))));
    });
  });
}

function runCli<T>(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_FLAGS, MAIN, ...args], { cwd: ROOT, env });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '') as T);
      } catch (error) {
        reject(new Error(`pacer ${args[0]}: ${String(error)}\n${err}${out}`));
      }
    });
  });
}

async function main(): Promise<void> {
  const name = `pacer_whbench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'pacer-whbench-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: url.toString(),
    PACER_DATA_DIR: dataDir,
    PACER_PORT: String(port),
    PACER_HOST: '127.0.0.1',
    PACER_BASE_URL: `http://127.0.0.1:${port}`,
    PACER_LOG_LEVEL: 'warn',
    PACER_ROLE: 'all',
    PACER_RATE_LIMIT_PER_MINUTE: '0',
    PACER_RATE_LIMIT_IP_PER_MINUTE: '0',
    PACER_SECRET_KEY: randomBytes(32).toString('hex'),
  };
  const server = spawn(process.execPath, [...NODE_FLAGS, MAIN, 'start'], { cwd: ROOT, env, stdio: 'inherit' });
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  try {
    const serverUrl = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      if (server.exitCode !== null) throw new Error('server exited');
      const ok = await fetch(`${serverUrl}/readyz`).then(
        (res) => res.status === 200,
        () => false,
      );
      if (ok) break;
      if (i > 1800) throw new Error('server not ready');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const email = `whbench-${randomBytes(4).toString('hex')}@example.com`;
    const user = await runCli<{ id: string }>(env, [
      'user:create',
      `--email=${email}`,
      `--password=${randomBytes(12).toString('hex')}`,
      '--json',
    ]);
    const app = await runCli<{ clientId: string; webhookSecret: string }>(env, [
      'app:create',
      '--name',
      'Webhook bench',
      '--redirect-uri',
      'https://bench.example.test/callback',
      '--owner',
      email,
      '--json',
    ]);
    const connections = num('PACER_BENCH_CONNECTIONS', 10);
    const durationS = num('PACER_BENCH_DURATION', 10);
    console.log(
      `load average before: ${os
        .loadavg()
        .map((value) => value.toFixed(2))
        .join(
          ' ',
        )}; webhook bench: node ${process.version}, ${os.cpus().length} CPU(s) shared by load generator, server and PostgreSQL; ${connections} connections, ${durationS} s runs`,
    );
    const result = await runWebhookBench({
      serverUrl,
      pool,
      clientId: app.clientId,
      webhookSecret: app.webhookSecret,
      userId: user.id,
      connections,
      durationS,
      warmupS: num('PACER_BENCH_WARMUP', 3),
      ingestRate: num('PACER_BENCH_WEBHOOK_RATE', 500),
      lagRate: num('PACER_BENCH_LAG_RATE', 300),
      lagDurationS: num('PACER_BENCH_LAG_DURATION', 30),
      ...(server.pid === undefined ? {} : { serverPid: server.pid }),
      interrupted: () => interrupted,
    });
    const { fullSpeed: f, paced: p } = result.ingest;
    const l = result.lag;
    const cpu = (c: typeof f.cpu) =>
      c
        ? `CPU: server ${c.serverCores} + postgres ${c.postgresCores} + bench ${c.benchCores} cores, machine ${c.machineBusyPct}% busy over ${c.wallS} s; per delivery (ingest + processing) server ${c.serverMsPerDelivery} ms + postgres ${c.postgresMsPerDelivery} ms`
        : 'CPU: n/a';
    console.log(
      [
        `ingest, full speed: ${f.ackPerSec} acknowledged/s, p50 ${f.latency.p50} ms, p99 ${f.latency.p99} ms, non-2xx ${f.non2xx}, errors ${f.errors} (${f.requests} in ${f.durationS} s; backlog ${f.drain.backlogAtStart} drained in ${f.drain.drainMs} ms; ${f.checkpoints ?? '?'} checkpoints)`,
        `  ${cpu(f.cpu)}`,
        `ingest, paced ${p.targetRate}/s (achieved ${p.achievedRate}/s): p50 ${p.latency.p50} ms, p99 ${p.latency.p99} ms, max ${p.latency.max} ms, non-2xx ${p.non2xx}, errors ${p.errors}; ${p.checkpoints ?? '?'} checkpoints  (target p99 ≤ 20 ms)`,
        `  ${cpu(p.cpu)}`,
        `lag at ${l.send.targetRate}/s for ${l.send.durationS} s (achieved ${l.send.achievedRate}/s, ingest p99 ${l.send.latency.p99} ms, ${l.send.checkpoints ?? '?'} checkpoints): received -> processed p50 ${l.lagMs.p50} ms, p95 ${l.lagMs.p95} ms, p99 ${l.lagMs.p99} ms, max ${l.lagMs.max} ms  (target p95 ≤ 1000 ms)`,
        `  wait for a worker p50 ${l.waitMs.p50} / p95 ${l.waitMs.p95} ms; attempt p50 ${l.attemptMs.p50} / p95 ${l.attemptMs.p95} ms`,
        `  ${l.deliveries} deliveries: ${JSON.stringify(l.states)}; backlog when sending stopped ${l.backlogAtSendEnd}, after draining ${l.backlogAfterDrain} (${l.drainMs} ms); open jobs ${l.openJobsAfterDrain}`,
        `  ${cpu(l.cpu)}`,
        `load average after: ${os
          .loadavg()
          .map((value) => value.toFixed(2))
          .join(' ')}`,
      ].join('\n'),
    );
    console.log(JSON.stringify({ bench: 'pacer-webhooks', ...result }));
  } finally {
    await pool.end();
    server.kill('SIGTERM');
    await new Promise((resolve) => (server.exitCode !== null ? resolve(undefined) : server.once('exit', resolve)));
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();

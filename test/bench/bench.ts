/**
 * `npm run bench`: a measurement, not a test. It never fails on a missed
 * target; it prints what it measured.
 *
 * 1. Startup: the real server as a child process with an embedded PostgreSQL
 *    (DATABASE_URL unset) on a fresh temp data dir, spawn → first 200 from
 *    /readyz; SIGTERM; again on the same (now existing) data dir.
 * 2. Throughput on one PostgreSQL: a fresh `pacer_bench_*` database on
 *    DATABASE_URL when it is set (dropped at the end), else the embedded one
 *    from step 1.
 *    (a) autocannon, POST /api/wellness, distinct dates per request;
 *    (b) the same single-row upsert straight through `pg` (Pool of 10, 10 loops).
 * 3. OAuth token endpoint (oauth-bench.ts), on the same server and database.
 * 4. FIT uploads (upload-bench.ts), on the same server: MB/s of a 1-hour and a
 *    10-hour ride end to end against a plain @garmin/fitsdk decode of the same
 *    bytes; GET /api/profile latency while 4 loops upload 10-hour rides; the
 *    server process's peak RSS (VmRSS sampled every 20 ms, VmHWM). Steps 2
 *    and 3 grow the server's heap first: for memory figures of a fresh server
 *    run `PACER_BENCH_ONLY=uploads`.
 * 5. Incoming webhooks (webhook-bench.ts), on the same server (role `all`):
 *    acknowledged deliveries/s at full speed, ingest latency at a steady
 *    500/s (open-loop sender), processing lag (received -> processed) at a
 *    steady 300/s for 30 s, and the backlog after it drains.
 * 6. MCP (mcp-bench.ts), on a server of its own started once the one of steps
 *    2-5 has stopped (same database, every rate limit off): tools/call
 *    get_profile against REST GET /api/profile (MCP/REST throughput and p50, 3 rounds),
 *    tools/list, calls/s at 10 and 50 clients, generate_report -> completed.
 * 7. Derived data (analytics-bench.ts), on a server of its own like step 6:
 *    GET /api/fuel/timeline for 14 days (200 meal items, 20 workouts), the
 *    full recompute of a year of data (in process and through the worker),
 *    and the lag of the stored recovery behind POST /api/wellness at 50/s.
 * 8. Hot path (hotpath-bench.ts): a Pacer server of its own as an operator
 *    runs it (log level info, both rate limits counted, only raised so the
 *    bench is never refused; role api, the recompute worker is section 7's)
 *    and the lean reference server (reference-server.ts, node:http + pg) on
 *    the same database, users and tokens (one per connection): POST /api/wellness
 *    and GET /api/wellness (30 days), rounds alternating reference and Pacer,
 *    req/s and p99 ratios Pacer/reference as min/median/max.
 * 9. Issue 20's figures (figures-bench.ts), each on servers of their own in
 *    the default deployment (role `all`, rate limits counted but never
 *    reached) unless named, against the lean reference server in the same run,
 *    `PACER_BENCH_ROUNDS` rounds alternating reference and Pacer:
 *    `load`: 10 athletes POST /api/wellness (last 60 days), with the
 *    derived-data lag of a probe athlete read through GET /api/recovery;
 *    `load-api`: the same with PACER_ROLE=api; `backfill`: one athlete's
 *    3 years newest first, and the time until its derived data is whole;
 *    `fit`: a fresh server's idle RSS (after a warm-up request), then step 4's
 *    uploads on it (upload vs plain decode, RSS of one and of 4 concurrent
 *    10-hour uploads). The MCP row comes from step 6.
 * 10. Issue 21's figures (fuel-figures.ts), on a server of its own like step 7:
 *    the realistic athlete (test/support/realistic-athlete.ts) seeded through
 *    the REST API, then tomorrow's 2.5 h ride and the untimed 4 h ride (status,
 *    limiting store, liver and muscle grams, plan and advice), the liver's
 *    overnight drop, the stores after each camp day, and GET /api/fuel/timeline
 *    for 14 days (p50/p95 of 200 sequential requests). Printed in the section
 *    only, not in the summary.
 * 11. CPU per request (cpu-bench.ts, `cpu`): the server process's CPU time
 *    (/proc/<pid>/stat, every thread, idle rate taken off) per request, not
 *    throughput: POST /api/wellness against the reference server in role
 *    `api` and in role `all` (there until the write's derived recompute is
 *    done), MCP tools/call get_profile against REST GET /api/profile, and the
 *    1-hour FIT upload against a plain decode of the same files in this
 *    process; `PACER_BENCH_ROUNDS` rounds alternating the servers, median
 *    round. Printed in the section only.
 * 12. Pooler (issue 23), only with DATABASE_URL and Debian's pgbouncer: a
 *    PgBouncer of the bench's own (test/support/pgbouncer.ts) in transaction
 *    mode (default_pool_size 10) in front of the bench database, and two API
 *    servers (PACER_ROLE=api) on it: one direct (as deployed without a
 *    pooler), one through PgBouncer (PACER_DB_PREPARED_STATEMENTS=false,
 *    PACER_MIGRATE_ON_START=false, PACER_DATABASE_SESSION_URL direct).
 *    POST /api/wellness with autocannon, PACER_BENCH_ROUNDS rounds alternating
 *    direct and pooled, a fresh athlete per run; req/s min/median/max of each
 *    and the ratio of the medians. Printed in the section and the JSON line.
 * Then a human-readable summary with the issue's table, then one JSON line
 * with every figure.
 *
 * Knobs (environment): PACER_BENCH_DURATION (s, default 10),
 * PACER_BENCH_WARMUP (s, default 3), PACER_BENCH_CONNECTIONS (default 10),
 * PACER_BENCH_ONLY (comma list of sections to run among `startup`,
 * `wellness`, `oauth`, `uploads`, `webhooks`, `mcp`, `analytics`, `hotpath`,
 * `load`, `load-api`, `backfill`, `fit`, `fuel-figures`, `cpu`, `pooler`; default all of them). Without `startup`
 * and without DATABASE_URL, the server's first start initialises the
 * embedded PostgreSQL on a fresh temp data dir, as step 1 would have.
 * PACER_BENCH_UPLOAD_RUNS (sequential runs per file in step 4, default 7),
 * PACER_BENCH_PROFILE_RATE (GET /api/profile per second in step 4, default 50),
 * PACER_BENCH_LAG_DURATION (s of the steady 300/s webhook run in step 5, default 30),
 * PACER_BENCH_MCP_REQUESTS (requests per client in each latency run of step 6, default 500),
 * PACER_BENCH_ANALYTICS_LAG_DURATION (s of the steady 50/s wellness writes in step 7, default 30),
 * PACER_BENCH_ROUNDS (rounds per route in step 8, per figure in steps 9 and 11, default 3),
 * PACER_BENCH_HOTPATH_USERS (users the connections of step 8 are spread over,
 * default one per connection; 1 puts every write on one user's rows),
 * PACER_BENCH_HOTPATH_ROUTES (step 8's routes, comma list of `post`, `get`; default both),
 * PACER_BENCH_CPU_PROF_DIR (the Pacer servers of `mcp`, `analytics`, `hotpath`,
 * `load`, `load-api`, `backfill` and `fit` run with `node --cpu-prof` and write
 * their profiles there when they stop; the fit server's decoder worker threads
 * each write their own),
 * PACER_BENCH_BACKFILL_DAYS (days of step 9's backfill, default 1095),
 * PACER_BENCH_CPU_REQUESTS (requests per run of step 11, default 2000),
 * PACER_BENCH_CPU_UPLOADS (FIT uploads per run of step 11, default 60),
 * PACER_BENCH_CPU_FIGURES (step 11's figures, comma list of `wellness`, `mcp`, `fit`; default all),
 * PACER_BENCH_CPU_ROLES (the roles step 11 runs Pacer in, comma list of `api`, `all`; default both),
 * PACER_BENCH_CPU_BASELINE (a built checkout whose Pacer step 11 runs beside this one's, same rounds; role api only),
 * PACER_BENCH_REPO (the checkout whose server is measured, e.g. one before a
 * change; default this one; bench-checkout.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { runOAuthBench, type OAuthBenchResult } from './oauth-bench.ts';
import { runUploadBench, type UploadBenchResult } from './upload-bench.ts';
import { runWebhookBench, webhookBenchLines, type WebhookBenchResult } from './webhook-bench.ts';
import {
  MCP_BENCH_SCOPES,
  MCP_BENCH_SERVER_ENV,
  mcpBenchLines,
  runMcpBench,
  type McpBenchResult,
} from './mcp-bench.ts';
import type { AnalyticsBenchResult } from './analytics-bench.ts';
import {
  HOTPATH_ROUTES,
  type HotpathRouteKey,
  hotpathBenchLines,
  hotpathSummaryLines,
  hotpathTargetsOf,
  runHotpathBench,
  type HotpathBenchResult,
} from './hotpath-bench.ts';
import { latencyStats, type LatencyStats, round, sleep, spreadOf, type Spread } from './bench-support.ts';
import {
  cpuLines,
  type CpuFigure,
  type CpuFigures,
  type CpuTarget,
  derivedSettled,
  distinctOneHourRides,
  fitUpload,
  mcpGetProfile,
  measureCpu,
  measureDecodeCpu,
  measureDecodeSummaryCpu,
  profileGet,
  wellnessPost,
} from './cpu-bench.ts';
import { pgbouncerPath, startPgBouncer } from '../support/pgbouncer.ts';
import { BENCH_REPO, ENTRY, freePort, NODE_FLAGS as PACER_NODE_FLAGS } from './bench-checkout.ts';
import { startEntry, startNodeFlags } from '../support/process.ts';
import {
  backfillLines,
  type BackfillFigures,
  type FitFigures,
  issueTableLines,
  type LoadFigures,
  loadLines,
  type McpFigures,
  runBackfill,
  runWellnessLoad,
} from './figures-bench.ts';

/** The checkout whose server is measured (PACER_BENCH_REPO); the reference server is always this one's. */
const ROOT = BENCH_REPO;
/** The reference server's flags: Node's defaults but for running a `.ts` file. */
const REFERENCE_NODE_FLAGS = ['--experimental-strip-types', '--disable-warning=ExperimentalWarning'];
const REFERENCE_SERVER = path.join(import.meta.dirname, 'reference-server.ts');

const DURATION_S = positiveNumber('PACER_BENCH_DURATION', 10);
const WARMUP_S = positiveNumber('PACER_BENCH_WARMUP', 3);
const CONNECTIONS = positiveNumber('PACER_BENCH_CONNECTIONS', 10);
const UPLOAD_RUNS = positiveNumber('PACER_BENCH_UPLOAD_RUNS', 7);
const PROFILE_RATE = positiveNumber('PACER_BENCH_PROFILE_RATE', 50);
const WEBHOOK_LAG_DURATION_S = positiveNumber('PACER_BENCH_LAG_DURATION', 30);
const MCP_REQUESTS = positiveNumber('PACER_BENCH_MCP_REQUESTS', 500);
const ANALYTICS_LAG_DURATION_S = positiveNumber('PACER_BENCH_ANALYTICS_LAG_DURATION', 30);
const HOTPATH_ROUNDS = positiveNumber('PACER_BENCH_ROUNDS', 3);
const HOTPATH_USERS = positiveNumber('PACER_BENCH_HOTPATH_USERS', CONNECTIONS);
const HOTPATH_ROUTE_KEYS = ((): readonly HotpathRouteKey[] => {
  const raw = process.env['PACER_BENCH_HOTPATH_ROUTES'];
  if (raw === undefined || raw.trim() === '') return HOTPATH_ROUTES;
  const keys = raw.split(',').map((key) => key.trim());
  if (keys.some((key) => !(HOTPATH_ROUTES as readonly string[]).includes(key))) {
    process.stderr.write(`bench: PACER_BENCH_HOTPATH_ROUTES takes a comma list of ${HOTPATH_ROUTES.join(', ')}\n`);
    process.exit(2);
  }
  return keys as HotpathRouteKey[];
})();
const CPU_PROF_DIR = process.env['PACER_BENCH_CPU_PROF_DIR'] || undefined;
/** The Pacer servers of `mcp`, `analytics`, `hotpath`, `load`, `load-api`, `backfill` and `fit` write a CPU profile into CPU_PROF_DIR when they stop. */
const CPU_PROF_NODE_FLAGS = CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : [];
const BACKFILL_DAYS = positiveNumber('PACER_BENCH_BACKFILL_DAYS', 1095);
const CPU_REQUESTS = positiveNumber('PACER_BENCH_CPU_REQUESTS', 2000);
const CPU_UPLOADS = positiveNumber('PACER_BENCH_CPU_UPLOADS', 60);
const CPU_ROUNDS = positiveNumber('PACER_BENCH_ROUNDS', 3);
const CPU_WARMUP = 300;
const CPU_WARMUP_UPLOADS = 10;
/** Lightly concurrent: enough to keep the server busy, few enough that queueing costs it nothing. */
const CPU_CLIENTS = 4;
const CPU_FIGURE_NAMES = ['wellness', 'mcp', 'fit'] as const;
/** PACER_BENCH_CPU_FIGURES: which of section 11's figures to measure (`mcp` includes REST's GET /api/profile). */
const CPU_FIGURES = ((): ReadonlySet<string> => {
  const raw = process.env['PACER_BENCH_CPU_FIGURES'];
  if (raw === undefined || raw.trim() === '') return new Set(CPU_FIGURE_NAMES);
  return new Set(raw.split(',').map((name) => name.trim()));
})();
/**
 * PACER_BENCH_CPU_BASELINE: another checkout (built) whose Pacer section 11 measures beside this one's, in role
 * `api` only (see runCpuSection).
 */
const CPU_BASELINE = process.env['PACER_BENCH_CPU_BASELINE']
  ? path.resolve(process.env['PACER_BENCH_CPU_BASELINE'])
  : undefined;
/** PACER_BENCH_CPU_ROLES: the roles section 11 runs Pacer in (default `api,all`). */
const CPU_ROLES = (process.env['PACER_BENCH_CPU_ROLES'] ?? 'api,all')
  .split(',')
  .map((role) => role.trim())
  .filter((role): role is 'api' | 'all' => role === 'api' || role === 'all');
/** Athletes of step 9's wellness load: one per connection. */
const LOAD_USERS = 10;
/** Users the lag run of step 7 spreads its writes over. */
const ANALYTICS_LAG_USERS = 20;
const UPLOAD_CONCURRENCY = 4;
const SECTIONS = [
  'startup',
  'wellness',
  'oauth',
  'uploads',
  'webhooks',
  'mcp',
  'analytics',
  'hotpath',
  'load',
  'load-api',
  'backfill',
  'fit',
  'fuel-figures',
  'cpu',
  'pooler',
] as const;
/** The sections measured on the throughput server of steps 2-5. */
const THROUGHPUT_SECTIONS: readonly Section[] = ['wellness', 'oauth', 'uploads', 'webhooks'];
type Section = (typeof SECTIONS)[number];
const ONLY = ((): ReadonlySet<Section> => {
  try {
    return sectionsToRun();
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n`);
    process.exit(2);
  }
})();
const READY_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 30_000;

const TARGETS = {
  emptyStartupMs: 10_000,
  existingStartupMs: 3_000,
  ratio: 0.6,
  httpP99Ms: 25,
  uploadRatio: 0.8,
  profileP99Ms: 50,
  peakRssMb: 250,
  webhookIngestRate: 500,
  webhookIngestP99Ms: 20,
  webhookLagRate: 300,
  webhookLagP95Ms: 1000,
  mcpRestThroughputRatio: 0.9,
  mcpRestP50Ratio: 1.3,
  mcpReportP95Ms: 2000,
  fuelTimelineP50Ms: 20,
  yearRecomputeMs: 1000,
  recomputeLagRate: 50,
  recomputeLagP95Ms: 2000,
} as const;

/** Limits the bench lifts so uploads are never 413'd or 429'd (the server's defaults: 25 MiB, 30 uploads a minute). */
const BENCH_MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
const BENCH_UPLOADS_PER_MINUTE = 1_000_000_000;

/**
 * Each phase writes its own window of dates (day offsets from 2000-01-01, all
 * valid calendar dates, the last in the 3090s), so every phase starts on rows it has
 * not written: creates first, updates only if a phase wraps its window.
 */
const DATE_WINDOW_DAYS = 100_000;
const PHASE_BASE = { httpWarmup: 0, http: 1, pgWarmup: 2, pg: 3 } as const;
const DAY_MS = 86_400_000;
const EPOCH_2000 = Date.UTC(2000, 0, 1);

/** The statement Kysely builds in `upsertWellness` for a body with `hrv` and `restingHr`. */
const UPSERT_SQL =
  'insert into "wellness" ("user_id", "date", "hrv", "resting_hr") values ($1, $2, $3, $4) ' +
  'on conflict ("user_id", "date") do update set "updated_at" = now(), "hrv" = "excluded"."hrv", "resting_hr" = "excluded"."resting_hr" ' +
  'returning *, (xmax = 0) as "created"';

function positiveNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return value;
}

function sectionsToRun(): ReadonlySet<Section> {
  const raw = process.env['PACER_BENCH_ONLY'];
  if (raw === undefined || raw.trim() === '') return new Set(SECTIONS);
  const names = raw
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0)
    throw new Error(`PACER_BENCH_ONLY takes a comma list of ${SECTIONS.join(', ')}; got ${JSON.stringify(raw)}`);
  return new Set(names as Section[]);
}

function dateOf(phase: keyof typeof PHASE_BASE, n: number): string {
  const offset = PHASE_BASE[phase] * DATE_WINDOW_DAYS + (n % DATE_WINDOW_DAYS);
  return new Date(EPOCH_2000 + offset * DAY_MS).toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------
// Cleanup: children, orphaned embedded postgres, bench database, temp dirs.

interface Cleanup {
  readonly children: Set<ServerProcess>;
  readonly tempDirs: Set<string>;
  benchDatabase: { readonly adminUrl: string; readonly name: string } | undefined;
}

const cleanupState: Cleanup = { children: new Set(), tempDirs: new Set(), benchDatabase: undefined };
let cleaning: Promise<void> | undefined;
/** Set on SIGINT/SIGTERM: load loops stop and the main flow goes quiet while cleanup runs. */
let interrupted = false;
let runningCannon: autocannon.Instance | undefined;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A postmaster left running under one of our data dirs (its server was SIGKILLed): stop it by its pid. */
async function stopOrphanPostmaster(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 200 && isAlive(pid); i++) await sleep(50);
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
}

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const child of cleanupState.children) {
      try {
        await child.stop();
      } catch (error) {
        process.stderr.write(`bench cleanup: stopping server ${child.pid} failed: ${String(error)}\n`);
      }
    }
    for (const dir of cleanupState.tempDirs) await stopOrphanPostmaster(dir).catch(() => undefined);
    const bench = cleanupState.benchDatabase;
    if (bench) {
      const admin = new pg.Client({ connectionString: bench.adminUrl });
      try {
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS "${bench.name}" WITH (FORCE)`);
      } catch (error) {
        process.stderr.write(`bench cleanup: could not drop database ${bench.name}: ${String(error)}\n`);
      } finally {
        await admin.end().catch(() => undefined);
      }
    }
    for (const dir of cleanupState.tempDirs) await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    interrupted = true;
    runningCannon?.stop();
    process.stderr.write(`\nbench: ${signal}, cleaning up...\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------
// The server as a child process.

interface ServerProcess {
  readonly pid: number;
  readonly url: string;
  readonly spawnedAt: number;
  /** Last lines of stdout/stderr, for error messages. */
  readonly tail: string[];
  /** `startupMs` from the server's own "Pacer is ready" log line (PACER_LOG_LEVEL=info only). */
  readonly readyLogStartupMs: () => number | undefined;
  readonly exited: () => boolean;
  /** SIGTERM, wait for exit (SIGKILL after STOP_TIMEOUT_MS); ms from signal to exit. */
  stop(): Promise<number>;
}

function collectLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  if (!stream) return;
  let buffer = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffer += chunk;
    let index: number;
    while ((index = buffer.indexOf('\n')) >= 0) {
      onLine(buffer.slice(0, index));
      buffer = buffer.slice(index + 1);
    }
  });
  stream.on('end', () => {
    if (buffer) onLine(buffer);
  });
}

/** The Pacer server by default (with `npm start`'s flags); `command.args` runs another script (the reference server). */
function spawnServer(
  env: NodeJS.ProcessEnv,
  port: number,
  command: {
    readonly nodeFlags?: readonly string[];
    readonly args?: readonly string[];
    /** Another checkout's Pacer (its start flags and entry), e.g. the code before a change. */
    readonly checkout?: string;
  } = {},
): ServerProcess {
  if (interrupted) throw new Error('interrupted');
  const spawnedAt = performance.now();
  const [flags, args] = command.args
    ? [REFERENCE_NODE_FLAGS, command.args]
    : command.checkout
      ? [startNodeFlags(command.checkout), [startEntry(command.checkout), 'start']]
      : [PACER_NODE_FLAGS, [ENTRY, 'start']];
  const child: ChildProcess = spawn(process.execPath, [...flags, ...(command.nodeFlags ?? []), ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error('could not spawn the server');
  const tail: string[] = [];
  let readyLogStartupMs: number | undefined;
  const onLine = (line: string) => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
    if (line.includes('Pacer is ready')) {
      try {
        readyLogStartupMs = (JSON.parse(line) as { startupMs?: number }).startupMs;
      } catch {
        // not a JSON line
      }
    }
  };
  collectLines(child.stdout, onLine);
  collectLines(child.stderr, onLine);
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  let stopping: Promise<number> | undefined;
  const server: ServerProcess = {
    pid: child.pid,
    url: `http://127.0.0.1:${port}`,
    spawnedAt,
    tail,
    readyLogStartupMs: () => readyLogStartupMs,
    exited: () => exited,
    stop() {
      stopping ??= (async () => {
        const started = performance.now();
        if (!exited) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
          await exit;
          clearTimeout(timer);
        }
        cleanupState.children.delete(server);
        return performance.now() - started;
      })();
      return stopping;
    },
  };
  cleanupState.children.add(server);
  return server;
}

function getStatus(url: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}

/** Poll /readyz until it answers 200; ms from spawn. */
async function waitReady(server: ServerProcess): Promise<number> {
  const deadline = server.spawnedAt + READY_TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (server.exited()) throw new Error(`the server exited before it was ready:\n${server.tail.join('\n')}`);
    try {
      if ((await getStatus(`${server.url}/readyz`, 2000)) === 200) return performance.now() - server.spawnedAt;
    } catch {
      // not listening yet
    }
    await sleep(10);
  }
  throw new Error(`the server was not ready after ${READY_TIMEOUT_MS} ms:\n${server.tail.join('\n')}`);
}

function serverEnv(options: {
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  logLevel: string;
}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env['DATABASE_URL'];
  for (const name of Object.keys(env)) if (name.startsWith('PACER_BENCH_')) delete env[name];
  return {
    ...env,
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    PACER_DATA_DIR: options.dataDir,
    PACER_PORT: String(options.port),
    PACER_HOST: '127.0.0.1',
    PACER_BASE_URL: `http://127.0.0.1:${options.port}`,
    PACER_LOG_LEVEL: options.logLevel,
    PACER_ROLE: 'all',
    // The bench measures the write path, not the limiter: one token and one IP must never be throttled.
    PACER_RATE_LIMIT_PER_MINUTE: '1000000000',
    PACER_RATE_LIMIT_IP_PER_MINUTE: '1000000000',
    PACER_MCP_RATE_LIMIT_PER_MINUTE: '1000000000',
    // Nor the webhook ingest of step 5 (one sender, one app, thousands per second).
    PACER_WEBHOOK_RATE_LIMIT_IP_PER_MINUTE: '0',
    PACER_WEBHOOK_RATE_LIMIT_APP_PER_MINUTE: '0',
    // Nor the uploads of step 4 (their own bucket), nor refused for size.
    PACER_RATE_LIMIT_UPLOADS_PER_MINUTE: String(BENCH_UPLOADS_PER_MINUTE),
    PACER_MAX_UPLOAD_BYTES: String(BENCH_MAX_UPLOAD_BYTES),
  };
}

/** `npm run pacer -- <args>`, run as the same node command npm runs; the last stdout line parsed as JSON. */
function runCli<T>(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    if (interrupted) throw new Error('interrupted');
    const child = spawn(process.execPath, [...PACER_NODE_FLAGS, ENTRY, ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) {
        reject(new Error(`pacer ${args[0]} exited with ${code}:\n${stderr}${stdout}`));
        return;
      }
      const last = stdout.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`pacer ${args[0]} printed no JSON:\n${stdout}${stderr}`));
      }
    });
  });
}

/** A fresh user (and its password) and a `health:write health:read` token for it, through the CLI as an operator would. */
async function createBenchUser(
  env: NodeJS.ProcessEnv,
  prefix: string,
): Promise<{ readonly email: string; readonly password: string; readonly id: string; readonly token: string }> {
  const email = `${prefix}-${randomBytes(4).toString('hex')}@example.com`;
  const password = randomBytes(12).toString('hex');
  const user = await runCli<{ id: string }>(env, [
    'user:create',
    `--email=${email}`,
    `--password=${password}`,
    '--json',
  ]);
  const token = await runCli<{ access_token: string }>(env, [
    'token:create',
    '--email',
    email,
    '--scope',
    'health:write health:read',
    '--expires-in',
    '7200',
    '--json',
  ]);
  return { email, password, id: user.id, token: token.access_token };
}

// ---------------------------------------------------------------------------
// CPU accounting (Linux /proc): who burns the cores during a phase.

interface CpuSnapshot {
  readonly at: number;
  readonly machineBusy: number;
  readonly machineTotal: number;
  readonly server: number;
  /** Ticks per PostgreSQL process: backends come and go (pools close idle connections), so deltas are taken per pid. */
  readonly postgres: ReadonlyMap<string, number>;
  readonly self: number;
}

/** Which PostgreSQL processes are ours: the postmaster's children serving our database, plus its background processes. */
interface PostgresScope {
  readonly postmasterPid: number;
  readonly database: string;
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

function procStat(pid: number | string): { ticks: number; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state), fields[1] the ppid; utime/stime are fields 14/15.
    return { ticks: Number(fields[11]) + Number(fields[12]), ppid: Number(fields[1]) };
  } catch {
    return undefined;
  }
}

function postgresTicks(scope: PostgresScope | undefined): Map<string, number> {
  const ticks = new Map<string, number>();
  if (!scope) return ticks;
  ticks.set(String(scope.postmasterPid), procStat(scope.postmasterPid)?.ticks ?? 0);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const proc = procStat(entry);
    if (!proc || proc.ppid !== scope.postmasterPid) continue;
    let title: string;
    try {
      title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue;
    }
    // Client backends read "postgres: [cluster:] user database host(port) state"; background processes have no client address.
    if (!title.includes('(') || title.includes(` ${scope.database} `)) ticks.set(entry, proc.ticks);
  }
  return ticks;
}

function cpuSnapshot(serverPid: number, scope: PostgresScope | undefined): CpuSnapshot | undefined {
  try {
    const cpu = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(1).map(Number);
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
    const total = cpu.slice(0, 8).reduce((sum, value) => sum + value, 0);
    const usage = process.cpuUsage();
    return {
      at: performance.now(),
      machineBusy: total - idle,
      machineTotal: total,
      server: procStat(serverPid)?.ticks ?? 0,
      postgres: postgresTicks(scope),
      self: (usage.user + usage.system) / 1e6,
    };
  } catch {
    return undefined;
  }
}

interface CpuUse {
  /** CPU-seconds per wall second (1.0 = one full core). */
  readonly server: number;
  readonly postgres: number;
  readonly bench: number;
  /** Everything else on the machine in the same window (other processes competing for the cores). */
  readonly other: number;
  readonly machineBusyPct: number;
}

function cpuUse(before: CpuSnapshot | undefined, after: CpuSnapshot | undefined): CpuUse | undefined {
  if (!before || !after) return undefined;
  const wall = (after.at - before.at) / 1000;
  const server = (after.server - before.server) / CLOCK_TICKS / wall;
  let postgresTicksUsed = 0;
  // A process gone by `after` was idle long enough for its pool to close it: its share is lost, and small.
  for (const [pid, ticks] of after.postgres) postgresTicksUsed += ticks - (before.postgres.get(pid) ?? 0);
  const postgres = postgresTicksUsed / CLOCK_TICKS / wall;
  const bench = (after.self - before.self) / wall;
  const busyShare = (after.machineBusy - before.machineBusy) / Math.max(1, after.machineTotal - before.machineTotal);
  const busyCores = busyShare * os.cpus().length;
  return {
    server: round(server),
    postgres: round(postgres),
    bench: round(bench),
    other: round(Math.max(0, busyCores - server - postgres - bench)),
    machineBusyPct: round(100 * busyShare, 1),
  };
}

// ---------------------------------------------------------------------------
// (a) HTTP through autocannon.

interface HttpResult {
  readonly requests: number;
  readonly durationS: number;
  readonly rps: number;
  /** From each response's own time (float ms). */
  readonly latency: LatencyStats;
  /** autocannon's own figures (its latency histogram is whole milliseconds), for reference. */
  readonly autocannon: { readonly p50: number; readonly p99: number; readonly rpsAverage: number };
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Record<string, number>;
  readonly cpu: CpuUse | undefined;
}

async function runAutocannon(
  url: string,
  token: string,
  phase: 'httpWarmup' | 'http',
  durationS: number,
  serverPid: number,
  scope: PostgresScope | undefined,
): Promise<HttpResult> {
  let n = 0;
  const samples: number[] = [];
  const statusCodes: Record<string, number> = {};
  let finish: (result: autocannon.Result) => void = () => undefined;
  let fail: (error: unknown) => void = () => undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const before = cpuSnapshot(serverPid, scope);
  const instance = autocannon(
    {
      url,
      connections: CONNECTIONS,
      pipelining: 1,
      duration: durationS,
      timeout: 10,
      requests: [
        {
          method: 'POST',
          path: '/api/wellness',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          setupRequest: (request) => {
            const i = n++;
            request.body = JSON.stringify({ date: dateOf(phase, i), hrv: 40 + (i % 60), restingHr: 40 + (i % 30) });
            return request;
          },
        },
      ],
    },
    (error: unknown, result: autocannon.Result) => (error ? fail(error) : finish(result)),
  );
  runningCannon = instance;
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    samples.push(responseTime);
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
  });
  const result = await done.finally(() => (runningCannon = undefined));
  const after = cpuSnapshot(serverPid, scope);
  const wallS = before && after ? (after.at - before.at) / 1000 : result.duration;
  return {
    requests: samples.length,
    durationS: round(wallS),
    rps: round(samples.length / wallS, 1),
    latency: latencyStats(samples),
    autocannon: { p50: result.latency.p50, p99: result.latency.p99, rpsAverage: result.requests.average },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    cpu: cpuUse(before, after),
  };
}

// ---------------------------------------------------------------------------
// (b) The same upsert straight through pg.

interface PgResult {
  readonly ops: number;
  readonly durationS: number;
  readonly opsPerSec: number;
  readonly latency: LatencyStats;
  readonly created: number;
  readonly updated: number;
  readonly cpu: CpuUse | undefined;
}

async function runPg(
  pool: pg.Pool,
  userId: string,
  phase: 'pgWarmup' | 'pg',
  durationS: number,
  serverPid: number,
  scope: PostgresScope | undefined,
): Promise<PgResult> {
  let n = 0;
  let created = 0;
  const samples: number[] = [];
  const before = cpuSnapshot(serverPid, scope);
  const started = performance.now();
  const end = started + durationS * 1000;
  const loop = async () => {
    while (performance.now() < end && !interrupted) {
      const i = n++;
      const t0 = performance.now();
      const result = await pool.query<{ created: boolean }>(UPSERT_SQL, [
        userId,
        dateOf(phase, i),
        40 + (i % 60),
        40 + (i % 30),
      ]);
      samples.push(performance.now() - t0);
      if (result.rows[0]?.created) created++;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, loop));
  const after = cpuSnapshot(serverPid, scope);
  const wallS = (performance.now() - started) / 1000;
  return {
    ops: samples.length,
    durationS: round(wallS),
    opsPerSec: round(samples.length / wallS, 1),
    latency: latencyStats(samples),
    created,
    updated: samples.length - created,
    cpu: cpuUse(before, after),
  };
}

// ---------------------------------------------------------------------------

interface StartupRun {
  readonly readyMs: number;
  /** The server's own measure from `start()` to listening; the rest is node boot, imports and polling. */
  readonly inProcessMs: number | undefined;
  readonly stopMs: number;
}

async function measureStartup(dataDir: string): Promise<StartupRun> {
  const port = await freePort();
  const server = spawnServer(serverEnv({ port, dataDir, databaseUrl: undefined, logLevel: 'info' }), port);
  const readyMs = await waitReady(server);
  // The ready line is logged right after listen; give the pipe a moment.
  for (let i = 0; i < 50 && server.readyLogStartupMs() === undefined; i++) await sleep(10);
  const inProcessMs = server.readyLogStartupMs();
  const stopMs = await server.stop();
  return { readyMs: round(readyMs, 0), inProcessMs, stopMs: round(stopMs, 0) };
}

/** The postmaster (parent of our backend) and database name when PostgreSQL runs on this machine; else no postgres CPU figures. */
async function postgresScope(pool: pg.Pool): Promise<PostgresScope | undefined> {
  const { rows } = await pool.query<{ pid: number; database: string }>(
    'SELECT pg_backend_pid() AS pid, current_database() AS database',
  );
  const row = rows[0];
  const backend = row ? procStat(row.pid) : undefined;
  return row && backend ? { postmasterPid: backend.ppid, database: row.database } : undefined;
}

function embeddedUrl(dataDir: string): string {
  const credentials = JSON.parse(readFileSync(path.join(dataDir, 'postgres-credentials.json'), 'utf8')) as {
    user: string;
    password: string;
  };
  const owner = JSON.parse(readFileSync(path.join(dataDir, 'postgres-owner.json'), 'utf8')) as { port: number };
  return `postgres://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${owner.port}/pacer`;
}

function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

const mark = (ok: boolean) => (ok ? 'OK  ' : 'MISS');

function cpuLine(cpu: CpuUse | undefined): string {
  if (!cpu) return 'n/a';
  return `server ${cpu.server} + postgres ${cpu.postgres} + bench ${cpu.bench} + other processes ${cpu.other} cores (machine ${cpu.machineBusyPct}% busy of ${os.cpus().length} CPUs)`;
}

async function main(): Promise<void> {
  const log = (line: string) => {
    if (!interrupted) process.stdout.write(`${line}\n`);
  };
  const externalUrl = process.env['DATABASE_URL'] || undefined;
  log(
    `Pacer bench: node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? 'unknown'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
  );
  log(
    `load average before the run: ${os
      .loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );

  // 1. Startup.
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'pacer-bench-'));
  cleanupState.tempDirs.add(dataDir);
  let empty: StartupRun | undefined;
  let existing: StartupRun | undefined;
  if (ONLY.has('startup')) {
    log(`\n[1] startup, embedded PostgreSQL in ${dataDir}`);
    empty = await measureStartup(dataDir);
    log(
      `    empty data dir:    ${empty.readyMs} ms to /readyz 200 (server's own startupMs ${empty.inProcessMs ?? '?'}), stop ${empty.stopMs} ms`,
    );
    existing = await measureStartup(dataDir);
    log(
      `    existing data dir: ${existing.readyMs} ms to /readyz 200 (server's own startupMs ${existing.inProcessMs ?? '?'}), stop ${existing.stopMs} ms`,
    );
  } else {
    log(`\n[1] startup: skipped (PACER_BENCH_ONLY=${[...ONLY].join(',')})`);
  }
  if (![...ONLY].some((section) => section !== 'startup')) {
    log('\nno section on a server selected');
    printSummary(log, { empty, existing });
    return;
  }

  // 2.-9. On one PostgreSQL.
  let databaseUrl: string | undefined;
  if (externalUrl) {
    const name = `pacer_bench_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: externalUrl });
    await admin.connect();
    try {
      cleanupState.benchDatabase = { adminUrl: externalUrl, name };
      await admin.query(`CREATE DATABASE "${name}"`);
    } finally {
      await admin.end();
    }
    const url = new URL(externalUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
  }
  let throughput: Partial<ThroughputFigures> = {};
  if (THROUGHPUT_SECTIONS.some((section) => ONLY.has(section)))
    throughput = await runThroughputSections(log, { dataDir, databaseUrl, startupRan: empty !== undefined });

  let mcpRun: McpBenchResult | undefined;
  if (ONLY.has('mcp')) mcpRun = await runMcpSection(log, { dataDir, databaseUrl });
  let analyticsRun: AnalyticsBenchResult | undefined;
  if (ONLY.has('analytics')) analyticsRun = await runAnalyticsSection(log, { dataDir, databaseUrl });
  let hotpathRun: HotpathBenchResult | undefined;
  if (ONLY.has('hotpath')) hotpathRun = await runHotpathSection(log, { dataDir, databaseUrl });
  const where = { dataDir, databaseUrl };
  const load = ONLY.has('load') ? await runLoadSection(log, where, 'all') : undefined;
  const loadApi = ONLY.has('load-api') ? await runLoadSection(log, where, 'api') : undefined;
  const backfill = ONLY.has('backfill') ? await runBackfillSection(log, where) : undefined;
  const fit = ONLY.has('fit') ? await runFitSection(log, where) : undefined;
  if (ONLY.has('fuel-figures')) await runFuelFiguresSection(log, where);
  if (ONLY.has('cpu')) await runCpuSection(log, where);
  const pooler = ONLY.has('pooler') ? await runPoolerSection(log, where) : undefined;
  if (pooler) log(`BENCH_POOLER_JSON ${JSON.stringify(pooler)}`);

  printSummary(log, {
    empty,
    existing,
    databaseUrl,
    ...throughput,
    mcpRun,
    analyticsRun,
    hotpathRun,
    load,
    loadApi,
    backfill,
    fit,
  });
}

interface ThroughputFigures {
  readonly httpRun: HttpResult | undefined;
  readonly pgRun: PgResult | undefined;
  readonly oauthRun: OAuthBenchResult | undefined;
  readonly uploadRun: UploadBenchResult | undefined;
  readonly webhookRun: WebhookBenchResult | undefined;
  readonly readyMs: number;
  readonly stopMs: number;
}

/** 2-5 on one server (the throughput server), then stopped. */
async function runThroughputSections(
  log: (line: string) => void,
  options: { dataDir: string; databaseUrl: string | undefined; startupRan: boolean },
): Promise<ThroughputFigures> {
  const { dataDir, databaseUrl } = options;
  const port = await freePort();
  const env = serverEnv({ port, dataDir, databaseUrl, logLevel: 'warn' });
  const where = databaseUrl
    ? `DATABASE_URL ${redactUrl(databaseUrl)} (fresh database)`
    : options.startupRan
      ? 'the embedded PostgreSQL from step 1'
      : `an embedded PostgreSQL in ${dataDir} (step 1 skipped: this start initialises it)`;
  log(ONLY.has('wellness') ? `\n[2] throughput on ${where}` : `\n[2] wellness: skipped; server on ${where}`);
  const server = spawnServer(env, port);
  const readyMs = await waitReady(server);
  log(`    server ready in ${round(readyMs, 0)} ms (PACER_LOG_LEVEL=warn, pid ${server.pid})`);

  const { email, password, id: userId, token: accessToken } = await createBenchUser(env, 'bench');
  log(`    user ${userId}, token issued through the CLI`);

  const pgUrl = databaseUrl ?? embeddedUrl(dataDir);
  const pool = new pg.Pool({ connectionString: pgUrl, max: CONNECTIONS });
  let httpRun: HttpResult | undefined;
  let pgRun: PgResult | undefined;
  let oauthRun: OAuthBenchResult | undefined;
  let uploadRun: UploadBenchResult | undefined;
  let webhookRun: WebhookBenchResult | undefined;
  try {
    if (ONLY.has('wellness')) {
      const probe = await fetch(`${server.url}/api/wellness`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ date: '1999-12-31', hrv: 55, restingHr: 48 }),
      });
      const probeBody = await probe.text();
      if (probe.status !== 201 && probe.status !== 200)
        throw new Error(`probe POST /api/wellness answered ${probe.status}: ${probeBody}`);

      const scope = await postgresScope(pool);
      log(`    (a) HTTP: autocannon, ${CONNECTIONS} connections, warm-up ${WARMUP_S} s, then ${DURATION_S} s`);
      await runAutocannon(server.url, accessToken, 'httpWarmup', WARMUP_S, server.pid, scope);
      httpRun = await runAutocannon(server.url, accessToken, 'http', DURATION_S, server.pid, scope);
      log(
        `        ${httpRun.rps} req/s, p50 ${httpRun.latency.p50} ms, p99 ${httpRun.latency.p99} ms, non-2xx ${httpRun.non2xx}, errors ${httpRun.errors}`,
      );
      log(`    (b) pg: Pool of ${CONNECTIONS}, ${CONNECTIONS} loops, warm-up ${WARMUP_S} s, then ${DURATION_S} s`);
      await runPg(pool, userId, 'pgWarmup', WARMUP_S, server.pid, scope);
      pgRun = await runPg(pool, userId, 'pg', DURATION_S, server.pid, scope);
      log(`        ${pgRun.opsPerSec} ops/s, p50 ${pgRun.latency.p50} ms, p99 ${pgRun.latency.p99} ms`);
    }

    if (ONLY.has('oauth')) {
      log(`\n[3] OAuth token endpoint`);
      const redirectUri = 'https://bench.example.test/callback';
      const app = await runCli<{ clientId: string; clientSecret: string }>(env, [
        'app:create',
        '--name',
        'Bench client',
        '--redirect-uri',
        redirectUri,
        '--owner',
        email,
        '--json',
      ]);
      oauthRun = await runOAuthBench({
        serverUrl: server.url,
        pool,
        userEmail: email,
        userPassword: password,
        client: { clientId: app.clientId, clientSecret: app.clientSecret, redirectUri },
        connections: CONNECTIONS,
        durationS: DURATION_S,
        roundTrips: 200,
      });
      log(
        `    refresh grant: ${oauthRun.refresh.rps} req/s, p50 ${oauthRun.refresh.p50} ms, p99 ${oauthRun.refresh.p99} ms, non-2xx ${oauthRun.refresh.non2xx}`,
      );
      log(
        `    authorization code round trip (authorize + consent POST + token), ${oauthRun.codeRoundTrip.runs} sequential runs: p50 ${oauthRun.codeRoundTrip.p50} ms, p99 ${oauthRun.codeRoundTrip.p99} ms`,
      );
    } else {
      log(`\n[3] OAuth: skipped`);
    }

    if (ONLY.has('uploads')) {
      log(`\n[4] FIT uploads (POST /api/workouts/upload-fit)`);
      log(
        `    bench server env: PACER_MAX_UPLOAD_BYTES=${BENCH_MAX_UPLOAD_BYTES}, PACER_RATE_LIMIT_UPLOADS_PER_MINUTE=${BENCH_UPLOADS_PER_MINUTE} (no 413/429 from the limits)`,
      );
      uploadRun = await uploadsOn(log, server, env, email);
    }

    if (ONLY.has('webhooks')) {
      log(`\n[5] incoming webhooks (POST /api/webhooks/oauth/{clientId}, wellness.upsert events, role all)`);
      const webhookApp = await runCli<{ clientId: string; webhookSecret: string }>(env, [
        'app:create',
        '--name',
        'Webhook bench',
        '--redirect-uri',
        'https://bench.example.test/callback',
        '--owner',
        email,
        '--json',
      ]);
      webhookRun = await runWebhookBench({
        serverUrl: server.url,
        pool,
        clientId: webhookApp.clientId,
        webhookSecret: webhookApp.webhookSecret,
        userId: userId,
        connections: CONNECTIONS,
        durationS: DURATION_S,
        warmupS: WARMUP_S,
        ingestRate: TARGETS.webhookIngestRate,
        lagRate: TARGETS.webhookLagRate,
        lagDurationS: WEBHOOK_LAG_DURATION_S,
        serverPid: server.pid,
        interrupted: () => interrupted,
      });
      for (const line of webhookBenchLines(webhookRun)) log(line);
    }
  } finally {
    await pool.end();
  }
  const stopMs = await server.stop();
  return { httpRun, pgRun, oauthRun, uploadRun, webhookRun, readyMs, stopMs };
}

/**
 * Step 4's uploads on `server`: `UPLOAD_CONCURRENCY` users with a
 * `workout:write profile:read` token each (the first one `firstEmail`'s, when
 * given), then runUploadBench and its lines.
 */
async function uploadsOn(
  log: (line: string) => void,
  server: ServerProcess,
  env: NodeJS.ProcessEnv,
  firstEmail: string | undefined,
): Promise<UploadBenchResult> {
  // One user per concurrent loop: the server decodes one file per user at a time (a second one is a 429).
  const uploadToken = (userEmail: string) =>
    runCli<{ access_token: string }>(env, [
      'token:create',
      '--email',
      userEmail,
      '--scope',
      'workout:write profile:read',
      '--expires-in',
      '7200',
      '--json',
    ]);
  const uploadTokens: string[] = firstEmail === undefined ? [] : [(await uploadToken(firstEmail)).access_token];
  while (uploadTokens.length < UPLOAD_CONCURRENCY) {
    const other = await createBenchUser(env, `bench-upload-${uploadTokens.length}`);
    uploadTokens.push((await uploadToken(other.email)).access_token);
  }
  log(`    ${UPLOAD_CONCURRENCY} users with a workout:write token each (the concurrent loops are one per user)`);
  log(
    `    every upload is distinct bytes (fixture serial number varied, CRC recomputed): each one a create; ${UPLOAD_RUNS} sequential runs per file after 2 warm-up runs`,
  );
  const uploadRun = await runUploadBench({
    serverUrl: server.url,
    serverPid: server.pid,
    tokens: uploadTokens,
    repetitions: UPLOAD_RUNS,
    concurrency: UPLOAD_CONCURRENCY,
    durationS: DURATION_S,
    warmupS: WARMUP_S,
    profileRate: PROFILE_RATE,
    interrupted: () => interrupted,
  });
  for (const [label, run] of [
    ['1-hour ', uploadRun.oneHour],
    ['10-hour', uploadRun.tenHour],
  ] as const) {
    log(
      `    ${label} ride (${run.fileBytes} bytes): upload ${run.uploadMBps} MB/s (p50 ${run.uploadMs.p50} ms, max ${run.uploadMs.max} ms), plain decode ${run.decodeMBps} MB/s (p50 ${run.decodeMs.p50} ms), decode + summary ${run.decodeSummaryMs.p50} ms; ratio ${run.ratio} (per run: min ${run.ratioPerRun.min}, median ${run.ratioPerRun.median}, max ${run.ratioPerRun.max})`,
    );
  }
  const single = uploadRun.singleTenHourMemory;
  log(
    `    server RSS before the first upload ${uploadRun.serverIdleRssMb} MB; over the sequential 10-hour uploads: baseline ${single.baselineRssMb} MB, peak sampled ${single.peakSampledRssMb} MB, VmHWM ${single.hwmMb} MB${single.hwmReset ? '' : ' (since process start: clear_refs failed)'}`,
  );
  log(
    `    GET /api/profile idle, ${uploadRun.profileIdle.rate}/s for ${WARMUP_S} s: p50 ${uploadRun.profileIdle.p50} ms, p99 ${uploadRun.profileIdle.p99} ms, errors ${uploadRun.profileIdle.errors}`,
  );
  const c = uploadRun.concurrent;
  log(
    `    ${c.concurrency} loops of 10-hour uploads for ${c.windowS} s: ${c.completedInWindow} done in the window (${c.completed} in all), ${c.aggregateMBps} MB/s together, upload p50 ${c.uploadMs.p50} ms, p99 ${c.uploadMs.p99} ms`,
  );
  log(
    `      GET /api/profile meanwhile, ${c.profile.rate}/s: ${c.profile.count} answers, p50 ${c.profile.p50} ms, p99 ${c.profile.p99} ms, max ${c.profile.max} ms, errors ${c.profile.errors}`,
  );
  log(
    `      server RSS: baseline ${c.memory.baselineRssMb} MB, peak sampled ${c.memory.peakSampledRssMb} MB (${c.memory.samples} samples, longest gap ${c.memory.maxSampleGapMs} ms), VmHWM ${c.memory.hwmMb} MB`,
  );
  return uploadRun;
}

/** 6. MCP on a server of its own (the limits of steps 2-5 stay as they were), then stopped. */
async function runMcpSection(
  log: (line: string) => void,
  where: { dataDir: string; databaseUrl: string | undefined },
): Promise<McpBenchResult> {
  log(`\n[6] MCP (POST /mcp, stateless, JSON answers), on a server of its own on the same database`);
  const port = await freePort();
  const env = { ...serverEnv({ port, ...where, logLevel: 'warn' }), ...MCP_BENCH_SERVER_ENV };
  const server = spawnServer(env, port, { nodeFlags: CPU_PROF_NODE_FLAGS });
  try {
    log(
      `    server ready in ${round(await waitReady(server), 0)} ms (pid ${server.pid}${CPU_PROF_DIR ? `, --cpu-prof into ${CPU_PROF_DIR}` : ''})`,
    );
    const email = `bench-mcp-${randomBytes(4).toString('hex')}@example.com`;
    const user = await runCli<{ id: string }>(env, [
      'user:create',
      `--email=${email}`,
      `--password=${randomBytes(12).toString('hex')}`,
      '--json',
    ]);
    const token = (scopes: readonly string[], resource: string[]) =>
      runCli<{ access_token: string }>(env, [
        'token:create',
        '--email',
        email,
        ...scopes.flatMap((scope) => ['--scope', scope]),
        ...resource,
        '--expires-in',
        '7200',
        '--json',
      ]);
    const restToken = await token(['profile:read'], []);
    const mcpToken = await token(MCP_BENCH_SCOPES, ['--resource', `${server.url}/mcp`]);
    log(`    user ${user.id}: a REST token and a token bound to ${server.url}/mcp, issued through the CLI`);
    const pool = new pg.Pool({ connectionString: where.databaseUrl ?? embeddedUrl(where.dataDir), max: 4 });
    try {
      const run = await runMcpBench({
        serverUrl: server.url,
        pool,
        userId: user.id,
        restToken: restToken.access_token,
        mcpToken: mcpToken.access_token,
        clients: CONNECTIONS,
        requestsPerClient: MCP_REQUESTS,
        durationS: DURATION_S,
        serverPid: server.pid,
        interrupted: () => interrupted,
      });
      for (const line of mcpBenchLines(run)) log(line);
      return run;
    } catch (error) {
      if (!server.exited()) throw error;
      throw new Error(`the MCP server exited during the section:\n${server.tail.join('\n')}`, { cause: error });
    } finally {
      await pool.end();
    }
  } finally {
    await server.stop();
  }
}

/** Runs `count` tasks, `concurrency` at a time, results in order. */
async function inTurns<T>(count: number, concurrency: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const lane = async () => {
    for (let index = next++; index < count; index = next++) results[index] = await task(index);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return results;
}

/** 7. Derived data on a server of its own (every limiter off, as step 6), then stopped. */
async function runAnalyticsSection(
  log: (line: string) => void,
  where: { dataDir: string; databaseUrl: string | undefined },
): Promise<AnalyticsBenchResult> {
  // Loaded only for this section: it runs the server's recompute in this process.
  const { ANALYTICS_BENCH_SCOPES, ANALYTICS_BENCH_TIME_ZONE, analyticsBenchLines, runAnalyticsBench } =
    await import('./analytics-bench.ts');
  log(
    `\n[7] analytics (fuel timeline, recompute of a year, recompute lag), on a server of its own on the same database`,
  );
  const port = await freePort();
  const env = { ...serverEnv({ port, ...where, logLevel: 'warn' }), ...MCP_BENCH_SERVER_ENV };
  const server = spawnServer(env, port, { nodeFlags: CPU_PROF_NODE_FLAGS });
  try {
    log(
      `    server ready in ${round(await waitReady(server), 0)} ms (pid ${server.pid}${CPU_PROF_DIR ? `, --cpu-prof into ${CPU_PROF_DIR}` : ''})`,
    );
    const makeUser = async (scopes: readonly string[]) => {
      const email = `bench-analytics-${randomBytes(4).toString('hex')}@example.com`;
      const user = await runCli<{ id: string }>(env, [
        'user:create',
        `--email=${email}`,
        `--password=${randomBytes(12).toString('hex')}`,
        '--time-zone',
        ANALYTICS_BENCH_TIME_ZONE,
        '--json',
      ]);
      const token = await runCli<{ access_token: string }>(env, [
        'token:create',
        '--email',
        email,
        ...scopes.flatMap((scope) => ['--scope', scope]),
        '--expires-in',
        '7200',
        '--json',
      ]);
      return { id: user.id, token: token.access_token };
    };
    const fuelUser = await makeUser(ANALYTICS_BENCH_SCOPES.fuel);
    const yearUser = await makeUser(ANALYTICS_BENCH_SCOPES.year);
    const lagUsers = await inTurns(ANALYTICS_LAG_USERS, 4, () => makeUser(ANALYTICS_BENCH_SCOPES.lag));
    log(`    ${2 + lagUsers.length} users and their tokens issued through the CLI`);
    const pool = new pg.Pool({ connectionString: where.databaseUrl ?? embeddedUrl(where.dataDir), max: 4 });
    try {
      const run = await runAnalyticsBench({
        serverUrl: server.url,
        pool,
        fuelUser,
        yearUser,
        lagUsers,
        lagRate: TARGETS.recomputeLagRate,
        lagDurationS: ANALYTICS_LAG_DURATION_S,
        serverPid: server.pid,
        interrupted: () => interrupted,
      });
      for (const line of analyticsBenchLines(run)) log(line);
      return run;
    } catch (error) {
      if (!server.exited()) throw error;
      throw new Error(`the analytics server exited during the section:\n${server.tail.join('\n')}`, { cause: error });
    } finally {
      await pool.end();
    }
  } finally {
    await server.stop();
  }
}

/**
 * 8. The hot path on a Pacer server of its own with an operator's settings
 * (PACER_LOG_LEVEL info; the rate limits of `serverEnv`, counted but never
 * reached) and the lean reference server, both on the same database.
 */
async function runHotpathSection(
  log: (line: string) => void,
  where: { dataDir: string; databaseUrl: string | undefined },
): Promise<HotpathBenchResult> {
  log(`\n[8] hot path: POST and GET /api/wellness, Pacer against the lean reference server, same database`);
  // Role `api`: the recompute worker's runs are not the request's work, and in role `all` they would
  // share the process with it (section 7 measures them); everything else as an operator runs it.
  return withPacerAndReference(where, 'api', async ({ pacer, reference, env, readyMs }) => {
    log(
      `    Pacer ready in ${round(readyMs.pacer, 0)} ms (pid ${pacer.pid}, PACER_LOG_LEVEL=info${CPU_PROF_DIR ? `, --cpu-prof into ${CPU_PROF_DIR}` : ''})`,
    );
    log(`    reference ready in ${round(readyMs.reference, 0)} ms (pid ${reference.pid})`);
    const users = await inTurns(HOTPATH_USERS, 4, async () => {
      const { id, token } = await createBenchUser(env, 'bench-hotpath');
      return { id, token };
    });
    log(
      `    ${users.length} user(s) with a token each, connection i sends user i's token (mod ${users.length}) to both; rate limits ${env['PACER_RATE_LIMIT_PER_MINUTE']}/min per token and ${env['PACER_RATE_LIMIT_IP_PER_MINUTE']}/min per address on both`,
    );
    log(
      `    autocannon, ${CONNECTIONS} connections; per route a ${WARMUP_S} s warm-up of each, then ${HOTPATH_ROUNDS} rounds of ${DURATION_S} s (reference, then Pacer)`,
    );
    const pool = new pg.Pool({ connectionString: where.databaseUrl ?? embeddedUrl(where.dataDir), max: 2 });
    try {
      const run = await runHotpathBench({
        pacer: { url: pacer.url, pid: pacer.pid },
        reference: { url: reference.url, pid: reference.pid },
        users,
        pool,
        connections: CONNECTIONS,
        durationS: DURATION_S,
        warmupS: WARMUP_S,
        rounds: HOTPATH_ROUNDS,
        routes: HOTPATH_ROUTE_KEYS,
        interrupted: () => interrupted,
      });
      for (const line of hotpathBenchLines(run)) log(line);
      return run;
    } finally {
      await pool.end();
    }
  });
}

/** Pacer from BENCH_REPO in `role` and the lean reference server on the same database, both stopped after `run`. */
async function withPacerAndReference<T>(
  where: { dataDir: string; databaseUrl: string | undefined },
  role: 'all' | 'api',
  run: (servers: {
    pacer: ServerProcess;
    reference: ServerProcess;
    env: NodeJS.ProcessEnv;
    /** Spawn -> `/readyz` answering, per server. */
    readyMs: { pacer: number; reference: number };
  }) => Promise<T>,
): Promise<T> {
  const port = await freePort();
  // An operator's settings: log level info, the rate limits counted (raised so the bench never reaches them).
  const env: NodeJS.ProcessEnv = { ...serverEnv({ port, ...where, logLevel: 'info' }), PACER_ROLE: role };
  const pacer = spawnServer(env, port, { nodeFlags: CPU_PROF_NODE_FLAGS });
  let reference: ServerProcess | undefined;
  try {
    const pacerReadyMs = await waitReady(pacer);
    const referencePort = await freePort();
    reference = spawnServer(
      {
        PATH: process.env['PATH'],
        DATABASE_URL: where.databaseUrl ?? embeddedUrl(where.dataDir),
        PORT: String(referencePort),
        BASE_URL: `http://127.0.0.1:${port}`,
        RATE_LIMIT_PER_MINUTE: env['PACER_RATE_LIMIT_PER_MINUTE'],
        RATE_LIMIT_IP_PER_MINUTE: env['PACER_RATE_LIMIT_IP_PER_MINUTE'],
      },
      referencePort,
      { args: [REFERENCE_SERVER] },
    );
    const referenceReadyMs = await waitReady(reference);
    return await run({ pacer, reference, env, readyMs: { pacer: pacerReadyMs, reference: referenceReadyMs } });
  } catch (error) {
    const exited = [pacer, reference].find((server) => server?.exited());
    if (!exited) throw error;
    throw new Error(`a server exited during the section:\n${exited.tail.join('\n')}`, { cause: error });
  } finally {
    await reference?.stop();
    await pacer.stop();
  }
}

/** 9. `load` / `load-api`: 10 athletes writing their last 60 days, Pacer in `role` against the reference. */
async function runLoadSection(
  log: (line: string) => void,
  where: { dataDir: string; databaseUrl: string | undefined },
  role: 'all' | 'api',
): Promise<LoadFigures> {
  log(
    `\n[9] ${role === 'all' ? 'load' : 'load-api'}: ${LOAD_USERS} athletes POST /api/wellness (last 60 days), PACER_ROLE=${role}, against the lean reference; ${HOTPATH_ROUNDS} rounds of ${DURATION_S} s after ${WARMUP_S} s warm-ups`,
  );
  return withPacerAndReference(where, role, async ({ pacer, reference, env }) => {
    const users = await inTurns(LOAD_USERS, 4, () => createBenchUser(env, 'bench-load'));
    // Role api computes no derived data: there is no lag to probe.
    const probeUser = role === 'all' ? await createBenchUser(env, 'bench-probe') : undefined;
    log(
      `    Pacer pid ${pacer.pid} (log level info, rate limits counted), reference pid ${reference.pid}; ${users.length} athletes, one per connection${probeUser ? ', and a probe athlete for the lag' : ''}`,
    );
    const pool = new pg.Pool({ connectionString: where.databaseUrl ?? embeddedUrl(where.dataDir), max: 2 });
    try {
      const figures = await runWellnessLoad({
        pacer: { url: pacer.url, pid: pacer.pid },
        reference: { url: reference.url, pid: reference.pid },
        users,
        probeUser,
        pool,
        connections: CONNECTIONS,
        durationS: DURATION_S,
        warmupS: WARMUP_S,
        rounds: HOTPATH_ROUNDS,
        interrupted: () => interrupted,
      });
      for (const line of loadLines(figures)) log(line);
      return figures;
    } finally {
      await pool.end();
    }
  });
}

/** 9. `backfill`: one athlete's BACKFILL_DAYS days, newest first, on each server; then until Pacer's derived data is whole. */
async function runBackfillSection(
  log: (line: string) => void,
  where: { dataDir: string; databaseUrl: string | undefined },
): Promise<BackfillFigures> {
  log(
    `\n[9] backfill: one athlete's ${BACKFILL_DAYS} days, newest first, ${CONNECTIONS} connections, PACER_ROLE=all, against the lean reference; a fresh athlete per run, ${HOTPATH_ROUNDS} rounds`,
  );
  return withPacerAndReference(where, 'all', async ({ pacer, reference, env }) => {
    const figures = await runBackfill({
      pacer: { url: pacer.url, pid: pacer.pid },
      reference: { url: reference.url, pid: reference.pid },
      newUser: () => createBenchUser(env, 'bench-backfill'),
      days: BACKFILL_DAYS,
      connections: CONNECTIONS,
      rounds: HOTPATH_ROUNDS,
      interrupted: () => interrupted,
    });
    for (const line of backfillLines(figures)) log(line);
    return figures;
  });
}

function vmRssMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? round(Number(match[1]) / 1024, 1) : Number.NaN;
}

/** 9. `fit`: a fresh server (role all): RSS idle after one request, then step 4's uploads on it. */
async function runFitSection(
  log: (line: string) => void,
  where: { dataDir: string; databaseUrl: string | undefined },
): Promise<FitFigures> {
  log(
    `\n[9] fit: a fresh server (PACER_ROLE=all): idle RSS, then FIT uploads (as step 4)${CPU_PROF_DIR ? `; --cpu-prof into ${CPU_PROF_DIR}` : ''}`,
  );
  const port = await freePort();
  const env = serverEnv({ port, ...where, logLevel: 'info' });
  const server = spawnServer(env, port, { nodeFlags: CPU_PROF_NODE_FLAGS });
  try {
    await waitReady(server);
    const user = await createBenchUser(env, 'bench-fit');
    const warmUp = await fetch(`${server.url}/api/wellness`, { headers: { authorization: `Bearer ${user.token}` } });
    await warmUp.arrayBuffer();
    if (warmUp.status !== 200) throw new Error(`the warm-up GET /api/wellness answered ${warmUp.status}`);
    // What the process holds once start-up's garbage is collectable: a moment after the first answer.
    await sleep(2000);
    const idleRssMb = vmRssMb(server.pid);
    log(`    server pid ${server.pid}: RSS ${idleRssMb} MB idle (after start-up and one GET /api/wellness)`);
    const run = await uploadsOn(log, server, env, user.email);
    const peak = (memory: UploadBenchResult['singleTenHourMemory']) => Math.max(memory.hwmMb, memory.peakSampledRssMb);
    const row = (result: UploadBenchResult['oneHour']) => ({
      uploadMs: result.uploadMs.p50,
      decodeMs: result.decodeMs.p50,
      ratio: result.ratioPerRun,
    });
    return {
      oneHour: row(run.oneHour),
      tenHour: row(run.tenHour),
      idleRssMb,
      oneUploadRssMb: peak(run.singleTenHourMemory),
      concurrentRssMb: peak(run.concurrent.memory),
      concurrency: run.concurrent.concurrency,
    };
  } catch (error) {
    if (!server.exited()) throw error;
    throw new Error(`the fit server exited during the section:\n${server.tail.join('\n')}`, { cause: error });
  } finally {
    await server.stop();
  }
}

/** 10. Issue 21's figures for the realistic athlete, on a server of its own (every limiter off, as step 6), then stopped. */
interface PoolerFigures {
  /** POST /api/wellness req/s per round, an API server straight on PostgreSQL. */
  readonly direct: Spread;
  /** The same through PgBouncer in transaction mode. */
  readonly pooled: Spread;
  /** pooled median / direct median. */
  readonly ratio: number;
  readonly non2xx: number;
  readonly errors: number;
}

/** 11. `pooler`: wellness writes through PgBouncer in transaction mode beside direct, same database, same run. */
async function runPoolerSection(
  log: (line: string) => void,
  where: { dataDir: string; databaseUrl: string | undefined },
): Promise<PoolerFigures | undefined> {
  const { databaseUrl } = where;
  if (databaseUrl === undefined || pgbouncerPath() === undefined) {
    log(
      `\n[11] pooler: skipped (${databaseUrl === undefined ? 'needs DATABASE_URL: PgBouncer goes in front of that PostgreSQL' : "pgbouncer is not installed (Debian's `pgbouncer`)"})`,
    );
    return undefined;
  }
  const poolSize = 10;
  log(
    `\n[11] pooler: POST /api/wellness, PACER_ROLE=api, direct against PgBouncer (transaction mode, default_pool_size ${poolSize}, PACER_DB_PREPARED_STATEMENTS=false); ${HOTPATH_ROUNDS} rounds of ${DURATION_S} s after ${WARMUP_S} s warm-ups, alternating`,
  );
  const bouncer = await startPgBouncer({
    port: await freePort(),
    serverUrl: databaseUrl,
    poolMode: 'transaction',
    defaultPoolSize: poolSize,
    maxClientConn: 200,
  });
  const servers: ServerProcess[] = [];
  try {
    const database = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
    const directPort = await freePort();
    const pooledPort = await freePort();
    const directEnv = { ...serverEnv({ port: directPort, ...where, logLevel: 'warn' }), PACER_ROLE: 'api' };
    const pooledEnv = {
      ...serverEnv({ port: pooledPort, ...where, databaseUrl: bouncer.urlFor(database), logLevel: 'warn' }),
      PACER_ROLE: 'api',
      PACER_DATABASE_SESSION_URL: databaseUrl,
      PACER_DB_PREPARED_STATEMENTS: 'false',
      PACER_MIGRATE_ON_START: 'false',
    };
    // The direct one first: it migrates (the database may be new); the pooled one only checks.
    const direct = spawnServer(directEnv, directPort);
    servers.push(direct);
    await waitReady(direct);
    const pooled = spawnServer(pooledEnv, pooledPort);
    servers.push(pooled);
    await waitReady(pooled);
    const rps: Record<'direct' | 'pooled', number[]> = { direct: [], pooled: [] };
    let non2xx = 0;
    let errors = 0;
    for (let round = 1; round <= HOTPATH_ROUNDS; round++) {
      for (const [name, server] of [
        ['direct', direct],
        ['pooled', pooled],
      ] as const) {
        // A fresh athlete per run: every run creates its rows, none updates another run's.
        const user = await createBenchUser(directEnv, `bench-pool-${name}`);
        await runAutocannon(server.url, user.token, 'httpWarmup', WARMUP_S, server.pid, undefined);
        const run = await runAutocannon(server.url, user.token, 'http', DURATION_S, server.pid, undefined);
        non2xx += run.non2xx;
        errors += run.errors + run.timeouts;
        rps[name].push(run.rps);
        log(
          `    round ${round} ${name.padEnd(6)}: ${run.rps} req/s, p50 ${run.latency.p50} ms, p99 ${run.latency.p99} ms, non-2xx ${run.non2xx}, errors ${run.errors + run.timeouts}`,
        );
      }
    }
    const figures: PoolerFigures = {
      direct: spreadOf(rps.direct),
      pooled: spreadOf(rps.pooled),
      ratio: round(spreadOf(rps.pooled).median / Math.max(1, spreadOf(rps.direct).median), 2),
      non2xx,
      errors,
    };
    const line = (spread: Spread) => `${spread.min} / ${spread.median} / ${spread.max} req/s`;
    log(`    direct (min/median/max): ${line(figures.direct)}`);
    log(`    PgBouncer transaction mode: ${line(figures.pooled)}`);
    log(`    pooled/direct (medians): ${figures.ratio}; non-2xx ${non2xx}, errors ${errors}`);
    return figures;
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await bouncer.stop();
  }
}

async function runFuelFiguresSection(
  log: (line: string) => void,
  where: { dataDir: string; databaseUrl: string | undefined },
): Promise<void> {
  const { REALISTIC_ATHLETE_SCOPES, REALISTIC_ZONE, runFuelFigures } = await import('./fuel-figures.ts');
  log(`\n[10] fuel-figures: issue 21's realistic athlete, on a server of its own on the same database`);
  const port = await freePort();
  const env = { ...serverEnv({ port, ...where, logLevel: 'warn' }), ...MCP_BENCH_SERVER_ENV };
  const server = spawnServer(env, port, { nodeFlags: CPU_PROF_NODE_FLAGS });
  const pool = new pg.Pool({ connectionString: where.databaseUrl ?? embeddedUrl(where.dataDir), max: 2 });
  try {
    log(`    server ready in ${round(await waitReady(server), 0)} ms (pid ${server.pid})`);
    const email = `bench-athlete-${randomBytes(4).toString('hex')}@example.com`;
    const user = await runCli<{ id: string }>(env, [
      'user:create',
      `--email=${email}`,
      `--password=${randomBytes(12).toString('hex')}`,
      '--time-zone',
      REALISTIC_ZONE,
      '--json',
    ]);
    const token = await runCli<{ access_token: string }>(env, [
      'token:create',
      '--email',
      email,
      ...REALISTIC_ATHLETE_SCOPES.flatMap((scope) => ['--scope', scope]),
      '--expires-in',
      '7200',
      '--json',
    ]);
    // Settled when no change record of the user is left (a recompute deletes them as it stores its numbers).
    const settled = async () => {
      const deadline = performance.now() + 300_000;
      while (performance.now() < deadline) {
        const { rowCount } = await pool.query('select 1 from derived_changes where user_id = $1 limit 1', [user.id]);
        if (rowCount === 0) return;
        await sleep(50);
      }
      throw new Error('the derived data did not settle within 300 s');
    };
    const lines = await runFuelFigures({ serverUrl: server.url, token: token.access_token, settled });
    for (const line of lines) log(line);
  } catch (error) {
    if (!server.exited()) throw error;
    throw new Error(`the fuel-figures server exited during the section:\n${server.tail.join('\n')}`, { cause: error });
  } finally {
    await pool.end();
    await server.stop();
  }
}

/**
 * 11. `cpu`: CPU time per request of the server process (cpu-bench.ts), Pacer in each of CPU_ROLES
 * (in role `all` writes are charged with the recompute they trigger), against the lean reference
 * and, with PACER_BENCH_CPU_BASELINE, against another checkout's Pacer on the same database in the
 * same rounds (before and after a change, measured side by side).
 */
async function runCpuSection(
  log: (line: string) => void,
  where: { dataDir: string; databaseUrl: string | undefined },
): Promise<void> {
  log(
    `\n[11] cpu: server CPU per request (/proc/<pid>/stat, idle rate taken off), ${CPU_REQUESTS} requests per run over ${CPU_CLIENTS} clients after ${CPU_WARMUP} warm-up requests, ${CPU_UPLOADS} FIT uploads one at a time; ${CPU_ROUNDS} rounds alternating the servers, median round${CPU_BASELINE ? `; baseline: ${CPU_BASELINE}` : ''}`,
  );
  const now = Date.now();
  for (const role of CPU_ROLES) {
    await withPacerAndReference(where, role, async ({ pacer, reference, env }) => {
      let baseline: ServerProcess | undefined;
      let baselineEnv: NodeJS.ProcessEnv = env;
      // Not in role `all`: both processes' recompute workers would drain the same change records, so
      // either one could do (and be charged for) the recompute of the other's writes.
      if (CPU_BASELINE && role === 'api') {
        const port = await freePort();
        baselineEnv = { ...env, PACER_PORT: String(port), PACER_BASE_URL: `http://127.0.0.1:${port}` };
        baseline = spawnServer(baselineEnv, port, { checkout: CPU_BASELINE });
        await waitReady(baseline);
      }
      try {
        log(
          `  PACER_ROLE=${role}: Pacer pid ${pacer.pid}, reference pid ${reference.pid}${baseline ? `, baseline pid ${baseline.pid}` : ''}`,
        );
        await cpuFiguresOf({ log, role, env, baselineEnv, where, now, pacer, reference, baseline });
      } finally {
        await baseline?.stop();
      }
    });
  }
}

interface CpuFiguresOptions {
  readonly log: (line: string) => void;
  readonly role: 'api' | 'all';
  readonly env: NodeJS.ProcessEnv;
  /** The baseline's environment (its own port and base URL): a token bound to its /mcp is issued with it. */
  readonly baselineEnv: NodeJS.ProcessEnv;
  readonly where: { dataDir: string; databaseUrl: string | undefined };
  readonly now: number;
  readonly pacer: ServerProcess;
  readonly reference: ServerProcess;
  readonly baseline: ServerProcess | undefined;
}

async function cpuFiguresOf(options: CpuFiguresOptions): Promise<void> {
  const { role, env, pacer, reference, baseline } = options;
  const user = await createBenchUser(env, `bench-cpu-${role}`);
  const tokenOf = async (scopes: readonly string[], resource: readonly string[] = [], cliEnv = env) =>
    (
      await runCli<{ access_token: string }>(cliEnv, [
        'token:create',
        '--email',
        user.email,
        ...scopes.flatMap((scope) => ['--scope', scope]),
        ...resource,
        '--expires-in',
        '7200',
        '--json',
      ])
    ).access_token;
  const token = await tokenOf(['health:write', 'health:read', 'profile:read', 'workout:write']);
  const pool = new pg.Pool({
    connectionString: options.where.databaseUrl ?? embeddedUrl(options.where.dataDir),
    max: 2,
  });
  const settled = role === 'all' ? derivedSettled(pool, user.id) : undefined;
  const run = async (name: string, server: ServerProcess, target: CpuTarget): Promise<CpuRun> => {
    await measureCpu({ server, target, requests: CPU_WARMUP, clients: CPU_CLIENTS, settled });
    return {
      name,
      measure: () => measureCpu({ server, target, requests: CPU_REQUESTS, clients: CPU_CLIENTS, settled }),
    };
  };
  const pacers = async (target: (server: ServerProcess) => CpuTarget | Promise<CpuTarget>, suffix = '') => [
    ...(baseline ? [await run(`baseline Pacer${suffix}`, baseline, await target(baseline))] : []),
    await run(`Pacer${suffix}`, pacer, await target(pacer)),
  ];
  const recompute = role === 'all' ? ', recompute included' : '';
  try {
    const figures: CpuFigures[] = [];
    if (CPU_FIGURES.has('wellness')) {
      const wellness = wellnessPost(token, options.now);
      figures.push(
        await inRounds(`POST /api/wellness (role ${role}${recompute})`, [
          await run('reference server', reference, wellness),
          ...(await pacers(() => wellness)),
        ]),
      );
    }
    if (role === 'api' && CPU_FIGURES.has('mcp')) {
      const mcpTarget = async (server: ServerProcess) =>
        mcpGetProfile(
          await tokenOf(
            ['profile:read'],
            ['--resource', `${server.url}/mcp`],
            server === baseline ? options.baselineEnv : env,
          ),
        );
      const rest = await pacers(() => profileGet(token), ' REST GET /api/profile');
      const mcp = await pacers(mcpTarget, ' MCP tools/call get_profile');
      const both = await inRounds('', [...rest, ...mcp]);
      // Printed per server: its MCP call against its own REST read.
      rest.forEach((_, index) =>
        figures.push({
          name: `MCP tools/call get_profile against REST GET /api/profile`,
          runs: [both.runs[index], both.runs[rest.length + index]].filter((entry) => entry !== undefined),
        }),
      );
    }
    if (CPU_FIGURES.has('fit')) {
      for (const server of baseline ? [baseline, pacer] : [pacer]) {
        const name = `${server === baseline ? 'baseline Pacer' : 'Pacer'} upload`;
        figures.push(await fitFigures(`1-hour FIT upload (role ${role}${recompute})`, name, token, server, settled));
      }
    }
    for (const line of cpuLines(figures)) options.log(line);
  } finally {
    await pool.end();
  }
}

/** One of a figure's runs: its name and one round's measurement. */
interface CpuRun {
  readonly name: string;
  readonly measure: () => Promise<CpuFigure>;
}

/** CPU_ROUNDS rounds, each every run in turn (so drift hits all of them); each run's median round. */
async function inRounds(name: string, runs: readonly CpuRun[], rounds = CPU_ROUNDS): Promise<CpuFigures> {
  const results = runs.map(() => [] as CpuFigure[]);
  for (let round = 0; round < rounds; round++) {
    for (const [index, entry] of runs.entries()) results[index]?.push(await entry.measure());
  }
  const median = (figures: readonly CpuFigure[]) =>
    [...figures].sort((x, y) => x.cpuUs - y.cpuUs)[Math.floor(figures.length / 2)] as CpuFigure;
  return {
    name,
    runs: runs.map((entry, index) => ({
      name: entry.name,
      figure: median(results[index] ?? []),
      rounds: results[index] ?? [],
    })),
  };
}

let fitSerial = 3_700_000_000;

/** The 1-hour FIT upload's CPU against a plain decode of the same files in this process, each round its own files. */
async function fitFigures(
  name: string,
  runName: string,
  token: string,
  server: ServerProcess,
  settled: (() => Promise<void>) | undefined,
): Promise<CpuFigures> {
  const filesOf = (count: number) => {
    const files = distinctOneHourRides(count, fitSerial);
    fitSerial += count;
    return files;
  };
  const upload = (files: readonly Uint8Array[]) =>
    measureCpu({ server, target: fitUpload(token, files), requests: files.length, clients: 1, settled });
  const warm = filesOf(CPU_WARMUP_UPLOADS);
  await upload(warm);
  measureDecodeCpu(warm);
  measureDecodeSummaryCpu(warm);
  let files: Uint8Array[] = [];
  return inRounds(name, [
    {
      name: 'plain decode in the bench process',
      measure: () => {
        files = filesOf(CPU_UPLOADS);
        return Promise.resolve(measureDecodeCpu(files));
      },
    },
    {
      name: "decode + summary in the bench process (the server's worker code)",
      measure: () => Promise.resolve(measureDecodeSummaryCpu(files)),
    },
    { name: runName, measure: () => upload(files) },
  ]);
}

/** The MCP row of the issue's table: get_profile calls/s over REST's, per round of step 6. */
function mcpFiguresOf(run: McpBenchResult): McpFigures {
  const median = (values: readonly number[]) => spreadOf(values).median;
  return {
    restPerSec: median(run.rounds.map((entry) => entry.rest.perSec)),
    mcpPerSec: median(run.rounds.map((entry) => entry.mcp.perSec)),
    ratio: spreadOf(run.rounds.map((entry) => round(entry.mcp.perSec / Math.max(entry.rest.perSec, 1e-9), 3))),
    clients: run.clients,
  };
}

interface Figures {
  readonly empty: StartupRun | undefined;
  readonly existing: StartupRun | undefined;
  readonly databaseUrl?: string | undefined;
  readonly httpRun?: HttpResult | undefined;
  readonly pgRun?: PgResult | undefined;
  readonly oauthRun?: OAuthBenchResult | undefined;
  readonly uploadRun?: UploadBenchResult | undefined;
  readonly webhookRun?: WebhookBenchResult | undefined;
  readonly mcpRun?: McpBenchResult | undefined;
  readonly analyticsRun?: AnalyticsBenchResult | undefined;
  readonly hotpathRun?: HotpathBenchResult | undefined;
  readonly load?: LoadFigures | undefined;
  readonly loadApi?: LoadFigures | undefined;
  readonly backfill?: BackfillFigures | undefined;
  readonly fit?: FitFigures | undefined;
  readonly readyMs?: number | undefined;
  readonly stopMs?: number | undefined;
}

/** 3. Summary (the sections that ran), then the JSON line. */
function printSummary(log: (line: string) => void, figures: Figures): void {
  const {
    empty,
    existing,
    databaseUrl,
    httpRun,
    pgRun,
    oauthRun,
    uploadRun,
    webhookRun,
    mcpRun,
    analyticsRun,
    hotpathRun,
  } = figures;
  const lines = ['', '================================ Pacer bench summary ================================'];
  if (empty && existing) {
    lines.push(
      'Startup (embedded PostgreSQL, spawn → first 200 from /readyz)',
      `  [${mark(empty.readyMs < TARGETS.emptyStartupMs)}] empty data dir     ${String(empty.readyMs).padStart(7)} ms   (target < ${TARGETS.emptyStartupMs} ms)`,
      `  [${mark(existing.readyMs < TARGETS.existingStartupMs)}] existing data dir  ${String(existing.readyMs).padStart(7)} ms   (target < ${TARGETS.existingStartupMs} ms)`,
    );
  }
  const ratio = httpRun && pgRun ? round(httpRun.rps / pgRun.opsPerSec, 3) : undefined;
  if (httpRun && pgRun && ratio !== undefined) {
    const created = httpRun.statusCodes['201'] ?? 0;
    const updated = httpRun.statusCodes['200'] ?? 0;
    lines.push(
      `Throughput on ${databaseUrl ? 'DATABASE_URL (fresh bench database)' : 'embedded PostgreSQL'}, ${CONNECTIONS} concurrent, ${DURATION_S} s after ${WARMUP_S} s warm-up`,
      `  (a) POST /api/wellness ${String(httpRun.rps).padStart(9)} req/s   p50 ${httpRun.latency.p50} ms   p99 ${httpRun.latency.p99} ms   non-2xx ${httpRun.non2xx}   (${httpRun.requests} requests: ${created} created, ${updated} updated)`,
      `      CPU: ${cpuLine(httpRun.cpu)}`,
      `  (b) pg upsert          ${String(pgRun.opsPerSec).padStart(9)} ops/s   p50 ${pgRun.latency.p50} ms   p99 ${pgRun.latency.p99} ms   (${pgRun.ops} ops: ${pgRun.created} created, ${pgRun.updated} updated)`,
      `      CPU: ${cpuLine(pgRun.cpu)}`,
      `  [${mark(ratio >= TARGETS.ratio)}] ratio (a)/(b)      ${ratio}   (target ≥ ${TARGETS.ratio})`,
      `  [${mark(httpRun.latency.p99 <= TARGETS.httpP99Ms)}] p99 of (a)         ${httpRun.latency.p99} ms   (target ≤ ${TARGETS.httpP99Ms} ms)`,
      `  [${mark(httpRun.non2xx === 0 && httpRun.errors === 0)}] non-2xx / errors   ${httpRun.non2xx} / ${httpRun.errors}   (must be 0)`,
    );
  }
  if (oauthRun) {
    lines.push(
      `OAuth token endpoint, ${CONNECTIONS} connections, ${DURATION_S} s`,
      `  refresh grant          ${String(oauthRun.refresh.rps).padStart(9)} req/s   p50 ${oauthRun.refresh.p50} ms   p99 ${oauthRun.refresh.p99} ms   non-2xx ${oauthRun.refresh.non2xx}`,
      `  code round trip p50    ${oauthRun.codeRoundTrip.p50} ms   p99 ${oauthRun.codeRoundTrip.p99} ms   (${oauthRun.codeRoundTrip.runs} runs, ${oauthRun.codeRoundTrip.failures} failed)`,
    );
  }
  const uploadTargets = uploadRun ? uploadTargetsOf(uploadRun) : undefined;
  if (uploadRun && uploadTargets) {
    const { oneHour, tenHour, singleTenHourMemory: single, concurrent: c } = uploadRun;
    const peak = (memory: UploadBenchResult['singleTenHourMemory']) => Math.max(memory.hwmMb, memory.peakSampledRssMb);
    lines.push(
      `FIT uploads, distinct files (all creates), median of ${oneHour.runs} sequential runs; upload limits lifted for the bench`,
      `  [${mark(uploadTargets.oneHourRatio)}] 1-hour  ride ${String(oneHour.uploadMBps).padStart(6)} MB/s end to end vs ${oneHour.decodeMBps} MB/s plain decode: ${oneHour.ratio}   (target ≥ ${TARGETS.uploadRatio})`,
      `  [${mark(uploadTargets.tenHourRatio)}] 10-hour ride ${String(tenHour.uploadMBps).padStart(6)} MB/s end to end vs ${tenHour.decodeMBps} MB/s plain decode: ${tenHour.ratio}   (target ≥ ${TARGETS.uploadRatio})`,
      `  [${mark(uploadTargets.profileP99)}] GET /api/profile p99 during ${c.concurrency} concurrent 10-hour uploads  ${c.profile.p99} ms   (p50 ${c.profile.p50} ms, ${c.profile.rate}/s, idle p99 ${uploadRun.profileIdle.p99} ms; ${c.completedInWindow} uploads in ${c.windowS} s; target < ${TARGETS.profileP99Ms} ms)`,
      `  [${mark(uploadTargets.singleRss)}] server peak RSS, one 10-hour upload at a time  ${peak(single)} MB   (VmHWM ${single.hwmMb}, sampled ${single.peakSampledRssMb}, baseline ${single.baselineRssMb}, server before any upload ${uploadRun.serverIdleRssMb}; target < ${TARGETS.peakRssMb} MB)`,
      `  [${mark(uploadTargets.concurrentRss)}] server peak RSS, ${c.concurrency} concurrent 10-hour uploads  ${peak(c.memory)} MB   (VmHWM ${c.memory.hwmMb}, sampled ${c.memory.peakSampledRssMb}, baseline ${c.memory.baselineRssMb}; target < ${TARGETS.peakRssMb} MB)`,
      `  [${mark(uploadTargets.allCreated)}] every upload a 201   ${JSON.stringify({ ...oneHour.statusCodes })} ${JSON.stringify(tenHour.statusCodes)} ${JSON.stringify(c.statusCodes)}`,
    );
  }
  const webhookTargets = webhookRun ? webhookTargetsOf(webhookRun) : undefined;
  if (webhookRun && webhookTargets) {
    const { fullSpeed: f, paced: p } = webhookRun.ingest;
    const l = webhookRun.lag;
    lines.push(
      `Incoming webhooks (role all: ingest and processing share the machine), ${CONNECTIONS} connections`,
      `  ingest full speed      ${String(f.ackPerSec).padStart(9)} ack/s   p50 ${f.latency.p50} ms   p99 ${f.latency.p99} ms   non-2xx ${f.non2xx}`,
      `  [${mark(webhookTargets.ingestP99)}] ingest at ${p.targetRate}/s   p99 ${p.latency.p99} ms   (p50 ${p.latency.p50} ms, achieved ${p.achievedRate}/s; target p99 ≤ ${TARGETS.webhookIngestP99Ms} ms)`,
      `  [${mark(webhookTargets.lagP95)}] lag at ${l.send.targetRate}/s for ${l.send.durationS} s   p95 ${l.lagMs.p95} ms   (p50 ${l.lagMs.p50} ms, p99 ${l.lagMs.p99} ms; target p95 ≤ ${TARGETS.webhookLagP95Ms} ms)`,
      `  [${mark(webhookTargets.backlogZero)}] backlog after the lag run   ${l.backlogAfterDrain}   (${JSON.stringify(l.states)}; must be 0)`,
    );
  }
  const mcpTargets = mcpRun ? mcpTargetsOf(mcpRun) : undefined;
  if (mcpRun && mcpTargets) {
    const last = mcpRun.rounds.at(-1);
    const r = mcpRun.reports;
    lines.push(
      `MCP (own server, rate limits 0), ${mcpRun.clients} clients x ${mcpRun.requestsPerClient} requests per run`,
      `  [${mark(mcpTargets.throughputRatio)}] get_profile MCP/REST throughput   ${mcpRun.throughputRatio.median}   (min ${mcpRun.throughputRatio.min}, max ${mcpRun.throughputRatio.max} over ${mcpRun.rounds.length} rounds; last: REST ${last?.rest.perSec}/s, MCP ${last?.mcp.perSec}/s; target ≥ ${TARGETS.mcpRestThroughputRatio})`,
      `  [${mark(mcpTargets.p50Ratio)}] get_profile MCP/REST at p50   ${mcpRun.p50Ratio.median}   (min ${mcpRun.p50Ratio.min}, max ${mcpRun.p50Ratio.max} over ${mcpRun.rounds.length} rounds; last: REST ${last?.rest.latency.p50} ms, MCP ${last?.mcp.latency.p50} ms; target ≤ ${TARGETS.mcpRestP50Ratio})`,
      `  tools/list             p50 ${mcpRun.toolsList.latency.p50} ms   p99 ${mcpRun.toolsList.latency.p99} ms`,
      ...mcpRun.throughput.map(
        (t) =>
          `  get_profile ${String(t.clients).padStart(2)} clients ${String(t.perSec).padStart(9)} calls/s   p50 ${t.latency.p50} ms   p99 ${t.latency.p99} ms   errors ${t.errors}`,
      ),
      `  [${mark(mcpTargets.reportP95)}] generate_report -> completed   p95 ${r.latencyMs.p95} ms   (p50 ${r.latencyMs.p50} ms, ${r.completed} of ${r.calls}; target p95 ≤ ${TARGETS.mcpReportP95Ms} ms)`,
      `  [${mark(mcpTargets.errorsZero)}] errors   ${mcpRun.errors}   (must be 0)`,
    );
  }
  const analyticsTargets = analyticsRun ? analyticsTargetsOf(analyticsRun) : undefined;
  if (analyticsRun && analyticsTargets) {
    const { timeline: t, recompute: r, lag: l } = analyticsRun;
    const spread = (s: { min: number; median: number; max: number }) =>
      `min ${s.min}, median ${s.median}, max ${s.max}`;
    lines.push(
      `Analytics (own server, rate limits 0), users in ${analyticsRun.timeZone}`,
      `  [${mark(analyticsTargets.fuelTimelineP50)}] GET /api/fuel/timeline, 14 days, p50   ${t.p50.median} ms   (${spread(t.p50)} over ${t.runs.length} runs of ${t.runs[0]?.count ?? 0}; ${t.meals} meals, ${t.workouts} workouts; target ≤ ${TARGETS.fuelTimelineP50Ms} ms)`,
      `  [${mark(analyticsTargets.yearRecompute)}] full recompute of a year   ${r.inProcessMs.median} ms   (recomputeFrom in process ${spread(r.inProcessMs)}; through the worker ${spread(r.workerMs)}; target ≤ ${TARGETS.yearRecomputeMs} ms)`,
      `  [${mark(analyticsTargets.lagP95)}] recompute lag at ${l.targetRate} writes/s   p95 ${l.lagMs.p95} ms   (p50 ${l.lagMs.p50} ms, max ${l.lagMs.max} ms, ${l.writes} writes over ${l.users} users at ${l.achievedRate}/s; target p95 ≤ ${TARGETS.recomputeLagP95Ms} ms)`,
      `  [${mark(analyticsTargets.errorsZero)}] errors and unserved writes   ${analyticsRun.errors}   (must be 0)`,
    );
  }
  if (hotpathRun) lines.push(...hotpathSummaryLines(hotpathRun));
  const issue = {
    load: figures.load,
    loadApi: figures.loadApi,
    backfill: figures.backfill,
    fit: figures.fit,
    mcp: mcpRun ? mcpFiguresOf(mcpRun) : undefined,
  };
  if (Object.values(issue).some((value) => value !== undefined)) lines.push(...issueTableLines(issue));
  lines.push('=====================================================================================');
  log(lines.join('\n'));

  log(
    JSON.stringify({
      bench: 'pacer',
      at: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      loadAverage: os.loadavg().map((value) => round(value)),
      sections: [...ONLY],
      database: databaseUrl ? 'external' : 'embedded',
      connections: CONNECTIONS,
      durationS: DURATION_S,
      warmupS: WARMUP_S,
      startup: {
        emptyDataDirMs: empty?.readyMs,
        emptyDataDirInProcessMs: empty?.inProcessMs,
        existingDataDirMs: existing?.readyMs,
        existingDataDirInProcessMs: existing?.inProcessMs,
        stopMs: empty && existing ? [empty.stopMs, existing.stopMs] : undefined,
        throughputServerReadyMs: figures.readyMs === undefined ? undefined : round(figures.readyMs, 0),
        throughputServerStopMs: figures.stopMs === undefined ? undefined : round(figures.stopMs, 0),
      },
      http: httpRun,
      pg: pgRun,
      oauth: oauthRun,
      uploads: uploadRun,
      webhooks: webhookRun,
      mcp: mcpRun,
      analytics: analyticsRun,
      hotpath: hotpathRun,
      issue20: issue,
      ratio,
      targets: {
        emptyStartup: empty ? empty.readyMs < TARGETS.emptyStartupMs : undefined,
        existingStartup: existing ? existing.readyMs < TARGETS.existingStartupMs : undefined,
        ratio: ratio === undefined ? undefined : ratio >= TARGETS.ratio,
        httpP99: httpRun ? httpRun.latency.p99 <= TARGETS.httpP99Ms : undefined,
        non2xxZero: httpRun ? httpRun.non2xx === 0 : undefined,
        ...(uploadTargets ? { uploads: uploadTargets } : {}),
        ...(webhookTargets ? { webhooks: webhookTargets } : {}),
        ...(mcpTargets ? { mcp: mcpTargets } : {}),
        ...(analyticsTargets ? { analytics: analyticsTargets } : {}),
        ...(hotpathRun ? { hotpath: hotpathTargetsOf(hotpathRun) } : {}),
      },
    }),
  );
}

function mcpTargetsOf(run: McpBenchResult) {
  return {
    throughputRatio: run.throughputRatio.median >= TARGETS.mcpRestThroughputRatio,
    p50Ratio: run.p50Ratio.median <= TARGETS.mcpRestP50Ratio,
    reportP95: run.reports.completed > 0 && run.reports.latencyMs.p95 <= TARGETS.mcpReportP95Ms,
    errorsZero: run.errors === 0,
  };
}

/** The year target is read on the in-process median: the worker's figure adds its wake-up and polling. */
function analyticsTargetsOf(run: AnalyticsBenchResult) {
  return {
    fuelTimelineP50: run.timeline.runs.length > 0 && run.timeline.p50.median <= TARGETS.fuelTimelineP50Ms,
    yearRecompute: run.recompute.inProcessMs.median <= TARGETS.yearRecomputeMs,
    lagP95: run.lag.lagMs.count > 0 && run.lag.lagMs.p95 <= TARGETS.recomputeLagP95Ms && run.lag.unserved === 0,
    errorsZero: run.errors === 0,
  };
}

function webhookTargetsOf(run: WebhookBenchResult) {
  return {
    ingestP99: run.ingest.paced.latency.p99 <= TARGETS.webhookIngestP99Ms && run.ingest.paced.non2xx === 0,
    lagP95: run.lag.lagMs.p95 <= TARGETS.webhookLagP95Ms,
    backlogZero: run.lag.backlogAfterDrain === 0,
  };
}

function uploadTargetsOf(run: UploadBenchResult) {
  const peak = (memory: UploadBenchResult['singleTenHourMemory']) => Math.max(memory.hwmMb, memory.peakSampledRssMb);
  const creates = [run.oneHour.statusCodes, run.tenHour.statusCodes, run.concurrent.statusCodes].every((codes) =>
    Object.keys(codes).every((code) => code === '201'),
  );
  return {
    oneHourRatio: run.oneHour.ratio >= TARGETS.uploadRatio,
    tenHourRatio: run.tenHour.ratio >= TARGETS.uploadRatio,
    profileP99: run.concurrent.profile.p99 < TARGETS.profileP99Ms && run.concurrent.profile.errors === 0,
    singleRss: peak(run.singleTenHourMemory) < TARGETS.peakRssMb,
    concurrentRss: peak(run.concurrent.memory) < TARGETS.peakRssMb,
    allCreated: creates,
  };
}

let exitCode = 0;
try {
  await main();
} catch (error) {
  if (!interrupted)
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(interrupted ? 130 : exitCode);

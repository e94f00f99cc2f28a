/**
 * MCP figures for `npm run bench` (section [6]), against the real server
 * (role `all`) and its database, every limiter off (`MCP_BENCH_SERVER_ENV`):
 * - `tools/call get_profile` on POST /mcp against REST GET /api/profile, the
 *   same user (a REST token and a token bound to `{base}/mcp`), `clients`
 *   closed-loop keep-alive clients, `requestsPerClient` each after a warm-up,
 *   REST then MCP, `rounds` times: p50/p99 of both, MCP/REST throughput
 *   (target ≥ 0.9) and at p50 (target ≤ 1.3) per round and their
 *   min/median/max over the rounds, and the server's CPU per request on each path;
 * - `tools/list`: p50/p99 at `clients`;
 * - get_profile calls per second at `clients` and at `highClients`, for
 *   `durationS` each;
 * - `generate_report` (WEEKLY_TRAINING and LAST_3_WORKOUTS in turn, `reportCalls`
 *   calls one after the other) for a user with a year of data, seeded here
 *   through `pool` (365 wellness days, 300 workouts): from the start of the
 *   call until the bench sees `async_jobs.status = 'completed'` (polled every
 *   20 ms), p50/p95 (target p95 ≤ 2 s), with the server's own timestamps
 *   (created -> started -> completed) beside it.
 *
 * Every answer is checked: HTTP 200, and on MCP a JSON-RPC `result` that is
 * not `isError`; anything else (or a socket error) counts as an error.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { cpuSnapshot, type CpuSnapshot, latencyStats, round, sleep, type Spread, spreadOf } from './bench-support.ts';

export type { Spread } from './bench-support.ts';

/** The server of this section runs without any limiter: the bench measures the MCP path, not the counters. */
export const MCP_BENCH_SERVER_ENV = {
  PACER_RATE_LIMIT_PER_MINUTE: '0',
  PACER_RATE_LIMIT_IP_PER_MINUTE: '0',
  PACER_MCP_RATE_LIMIT_PER_MINUTE: '0',
} as const;

/** Scopes of the MCP token: get_profile, tools/list, and the data of both report types. */
export const MCP_BENCH_SCOPES = ['profile:read', 'workout:read', 'health:read', 'analysis:read'] as const;

export interface McpBenchOptions {
  readonly serverUrl: string;
  /** A pool on the server's database (seeding, job polling, CPU of its backends). */
  readonly pool: pg.Pool;
  /** The user both tokens belong to; the year of data is seeded for them. */
  readonly userId: string;
  /** A REST token of the user with `profile:read`. */
  readonly restToken: string;
  /** A token of the same user bound to `{base}/mcp` with `MCP_BENCH_SCOPES`. */
  readonly mcpToken: string;
  /** Concurrent clients of the latency runs (default 10). */
  readonly clients?: number;
  /** The second throughput run (default 50). */
  readonly highClients?: number;
  /** Requests per client in each latency run (default 500); a warm-up of a fifth of it first. */
  readonly requestsPerClient?: number;
  /** REST/MCP rounds (default 3). */
  readonly rounds?: number;
  /** Length of each throughput run (s, default 10). */
  readonly durationS?: number;
  /** generate_report calls (default 40), after 2 unmeasured ones. */
  readonly reportCalls?: number;
  /** The server process, for CPU figures (Linux /proc); without it they are left out. */
  readonly serverPid?: number;
  readonly interrupted?: () => boolean;
}

export interface LatencySummary {
  readonly count: number;
  readonly mean: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

export interface LoadRun {
  readonly clients: number;
  /** Answers received (good or not). */
  readonly requests: number;
  readonly wallS: number;
  readonly perSec: number;
  /** Issue to end of the answer, float ms. */
  readonly latency: LatencySummary;
  /** Non-200, an MCP error or `isError` result, an unreadable body, or a socket error. */
  readonly errors: number;
  readonly firstError: string | undefined;
  /** CPU-ms per request of the server process and of the database's backends (from /proc). */
  readonly serverCpuMs: number | undefined;
  readonly postgresCpuMs: number | undefined;
}

export interface RatioRound {
  readonly rest: LoadRun;
  readonly mcp: LoadRun;
  /** MCP / REST requests per second. */
  readonly throughputRatio: number;
  /** MCP p50 / REST p50. */
  readonly p50Ratio: number;
  readonly p99Ratio: number;
  /** MCP / REST server CPU per request. */
  readonly serverCpuRatio: number | undefined;
}

export interface ReportFigures {
  readonly seeded: { readonly wellnessDays: number; readonly workouts: number; readonly endDate: string };
  readonly calls: number;
  readonly completed: number;
  readonly failed: number;
  readonly firstFailure: string | undefined;
  /** Call start -> `completed` seen by the bench (20 ms polls). */
  readonly latencyMs: LatencySummary;
  readonly byType: Readonly<Record<ReportBenchType, LatencySummary>>;
  /** The `tools/call` itself (enqueue and answer). */
  readonly callMs: LatencySummary;
  /** Server timestamps: created -> started (waiting for a worker), started -> completed (the run). */
  readonly waitMs: LatencySummary;
  readonly runMs: LatencySummary;
}

export interface McpBenchResult {
  readonly serverEnv: typeof MCP_BENCH_SERVER_ENV;
  readonly clients: number;
  readonly requestsPerClient: number;
  readonly rounds: readonly RatioRound[];
  readonly throughputRatio: Spread;
  readonly p50Ratio: Spread;
  readonly serverCpuRatio: Spread | undefined;
  readonly toolsList: LoadRun & { readonly tools: number; readonly bytes: number };
  readonly throughput: readonly LoadRun[];
  readonly reports: ReportFigures;
  /** Errors of every measured run, reports' failures included (must be 0). */
  readonly errors: number;
}

const REPORT_TYPES = ['WEEKLY_TRAINING', 'LAST_3_WORKOUTS'] as const;
type ReportBenchType = (typeof REPORT_TYPES)[number];
const PROTOCOL_VERSION = '2025-11-25';
const JOB_POLL_MS = 20;
const JOB_TIMEOUT_MS = 30_000;
const DAY_MS = 86_400_000;
const CLOCK_TICKS = 100; // USER_HZ on Linux

function summarize(samples: readonly number[]): LatencySummary {
  const { count, mean, p50, p95, p99, max } = latencyStats(samples);
  return { count, mean, p50, p95, p99, max };
}

// ---------------------------------------------------------------------------
// CPU of the server and of the database's backends (Linux /proc).

function cpuMsPerRequest(before: CpuSnapshot | undefined, after: CpuSnapshot | undefined, requests: number) {
  if (!before || !after || requests === 0) return { serverCpuMs: undefined, postgresCpuMs: undefined };
  let postgresTicks = 0;
  for (const [pid, ticks] of after.postgres) postgresTicks += ticks - (before.postgres.get(pid) ?? 0);
  const perRequest = (ticks: number) => round((ticks * (1000 / CLOCK_TICKS)) / requests, 3);
  return { serverCpuMs: perRequest(after.server - before.server), postgresCpuMs: perRequest(postgresTicks) };
}

// ---------------------------------------------------------------------------
// Raw HTTP: closed-loop clients, one keep-alive socket each.

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** One kind of request and what makes its answer a success (an error message, or undefined). */
interface Target {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  check(answer: Answer): string | undefined;
}

function send(url: URL, agent: http.Agent, target: Target): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: target.method,
        agent,
        timeout: 30_000,
        headers:
          target.body === undefined
            ? target.headers
            : { ...target.headers, 'content-length': String(Buffer.byteLength(target.body)) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(target.body);
  });
}

type Stop = { readonly requestsPerClient: number } | { readonly durationS: number };

async function closedLoop(options: McpBenchOptions, target: Target, clients: number, stop: Stop): Promise<LoadRun> {
  const url = new URL(target.path, options.serverUrl);
  const samples: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const fail = (message: string) => {
    errors += 1;
    firstError ??= message;
  };
  const before = await cpuSnapshot(options);
  const started = performance.now();
  const deadline = 'durationS' in stop ? started + stop.durationS * 1000 : Number.POSITIVE_INFINITY;
  const perClient = 'requestsPerClient' in stop ? stop.requestsPerClient : Number.POSITIVE_INFINITY;
  const client = async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < perClient && performance.now() < deadline && !options.interrupted?.(); i++) {
        const t0 = performance.now();
        try {
          const answer = await send(url, agent, target);
          samples.push(performance.now() - t0);
          const problem = target.check(answer);
          if (problem !== undefined) fail(problem);
        } catch (error) {
          samples.push(performance.now() - t0);
          fail(String(error));
        }
      }
    } finally {
      agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const wallS = (performance.now() - started) / 1000;
  const cpu = cpuMsPerRequest(before, await cpuSnapshot(options), samples.length);
  return {
    clients,
    requests: samples.length,
    wallS: round(wallS),
    perSec: round(samples.length / wallS, 1),
    latency: summarize(samples),
    errors,
    firstError,
    ...cpu,
  };
}

// ---------------------------------------------------------------------------
// The requests.

const sample = (body: string) => (body.length > 300 ? `${body.slice(0, 300)}…` : body);

function restProfile(token: string): Target {
  return {
    method: 'GET',
    path: '/api/profile',
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    check: ({ status, body }) => (status === 200 ? undefined : `GET /api/profile ${status}: ${sample(body)}`),
  };
}

interface JsonRpcAnswer {
  readonly result?: {
    readonly isError?: boolean;
    readonly structuredContent?: Record<string, unknown>;
    readonly tools?: readonly unknown[];
  };
  readonly error?: unknown;
}

function parseRpc(answer: Answer): JsonRpcAnswer | string {
  if (answer.status !== 200) return `POST /mcp ${answer.status}: ${sample(answer.body)}`;
  try {
    const parsed = JSON.parse(answer.body) as JsonRpcAnswer;
    if (!parsed.result) return `POST /mcp: no result: ${sample(answer.body)}`;
    if (parsed.result.isError === true) return `POST /mcp: isError: ${sample(answer.body)}`;
    return parsed;
  } catch {
    return `POST /mcp: not JSON: ${sample(answer.body)}`;
  }
}

function mcpRequest(token: string, method: string, params: Record<string, unknown>): Target {
  return {
    method: 'POST',
    path: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    check: (answer) => {
      const parsed = parseRpc(answer);
      return typeof parsed === 'string' ? parsed : undefined;
    },
  };
}

const toolCall = (token: string, name: string, args: Record<string, unknown>) =>
  mcpRequest(token, 'tools/call', { name, arguments: args });

/** One request through the same path as the loops: it must succeed, or nothing after it means anything. */
async function probe(options: McpBenchOptions, target: Target): Promise<Answer> {
  const agent = new http.Agent({ keepAlive: false });
  try {
    const answer = await send(new URL(target.path, options.serverUrl), agent, target);
    const problem = target.check(answer);
    if (problem !== undefined) throw new Error(`mcp bench: probe failed: ${problem}`);
    return answer;
  } finally {
    agent.destroy();
  }
}

// ---------------------------------------------------------------------------
// A year of data and the report jobs.

/** 365 wellness days ending at `endDate` and 300 workouts 26 hours apart, the latest on it (as reports.test.ts seeds). */
async function seedYear(pool: pg.Pool, userId: string, endDate: string) {
  const wellness = await pool.query(
    `INSERT INTO wellness (user_id, date, hrv, resting_hr, sleep_secs)
     SELECT $1, $2::date - d, 50 + d % 10, 50, 28800 FROM generate_series(0, 364) AS d
     ON CONFLICT (user_id, date) DO NOTHING`,
    [userId, endDate],
  );
  const workouts = await pool.query(
    `INSERT INTO workouts (user_id, file_sha256, file_size, name, source, sport, start_time, local_date, elapsed_secs, training_stress)
     SELECT $1::uuid, encode(sha256(convert_to($1::uuid::text || ':bench-workout:' || i, 'UTF8')), 'hex'), 1000,
            'Workout ' || i, 'bench', 'cycling', s, (s AT TIME ZONE 'UTC')::date, 3600, 50
       FROM generate_series(0, 299) AS i,
            LATERAL (SELECT ($2::date + time '07:00') AT TIME ZONE 'UTC' - i * interval '26 hours' AS s) AS start
     ON CONFLICT (user_id, file_sha256) DO NOTHING`,
    [userId, endDate],
  );
  return { wellnessDays: wellness.rowCount ?? 0, workouts: workouts.rowCount ?? 0, endDate };
}

interface JobRow {
  readonly status: string;
  readonly error: string | null;
  readonly wait: number | null;
  readonly run: number | null;
}

async function waitForJob(options: McpBenchOptions, jobId: string): Promise<JobRow> {
  const deadline = performance.now() + JOB_TIMEOUT_MS;
  for (;;) {
    const { rows } = await options.pool.query<JobRow>(
      `SELECT status, error,
              extract(epoch FROM started_at - created_at) * 1000 AS wait,
              extract(epoch FROM completed_at - started_at) * 1000 AS run
         FROM async_jobs WHERE id = $1`,
      [jobId],
    );
    const row = rows[0];
    if (row && (row.status === 'completed' || row.status === 'failed')) return row;
    if (performance.now() > deadline || options.interrupted?.())
      return { status: row?.status ?? 'missing', error: 'timed out', wait: null, run: null };
    await sleep(JOB_POLL_MS);
  }
}

async function measureReports(options: McpBenchOptions, endDate: string, calls: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latency: number[] = [];
  const byType: Record<ReportBenchType, number[]> = { WEEKLY_TRAINING: [], LAST_3_WORKOUTS: [] };
  const callMs: number[] = [];
  const waitMs: number[] = [];
  const runMs: number[] = [];
  let failed = 0;
  let firstFailure: string | undefined;
  const url = new URL('/mcp', options.serverUrl);
  try {
    for (let i = 0; i < calls && !options.interrupted?.(); i++) {
      const type = REPORT_TYPES[i % REPORT_TYPES.length] as ReportBenchType;
      const target = toolCall(options.mcpToken, 'generate_report', { type, end_date: endDate });
      const t0 = performance.now();
      const parsed = parseRpc(await send(url, agent, target));
      const reportId = typeof parsed === 'string' ? undefined : parsed.result?.structuredContent?.['report_id'];
      if (typeof reportId !== 'string') {
        failed += 1;
        firstFailure ??= typeof parsed === 'string' ? parsed : 'generate_report answered no report_id';
        continue;
      }
      callMs.push(performance.now() - t0);
      const job = await waitForJob(options, reportId);
      const elapsed = performance.now() - t0;
      if (job.status !== 'completed') {
        failed += 1;
        firstFailure ??= `report job ${reportId} ended ${job.status}: ${job.error ?? ''}`;
        continue;
      }
      latency.push(elapsed);
      byType[type].push(elapsed);
      if (job.wait !== null) waitMs.push(Number(job.wait));
      if (job.run !== null) runMs.push(Number(job.run));
    }
  } finally {
    agent.destroy();
  }
  return {
    calls,
    completed: latency.length,
    failed,
    firstFailure,
    latencyMs: summarize(latency),
    byType: { WEEKLY_TRAINING: summarize(byType.WEEKLY_TRAINING), LAST_3_WORKOUTS: summarize(byType.LAST_3_WORKOUTS) },
    callMs: summarize(callMs),
    waitMs: summarize(waitMs),
    runMs: summarize(runMs),
  };
}

// ---------------------------------------------------------------------------

export async function runMcpBench(options: McpBenchOptions): Promise<McpBenchResult> {
  const clients = options.clients ?? 10;
  const requestsPerClient = options.requestsPerClient ?? 500;
  const warmup = { requestsPerClient: Math.max(20, Math.round(requestsPerClient / 5)) };
  const measured = { requestsPerClient };
  const rest = restProfile(options.restToken);
  const mcp = toolCall(options.mcpToken, 'get_profile', {});
  const list = mcpRequest(options.mcpToken, 'tools/list', {});

  await probe(options, rest);
  await probe(options, mcp);
  const listed = await probe(options, list);
  const tools = (JSON.parse(listed.body) as JsonRpcAnswer).result?.tools?.length ?? 0;

  await closedLoop(options, rest, clients, warmup);
  await closedLoop(options, mcp, clients, warmup);
  await closedLoop(options, list, clients, warmup);

  const rounds: RatioRound[] = [];
  for (let i = 0; i < (options.rounds ?? 3) && !options.interrupted?.(); i++) {
    const restRun = await closedLoop(options, rest, clients, measured);
    const mcpRun = await closedLoop(options, mcp, clients, measured);
    rounds.push({
      rest: restRun,
      mcp: mcpRun,
      throughputRatio: round(mcpRun.perSec / restRun.perSec),
      p50Ratio: round(mcpRun.latency.p50 / restRun.latency.p50),
      p99Ratio: round(mcpRun.latency.p99 / restRun.latency.p99),
      serverCpuRatio:
        restRun.serverCpuMs && mcpRun.serverCpuMs !== undefined
          ? round(mcpRun.serverCpuMs / restRun.serverCpuMs)
          : undefined,
    });
  }
  const cpuRatios = rounds.flatMap((r) => (r.serverCpuRatio === undefined ? [] : [r.serverCpuRatio]));

  const toolsListRun = await closedLoop(options, list, clients, measured);
  const throughput: LoadRun[] = [];
  const durationS = options.durationS ?? 10;
  for (const n of [clients, options.highClients ?? 50]) {
    if (options.interrupted?.()) break;
    throughput.push(await closedLoop(options, mcp, n, { durationS }));
  }

  const endDate = new Date(Date.now() - (Date.now() % DAY_MS)).toISOString().slice(0, 10);
  const seeded = await seedYear(options.pool, options.userId, endDate);
  await measureReports(options, endDate, 2);
  const reports = { seeded, ...(await measureReports(options, endDate, options.reportCalls ?? 40)) };

  const runs = [...rounds.flatMap((r) => [r.rest, r.mcp]), toolsListRun, ...throughput];
  return {
    serverEnv: MCP_BENCH_SERVER_ENV,
    clients,
    requestsPerClient,
    rounds,
    throughputRatio: spreadOf(rounds.map((r) => r.throughputRatio)),
    p50Ratio: spreadOf(rounds.map((r) => r.p50Ratio)),
    serverCpuRatio: cpuRatios.length > 0 ? spreadOf(cpuRatios) : undefined,
    toolsList: { ...toolsListRun, tools, bytes: Buffer.byteLength(listed.body) },
    throughput,
    reports,
    errors: runs.reduce((sum, run) => sum + run.errors, 0) + reports.failed,
  };
}

/** The human-readable lines of a run (for `npm run bench`). */
export function mcpBenchLines(result: McpBenchResult): string[] {
  const cpu = (r: LoadRun) =>
    r.serverCpuMs === undefined
      ? ''
      : `, CPU/request server ${r.serverCpuMs} ms + postgres ${r.postgresCpuMs ?? '?'} ms`;
  const run = (r: LoadRun) =>
    `p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, ${r.perSec}/s, errors ${r.errors}${cpu(r)}`;
  const errorOf = (r: LoadRun) => (r.firstError ? [`      first error: ${r.firstError}`] : []);
  const spread = (s: Spread) => `min ${s.min} / median ${s.median} / max ${s.max}`;
  const rep = result.reports;
  const lines = [
    `    server env: ${Object.entries(result.serverEnv)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ')} (no limiter on either path)`,
    `    get_profile: REST GET /api/profile vs MCP tools/call, same user, ${result.clients} clients x ${result.requestsPerClient} requests, REST then MCP, ${result.rounds.length} rounds`,
  ];
  result.rounds.forEach((r, i) => {
    lines.push(
      `      round ${i + 1}: REST ${run(r.rest)}`,
      `               MCP  ${run(r.mcp)}`,
      `               MCP/REST throughput ${r.throughputRatio}, p50 ${r.p50Ratio}, p99 ${r.p99Ratio}${r.serverCpuRatio === undefined ? '' : `, server CPU ${r.serverCpuRatio}`}`,
      ...errorOf(r.rest),
      ...errorOf(r.mcp),
    );
  });
  lines.push(
    `      MCP/REST throughput: ${spread(result.throughputRatio)}; at p50: ${spread(result.p50Ratio)}${result.serverCpuRatio ? `; server CPU per request: ${spread(result.serverCpuRatio)}` : ''}`,
    `    tools/list (${result.toolsList.tools} tools, ${result.toolsList.bytes} bytes), ${result.clients} clients: ${run(result.toolsList)}`,
    ...errorOf(result.toolsList),
  );
  for (const t of result.throughput) {
    lines.push(
      `    get_profile, ${t.clients} clients for ${t.wallS} s: ${t.perSec} calls/s, p50 ${t.latency.p50} ms, p99 ${t.latency.p99} ms, errors ${t.errors}${cpu(t)}`,
      ...errorOf(t),
    );
  }
  lines.push(
    `    generate_report, ${rep.calls} calls one after the other (WEEKLY_TRAINING and LAST_3_WORKOUTS in turn, end ${rep.seeded.endDate}; seeded ${rep.seeded.wellnessDays} wellness days, ${rep.seeded.workouts} workouts):`,
    `      call -> completed (20 ms polls): p50 ${rep.latencyMs.p50} ms, p95 ${rep.latencyMs.p95} ms, max ${rep.latencyMs.max} ms; WEEKLY_TRAINING p50 ${rep.byType.WEEKLY_TRAINING.p50} / p95 ${rep.byType.WEEKLY_TRAINING.p95} ms, LAST_3_WORKOUTS p50 ${rep.byType.LAST_3_WORKOUTS.p50} / p95 ${rep.byType.LAST_3_WORKOUTS.p95} ms`,
    `      the call p50 ${rep.callMs.p50} ms; server side: created -> started p50 ${rep.waitMs.p50} / p95 ${rep.waitMs.p95} ms, started -> completed p50 ${rep.runMs.p50} / p95 ${rep.runMs.p95} ms; ${rep.completed} completed, ${rep.failed} failed${rep.firstFailure ? ` (first: ${rep.firstFailure})` : ''}`,
  );
  return lines;
}

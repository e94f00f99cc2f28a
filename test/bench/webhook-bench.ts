/**
 * Incoming-webhook figures for `npm run bench` (issue 5), against the real
 * server (role `all`: API and worker in one process) and its database:
 * - ingest: POST /api/webhooks/oauth/{clientId} with X-Webhook-Secret, small
 *   `wellness.upsert` bodies (a distinct date each, so every one is a real
 *   upsert once processed): autocannon at full speed (acknowledged
 *   deliveries/s, p50/p99), then a paced open-loop run at `ingestRate`/s
 *   (p99 at that rate; target ≤ 20 ms at 500/s);
 * - processing lag: `lagRate`/s for `lagDurationS`, then wait for the backlog
 *   to drain; lag = finished_at - received_at of exactly those deliveries
 *   (tagged in the body), p50/p95/p99/max, their final states, and the
 *   backlog (queued/processing rows) when sending stops and after draining
 *   (target p95 ≤ 1 s, backlog zero at the end).
 *
 * Paced runs send on a fixed schedule (open loop, requests spread evenly
 * over each second) through `connections` keep-alive sockets: autocannon's
 * `overallRate` sends each connection's per-second quota back to back and
 * then idles, which measures bursts at full speed rather than a steady rate.
 * Between phases the bench waits for the backlog of the previous one to
 * drain, so each phase starts on an idle worker.
 *
 * Set-up: the module gives the app a `health:write` grant from `userId`
 * (an `oauth_grants` row through `pool`) unless it already holds one.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type pg from 'pg';
import { round, sleep, ticksOf } from './bench-support.ts';

export interface WebhookBenchOptions {
  readonly serverUrl: string;
  /** A pool on the server's database. */
  readonly pool: pg.Pool;
  /** The app's public client id (`app:create --json` → `clientId`). */
  readonly clientId: string;
  /** `app:create --json` → `webhookSecret`. */
  readonly webhookSecret: string;
  /** The user the events are for (`user:create --json` → `id`). */
  readonly userId: string;
  readonly connections: number;
  /** Length of the full-speed and the paced ingest runs. */
  readonly durationS: number;
  /** Full-speed warm-up before the measured runs (default 3 s; 0 skips it). */
  readonly warmupS?: number;
  /** Paced ingest rate (default 500/s). */
  readonly ingestRate?: number;
  /** Processing-lag run: rate (default 300/s) and length (default 30 s). */
  readonly lagRate?: number;
  readonly lagDurationS?: number;
  /** Longest wait for a backlog to drain (default 180 s). */
  readonly drainTimeoutS?: number;
  /** The server process, for CPU figures (Linux /proc); without it they are left out. */
  readonly serverPid?: number;
  readonly interrupted?: () => boolean;
}

/**
 * CPU over a phase, sending and draining included, so per-delivery figures
 * cover ingest and processing together. PostgreSQL = the backends connected
 * to the server's database (its shared background processes are not counted).
 */
export interface CpuFigures {
  readonly wallS: number;
  /** CPU-seconds per wall second (1 = one full core). */
  readonly serverCores: number;
  readonly postgresCores: number;
  readonly benchCores: number;
  readonly machineBusyPct: number;
  /** CPU-milliseconds per delivery sent in the phase. */
  readonly serverMsPerDelivery: number;
  readonly postgresMsPerDelivery: number;
}

export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

export interface DrainResult {
  /** Rows still `received`/`queued`/`processing` when the bench started waiting. */
  readonly backlogAtStart: number;
  /** Rows still waiting when it stopped (0 unless the drain timed out). */
  readonly backlogAtEnd: number;
  readonly drainMs: number;
}

export interface IngestFullSpeed {
  readonly connections: number;
  readonly durationS: number;
  readonly requests: number;
  /** Acknowledged (2xx) deliveries per second of wall time. */
  readonly ackPerSec: number;
  /** Per-response times (float ms). */
  readonly latency: LatencySummary;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  /** PostgreSQL checkpoints during the run (cluster-wide: other databases' activity counts). */
  readonly checkpoints: number | undefined;
  /** The processing backlog this run left behind, and how long it took the worker to clear it. */
  readonly drain: DrainResult;
  readonly cpu: CpuFigures | undefined;
}

export interface PacedRun {
  readonly targetRate: number;
  readonly achievedRate: number;
  readonly durationS: number;
  readonly sent: number;
  readonly acknowledged: number;
  /** From the moment the request was issued (waiting for a free socket included) to the end of the answer. */
  readonly latency: LatencySummary;
  readonly non2xx: number;
  readonly errors: number;
  readonly statusCodes: Record<string, number>;
  /** PostgreSQL checkpoints while sending (cluster-wide): their fsyncs stall commits, a likely source of tail latency. */
  readonly checkpoints: number | undefined;
}

export interface WebhookBenchResult {
  readonly grantCreated: boolean;
  /** Cores of the machine, shared by the load generator, the server and PostgreSQL. */
  readonly cpus: number;
  readonly ingest: {
    readonly fullSpeed: IngestFullSpeed;
    readonly paced: PacedRun & { readonly drain: DrainResult; readonly cpu: CpuFigures | undefined };
  };
  readonly lag: {
    readonly send: PacedRun;
    /** Tagged deliveries found in the table (should equal `send.acknowledged`). */
    readonly deliveries: number;
    readonly states: Record<string, number>;
    /** finished_at - received_at of the processed ones (ms). */
    readonly lagMs: LatencySummary;
    /** started_at - received_at (waiting for a worker) and finished_at - started_at (the attempt). */
    readonly waitMs: LatencySummary;
    readonly attemptMs: LatencySummary;
    /** Queued/processing rows of the app the moment sending stopped, and after draining. */
    readonly backlogAtSendEnd: number;
    readonly backlogAfterDrain: number;
    readonly drainMs: number;
    /** Jobs of `webhooks.deliver` still created/retry/active after draining (pg-boss side). */
    readonly openJobsAfterDrain: number;
    readonly cpu: CpuFigures | undefined;
  };
}

const PATH_PREFIX = '/api/webhooks/oauth/';
const DAY_MS = 86_400_000;
/** Event dates count back from here, one day per delivery (the wellness bench writes 2000-01-01 onwards). */
const LAST_DATE_MS = Date.UTC(1999, 11, 30);
const PENDING_STATES = ['received', 'queued', 'processing'];

function summarize(samples: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) =>
    sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0);
  return {
    count: sorted.length,
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    p99: round(at(0.99)),
    max: round(sorted.at(-1) ?? 0),
  };
}

// ---------------------------------------------------------------------------
// CPU accounting (Linux /proc).

interface CpuSnapshot {
  readonly at: number;
  readonly busy: number;
  readonly total: number;
  readonly server: number;
  readonly postgres: ReadonlyMap<number, number>;
  readonly self: number;
}

const CLOCK_TICKS = 100;

async function cpuSnapshot(options: WebhookBenchOptions): Promise<CpuSnapshot | undefined> {
  if (options.serverPid === undefined) return undefined;
  const { rows } = await options.pool.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
  );
  const server = ticksOf(options.serverPid);
  let line: string[];
  try {
    line = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(1);
  } catch {
    return undefined;
  }
  if (server === undefined) return undefined;
  const cpu = line.map(Number);
  const postgres = new Map<number, number>();
  for (const { pid } of rows) {
    const ticks = ticksOf(pid);
    if (ticks !== undefined) postgres.set(pid, ticks);
  }
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    busy: cpu.slice(0, 8).reduce((sum, value) => sum + value, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0),
    total: cpu.slice(0, 8).reduce((sum, value) => sum + value, 0),
    server,
    postgres,
    self: (usage.user + usage.system) / 1e6,
  };
}

function cpuFigures(before: CpuSnapshot | undefined, after: CpuSnapshot | undefined, deliveries: number) {
  if (!before || !after) return undefined;
  const wallS = (after.at - before.at) / 1000;
  const serverS = (after.server - before.server) / CLOCK_TICKS;
  let postgresTicks = 0;
  // A backend gone by `after` (an idle pool connection closed) loses its share; one born since counts in full.
  for (const [pid, ticks] of after.postgres) postgresTicks += ticks - (before.postgres.get(pid) ?? 0);
  const postgresS = postgresTicks / CLOCK_TICKS;
  const perDelivery = (seconds: number) => (deliveries > 0 ? round((seconds * 1000) / deliveries) : 0);
  return {
    wallS: round(wallS),
    serverCores: round(serverS / wallS),
    postgresCores: round(postgresS / wallS),
    benchCores: round((after.self - before.self) / wallS),
    machineBusyPct: round((100 * (after.busy - before.busy)) / Math.max(1, after.total - before.total), 1),
    serverMsPerDelivery: perDelivery(serverS),
    postgresMsPerDelivery: perDelivery(postgresS),
  } satisfies CpuFigures;
}

/** Bodies: one `wellness.upsert` each, a new date every time, tagged with the phase. */
class Bodies {
  private next = 0;
  private readonly userId: string;

  constructor(userId: string) {
    this.userId = userId;
  }

  body(tag: string): string {
    const n = this.next++;
    const date = new Date(LAST_DATE_MS - n * DAY_MS).toISOString().slice(0, 10);
    return JSON.stringify({
      event: 'wellness.upsert',
      user: this.userId,
      data: { date, hrv: 40 + (n % 60), restingHr: 40 + (n % 30) },
      bench: tag,
    });
  }
}

/** A live grant of the app from the user with `health:write`, created when missing. */
async function ensureGrant(options: WebhookBenchOptions): Promise<boolean> {
  const existing = await options.pool.query(
    `SELECT 1 FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id
      WHERE c.client_id = $1 AND g.user_id = $2 AND g.revoked_at IS NULL AND 'health:write' = ANY(g.scopes)`,
    [options.clientId, options.userId],
  );
  if (existing.rowCount) return false;
  const inserted = await options.pool.query(
    `INSERT INTO oauth_grants (client_id, user_id, scopes)
     SELECT c.id, $2, ARRAY['health:write'] FROM oauth_clients c WHERE c.client_id = $1`,
    [options.clientId, options.userId],
  );
  if (inserted.rowCount !== 1) throw new Error(`webhook bench: no app with client id ${options.clientId}`);
  return true;
}

/** Checkpoints so far (PostgreSQL 17+: pg_stat_checkpointer; before: pg_stat_bgwriter). */
async function checkpointCount(options: WebhookBenchOptions): Promise<number | undefined> {
  for (const query of [
    'SELECT num_timed + num_requested AS n FROM pg_stat_checkpointer',
    'SELECT checkpoints_timed + checkpoints_req AS n FROM pg_stat_bgwriter',
  ]) {
    try {
      const { rows } = await options.pool.query<{ n: string }>(query);
      return Number(rows[0]?.n);
    } catch {
      // not this version's view
    }
  }
  return undefined;
}

const difference = (before: number | undefined, after: number | undefined) =>
  before === undefined || after === undefined ? undefined : after - before;

async function backlog(options: WebhookBenchOptions): Promise<number> {
  const { rows } = await options.pool.query<{ count: string }>(
    `SELECT count(*) AS count FROM webhook_deliveries WHERE client_id = $1 AND state = ANY($2)`,
    [options.clientId, PENDING_STATES],
  );
  return Number(rows[0]?.count ?? 0);
}

async function drain(options: WebhookBenchOptions): Promise<DrainResult> {
  const started = performance.now();
  const deadline = started + (options.drainTimeoutS ?? 180) * 1000;
  const backlogAtStart = await backlog(options);
  let left = backlogAtStart;
  while (left > 0 && performance.now() < deadline && !options.interrupted?.()) {
    await sleep(50);
    left = await backlog(options);
  }
  return { backlogAtStart, backlogAtEnd: left, drainMs: round(performance.now() - started, 0) };
}

/** One delivery by hand: it must be acknowledged and processed, or the figures would mean nothing. */
async function probe(options: WebhookBenchOptions, bodies: Bodies): Promise<void> {
  const res = await fetch(`${options.serverUrl}${PATH_PREFIX}${options.clientId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-secret': options.webhookSecret },
    body: bodies.body('probe'),
  });
  const ack = (await res.json()) as { secretMatched?: boolean };
  const deliveryId = res.headers.get('x-webhook-delivery-id');
  if (res.status !== 200 || ack.secretMatched !== true || !deliveryId)
    throw new Error(`webhook bench: probe delivery answered ${res.status} ${JSON.stringify(ack)}`);
  for (let i = 0; i < 200; i++) {
    const { rows } = await options.pool.query<{ state: string; last_error: string | null }>(
      'SELECT state, last_error FROM webhook_deliveries WHERE id = $1',
      [deliveryId],
    );
    const row = rows[0];
    if (row?.state === 'processed') return;
    if (row && !PENDING_STATES.includes(row.state))
      throw new Error(`webhook bench: probe delivery ended ${row.state}: ${row.last_error ?? ''}`);
    await sleep(50);
  }
  throw new Error('webhook bench: probe delivery not processed within 10 s');
}

async function fullSpeed(options: WebhookBenchOptions, bodies: Bodies, durationS: number, tag: string) {
  const samples: number[] = [];
  let finish: (result: autocannon.Result) => void = () => undefined;
  let fail: (error: unknown) => void = () => undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const checkpointsBefore = await checkpointCount(options);
  const started = performance.now();
  const instance = autocannon(
    {
      url: options.serverUrl,
      connections: options.connections,
      pipelining: 1,
      duration: durationS,
      timeout: 10,
      requests: [
        {
          method: 'POST',
          path: `${PATH_PREFIX}${options.clientId}`,
          headers: { 'content-type': 'application/json', 'x-webhook-secret': options.webhookSecret },
          setupRequest: (request) => {
            request.body = bodies.body(tag);
            return request;
          },
        },
      ],
    },
    (error: unknown, result: autocannon.Result) => (error ? fail(error) : finish(result)),
  );
  instance.on('response', (_client, _status, _bytes, responseTime) => samples.push(responseTime));
  const stop = setInterval(() => {
    if (options.interrupted?.()) instance.stop();
  }, 200);
  const result = await done.finally(() => clearInterval(stop));
  const wallS = (performance.now() - started) / 1000;
  return {
    connections: options.connections,
    durationS: round(wallS),
    requests: samples.length,
    ackPerSec: round(result['2xx'] / wallS, 1),
    latency: summarize(samples),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    checkpoints: difference(checkpointsBefore, await checkpointCount(options)),
  };
}

/**
 * Open-loop load at `rate`/s: request n is issued at start + n/rate (the
 * loop catches up after a late timer), over `connections` keep-alive sockets.
 */
async function paced(
  options: WebhookBenchOptions,
  bodies: Bodies,
  rate: number,
  durationS: number,
  tag: string,
): Promise<PacedRun> {
  const url = new URL(`${PATH_PREFIX}${options.clientId}`, options.serverUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const samples: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  const inFlight = new Set<Promise<void>>();
  const send = (body: string) => {
    const t0 = performance.now();
    const request = new Promise<void>((resolve) => {
      const req = http.request(
        url,
        {
          method: 'POST',
          agent,
          timeout: 10_000,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-webhook-secret': options.webhookSecret,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            samples.push(performance.now() - t0);
            const code = String(res.statusCode ?? 0);
            statusCodes[code] = (statusCodes[code] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        errors += 1;
        resolve();
      });
      req.end(body);
    });
    inFlight.add(request);
    void request.then(() => inFlight.delete(request));
  };

  const total = Math.round(rate * durationS);
  const checkpointsBefore = await checkpointCount(options);
  const started = performance.now();
  let sent = 0;
  while (sent < total && !options.interrupted?.()) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    while (sent < due) {
      send(bodies.body(tag));
      sent += 1;
    }
    await sleep(1);
  }
  const sendingS = (performance.now() - started) / 1000;
  await Promise.all(inFlight);
  agent.destroy();
  const acknowledged = Object.entries(statusCodes)
    .filter(([code]) => code.startsWith('2'))
    .reduce((sum, [, count]) => sum + count, 0);
  return {
    targetRate: rate,
    achievedRate: round(sent / sendingS, 1),
    durationS: round(sendingS),
    sent,
    acknowledged,
    latency: summarize(samples),
    non2xx: samples.length - acknowledged,
    errors,
    statusCodes,
    checkpoints: difference(checkpointsBefore, await checkpointCount(options)),
  };
}

async function lagOf(options: WebhookBenchOptions, tag: string, since: Date) {
  const { rows } = await options.pool.query<{
    state: string;
    lag: number | null;
    wait: number | null;
    attempt: number | null;
  }>(
    `SELECT state,
            extract(epoch FROM finished_at - received_at) * 1000 AS lag,
            extract(epoch FROM started_at - received_at) * 1000 AS wait,
            extract(epoch FROM finished_at - started_at) * 1000 AS attempt
       FROM webhook_deliveries
      WHERE client_id = $1 AND received_at >= $2 AND body LIKE $3`,
    [options.clientId, since, `%"bench":"${tag}"%`],
  );
  const states: Record<string, number> = {};
  const lag: number[] = [];
  const wait: number[] = [];
  const attempt: number[] = [];
  for (const row of rows) {
    states[row.state] = (states[row.state] ?? 0) + 1;
    if (row.state !== 'processed') continue;
    if (row.lag !== null) lag.push(Number(row.lag));
    if (row.wait !== null) wait.push(Number(row.wait));
    if (row.attempt !== null) attempt.push(Number(row.attempt));
  }
  return {
    deliveries: rows.length,
    states,
    lagMs: summarize(lag),
    waitMs: summarize(wait),
    attemptMs: summarize(attempt),
  };
}

async function openJobs(options: WebhookBenchOptions): Promise<number> {
  const { rows } = await options.pool.query<{ count: string }>(
    `SELECT count(*) AS count FROM pgboss.job WHERE name = 'webhooks.deliver' AND state IN ('created', 'retry', 'active')`,
  );
  return Number(rows[0]?.count ?? 0);
}

export async function runWebhookBench(options: WebhookBenchOptions): Promise<WebhookBenchResult> {
  const run = randomBytes(4).toString('hex');
  const bodies = new Bodies(options.userId);
  const grantCreated = await ensureGrant(options);
  await probe(options, bodies);

  const warmupS = options.warmupS ?? 3;
  if (warmupS > 0) {
    await fullSpeed(options, bodies, warmupS, `${run}-warmup`);
    await drain(options);
  }

  let before = await cpuSnapshot(options);
  const full = await fullSpeed(options, bodies, options.durationS, `${run}-full`);
  const fullDrain = await drain(options);
  const fullCpu = cpuFigures(before, await cpuSnapshot(options), full.requests);

  before = await cpuSnapshot(options);
  const pacedRun = await paced(options, bodies, options.ingestRate ?? 500, options.durationS, `${run}-paced`);
  const pacedDrain = await drain(options);
  const pacedCpu = cpuFigures(before, await cpuSnapshot(options), pacedRun.sent);

  const lagTag = `${run}-lag`;
  const { rows } = await options.pool.query<{ now: Date }>('SELECT now() AS now');
  const since = new Date((rows[0]?.now ?? new Date()).getTime() - 1000);
  before = await cpuSnapshot(options);
  const send = await paced(options, bodies, options.lagRate ?? 300, options.lagDurationS ?? 30, lagTag);
  const backlogAtSendEnd = await backlog(options);
  const lagDrain = await drain(options);
  const lagCpu = cpuFigures(before, await cpuSnapshot(options), send.sent);
  const lag = await lagOf(options, lagTag, since);

  return {
    grantCreated,
    cpus: os.cpus().length,
    ingest: {
      fullSpeed: { ...full, drain: fullDrain, cpu: fullCpu },
      paced: { ...pacedRun, drain: pacedDrain, cpu: pacedCpu },
    },
    lag: {
      send,
      ...lag,
      backlogAtSendEnd,
      backlogAfterDrain: lagDrain.backlogAtEnd,
      drainMs: lagDrain.drainMs,
      openJobsAfterDrain: await openJobs(options),
      cpu: lagCpu,
    },
  };
}

/** The human-readable lines of a run (for `npm run bench`). */
export function webhookBenchLines(result: WebhookBenchResult): string[] {
  const { fullSpeed: f, paced: p } = result.ingest;
  const l = result.lag;
  const cpu = (c: CpuFigures | undefined) =>
    c
      ? `CPU: server ${c.serverCores} + postgres ${c.postgresCores} + bench ${c.benchCores} cores, machine ${c.machineBusyPct}% busy over ${c.wallS} s; per delivery (ingest + processing) server ${c.serverMsPerDelivery} ms + postgres ${c.postgresMsPerDelivery} ms`
      : 'CPU: n/a';
  return [
    `    ingest, full speed: ${f.ackPerSec} acknowledged/s, p50 ${f.latency.p50} ms, p99 ${f.latency.p99} ms, non-2xx ${f.non2xx}, errors ${f.errors} (${f.requests} in ${f.durationS} s; backlog ${f.drain.backlogAtStart} drained in ${f.drain.drainMs} ms; ${f.checkpoints ?? '?'} checkpoints)`,
    `      ${cpu(f.cpu)}`,
    `    ingest, paced ${p.targetRate}/s (achieved ${p.achievedRate}/s): p50 ${p.latency.p50} ms, p99 ${p.latency.p99} ms, max ${p.latency.max} ms, non-2xx ${p.non2xx}, errors ${p.errors}; ${p.checkpoints ?? '?'} checkpoints`,
    `      ${cpu(p.cpu)}`,
    `    lag at ${l.send.targetRate}/s for ${l.send.durationS} s (achieved ${l.send.achievedRate}/s, ingest p99 ${l.send.latency.p99} ms): received -> processed p50 ${l.lagMs.p50} ms, p95 ${l.lagMs.p95} ms, p99 ${l.lagMs.p99} ms, max ${l.lagMs.max} ms`,
    `      wait for a worker p50 ${l.waitMs.p50} / p95 ${l.waitMs.p95} ms; attempt p50 ${l.attemptMs.p50} / p95 ${l.attemptMs.p95} ms`,
    `      ${l.deliveries} deliveries: ${JSON.stringify(l.states)}; backlog when sending stopped ${l.backlogAtSendEnd}, after draining ${l.backlogAfterDrain} (${l.drainMs} ms); open jobs ${l.openJobsAfterDrain}`,
    `      ${cpu(l.cpu)}`,
  ];
}

/**
 * The figures of issue 20 for `npm run bench` (sections `load`, `load-api`,
 * `backfill`; `fit` and `mcp` reuse upload-bench.ts and mcp-bench.ts), each
 * against the lean reference server (reference-server.ts) in the same run,
 * rounds alternating reference and Pacer, ratios as min/median/max:
 *
 * - wellness load: `users` athletes (one per connection) `POST /api/wellness`
 *   for dates in their last 60 days, closed loop. While Pacer serves it, a
 *   probe athlete of its own writes a distinctive `sleepSecs` every
 *   `PROBE_EVERY_MS` and polls `GET /api/recovery` for its last week until
 *   the sleep component shows each write: the derived-data lag is the time
 *   from the write's answer to the first poll that shows it (resolution
 *   `PROBE_POLL_MS`), read only through the public API;
 * - backfill: one fresh athlete per run writes `days` days, newest first, over
 *   `connections` connections, to the reference and to Pacer; after Pacer's
 *   last answer the bench reads every day's recovery (`GET /api/recovery`,
 *   paged) until each one shows the sleep that was written for it: "whole".
 *
 * Every day written carries its own sleep value, so a recovery row computed
 * before the write (or from another write) never passes for it.
 */
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type pg from 'pg';
import { latencyStats, type LatencyStats, round, sleep, spreadOf, type Spread } from './bench-support.ts';
import {
  headersOf,
  type HotpathRun,
  type HotpathServer,
  type HotpathUser,
  runLoad,
  wellnessPosts,
} from './hotpath-bench.ts';

const DAY_MS = 86_400_000;
/** The load writes dates in the athletes' last 60 days (the issue's row). */
const LOAD_WINDOW_DAYS = 60;
/** The probe writes this often (or as soon as its previous write is answered, when that takes longer). */
const PROBE_EVERY_MS = 300;
const PROBE_POLL_MS = 50;
/** A write not shown in the derived data within this is counted as unserved. */
const SERVE_TIMEOUT_MS = 30_000;
/** The probe's days: its last week, in turn. */
const PROBE_DAYS = 7;
/** Backfill: how long the bench waits for the derived data to be whole, and how often it reads it. */
const WHOLE_TIMEOUT_MS = 120_000;
const WHOLE_POLL_MS = 100;
/** GET /api/recovery: at most 366 days per request, 200 per page (contract/src/common.ts). */
const RANGE_MAX_DAYS = 366;
const PAGE_LIMIT = 200;

/** The issue's targets. */
export const FIGURE_TARGETS = {
  loadRatio: 0.6,
  loadLagP95Ms: 2000,
  apiRatio: 0.8,
  backfillRatio: 0.6,
  backfillWholeMs: 10_000,
  uploadRatio: 0.8,
  idleRssMb: 120,
  concurrentRssMb: 250,
  mcpRatio: 0.9,
} as const;

/** `YYYY-MM-DD`, `days` after today (UTC, the bench users' zone). */
export function utcDate(days: number, now = Date.now()): string {
  return new Date(now + days * DAY_MS).toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------
// Wellness load with the derived-data probe.

export interface ProbeFigures {
  readonly writes: number;
  /** Write answered -> first poll whose recovery shows it. */
  readonly lagMs: LatencyStats;
  readonly unserved: number;
  readonly errors: number;
  readonly firstError: string | undefined;
}

export interface LoadRound {
  readonly reference: HotpathRun;
  readonly pacer: HotpathRun;
  readonly rpsRatio: number;
}

export interface LoadFigures {
  readonly users: number;
  readonly connections: number;
  readonly durationS: number;
  readonly rounds: readonly LoadRound[];
  readonly rpsRatio: Spread;
  /** Over every Pacer round; absent when no probe ran (role `api` computes no derived data). */
  readonly probe: ProbeFigures | undefined;
}

export interface WellnessLoadOptions {
  readonly pacer: HotpathServer;
  readonly reference: HotpathServer;
  /** One per connection, each with `health:write health:read`. */
  readonly users: readonly HotpathUser[];
  /** An athlete of its own for the lag probe; none: no probe. */
  readonly probeUser: HotpathUser | undefined;
  readonly pool: pg.Pool;
  readonly connections: number;
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly interrupted: () => boolean;
}

function wellnessRequest(): (token: string) => autocannon.Request {
  const now = Date.now();
  return wellnessPosts((n) => ({
    date: utcDate(-(n % LOAD_WINDOW_DAYS), now),
    hrv: 40 + (n % 60),
    restingHr: 40 + (n % 30),
    sleepSecs: 25_000 + (n % 5000),
  }));
}

interface RecoveryPage {
  readonly items: readonly {
    readonly date: string;
    readonly components: { readonly sleep: { value: number | null } };
  }[];
  readonly nextCursor: string | null;
}

async function getJson<T>(url: string, token: string): Promise<T> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

interface ProbeWrite {
  readonly date: string;
  readonly sleepSecs: number;
  answeredAt: number | undefined;
  shownAt: number | undefined;
}

/**
 * A write every PROBE_EVERY_MS while `running()` (each to one of the probe's
 * last PROBE_DAYS days, in turn, with a sleep value of its own), and a poller
 * that reads those days' recovery every PROBE_POLL_MS until every answered
 * write is shown or SERVE_TIMEOUT_MS has passed since the last one. A day
 * showing a write shows every earlier write to that day as well (it was
 * computed from data that includes them).
 */
async function probeLag(server: HotpathServer, user: HotpathUser, running: () => boolean, first: number) {
  const writes: ProbeWrite[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const fail = (error: unknown) => {
    errors += 1;
    firstError ??= String(error);
  };
  const pending = () => writes.filter((write) => write.answeredAt !== undefined && write.shownAt === undefined);
  let writing = true;
  const from = utcDate(-(PROBE_DAYS - 1));
  const to = utcDate(0);
  const poller = (async () => {
    let lastAnswerAt = performance.now();
    while (writing || (pending().length > 0 && performance.now() - lastAnswerAt < SERVE_TIMEOUT_MS)) {
      if (pending().length > 0) {
        try {
          const page = await getJson<RecoveryPage>(`${server.url}/api/recovery?from=${from}&to=${to}`, user.token);
          const seenAt = performance.now();
          for (const item of page.items) {
            const sameDay = writes.filter((write) => write.date === item.date);
            const shown = sameDay.findIndex((write) => write.sleepSecs === item.components.sleep.value);
            for (const write of sameDay.slice(0, shown + 1)) {
              if (write.answeredAt !== undefined) write.shownAt ??= seenAt;
            }
          }
        } catch (error) {
          fail(error);
        }
      }
      lastAnswerAt = Math.max(lastAnswerAt, ...writes.map((write) => write.answeredAt ?? 0));
      await sleep(PROBE_POLL_MS);
    }
  })();
  for (let i = first; running(); i++) {
    const started = performance.now();
    const write: ProbeWrite = {
      date: utcDate(-(i % PROBE_DAYS)),
      sleepSecs: 20_000 + i,
      answeredAt: undefined,
      shownAt: undefined,
    };
    writes.push(write);
    try {
      const answer = await fetch(`${server.url}/api/wellness`, {
        method: 'POST',
        headers: headersOf(user.token),
        body: JSON.stringify({ date: write.date, hrv: 50, restingHr: 50, sleepSecs: write.sleepSecs }),
      });
      const body = await answer.text();
      if (answer.status !== 200 && answer.status !== 201)
        throw new Error(`probe POST /api/wellness answered ${answer.status}: ${body.slice(0, 300)}`);
      write.answeredAt = performance.now();
    } catch (error) {
      fail(error);
    }
    const wait = started + PROBE_EVERY_MS - performance.now();
    if (wait > 0 && running()) await sleep(wait);
  }
  writing = false;
  await poller;
  const answered = writes.filter((write) => write.answeredAt !== undefined);
  return {
    lags: answered.flatMap((write) =>
      write.shownAt === undefined || write.answeredAt === undefined ? [] : [write.shownAt - write.answeredAt],
    ),
    writes: writes.length,
    unserved: answered.filter((write) => write.shownAt === undefined).length,
    errors,
    firstError,
  };
}

export async function runWellnessLoad(options: WellnessLoadOptions): Promise<LoadFigures> {
  const request = wellnessRequest();
  await runLoad(options, options.reference, request, options.warmupS);
  await runLoad(options, options.pacer, request, options.warmupS);
  const rounds: LoadRound[] = [];
  const probes: Awaited<ReturnType<typeof probeLag>>[] = [];
  for (let index = 0; index < options.rounds && !options.interrupted(); index++) {
    const reference = await runLoad(options, options.reference, request, options.durationS);
    let loading = true;
    const probeUser = options.probeUser;
    const probe = probeUser
      ? probeLag(options.pacer, probeUser, () => loading && !options.interrupted(), index * 10_000)
      : undefined;
    const pacer = await runLoad(options, options.pacer, request, options.durationS).finally(() => (loading = false));
    if (probe) probes.push(await probe);
    rounds.push({ reference, pacer, rpsRatio: round(pacer.rps / Math.max(reference.rps, 1e-9), 3) });
  }
  return {
    users: options.users.length,
    connections: options.connections,
    durationS: options.durationS,
    rounds,
    rpsRatio: spreadOf(rounds.map((entry) => entry.rpsRatio)),
    probe:
      probes.length === 0
        ? undefined
        : {
            writes: probes.reduce((sum, p) => sum + p.writes, 0),
            lagMs: latencyStats(probes.flatMap((p) => p.lags)),
            unserved: probes.reduce((sum, p) => sum + p.unserved, 0),
            errors: probes.reduce((sum, p) => sum + p.errors, 0),
            firstError: probes.find((p) => p.firstError !== undefined)?.firstError,
          },
  };
}

// ---------------------------------------------------------------------------
// Backfill.

export interface BackfillRun {
  readonly writes: number;
  /** First request sent -> last answer. */
  readonly wallMs: number;
  readonly perSec: number;
  readonly latency: LatencyStats;
  readonly non2xx: number;
  readonly errors: number;
}

export interface BackfillRound {
  readonly reference: BackfillRun;
  readonly pacer: BackfillRun;
  readonly rpsRatio: number;
  /** Pacer's last answer -> every day's recovery shows its write; undefined: not within WHOLE_TIMEOUT_MS. */
  readonly wholeMs: number | undefined;
  /** Days still missing or stale when the bench stopped waiting. */
  readonly daysNotWhole: number;
}

export interface BackfillFigures {
  readonly days: number;
  readonly connections: number;
  readonly rounds: readonly BackfillRound[];
  readonly rpsRatio: Spread;
  /** Over the rounds whose data became whole; a round that never did counts as the timeout. */
  readonly wholeMs: Spread;
}

export interface BackfillOptions {
  readonly pacer: HotpathServer;
  readonly reference: HotpathServer;
  /** A fresh athlete with `health:write health:read`, on each call. */
  readonly newUser: () => Promise<HotpathUser>;
  readonly days: number;
  readonly connections: number;
  readonly rounds: number;
  readonly interrupted: () => boolean;
}

/** The sleep written for day `n` (n days before today): a value of its own, so its recovery tells it was computed. */
const backfillSleep = (n: number) => 20_000 + n;

async function backfill(server: HotpathServer, user: HotpathUser, days: number, connections: number) {
  let next = 0;
  const now = Date.now();
  const samples: number[] = [];
  let lastAnswerAt = 0;
  const started = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: server.url,
        connections,
        pipelining: 1,
        amount: days,
        timeout: 30,
        requests: [
          {
            method: 'POST',
            path: '/api/wellness',
            headers: headersOf(user.token),
            setupRequest: (request) => {
              const n = next++;
              request.body = JSON.stringify({
                date: utcDate(-n, now),
                hrv: 40 + (n % 60),
                restingHr: 40 + (n % 30),
                sleepSecs: backfillSleep(n),
              });
              return request;
            },
          },
        ],
      },
      (error: Error | null, done: autocannon.Result) => (error ? reject(error) : resolve(done)),
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      samples.push(responseTime);
      lastAnswerAt = performance.now();
    });
  });
  const wallMs = lastAnswerAt - started;
  const run: BackfillRun = {
    writes: samples.length,
    wallMs: round(wallMs, 0),
    perSec: round(samples.length / (wallMs / 1000), 1),
    latency: latencyStats(samples),
    non2xx: result.non2xx,
    errors: result.errors,
  };
  return { run, lastAnswerAt, now };
}

/** Days of the backfill whose recovery does not (yet) show the sleep written for them. */
async function daysNotWhole(server: HotpathServer, user: HotpathUser, days: number, now: number): Promise<number> {
  const expected = new Map(Array.from({ length: days }, (_, n) => [utcDate(-n, now), backfillSleep(n)]));
  let whole = 0;
  for (let newest = 0; newest < days; newest += RANGE_MAX_DAYS) {
    const oldest = Math.min(days - 1, newest + RANGE_MAX_DAYS - 1);
    let cursor: string | null = null;
    do {
      const query: string = `from=${utcDate(-oldest, now)}&to=${utcDate(-newest, now)}&limit=${PAGE_LIMIT}${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await getJson<RecoveryPage>(`${server.url}/api/recovery?${query}`, user.token);
      for (const item of page.items) if (expected.get(item.date) === item.components.sleep.value) whole += 1;
      cursor = page.nextCursor;
    } while (cursor !== null);
  }
  return days - whole;
}

export async function runBackfill(options: BackfillOptions): Promise<BackfillFigures> {
  const { days, connections } = options;
  // Warm-up: a tenth of the days on each server, athletes of their own.
  const warmDays = Math.max(10, Math.round(days / 10));
  await backfill(options.reference, await options.newUser(), warmDays, connections);
  await backfill(options.pacer, await options.newUser(), warmDays, connections);
  const rounds: BackfillRound[] = [];
  for (let index = 0; index < options.rounds && !options.interrupted(); index++) {
    const referenceUser = await options.newUser();
    const pacerUser = await options.newUser();
    const reference = await backfill(options.reference, referenceUser, days, connections);
    const pacer = await backfill(options.pacer, pacerUser, days, connections);
    let missing = days;
    let wholeMs: number | undefined;
    while (!options.interrupted() && performance.now() - pacer.lastAnswerAt < WHOLE_TIMEOUT_MS) {
      missing = await daysNotWhole(options.pacer, pacerUser, days, pacer.now);
      if (missing === 0) {
        wholeMs = round(performance.now() - pacer.lastAnswerAt, 0);
        break;
      }
      await sleep(WHOLE_POLL_MS);
    }
    rounds.push({
      reference: reference.run,
      pacer: pacer.run,
      rpsRatio: round(pacer.run.perSec / Math.max(reference.run.perSec, 1e-9), 3),
      wholeMs,
      daysNotWhole: missing,
    });
  }
  return {
    days,
    connections,
    rounds,
    rpsRatio: spreadOf(rounds.map((entry) => entry.rpsRatio)),
    wholeMs: spreadOf(rounds.map((entry) => entry.wholeMs ?? WHOLE_TIMEOUT_MS)),
  };
}

// ---------------------------------------------------------------------------
// Lines.

const spread = (s: Spread, unit = '') => `min ${s.min}${unit}, median ${s.median}${unit}, max ${s.max}${unit}`;

function runLine(label: string, run: HotpathRun): string {
  const failed = run.non2xx > 0 ? ` ${JSON.stringify(run.statusCodes)}` : '';
  const cpu =
    run.serverCpuMs === undefined
      ? ''
      : `, CPU/request server ${run.serverCpuMs} ms + postgres ${run.postgresCpuMs} ms`;
  return `      ${label} ${String(run.rps).padStart(8)} req/s   p50 ${run.latency.p50} ms   p99 ${run.latency.p99} ms   non-2xx ${run.non2xx}${failed}   errors ${run.errors}${cpu}`;
}

export function loadLines(figures: LoadFigures): string[] {
  const lines: string[] = [];
  figures.rounds.forEach((entry, index) => {
    lines.push(
      `    round ${index + 1}: req/s ratio ${entry.rpsRatio}`,
      runLine('reference', entry.reference),
      runLine('Pacer    ', entry.pacer),
    );
  });
  lines.push(`    req/s ratio Pacer/reference: ${spread(figures.rpsRatio)}`);
  const probe = figures.probe;
  if (probe) {
    lines.push(
      `    derived-data lag (probe athlete, write answered -> GET /api/recovery shows it): p50 ${probe.lagMs.p50} ms, p95 ${probe.lagMs.p95} ms, max ${probe.lagMs.max} ms over ${probe.lagMs.count} writes; unserved ${probe.unserved}, errors ${probe.errors}${probe.firstError ? ` (${probe.firstError})` : ''}`,
    );
  }
  return lines;
}

function backfillRunLine(label: string, run: BackfillRun): string {
  return `      ${label} ${run.writes} writes in ${run.wallMs} ms (${run.perSec}/s)   p50 ${run.latency.p50} ms   p99 ${run.latency.p99} ms   non-2xx ${run.non2xx}   errors ${run.errors}`;
}

export function backfillLines(figures: BackfillFigures): string[] {
  const lines: string[] = [];
  figures.rounds.forEach((entry, index) => {
    lines.push(
      `    round ${index + 1}: ingest ratio ${entry.rpsRatio}; derived data whole ${entry.wholeMs === undefined ? `NOT within ${WHOLE_TIMEOUT_MS} ms (${entry.daysNotWhole} days missing or stale)` : `${entry.wholeMs} ms`} after Pacer's last answer`,
      backfillRunLine('reference', entry.reference),
      backfillRunLine('Pacer    ', entry.pacer),
    );
  });
  lines.push(
    `    ingest ratio Pacer/reference: ${spread(figures.rpsRatio)}; whole after the last write: ${spread(figures.wholeMs, ' ms')}`,
  );
  return lines;
}

// ---------------------------------------------------------------------------
// The issue's table.

/** What the upload and MCP sections measured, as the table needs it. */
export interface FitFigures {
  readonly oneHour: { readonly uploadMs: number; readonly decodeMs: number; readonly ratio: Spread };
  readonly tenHour: { readonly uploadMs: number; readonly decodeMs: number; readonly ratio: Spread };
  readonly idleRssMb: number;
  readonly oneUploadRssMb: number;
  readonly concurrentRssMb: number;
  readonly concurrency: number;
}

export interface McpFigures {
  readonly restPerSec: number;
  readonly mcpPerSec: number;
  readonly ratio: Spread;
  readonly clients: number;
}

export interface IssueFigures {
  readonly load?: LoadFigures | undefined;
  readonly loadApi?: LoadFigures | undefined;
  readonly backfill?: BackfillFigures | undefined;
  readonly fit?: FitFigures | undefined;
  readonly mcp?: McpFigures | undefined;
}

const mark = (ok: boolean) => (ok ? 'OK  ' : 'MISS');
const medianOf = (values: readonly number[]) => spreadOf(values).median;

function loadCells(figures: LoadFigures): { pacer: string; reference: string } {
  const rps = (pick: (entry: LoadRound) => HotpathRun) => medianOf(figures.rounds.map((entry) => pick(entry).rps));
  const p99 = (pick: (entry: LoadRound) => HotpathRun) =>
    medianOf(figures.rounds.map((entry) => pick(entry).latency.p99));
  return {
    pacer: `${rps((entry) => entry.pacer)} req/s, p99 ${p99((entry) => entry.pacer)} ms`,
    reference: `${rps((entry) => entry.reference)} req/s, p99 ${p99((entry) => entry.reference)} ms`,
  };
}

/** One line per row of the issue's table: what was measured (medians over the rounds), ratio spread, target. */
export function issueTableLines(figures: IssueFigures): string[] {
  const lines = [
    'Issue 20 figures (medians over the rounds; ratio as min/median/max; targets on the median)',
    '  | load | Pacer | reference | ratio | target |',
    '  |---|---|---|---|---|',
  ];
  const row = (ok: boolean, cells: readonly string[]) => lines.push(`  [${mark(ok)}] | ${cells.join(' | ')} |`);
  const { load, loadApi, backfill: back, fit, mcp } = figures;
  if (load) {
    const cells = loadCells(load);
    row(load.rpsRatio.median >= FIGURE_TARGETS.loadRatio, [
      `${load.users} athletes, POST /api/wellness, last ${LOAD_WINDOW_DAYS} days, ${load.connections} connections (role all)`,
      cells.pacer,
      cells.reference,
      spread(load.rpsRatio),
      `≥ ${FIGURE_TARGETS.loadRatio}`,
    ]);
    const probe = load.probe;
    if (probe) {
      row(probe.lagMs.count > 0 && probe.unserved === 0 && probe.lagMs.p95 <= FIGURE_TARGETS.loadLagP95Ms, [
        '  derived data of a write served during that load (GET /api/recovery)',
        `p95 ${probe.lagMs.p95} ms (p50 ${probe.lagMs.p50}, max ${probe.lagMs.max}; ${probe.lagMs.count} writes, ${probe.unserved} unserved)`,
        '',
        '',
        `p95 ≤ ${FIGURE_TARGETS.loadLagP95Ms} ms`,
      ]);
    }
  }
  if (loadApi) {
    const cells = loadCells(loadApi);
    row(loadApi.rpsRatio.median >= FIGURE_TARGETS.apiRatio, [
      'the same with PACER_ROLE=api',
      cells.pacer,
      cells.reference,
      spread(loadApi.rpsRatio),
      `≥ ${FIGURE_TARGETS.apiRatio}`,
    ]);
  }
  if (back) {
    const median = (pick: (entry: BackfillRound) => number) => medianOf(back.rounds.map(pick));
    row(back.rpsRatio.median >= FIGURE_TARGETS.backfillRatio, [
      `one athlete's ${back.days}-day backfill, newest first, ${back.connections} connections (role all)`,
      `${back.days} writes in ${median((entry) => entry.pacer.wallMs)} ms, p99 ${median((entry) => entry.pacer.latency.p99)} ms`,
      `${median((entry) => entry.reference.wallMs)} ms, p99 ${median((entry) => entry.reference.latency.p99)} ms`,
      spread(back.rpsRatio),
      `≥ ${FIGURE_TARGETS.backfillRatio}`,
    ]);
    row(
      back.rounds.every((entry) => entry.wholeMs !== undefined) &&
        back.wholeMs.median <= FIGURE_TARGETS.backfillWholeMs,
      [
        '  derived data whole after the last write',
        spread(back.wholeMs, ' ms'),
        '',
        '',
        `≤ ${FIGURE_TARGETS.backfillWholeMs} ms`,
      ],
    );
  }
  if (fit) {
    row(fit.oneHour.ratio.median >= FIGURE_TARGETS.uploadRatio, [
      'FIT upload vs plain decode, 1-hour file',
      `${fit.oneHour.uploadMs} ms`,
      `${fit.oneHour.decodeMs} ms`,
      spread(fit.oneHour.ratio),
      `≥ ${FIGURE_TARGETS.uploadRatio}`,
    ]);
    row(fit.tenHour.ratio.median >= FIGURE_TARGETS.uploadRatio, [
      'FIT upload vs plain decode, 10-hour file',
      `${fit.tenHour.uploadMs} ms`,
      `${fit.tenHour.decodeMs} ms`,
      spread(fit.tenHour.ratio),
      `(≥ ${FIGURE_TARGETS.uploadRatio})`,
    ]);
    row(fit.idleRssMb <= FIGURE_TARGETS.idleRssMb, [
      'RSS idle (after start-up and one request)',
      `${fit.idleRssMb} MB`,
      '',
      '',
      `≤ ${FIGURE_TARGETS.idleRssMb} MB`,
    ]);
    row(fit.concurrentRssMb <= FIGURE_TARGETS.concurrentRssMb, [
      `RSS peak: one 10-hour upload / ${fit.concurrency} concurrent 10-hour uploads`,
      `${fit.oneUploadRssMb} / ${fit.concurrentRssMb} MB`,
      '',
      '',
      `- / ≤ ${FIGURE_TARGETS.concurrentRssMb} MB`,
    ]);
  }
  if (mcp) {
    row(mcp.ratio.median >= FIGURE_TARGETS.mcpRatio, [
      `MCP tools/call get_profile vs REST GET /api/profile, ${mcp.clients} clients (rate limits off)`,
      `${mcp.mcpPerSec} calls/s`,
      `REST ${mcp.restPerSec} req/s`,
      spread(mcp.ratio),
      `≥ ${FIGURE_TARGETS.mcpRatio}`,
    ]);
  }
  return lines;
}

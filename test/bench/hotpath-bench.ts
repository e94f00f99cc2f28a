/**
 * Section `hotpath` of `npm run bench`: Pacer's `POST /api/wellness` and
 * `GET /api/wellness` (30 days) against the lean reference server
 * (reference-server.ts) on the same database, users and tokens, in the same
 * run. Each route: a warm-up of each server, then `rounds` rounds, each the
 * reference then Pacer, autocannon with `connections` connections; every
 * POST writes a date no request wrote before. Connection i sends the token of
 * user i (modulo the users given): with a user per connection, as with many
 * athletes syncing at once, no two requests in flight write the same user's
 * rows; with one user, concurrent writes queue on that user's
 * recompute-request row. A round's ratios are Pacer's req/s over the
 * reference's and Pacer's p99 over the reference's; over the rounds they are
 * reported as min/median/max, because the two servers share the machine's
 * cores with PostgreSQL and autocannon and any one run is noisy.
 */
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type pg from 'pg';
import {
  cpuSnapshot,
  type CpuSnapshot,
  latencyStats,
  type LatencyStats,
  round,
  spreadOf,
  type Spread,
} from './bench-support.ts';

export interface HotpathServer {
  readonly url: string;
  readonly pid: number;
}

export interface HotpathBenchOptions {
  readonly pacer: HotpathServer;
  readonly reference: HotpathServer;
  /** Each with a token of `health:write health:read`. */
  readonly users: readonly HotpathUser[];
  readonly pool: pg.Pool;
  readonly connections: number;
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  /** Which routes to measure, in this order. */
  readonly routes: readonly HotpathRouteKey[];
  readonly interrupted: () => boolean;
}

export interface HotpathUser {
  readonly id: string;
  readonly token: string;
}

export interface HotpathRun {
  readonly requests: number;
  readonly rps: number;
  /** From each response's own time (float ms). */
  readonly latency: LatencyStats;
  readonly non2xx: number;
  readonly errors: number;
  readonly statusCodes: Readonly<Record<string, number>>;
  /** CPU of the server process, and of the database's backends, per request. */
  readonly serverCpuMs: number | undefined;
  readonly postgresCpuMs: number | undefined;
}

export interface HotpathRound {
  readonly reference: HotpathRun;
  readonly pacer: HotpathRun;
  readonly rpsRatio: number;
  readonly p99Ratio: number;
}

export type HotpathRouteKey = 'post' | 'get';
export const HOTPATH_ROUTES: readonly HotpathRouteKey[] = ['post', 'get'];

export interface HotpathRoute {
  readonly key: HotpathRouteKey;
  readonly route: string;
  readonly rounds: readonly HotpathRound[];
  readonly rpsRatio: Spread;
  readonly p99Ratio: Spread;
}

export interface HotpathBenchResult {
  readonly connections: number;
  readonly users: number;
  readonly durationS: number;
  readonly routes: readonly HotpathRoute[];
}

/** What the ratios aim at (the issue: Pacer at 0.38x of the lean server's req/s). */
export const HOTPATH_TARGETS = { rpsRatio: 0.6, p99Ratio: 2 } as const;

const DAY_MS = 86_400_000;
/** The 30 days every GET reads, seeded before the runs; POSTs write from `POST_FIRST_DATE` on, never here. */
const GET_FROM = '2099-01-01';
const GET_DAYS = 30;
const POST_FIRST_DATE_MS = Date.UTC(2100, 0, 1);
const getPath = `/api/wellness?from=${GET_FROM}&to=${dateAfter(Date.parse(GET_FROM), GET_DAYS - 1)}`;

function dateAfter(startMs: number, days: number): string {
  return new Date(startMs + days * DAY_MS).toISOString().slice(0, 10);
}

interface Route {
  readonly key: HotpathRouteKey;
  readonly name: string;
  readonly request: (token: string) => autocannon.Request;
}

/** The bench's JSON headers with a user's bearer token. */
export const headersOf = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });

/**
 * `POST /api/wellness` for `runLoad`: the n-th request sent (over every
 * connection, counted from 0) carries `bodyOf(n)`, so each write has its own
 * day and values.
 */
export function wellnessPosts(bodyOf: (n: number) => Record<string, unknown>): (token: string) => autocannon.Request {
  let written = 0;
  return (token) => ({
    method: 'POST',
    path: '/api/wellness',
    headers: headersOf(token),
    setupRequest: (request) => {
      request.body = JSON.stringify(bodyOf(written++));
      return request;
    },
  });
}

/** What one closed-loop run needs: connection i sends `request(users[i mod n].token)`. */
export interface LoadOptions {
  readonly users: readonly HotpathUser[];
  /** A pool on the bench database, for the CPU of its backends. */
  readonly pool: pg.Pool;
  readonly connections: number;
  readonly interrupted: () => boolean;
}

async function seedGetWindow(pool: pg.Pool, userId: string): Promise<void> {
  await pool.query(
    `insert into wellness (user_id, date, hrv, resting_hr, sleep_secs, weight, mood, comments)
     select $1, d::date, 40 + i % 30, 45 + i % 10, 25000 + i * 60, 70.5, 1 + i % 5, 'seeded by the bench'
     from generate_series(0, $3 - 1) as i, lateral (select $2::date + i as d) as days
     on conflict (user_id, date) do nothing`,
    [userId, GET_FROM, GET_DAYS],
  );
}

async function answer(url: string, init: RequestInit): Promise<{ status: number; body: string }> {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.text() };
}

/** Both servers must give the same answers before their speeds mean anything. */
async function probe(options: HotpathBenchOptions): Promise<void> {
  const user = options.users[0];
  if (!user) throw new Error('hotpath: no user');
  const headers = { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' };
  const answers = await Promise.all(
    [options.reference, options.pacer].map(async (server, index) => {
      const date = dateAfter(Date.UTC(2098, 0, 1), index);
      const body = JSON.stringify({ date, hrv: 55.5, restingHr: 48, comments: 'probe', rawJson: { source: 'x' } });
      const post = await answer(`${server.url}/api/wellness`, { method: 'POST', headers, body });
      const list = await answer(`${server.url}${getPath}`, { headers });
      return { post, list };
    }),
  );
  const [reference, pacer] = answers as [(typeof answers)[number], (typeof answers)[number]];
  for (const [label, got] of [
    ['reference', reference],
    ['Pacer', pacer],
  ] as const) {
    if (got.post.status !== 201)
      throw new Error(`hotpath: ${label} POST answered ${got.post.status}: ${got.post.body}`);
    if (got.list.status !== 200) throw new Error(`hotpath: ${label} GET answered ${got.list.status}: ${got.list.body}`);
  }
  const keysOf = (body: string) => Object.keys(JSON.parse(body) as object).join(',');
  if (keysOf(reference.post.body) !== keysOf(pacer.post.body))
    throw new Error(`hotpath: the POST answers differ:\n${reference.post.body}\n${pacer.post.body}`);
  if (reference.list.body !== pacer.list.body)
    throw new Error(`hotpath: the GET answers differ:\n${reference.list.body}\n${pacer.list.body}`);
}

function cpuMsPer(before: CpuSnapshot | undefined, after: CpuSnapshot | undefined, requests: number) {
  if (!before || !after || requests === 0) return { serverCpuMs: undefined, postgresCpuMs: undefined };
  let postgresTicks = 0;
  for (const [pid, ticks] of after.postgres) postgresTicks += ticks - (before.postgres.get(pid) ?? 0);
  // One tick is 10 ms (USER_HZ 100 on Linux).
  return {
    serverCpuMs: round(((after.server - before.server) * 10) / requests, 3),
    postgresCpuMs: round((postgresTicks * 10) / requests, 3),
  };
}

/** `durationS` of autocannon against `server`, one instance per connection so each keeps its user's token. */
export async function runLoad(
  options: LoadOptions,
  server: HotpathServer,
  request: (token: string) => autocannon.Request,
  durationS: number,
): Promise<HotpathRun> {
  const samples: number[] = [];
  const statusCodes: Record<string, number> = {};
  const before = await cpuSnapshot({ pool: options.pool, serverPid: server.pid });
  const started = performance.now();
  const runs = Array.from({ length: options.connections }, (_, index) => {
    const user = options.users[index % options.users.length] as HotpathUser;
    let finish: (result: autocannon.Result) => void = () => undefined;
    let fail: (error: unknown) => void = () => undefined;
    const done = new Promise<autocannon.Result>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
    const instance = autocannon(
      {
        url: server.url,
        connections: 1,
        pipelining: 1,
        duration: durationS,
        timeout: 10,
        requests: [request(user.token)],
      },
      (error: unknown, result: autocannon.Result) => (error ? fail(error) : finish(result)),
    );
    instance.on('response', (_client, status, _bytes, responseTime) => {
      samples.push(responseTime);
      statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    });
    return { instance, done };
  });
  const stop = setInterval(() => {
    if (options.interrupted()) for (const { instance } of runs) instance.stop();
  }, 200);
  const results = await Promise.all(runs.map(({ done }) => done)).finally(() => clearInterval(stop));
  const wallS = (performance.now() - started) / 1000;
  const after = await cpuSnapshot({ pool: options.pool, serverPid: server.pid });
  return {
    requests: samples.length,
    rps: round(samples.length / wallS, 1),
    latency: latencyStats(samples),
    non2xx: results.reduce((sum, result) => sum + result.non2xx, 0),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    statusCodes,
    ...cpuMsPer(before, after, samples.length),
  };
}

async function measureRoute(options: HotpathBenchOptions, route: Route): Promise<HotpathRoute> {
  await runLoad(options, options.reference, route.request, options.warmupS);
  await runLoad(options, options.pacer, route.request, options.warmupS);
  const rounds: HotpathRound[] = [];
  for (let index = 0; index < options.rounds && !options.interrupted(); index++) {
    const reference = await runLoad(options, options.reference, route.request, options.durationS);
    const pacer = await runLoad(options, options.pacer, route.request, options.durationS);
    rounds.push({
      reference,
      pacer,
      rpsRatio: round(pacer.rps / Math.max(reference.rps, 1e-9), 3),
      p99Ratio: round(pacer.latency.p99 / Math.max(reference.latency.p99, 1e-9), 3),
    });
  }
  return {
    key: route.key,
    route: route.name,
    rounds,
    rpsRatio: spreadOf(rounds.map((entry) => entry.rpsRatio)),
    p99Ratio: spreadOf(rounds.map((entry) => entry.p99Ratio)),
  };
}

export async function runHotpathBench(options: HotpathBenchOptions): Promise<HotpathBenchResult> {
  for (const user of options.users) await seedGetWindow(options.pool, user.id);
  await probe(options);
  const post: Route = {
    key: 'post',
    name: 'POST /api/wellness',
    request: wellnessPosts((n) => ({
      date: dateAfter(POST_FIRST_DATE_MS, n),
      hrv: 40 + (n % 60),
      restingHr: 40 + (n % 30),
    })),
  };
  const get: Route = {
    key: 'get',
    name: `GET /api/wellness (${GET_DAYS} days)`,
    request: (token) => ({ method: 'GET', path: getPath, headers: headersOf(token) }),
  };
  return {
    connections: options.connections,
    users: options.users.length,
    durationS: options.durationS,
    routes: await inOrder(options.routes, (key) => measureRoute(options, key === 'post' ? post : get)),
  };
}

async function inOrder<T, R>(items: readonly T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (const item of items) results.push(await run(item));
  return results;
}

const mark = (ok: boolean) => (ok ? 'OK  ' : 'MISS');
const spread = (s: Spread) => `min ${s.min}, median ${s.median}, max ${s.max}`;

function runLine(label: string, run: HotpathRun): string {
  const cpu =
    run.serverCpuMs === undefined
      ? ''
      : `, CPU/request: server ${run.serverCpuMs} ms + postgres ${run.postgresCpuMs} ms`;
  const failed = run.non2xx > 0 ? ` ${JSON.stringify(run.statusCodes)}` : '';
  return `      ${label} ${String(run.rps).padStart(8)} req/s   p50 ${run.latency.p50} ms   p99 ${run.latency.p99} ms   non-2xx ${run.non2xx}${failed}   errors ${run.errors}${cpu}`;
}

/** The section's lines: each round, then the ratios against their targets. */
export function hotpathBenchLines(result: HotpathBenchResult): string[] {
  const lines: string[] = [];
  for (const route of result.routes) {
    lines.push(`    ${route.route}`);
    route.rounds.forEach((entry, index) => {
      lines.push(
        `    round ${index + 1}: req/s ratio ${entry.rpsRatio}, p99 ratio ${entry.p99Ratio}`,
        runLine('reference', entry.reference),
        runLine('Pacer    ', entry.pacer),
      );
    });
  }
  return lines;
}

/** Per route: the req/s and p99 ratios against their targets (medians over the rounds), and every answer a 2xx. */
export function hotpathTargetsOf(result: HotpathBenchResult) {
  return Object.fromEntries(
    result.routes.map((route) => [
      route.key,
      {
        rpsRatio: route.rpsRatio.median >= HOTPATH_TARGETS.rpsRatio,
        p99Ratio: route.p99Ratio.median <= HOTPATH_TARGETS.p99Ratio,
        allAnswered: route.rounds.every((entry) =>
          [entry.pacer, entry.reference].every((run) => run.non2xx === 0 && run.errors === 0),
        ),
      },
    ]),
  );
}

/** Summary lines: per route the medians and the ratios over the rounds, against their targets. */
export function hotpathSummaryLines(result: HotpathBenchResult): string[] {
  const targets = hotpathTargetsOf(result);
  const medianOf = (route: HotpathRoute, pick: (entry: HotpathRound) => number) =>
    spreadOf(route.rounds.map(pick)).median;
  const lines = [
    `Hot path: Pacer (log level info, rate limits counted) vs the lean reference, ${result.connections} connections over ${result.users} user(s), ${result.routes[0]?.rounds.length ?? 0} rounds of ${result.durationS} s`,
  ];
  for (const route of result.routes) {
    const met = targets[route.key];
    lines.push(
      `  ${route.route}: reference ${medianOf(route, (entry) => entry.reference.rps)} req/s p99 ${medianOf(route, (entry) => entry.reference.latency.p99)} ms, Pacer ${medianOf(route, (entry) => entry.pacer.rps)} req/s p99 ${medianOf(route, (entry) => entry.pacer.latency.p99)} ms (medians)`,
      `  [${mark(met?.rpsRatio === true)}] req/s ratio Pacer/reference   ${spread(route.rpsRatio)}   (target median ≥ ${HOTPATH_TARGETS.rpsRatio})`,
      `  [${mark(met?.p99Ratio === true)}] p99 ratio Pacer/reference     ${spread(route.p99Ratio)}   (target median ≤ ${HOTPATH_TARGETS.p99Ratio})`,
      `  [${mark(met?.allAnswered === true)}] every request a 2xx, no errors`,
    );
  }
  return lines;
}

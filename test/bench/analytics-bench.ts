/**
 * Derived-data figures for `npm run bench` (section [7]), against the real
 * server (role `all`: the recompute worker runs in it) and its database:
 * - `GET /api/fuel/timeline` for 14 days holding 200 meal items (logged
 *   through `POST /api/nutrition`) and 20 recorded workouts, after the
 *   recompute those writes asked for has settled: `timelineRequests`
 *   sequential requests on one keep-alive socket after a warm-up, `runs`
 *   times; p50 per run and its min/median/max (target p50 ≤ 20 ms);
 * - the full recompute of a year (365 wellness days, 300 workouts, 2,000 meal
 *   items, seeded in SQL): `recomputeFrom` 0001-01-01 in this process,
 *   `runs` times, with its two halves timed apart (training load + recovery,
 *   fuel); and the same through the server's worker: a profile change (which
 *   asks for everything) acknowledged -> its change records served (target ≤ 1 s);
 * - the lag of the derived data behind writes: `POST /api/wellness` at a
 *   steady `lagRate`/s (open loop) for `lagDurationS` over `lagUsers` users,
 *   each with a year of data already computed; each write carries a unique
 *   `sleepSecs`, and is served when the stored recovery row of its date shows
 *   it (or a later write to that date), polled every 20 ms: write
 *   acknowledged -> served, p50/p95/max (target p95 ≤ 2 s).
 *
 * Every answer is checked; anything but the expected status counts as an error.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { createDb, type Db } from '../../server/src/db/database.ts';
import { recomputeLoadAndRecovery } from '../../server/src/modules/derived/analytics.service.ts';
import { FROM_THE_BEGINNING } from '../../server/src/modules/changes/changes.repository.ts';
import { recomputeFrom } from '../../server/src/modules/derived/recompute.service.ts';
import { recomputeFuel } from '../../server/src/modules/derived/fuel.service.ts';
import { cpuSnapshot, type CpuSnapshot, round, sleep } from './bench-support.ts';

/** Scopes per user role of the section. */
export const ANALYTICS_BENCH_SCOPES = {
  fuel: ['nutrition:write', 'nutrition:read'],
  year: ['profile:write'],
  lag: ['health:write'],
} as const;

/** The zone of every bench user: dates are theirs, and the timeline formats each point in it. */
export const ANALYTICS_BENCH_TIME_ZONE = 'Europe/Berlin';

export interface AnalyticsBenchUser {
  readonly id: string;
  readonly token: string;
}

export interface AnalyticsBenchOptions {
  readonly serverUrl: string;
  /** A pool on the server's database (seeding, polling, CPU of its backends). */
  readonly pool: pg.Pool;
  /** A user with `ANALYTICS_BENCH_SCOPES.fuel`: the 14 days of the timeline. */
  readonly fuelUser: AnalyticsBenchUser;
  /** A user with `ANALYTICS_BENCH_SCOPES.year`: the year that is recomputed. */
  readonly yearUser: AnalyticsBenchUser;
  /** Users with `ANALYTICS_BENCH_SCOPES.lag` the writes of the lag run are spread over. */
  readonly lagUsers: readonly AnalyticsBenchUser[];
  /** Measured timeline requests per run (default 200), after a tenth of it as warm-up. */
  readonly timelineRequests?: number;
  /** Runs of the timeline and of both recomputes (default 3). */
  readonly runs?: number;
  /** Writes per second of the lag run (default 50). */
  readonly lagRate?: number;
  /** Length of the lag run (s, default 30). */
  readonly lagDurationS?: number;
  /** The server process, for CPU figures (Linux /proc); without it they are left out. */
  readonly serverPid?: number;
  readonly interrupted?: () => boolean;
}

export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

export interface TimelineFigures {
  readonly days: number;
  readonly meals: number;
  readonly workouts: number;
  readonly points: number;
  readonly bytes: number;
  /** Write of the inputs (last nutrition POST acknowledged) -> the recompute settled. */
  readonly settleMs: number;
  readonly runs: readonly (LatencySummary & { readonly serverCpuMs: number | undefined })[];
  /** The runs' p50. */
  readonly p50: Spread;
  readonly errors: number;
  readonly firstError: string | undefined;
}

export interface RecomputeFigures {
  readonly seeded: { readonly wellnessDays: number; readonly workouts: number; readonly mealItems: number };
  /** Days stored by a full run: training load and recovery, fuel. */
  readonly storedDays: { readonly load: number; readonly recovery: number; readonly fuel: number };
  /** `recomputeFrom` 0001-01-01, in this process. */
  readonly inProcessMs: Spread;
  /** The halves, each in its own transaction. */
  readonly loadAndRecoveryMs: Spread;
  readonly fuelMs: Spread;
  /** PATCH /api/profile acknowledged -> its change records served by the server's drainer (10 ms polls). */
  readonly workerMs: Spread;
}

export interface LagFigures {
  readonly users: number;
  readonly targetRate: number;
  readonly durationS: number;
  readonly writes: number;
  readonly achievedRate: number;
  /** Send -> answer of the writes. */
  readonly writeMs: LatencySummary;
  readonly writeErrors: number;
  readonly firstError: string | undefined;
  /** Acknowledged -> the stored recovery row shows the write (20 ms polls). */
  readonly lagMs: LatencySummary;
  /** Acknowledged writes never seen in the derived data within the wait. */
  readonly unserved: number;
  /** Writes served later than `SLOW_START_MS`. */
  readonly slowWrites: number;
  /** Last write acknowledged -> no change record left for any lag user. */
  readonly drainMs: number | undefined;
  /** CPU of the server process and of the database's backends while the writes were sent, % of one core. */
  readonly serverCpuPercent: number | undefined;
  readonly postgresCpuPercent: number | undefined;
}

export interface AnalyticsBenchResult {
  readonly timeZone: string;
  readonly timeline: TimelineFigures;
  readonly recompute: RecomputeFigures;
  readonly lag: LagFigures;
  /** Failed requests of every measured run, and unserved writes (must be 0). */
  readonly errors: number;
}

const POLL_MS = 20;
const SETTLE_POLL_MS = 10;
const SETTLE_TIMEOUT_MS = 120_000;
/** Longer than pg-boss's queue cache (60 s) and monitor (10 s): a write stalled behind them is still seen served. */
const SERVE_TIMEOUT_MS = 120_000;
const CLOCK_TICKS = 100; // USER_HZ on Linux
const TIMELINE_DAYS = 14;
const TIMELINE_MEALS = 200;
const TIMELINE_WORKOUTS = 20;
const YEAR = { wellnessDays: 365, workouts: 300, mealItems: 2000 } as const;
/** Writes of the lag run go to the user's last 7 days, in turn: a device syncing the recent week. */
const LAG_DATES = 7;
/** A job or a write slower than this is counted apart: nothing in the recompute itself takes that long. */
const SLOW_START_MS = 5000;
const ABSORPTION_TYPES = ['RAPID', 'FAST', 'BALANCED', 'DENSE', 'HYPER_LOAD'] as const;

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

function spreadOf(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    min: round(sorted[0] ?? 0),
    median: round(sorted[Math.floor(sorted.length / 2)] ?? 0),
    max: round(sorted.at(-1) ?? 0),
  };
}

/** The date in the bench zone `days` after today there. */
function localDate(days = 0): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: ANALYTICS_BENCH_TIME_ZONE }).format(new Date());
  const date = new Date(`${parts}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------
// CPU (Linux /proc), as mcp-bench.ts takes it.

/** CPU-ms of the server and of the backends between two snapshots. */
function cpuMsBetween(before: CpuSnapshot | undefined, after: CpuSnapshot | undefined) {
  if (!before || !after) return undefined;
  let postgresTicks = 0;
  for (const [pid, ticks] of after.postgres) postgresTicks += ticks - (before.postgres.get(pid) ?? 0);
  const ms = (ticks: number) => ticks * (1000 / CLOCK_TICKS);
  return { server: ms(after.server - before.server), postgres: ms(postgresTicks) };
}

// ---------------------------------------------------------------------------
// HTTP.

interface Answer {
  readonly status: number;
  readonly body: string;
}

function send(
  url: URL,
  agent: http.Agent,
  request: { method: string; token: string; body?: unknown },
): Promise<Answer> {
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: request.method,
        agent,
        timeout: 30_000,
        headers: {
          authorization: `Bearer ${request.token}`,
          accept: 'application/json',
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
        },
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
    req.end(body);
  });
}

const sample = (body: string) => (body.length > 300 ? `${body.slice(0, 300)}…` : body);

async function expectStatus(answer: Promise<Answer>, statuses: readonly number[], what: string): Promise<Answer> {
  const got = await answer;
  if (!statuses.includes(got.status))
    throw new Error(`analytics bench: ${what} answered ${got.status}: ${sample(got.body)}`);
  return got;
}

// ---------------------------------------------------------------------------
// Seeding (SQL, except where a REST write is what is measured).

/** Profile inputs every model reads: the same for every bench user. */
async function seedProfile(pool: pg.Pool, userId: string): Promise<void> {
  await pool.query(
    `UPDATE users SET time_zone = $2, weight_kg = 70, ftp_watts = 250, resting_hr = 48, threshold_hr = 170 WHERE id = $1`,
    [userId, ANALYTICS_BENCH_TIME_ZONE],
  );
}

/**
 * `count` workouts 26 hours apart, the latest on `endDate` at 06:00 UTC: a
 * third with power, a third with heart rate only, a third (runs) with neither,
 * so every way of scoring training stress is exercised.
 */
async function seedWorkouts(pool: pg.Pool, userId: string, endDate: string, count: number, spacingHours: number) {
  const { rowCount } = await pool.query(
    `INSERT INTO workouts (user_id, file_sha256, file_size, name, source, sport, start_time, local_date,
                           elapsed_secs, moving_secs, avg_hr, avg_power, normalized_power)
     SELECT $1::uuid, encode(sha256(convert_to($1::uuid::text || ':analytics-bench:' || i, 'UTF8')), 'hex'), 1000,
            'Workout ' || i, 'bench', CASE WHEN i % 3 = 2 THEN 'running' ELSE 'cycling' END,
            s, (s AT TIME ZONE $5)::date, 3600 + (i % 4) * 900, 3500 + (i % 4) * 900,
            CASE WHEN i % 3 < 2 THEN 135 + i % 20 END,
            CASE WHEN i % 3 = 0 THEN 180 + i % 40 END,
            CASE WHEN i % 3 = 0 THEN 195 + i % 40 END
       FROM generate_series(0, $3::int - 1) AS i,
            LATERAL (SELECT ($2::date + time '06:00') AT TIME ZONE 'UTC' - i * $4::int * interval '1 hour' AS s) AS start
     ON CONFLICT (user_id, file_sha256) DO NOTHING`,
    [userId, endDate, count, spacingHours, ANALYTICS_BENCH_TIME_ZONE],
  );
  return rowCount ?? 0;
}

/** A year of data ending at `endDate` (YEAR), in three statements; nothing is recomputed here. */
async function seedYear(pool: pg.Pool, userId: string, endDate: string) {
  await seedProfile(pool, userId);
  const wellness = await pool.query(
    `INSERT INTO wellness (user_id, date, hrv, resting_hr, sleep_secs)
     SELECT $1, $2::date - d, 50 + d % 10, 48 + d % 4, 27000 + (d % 5) * 900 FROM generate_series(0, $3::int - 1) AS d
     ON CONFLICT (user_id, date) DO NOTHING`,
    [userId, endDate, YEAR.wellnessDays],
  );
  const workouts = await seedWorkouts(pool, userId, endDate, YEAR.workouts, 26);
  // One log per day, 2000 items spread over the days at 06:00, 08:30, ... UTC (same local date in Berlin).
  const meals = await pool.query(
    `WITH logs AS (
       INSERT INTO nutrition_logs (user_id, date, source)
       SELECT $1, $2::date - d, 'analytics-bench' FROM generate_series(0, $3::int - 1) AS d
       RETURNING id, date)
     INSERT INTO nutrition_items (log_id, user_id, position, name, carbs, protein, fat, calories,
                                  logged_at, logged_at_offset_minutes, absorption_type)
     SELECT l.id, $1, j / $3::int, 'Meal ' || j, 20 + j % 60, 10, 5, (20 + j % 60) * 4 + 85,
            (l.date + time '06:00' + (j / $3::int) * interval '150 minutes') AT TIME ZONE 'UTC', 0,
            (ARRAY['RAPID', 'FAST', 'BALANCED', 'DENSE', 'HYPER_LOAD'])[1 + j % 5]
       FROM generate_series(0, $4::int - 1) AS j JOIN logs l ON l.date = $2::date - j % $3::int`,
    [userId, endDate, YEAR.wellnessDays, YEAR.mealItems],
  );
  return { wellnessDays: wellness.rowCount ?? 0, workouts, mealItems: meals.rowCount ?? 0 };
}

async function storedDaysOf(pool: pg.Pool, userId: string) {
  const { rows } = await pool.query<{ load: number; recovery: number; fuel: number }>(
    `SELECT (SELECT count(*)::int FROM daily_training_load WHERE user_id = $1) AS load,
            (SELECT count(*)::int FROM daily_recovery WHERE user_id = $1) AS recovery,
            (SELECT count(*)::int FROM fuel_days WHERE user_id = $1) AS fuel`,
    [userId],
  );
  return rows[0] ?? { load: 0, recovery: 0, fuel: 0 };
}

/** Until none of the users has a change record left (a run deletes them as it stores its numbers). */
async function waitSettled(options: AnalyticsBenchOptions, userIds: readonly string[]): Promise<number> {
  const started = performance.now();
  for (;;) {
    const { rows } = await options.pool.query<{ pending: number }>(
      `SELECT count(*)::int AS pending FROM derived_changes WHERE user_id = ANY($1::uuid[])`,
      [userIds],
    );
    if ((rows[0]?.pending ?? 0) === 0) return performance.now() - started;
    if (performance.now() - started > SETTLE_TIMEOUT_MS || options.interrupted?.())
      throw new Error(
        `analytics bench: recomputes of ${userIds.length} user(s) not settled after ${SETTLE_TIMEOUT_MS} ms`,
      );
    await sleep(SETTLE_POLL_MS);
  }
}

// ---------------------------------------------------------------------------
// 1. The fuel timeline.

async function measureTimeline(options: AnalyticsBenchOptions): Promise<TimelineFigures> {
  const user = options.fuelUser;
  const from = localDate(-(TIMELINE_DAYS - 1));
  const to = localDate(0);
  await seedProfile(options.pool, user.id);
  // Workouts first (SQL writes ask for no recompute); the nutrition writes then ask for one covering both.
  await seedWorkouts(
    options.pool,
    user.id,
    to,
    TIMELINE_WORKOUTS,
    Math.floor((TIMELINE_DAYS * 24) / TIMELINE_WORKOUTS),
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const url = (path: string) => new URL(path, options.serverUrl);
  try {
    let written = 0;
    for (let day = 0; day < TIMELINE_DAYS; day++) {
      const date = localDate(-(TIMELINE_DAYS - 1) + day);
      const count = Math.floor(((day + 1) * TIMELINE_MEALS) / TIMELINE_DAYS) - written;
      const items = Array.from({ length: count }, (_, index) => {
        const n = written + index;
        const minutes = 5 * 60 + Math.round((index * 16 * 60) / count); // 05:00 .. 21:00 UTC
        const time = `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
        return {
          name: `Item ${n}`,
          carbs: 10 + (n % 70),
          protein: 5,
          fat: 3,
          calories: (10 + (n % 70)) * 4 + 47,
          logged_at: `${date}T${time}:00+00:00`,
          absorptionType: ABSORPTION_TYPES[n % ABSORPTION_TYPES.length],
        };
      });
      written += count;
      await expectStatus(
        send(url('/api/nutrition'), agent, { method: 'POST', token: user.token, body: { date, items } }),
        [200, 201],
        'POST /api/nutrition',
      );
    }
    const settleMs = await waitSettled(options, [user.id]);

    const target = url(`/api/fuel/timeline?from=${from}&to=${to}`);
    const probe = await expectStatus(
      send(target, agent, { method: 'GET', token: user.token }),
      [200],
      'GET /api/fuel/timeline',
    );
    const timeline = JSON.parse(probe.body) as { points: unknown[]; meals: unknown[]; workouts: unknown[] };
    if (timeline.meals.length !== TIMELINE_MEALS || timeline.workouts.length !== TIMELINE_WORKOUTS) {
      throw new Error(
        `analytics bench: the timeline shows ${timeline.meals.length} meals and ${timeline.workouts.length} workouts, not ${TIMELINE_MEALS} and ${TIMELINE_WORKOUTS}`,
      );
    }

    const requests = options.timelineRequests ?? 200;
    let errors = 0;
    let firstError: string | undefined;
    const loop = async (count: number) => {
      const samples: number[] = [];
      for (let i = 0; i < count && !options.interrupted?.(); i++) {
        const t0 = performance.now();
        try {
          const answer = await send(target, agent, { method: 'GET', token: user.token });
          samples.push(performance.now() - t0);
          if (answer.status !== 200) {
            errors += 1;
            firstError ??= `GET /api/fuel/timeline ${answer.status}: ${sample(answer.body)}`;
          }
        } catch (error) {
          errors += 1;
          firstError ??= String(error);
        }
      }
      return samples;
    };
    await loop(Math.max(10, Math.round(requests / 10)));
    const runs: TimelineFigures['runs'][number][] = [];
    for (let run = 0; run < (options.runs ?? 3) && !options.interrupted?.(); run++) {
      const before = await cpuSnapshot(options);
      const samples = await loop(requests);
      const cpu = cpuMsBetween(before, await cpuSnapshot(options));
      runs.push({
        ...summarize(samples),
        serverCpuMs: cpu && samples.length > 0 ? round(cpu.server / samples.length, 3) : undefined,
      });
    }
    return {
      days: TIMELINE_DAYS,
      meals: timeline.meals.length,
      workouts: timeline.workouts.length,
      points: timeline.points.length,
      bytes: Buffer.byteLength(probe.body),
      settleMs: round(settleMs, 0),
      runs,
      p50: spreadOf(runs.map((run) => run.p50)),
      errors,
      firstError,
    };
  } finally {
    agent.destroy();
  }
}

// ---------------------------------------------------------------------------
// 2. The full recompute of a year.

/** The worker's whole recompute (load, recovery, fuel, recommendations) from the first data, in one transaction. */
async function recomputeEverything(db: Db, userId: string): Promise<void> {
  await db.transaction().execute((trx) => recomputeFrom(trx, userId, FROM_THE_BEGINNING, new Date()));
}

async function timeOnce(run: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await run();
  return performance.now() - t0;
}

async function measureRecompute(options: AnalyticsBenchOptions, db: Db): Promise<RecomputeFigures> {
  const userId = options.yearUser.id;
  const today = localDate(0);
  const seeded = await seedYear(options.pool, userId, today);
  const runs = options.runs ?? 3;
  const inProcess: number[] = [];
  const loadAndRecovery: number[] = [];
  const fuel: number[] = [];
  // One unmeasured run first: it writes the stored days the measured runs then replace.
  await recomputeEverything(db, userId);
  for (let run = 0; run < runs && !options.interrupted?.(); run++) {
    inProcess.push(await timeOnce(() => recomputeEverything(db, userId)));
    loadAndRecovery.push(
      await timeOnce(() =>
        db
          .transaction()
          .execute((trx) =>
            recomputeLoadAndRecovery(
              trx,
              userId,
              { trainingLoad: FROM_THE_BEGINNING, recovery: FROM_THE_BEGINNING },
              new Date(),
            ),
          ),
      ),
    );
    fuel.push(
      await timeOnce(() =>
        db.transaction().execute((trx) => recomputeFuel(trx, userId, FROM_THE_BEGINNING, new Date())),
      ),
    );
  }
  const storedDays = await storedDaysOf(options.pool, userId);

  // Through the server: a profile change asks for everything; its worker serves it.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const worker: number[] = [];
  try {
    for (let run = 0; run < runs && !options.interrupted?.(); run++) {
      const t0 = performance.now();
      await expectStatus(
        send(new URL('/api/profile', options.serverUrl), agent, {
          method: 'PATCH',
          token: options.yearUser.token,
          body: { weight: 70 + (run + 1) / 10 },
        }),
        [200],
        'PATCH /api/profile',
      );
      await waitSettled(options, [userId]);
      worker.push(performance.now() - t0);
    }
  } finally {
    agent.destroy();
  }
  return {
    seeded,
    storedDays,
    inProcessMs: spreadOf(inProcess),
    loadAndRecoveryMs: spreadOf(loadAndRecovery),
    fuelMs: spreadOf(fuel),
    workerMs: spreadOf(worker),
  };
}

// ---------------------------------------------------------------------------
// 3. Recompute lag at a steady write rate.

interface LagWrite {
  readonly user: AnalyticsBenchUser;
  readonly date: string;
  readonly sleepSecs: number;
  ackAt: number | undefined;
  servedAt: number | undefined;
}

async function measureLag(options: AnalyticsBenchOptions, db: Db): Promise<LagFigures> {
  const users = options.lagUsers;
  const rate = options.lagRate ?? 50;
  const durationS = options.lagDurationS ?? 30;
  const today = localDate(0);
  const dates = Array.from({ length: LAG_DATES }, (_, index) => localDate(-index));
  // Each user starts with a year of data already computed, as an athlete who has used the service for a while.
  for (const user of users) {
    await seedYear(options.pool, user.id, today);
    await recomputeEverything(db, user.id);
  }

  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const writes: LagWrite[] = [];
  /** Writes per (user, date), in the order sent (one date of one user is written every `users × LAG_DATES / rate` s). */
  const byDay = new Map<string, LagWrite[]>();
  const sendMs: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const fail = (message: string) => {
    errors += 1;
    firstError ??= message;
  };
  const total = Math.round(rate * durationS);
  const cpuBefore = await cpuSnapshot(options);
  const started = performance.now();
  let sending = true;

  // The poller: every POLL_MS, the recovery rows of the days with a write not yet seen.
  const poller = (async () => {
    while (!options.interrupted?.()) {
      const pending = [...byDay.entries()].filter(([, list]) =>
        list.some((w) => w.ackAt !== undefined && w.servedAt === undefined),
      );
      if (pending.length === 0 && !sending) return;
      if (pending.length > 0) {
        const keys = pending.map(([key]) => key.split('|') as [string, string]);
        const { rows } = await options.pool.query<{ user_id: string; date: string; sleep: number | null }>(
          `SELECT r.user_id::text AS user_id, r.date::text AS date, (r.components->'sleep'->>'value')::float8 AS sleep
             FROM daily_recovery r
             JOIN unnest($1::uuid[], $2::date[]) AS p(user_id, date) ON r.user_id = p.user_id AND r.date = p.date`,
          [keys.map(([userId]) => userId), keys.map(([, date]) => date)],
        );
        const seenAt = performance.now();
        for (const row of rows) {
          const list = byDay.get(`${row.user_id}|${row.date}`) ?? [];
          const shown = list.findIndex((w) => w.sleepSecs === row.sleep);
          // The row shows this write or a later one to the same day: every write up to it is in the derived data.
          for (let i = 0; i <= shown; i++) {
            const write = list[i];
            if (write && write.ackAt !== undefined && write.servedAt === undefined) write.servedAt = seenAt;
          }
        }
      }
      if (!sending && performance.now() - started > durationS * 1000 + SERVE_TIMEOUT_MS) return;
      await sleep(POLL_MS);
    }
  })();

  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total && !options.interrupted?.(); i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const user = users[i % users.length] as AnalyticsBenchUser;
    const nth = Math.floor(i / users.length);
    const write: LagWrite = {
      user,
      date: dates[nth % dates.length] as string,
      // Unique per write: the recovery row's sleep value tells which write it was computed from.
      sleepSecs: 20_000 + i,
      ackAt: undefined,
      servedAt: undefined,
    };
    writes.push(write);
    const key = `${user.id}|${write.date}`;
    byDay.set(key, [...(byDay.get(key) ?? []), write]);
    const t0 = performance.now();
    inFlight.push(
      send(new URL('/api/wellness', options.serverUrl), agent, {
        method: 'POST',
        token: user.token,
        body: { date: write.date, hrv: 45 + (i % 15), restingHr: 47 + (i % 5), sleepSecs: write.sleepSecs },
      }).then(
        (answer) => {
          sendMs.push(performance.now() - t0);
          if (answer.status === 200 || answer.status === 201) write.ackAt = performance.now();
          else fail(`POST /api/wellness ${answer.status}: ${sample(answer.body)}`);
        },
        (error: unknown) => fail(String(error)),
      ),
    );
  }
  await Promise.all(inFlight);
  const sentS = (performance.now() - started) / 1000;
  // CPU over the sending window: the wait for stragglers after it would only dilute it.
  const cpu = cpuMsBetween(cpuBefore, await cpuSnapshot(options));
  const lastAck = Math.max(...writes.map((w) => w.ackAt ?? 0));
  sending = false;
  await poller;
  agent.destroy();

  let drainMs: number | undefined;
  try {
    await waitSettled(
      options,
      users.map((user) => user.id),
    );
    drainMs = round(performance.now() - lastAck, 0);
  } catch {
    drainMs = undefined;
  }
  const acked = writes.filter((w) => w.ackAt !== undefined);
  const lag = acked.flatMap((w) => (w.servedAt === undefined || w.ackAt === undefined ? [] : [w.servedAt - w.ackAt]));
  const wallMs = sentS * 1000;
  return {
    users: users.length,
    targetRate: rate,
    durationS,
    writes: writes.length,
    achievedRate: round(writes.length / sentS, 1),
    writeMs: summarize(sendMs),
    writeErrors: errors,
    firstError,
    lagMs: summarize(lag),
    unserved: acked.length - lag.length,
    slowWrites: lag.filter((ms) => ms > SLOW_START_MS).length,
    drainMs,
    serverCpuPercent: cpu ? round((cpu.server / wallMs) * 100, 0) : undefined,
    postgresCpuPercent: cpu ? round((cpu.postgres / wallMs) * 100, 0) : undefined,
  };
}

// ---------------------------------------------------------------------------

export async function runAnalyticsBench(options: AnalyticsBenchOptions): Promise<AnalyticsBenchResult> {
  const db = createDb(options.pool);
  const timeline = await measureTimeline(options);
  const recompute = await measureRecompute(options, db);
  const lag = await measureLag(options, db);
  return {
    timeZone: ANALYTICS_BENCH_TIME_ZONE,
    timeline,
    recompute,
    lag,
    errors: timeline.errors + lag.writeErrors + lag.unserved,
  };
}

/** The human-readable lines of a run (for `npm run bench`). */
export function analyticsBenchLines(result: AnalyticsBenchResult): string[] {
  const spread = (s: Spread) => `${s.min} / ${s.median} / ${s.max}`;
  const t = result.timeline;
  const r = result.recompute;
  const l = result.lag;
  const row = (label: string, value: string, detail: string) =>
    `    ${label.padEnd(44)} ${value.padStart(22)}   ${detail}`;
  return [
    `    users in ${result.timeZone}; min / median / max over ${t.runs.length} runs`,
    row('', 'ms min / med / max', ''),
    row(
      `fuel timeline, ${t.days} days (${t.meals} meals, ${t.workouts} workouts)`,
      spread(t.p50),
      `p50 of ${t.runs[0]?.count ?? 0} sequential GETs per run; ${t.points} points, ${Math.round(t.bytes / 1024)} KiB; p99 ${t.runs.map((run) => run.p99).join(' / ')} ms; server CPU/request ${t.runs.map((run) => run.serverCpuMs ?? '?').join(' / ')} ms; inputs settled ${t.settleMs} ms after the last write; errors ${t.errors}`,
    ),
    ...(t.firstError ? [`      first error: ${t.firstError}`] : []),
    row(
      `recomputeFrom, a year (in process)`,
      spread(r.inProcessMs),
      `${r.seeded.wellnessDays} wellness days, ${r.seeded.workouts} workouts, ${r.seeded.mealItems} meal items -> ${r.storedDays.load} load, ${r.storedDays.recovery} recovery, ${r.storedDays.fuel} fuel days`,
    ),
    row(`  of it: training load + recovery`, spread(r.loadAndRecoveryMs), ''),
    row(`  of it: fuel`, spread(r.fuelMs), ''),
    row(`  through the worker (PATCH profile -> settled)`, spread(r.workerMs), ''),
    row(
      `lag, ${l.targetRate} writes/s x ${l.durationS} s, ${l.users} users`,
      `p50 ${l.lagMs.p50} / p95 ${l.lagMs.p95}`,
      `p99 ${l.lagMs.p99}, max ${l.lagMs.max} ms, ${l.slowWrites} writes over ${SLOW_START_MS} ms; ${l.writes} writes (${l.achievedRate}/s, write p50 ${l.writeMs.p50} / p99 ${l.writeMs.p99} ms, errors ${l.writeErrors}), ${l.unserved} unserved; drained ${l.drainMs ?? '?'} ms after the last write; CPU server ${l.serverCpuPercent ?? '?'} %, postgres ${l.postgresCpuPercent ?? '?'} %`,
    ),
    ...(l.firstError ? [`      first error: ${l.firstError}`] : []),
  ];
}

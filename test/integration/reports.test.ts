import { createHash } from 'node:crypto';
import type { Report, ReportPage, ReportType } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { AppError } from '../../server/src/errors.ts';
import { createLogger } from '../../server/src/logger.ts';
import { listRecovery, listTrainingLoad } from '../../server/src/modules/derived/analytics.repository.ts';
import { FROM_THE_BEGINNING } from '../../server/src/modules/changes/changes.repository.ts';
import { recomputeFrom } from '../../server/src/modules/derived/recompute.service.ts';
import { findUserAsyncJob, insertAsyncJob } from '../../server/src/modules/async-jobs/async-jobs.repository.ts';
import {
  runAsyncJob,
  type AsyncJobRunContext,
  type AsyncJobRunner,
} from '../../server/src/modules/async-jobs/async-jobs.service.ts';
import { listFuelDays } from '../../server/src/modules/derived/fuel.repository.ts';
import { actorOfPrincipal } from '../../server/src/http/bearer-auth.ts';
import type { Actor } from '../../server/src/lib/actor.ts';
import { checkAccessToken } from '../../server/src/modules/oauth/token.service.ts';
import { runReportJob } from '../../server/src/modules/reports/report-generation.service.ts';
import { findUserReport } from '../../server/src/modules/reports/reports.repository.ts';
import { getReport, listReportPage } from '../../server/src/modules/reports/reports.service.ts';
import { upsertWellness } from '../../server/src/modules/wellness/wellness.repository.ts';
import { upsertWorkout, type NewWorkoutRow } from '../../server/src/modules/workouts/workouts.repository.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { waitForRecompute } from '../support/recompute.ts';
import { asProblem, call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const TIME_ZONE = 'Europe/Berlin';
/** A Friday: weekly reports cover Sat 2026-11-14 .. Fri 2026-11-20. */
const END_DATE = '2026-11-20';

let server: TestServer;
let athlete: User;
let token: string;
let actor: Actor;
let rival: User;
let rivalActor: Actor;

const notExercised: AsyncJobRunner = () => Promise.reject(new Error('only report jobs run in this file'));
const runners = { report: runReportJob, trigger_run: notExercised, structure_generation: notExercised };
const logger = createLogger('silent');

async function actorOfToken(accessToken: string): Promise<Actor> {
  const check = await checkAccessToken(server.db, accessToken);
  if (!check.ok) throw new Error(`token refused: ${check.reason}`);
  return actorOfPrincipal(check.principal);
}

/** A workout row as the FIT upload would store it; the file hash only has to be unique. */
async function seedWorkout(
  user: User,
  fields: Partial<NewWorkoutRow> & Pick<NewWorkoutRow, 'startTime' | 'localDate'>,
) {
  const startTime = new Date(fields.startTime);
  const sha = createHash('sha256')
    .update(`${user.id}:${startTime.toISOString()}:${String(fields.name)}`)
    .digest('hex');
  return upsertWorkout(
    server.db,
    { userId: user.id, fileSha256: sha, fileSize: 1000, name: 'Workout', source: 'test', sport: 'cycling', ...fields },
    {},
  );
}

/** Record a report job as `generate_report` would, and work it as the worker does. */
async function runReport(user: User, input: Record<string, unknown>) {
  const job = await insertAsyncJob(server.db, { userId: user.id, clientId: 'test-client', type: 'report', input });
  const outcome = await runAsyncJob(server.db, job.id, {
    boss: server.runtime.boss,
    config: server.config,
    runners,
    lastAttempt: true,
    logger,
  });
  const stored = await findUserAsyncJob(server.db, user.id, 'report', job.id);
  return { id: job.id, outcome, job: stored };
}

async function expectAppError(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
}

beforeAll(async () => {
  server = await startTestServer();
  athlete = await makeUser(server.db, { timeZone: TIME_ZONE });
  token = (await mintToken(server.db, athlete, { scopes: ['analysis:read', 'health:write', 'nutrition:write'] })).token;
  actor = await actorOfToken(token);
  rival = await makeUser(server.db, { timeZone: TIME_ZONE });
  rivalActor = await actorOfToken((await mintToken(server.db, rival, { scopes: ['analysis:read'] })).token);

  // The athlete's week, through the REST API where there is one.
  for (const day of [
    { date: '2026-11-14', hrv: 58, restingHr: 51, sleepSecs: 25200 },
    { date: '2026-11-16', hrv: 63.5, restingHr: 49, sleepSecs: 27000 },
    { date: '2026-11-19', restingHr: 50 },
    { date: '2026-11-10', hrv: 90, restingHr: 40, sleepSecs: 36000 },
  ]) {
    const res = await call(server.url, 'POST', '/api/wellness', { token, body: day });
    expect(res.status).toBe(201);
  }
  for (const [date, items] of [
    [
      '2026-11-15',
      [
        { name: 'Oats', carbs: 60, protein: 12, fat: 8, calories: 360, logged_at: '2026-11-15T07:30:00+01:00' },
        { name: 'Pasta', carbs: 110, protein: 25, fat: 12, calories: 640, logged_at: '2026-11-15T19:00:00+01:00' },
      ],
    ],
    [
      '2026-11-18',
      [{ name: 'Rice', carbs: 90, protein: 10, fat: 4, calories: 430, logged_at: '2026-11-18T12:00:00+01:00' }],
    ],
    [
      '2026-11-21',
      [{ name: 'Cake', carbs: 500, protein: 1, fat: 1, calories: 2000, logged_at: '2026-11-21T16:00:00+01:00' }],
    ],
  ] as const) {
    const res = await call(server.url, 'POST', '/api/nutrition', { token, body: { date, items } });
    expect(res.status).toBe(201);
  }
  await seedWorkout(athlete, {
    name: 'Long ride',
    sport: 'cycling',
    startTime: '2026-11-15T08:00:00Z',
    localDate: '2026-11-15',
    elapsedSecs: 10800,
    movingSecs: 10200,
    distanceMeters: 90500,
    ascentMeters: 820,
    avgHr: 138,
    avgPower: 190,
    normalizedPower: 205,
    trainingStress: 150.4,
    calories: 2100,
  });
  await seedWorkout(athlete, {
    name: 'Intervals',
    sport: 'running',
    startTime: '2026-11-18T17:00:00Z',
    localDate: '2026-11-18',
    elapsedSecs: 3000,
    distanceMeters: 10000,
    ascentMeters: 30,
    avgHr: 155,
    trainingStress: 70,
  });
  await seedWorkout(athlete, {
    name: 'Last week',
    sport: 'cycling',
    startTime: '2026-11-12T08:00:00Z',
    localDate: '2026-11-12',
    elapsedSecs: 3600,
    trainingStress: 50,
  });
  await seedWorkout(athlete, {
    name: 'Next week',
    sport: 'cycling',
    startTime: '2026-11-21T08:00:00Z',
    localDate: '2026-11-21',
    elapsedSecs: 3600,
  });
  // The rival's data must never show up in the athlete's reports.
  await seedWorkout(rival, {
    name: 'Rival',
    startTime: '2026-11-17T08:00:00Z',
    localDate: '2026-11-17',
    elapsedSecs: 999,
  });
  // Four weeks of history before the week, so recovery has baselines and scores days of the week.
  for (let day = 5; day <= 32; day += 1) {
    const date = new Date(Date.UTC(2026, 10, 14 - day)).toISOString().slice(0, 10);
    if (date === '2026-11-10') continue;
    await upsertWellness(server.db, {
      userId: athlete.id,
      date,
      values: { hrv: 55 + (day % 7), restingHr: 49 + (day % 3), sleepSecs: 27000 + (day % 4) * 900 },
      source: 'test',
      rawJson: undefined,
    });
  }
  const planner = (await mintToken(server.db, athlete, { scopes: ['planning:write'] })).token;
  const plan = { date: '2026-11-18', sport: 'ride', title: 'Evening ride', timeOfDay: '17:30', durationSecs: 3600 };
  expect((await call(server.url, 'POST', '/api/planned-workouts', { token: planner, body: plan })).status).toBe(201);
  // Nothing eaten on 11-19 before it, and no usual intake (2 logged days of the 14): `not_logged`, as the API says.
  const unfed = { date: '2026-11-19', sport: 'ride', title: 'Unfed ride', timeOfDay: '10:00', durationSecs: 3600 };
  expect((await call(server.url, 'POST', '/api/planned-workouts', { token: planner, body: unfed })).status).toBe(201);

  // The derived data as of a fixed day after the week, so the stored rows do not depend on the
  // clock; the worker first serves what the REST writes asked for, so nothing rewrites them after.
  await waitForRecompute(server.db, athlete.id);
  await server.db
    .transaction()
    .execute((trx) => recomputeFrom(trx, athlete.id, FROM_THE_BEGINNING, new Date('2026-11-21T12:00:00Z')));
});
afterAll(async () => {
  await server.stop();
});

describe('report jobs', () => {
  it('completes a WEEKLY_TRAINING job with its result and stores the report under the job id', async () => {
    const { id, outcome, job } = await runReport(athlete, { type: 'WEEKLY_TRAINING', end_date: END_DATE });
    expect(outcome).toBe('completed');
    expect(job).toMatchObject({
      status: 'completed',
      progress: null,
      result: {
        report_id: id,
        type: 'WEEKLY_TRAINING',
        title: 'Weekly training: 2026-11-14 to 2026-11-20',
        period_from: '2026-11-14',
        period_to: '2026-11-20',
      },
    });
    const report = await getReport(server.db, actor, id);
    expect(report).toMatchObject({
      id,
      type: 'WEEKLY_TRAINING',
      title: 'Weekly training: 2026-11-14 to 2026-11-20',
      periodFrom: '2026-11-14',
      periodTo: '2026-11-20',
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/) as string,
    });
    expect(report.data).toMatchObject({
      totals: { workouts: 2, durationSecs: 13800, distanceMeters: 100500, ascentMeters: 850, trainingStress: 220.4 },
      wellness: {
        hrv: { average: 60.8, days: 2 },
        restingHr: { average: 50, days: 3 },
        sleepSecs: { average: 26100, days: 2 },
      },
      possibleDuplicatesExcluded: 0,
    });
    expect(report.markdown).toContain('- Duration: 3:50 (h:mm)\n- Distance: 100.5 km\n- Ascent: 850 m');
    expect(report.markdown).toContain('| 2026-11-15 | Sun | 1 | 3:00 | 90.5 km | 820 m | 150 |');
    expect(report.markdown).toContain('| Sleep | 7.3 h | 2 of 7 |');
  });

  it("adds the week's stored training load and recovery to WEEKLY_TRAINING", async () => {
    const { id, outcome } = await runReport(athlete, { type: 'WEEKLY_TRAINING', end_date: END_DATE });
    expect(outcome).toBe('completed');
    const report = await getReport(server.db, actor, id);
    const load = await listTrainingLoad(server.db, athlete.id, '2026-11-14', END_DATE);
    const recovery = await listRecovery(server.db, athlete.id, {
      from: '2026-11-14',
      to: END_DATE,
      after: undefined,
      limit: 7,
    });
    expect(load.map((day) => day.date)).toHaveLength(7);
    const last = load.at(-1);
    const round1 = (value: number) => Math.round(value * 10) / 10;
    const weekTss = round1(load.reduce((total, day) => total + day.tss, 0));
    // The long ride and the intervals are in the week: both are scored.
    expect(weekTss).toBeGreaterThan(0);
    expect(report.data['trainingLoad']).toEqual({
      days: 7,
      trainingStress: weekTss,
      endOfWeek: {
        date: END_DATE,
        ctl: round1(last?.ctl ?? NaN),
        atl: round1(last?.atl ?? NaN),
        tsb: round1(last?.tsb ?? NaN),
      },
    });
    expect(report.markdown).toContain('On 2026-11-20, the last day of the week:');
    expect(report.markdown).toContain(`- Training stress of the week: ${weekTss.toFixed(0)} (7 of 7 days stored)`);

    expect(recovery).toHaveLength(7);
    // With the history behind it, the 16th (HRV, resting heart rate and sleep) has a score.
    const scored = recovery.find((day) => day.date === '2026-11-16');
    expect(scored?.score).toEqual(expect.any(Number));
    expect(report.markdown).toContain(
      `| 2026-11-16 | Mon | ${(scored?.score ?? NaN).toFixed(0)} | ${scored?.status ?? ''} |`,
    );
    const latest = recovery.at(-1);
    expect(report.data['recovery']).toEqual({
      days: recovery.map((day) => ({ date: day.date, score: day.score, status: day.status })),
      latest: { date: END_DATE, score: latest?.score, status: latest?.status, explanation: latest?.explanation },
    });
    expect(report.markdown).toContain('| Date | Day | Score | Status |');
    expect(report.markdown).toContain(`Latest (2026-11-20): ${latest?.explanation ?? ''}`);
  });

  it('adds the stored fuel timeline of the week and its planned workout to WEEKLY_NUTRITION', async () => {
    const { id, outcome } = await runReport(athlete, { type: 'WEEKLY_NUTRITION', end_date: END_DATE });
    expect(outcome).toBe('completed');
    const report = await getReport(server.db, actor, id);
    const fuel = report.data['fuel'] as {
      capacityG: number;
      days: { date: string; lowestPercent: number | null; lowestTotalG: number | null }[];
      plannedWorkouts: { title: string; start: string; startPercent: number; status: string }[];
    };
    // No weight in the profile or wellness: the model's 70 kg, 100 g liver + 420 g muscle.
    expect(fuel.capacityG).toBe(520);
    const stored = await listFuelDays(server.db, athlete.id, '2026-11-14', END_DATE);
    expect(stored).toHaveLength(7);
    const round1 = (value: number) => Math.round(value * 10) / 10;
    expect(fuel.days.map((day) => day.lowestTotalG)).toEqual(
      stored.map((day) => round1(Math.min(...day.points.map(([, liverG, muscleG]) => liverG + muscleG)))),
    );
    const lowest = new Map(fuel.days.map((day) => [day.date, day.lowestPercent ?? NaN]));
    expect(fuel.days.map((day) => day.date)).toEqual(stored.map((day) => day.date));
    // The 3-hour ride of Sunday drains more than Saturday, a rest day without food logged (kept level).
    expect(lowest.get('2026-11-15')).toBeLessThan(lowest.get('2026-11-14') ?? NaN);

    const startAt = Date.parse('2026-11-18T17:30:00+01:00');
    const point = stored.find((day) => day.date === '2026-11-18')?.points.find(([at]) => at === startAt);
    expect(point).toBeDefined();
    expect(fuel.plannedWorkouts).toEqual([
      expect.objectContaining({
        title: 'Evening ride',
        start: '2026-11-18T17:30:00+01:00',
        startPercent: round1((((point?.[1] ?? NaN) + (point?.[2] ?? NaN)) / 520) * 100),
        status: expect.stringMatching(/^(ready|top_up|at_risk)$/) as string,
      }),
      expect.objectContaining({ title: 'Unfed ride', status: 'not_logged', limitingStore: null }),
    ]);
    // The stored day had no usual intake, and nothing with carbohydrate was logged on it: the API's rule.
    expect(stored.find((day) => day.date === '2026-11-19')?.usualIntake).toBe(false);
    expect(report.markdown).toMatch(/\| 2026-11-19 \| 10:00 \| Unfed ride \| 1:00 \| \d+ % \| \d+ % \| not logged/);
    expect(report.markdown).toContain('## Fuel');
    expect(report.markdown).toMatch(
      /\| 2026-11-18 \| 17:30 \| Evening ride \| 1:00 \| \d+ % \| \d+ % \| (ready|top up|at risk) \|/,
    );
  });

  it('completes a LAST_3_WORKOUTS job with the latest workouts on or before the end date', async () => {
    const { id, outcome, job } = await runReport(athlete, { type: 'LAST_3_WORKOUTS', end_date: END_DATE });
    expect(outcome).toBe('completed');
    expect(job?.result).toEqual({
      report_id: id,
      type: 'LAST_3_WORKOUTS',
      title: 'Last 3 workouts up to 2026-11-20',
      period_from: '2026-11-12',
      period_to: '2026-11-20',
    });
    const report = await getReport(server.db, actor, id);
    expect((report.data['workouts'] as { name: string }[]).map((workout) => workout.name)).toEqual([
      'Intervals',
      'Long ride',
      'Last week',
    ]);
    expect(report.markdown).toContain('## 2. Long ride (2026-11-15)');
    expect(report.markdown).toContain('- Power: 190 W average, 205 W normalized');
  });

  it('completes a WEEKLY_NUTRITION job with daily totals and averages of the logged days', async () => {
    const { id, outcome } = await runReport(athlete, { type: 'WEEKLY_NUTRITION', end_date: END_DATE });
    expect(outcome).toBe('completed');
    const report = await getReport(server.db, actor, id);
    expect(report.data).toMatchObject({
      loggedDays: 2,
      totals: { calories: 1430, carbs: 260, protein: 47, fat: 24 },
      averages: { calories: 715, carbs: 130, protein: 23.5, fat: 12 },
    });
    expect(report.markdown).toContain('| 2026-11-15 | Sun | 1000 kcal | 170 g | 37 g | 20 g |');
    expect(report.markdown).toContain('| 2026-11-17 | Tue | not logged | – | – | – |');
  });

  it('looks back through the whole history and lists fewer when fewer than three workouts exist', async () => {
    const { id, outcome } = await runReport(rival, { type: 'LAST_3_WORKOUTS', end_date: '2027-12-31' });
    expect(outcome).toBe('completed');
    const report = await getReport(server.db, rivalActor, id);
    expect(report).toMatchObject({ periodFrom: '2026-11-17', periodTo: '2027-12-31' });
    expect(report.markdown).toContain('Only 1 workout was recorded on or before 2027-12-31, newest first.');
    expect(report.markdown).toContain('## 1. Rival (2026-11-17)');
  });

  it('makes a valid report that says so when the period has no data', async () => {
    const { id, outcome } = await runReport(athlete, { type: 'WEEKLY_TRAINING', end_date: '2025-06-30' });
    expect(outcome).toBe('completed');
    const report = await getReport(server.db, actor, id);
    expect(report.markdown).toContain('No workouts recorded between 2025-06-24 and 2025-06-30.');
    expect(report.markdown).toContain('No wellness data recorded between 2025-06-24 and 2025-06-30.');
  });

  it('gives the same Markdown and data when run again on the same stored data', async () => {
    for (const type of ['WEEKLY_TRAINING', 'LAST_3_WORKOUTS', 'WEEKLY_NUTRITION'] satisfies ReportType[]) {
      const first = await runReport(athlete, { type, end_date: END_DATE });
      const second = await runReport(athlete, { type, end_date: END_DATE });
      const [a, b] = await Promise.all([getReport(server.db, actor, first.id), getReport(server.db, actor, second.id)]);
      expect(b.markdown).toBe(a.markdown);
      expect(b.data).toEqual(a.data);
      expect(b.title).toBe(a.title);
    }
  });

  it('reports progress in three steps and writes nothing until the completing transaction', async () => {
    const job = await insertAsyncJob(server.db, {
      userId: athlete.id,
      clientId: 'test-client',
      type: 'report',
      input: { type: 'WEEKLY_TRAINING', end_date: END_DATE },
    });
    const steps: [number, number][] = [];
    const context: AsyncJobRunContext = {
      db: server.db,
      boss: server.runtime.boss,
      config: server.config,
      job,
      logger,
      progress: (step, total) => {
        steps.push([step, total]);
        return Promise.resolve();
      },
    };
    const outcome = await runReportJob(context);
    expect(steps).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(await findUserReport(server.db, athlete.id, job.id)).toBeUndefined();
    await server.db.transaction().execute(async (trx) => outcome.write?.(trx));
    expect(await findUserReport(server.db, athlete.id, job.id)).toMatchObject({ id: job.id, type: 'WEEKLY_TRAINING' });
  });

  it('fails a job whose input has no end date, with the reason', async () => {
    const { outcome, job } = await runReport(athlete, { type: 'WEEKLY_TRAINING' });
    expect(outcome).toBe('failed');
    expect(job).toMatchObject({ status: 'failed', error: expect.stringContaining('end_date') as string });
  });

  it("counts only the period's rows for a user with a year of data", async () => {
    const busy = await makeUser(server.db, { timeZone: TIME_ZONE });
    for (let day = 0; day < 365; day += 1) {
      const date = new Date(Date.UTC(2025, 10, 21 + day)).toISOString().slice(0, 10);
      await upsertWellness(server.db, {
        userId: busy.id,
        date,
        values: { hrv: 50 + (day % 10), restingHr: 50, sleepSecs: 28800 },
        source: 'test',
        rawJson: undefined,
      });
    }
    // 300 workouts 26 hours apart, the latest on the end date: 6 of them fall in its week.
    for (let index = 0; index < 300; index += 1) {
      const start = new Date(Date.UTC(2026, 10, 20, 7) - index * 26 * 3600_000);
      await seedWorkout(busy, {
        name: `Workout ${String(index)}`,
        startTime: start,
        localDate: start.toISOString().slice(0, 10),
        elapsedSecs: 3600,
        trainingStress: 50,
      });
    }
    const busyPrincipal = { ...actor, userId: busy.id };
    const weekly = await runReport(busy, { type: 'WEEKLY_TRAINING', end_date: END_DATE });
    const weeklyReport = await getReport(server.db, busyPrincipal, weekly.id);
    expect(weeklyReport.data).toMatchObject({
      totals: { workouts: 6, durationSecs: 21600, distanceMeters: 0, ascentMeters: 0, trainingStress: 300 },
      // HRV of the last 7 days: 58, 59, 50, 51, 52, 53, 54.
      wellness: { hrv: { average: 53.9, days: 7 }, restingHr: { average: 50, days: 7 } },
    });
    const latest = await runReport(busy, { type: 'LAST_3_WORKOUTS', end_date: END_DATE });
    const latestReport = await getReport(server.db, busyPrincipal, latest.id);
    expect((latestReport.data['workouts'] as { localDate: string }[]).map((workout) => workout.localDate)).toEqual([
      '2026-11-20',
      '2026-11-19',
      '2026-11-18',
    ]);
  });
});

describe('reading reports (services)', () => {
  it("answers not_found for another user's report and for an unknown id", async () => {
    const { id } = await runReport(athlete, { type: 'LAST_3_WORKOUTS', end_date: END_DATE });
    await expectAppError(getReport(server.db, rivalActor, id), 'not_found');
    await expectAppError(getReport(server.db, actor, '00000000-0000-4000-8000-000000000000'), 'not_found');
    await expectAppError(getReport(server.db, actor, 'not-a-uuid'), 'not_found');
  });

  it('lists newest first, pages with the cursor without gaps or repeats, and filters by type', async () => {
    const all = await listReportPage(server.db, actor, { limit: 100 });
    expect(all.nextCursor).toBeNull();
    expect(all.items.length).toBeGreaterThanOrEqual(3);
    const created = all.items.map((item) => item.createdAt);
    expect([...created].sort().reverse()).toEqual(created);
    expect(all.items[0]).toEqual({
      id: expect.any(String) as string,
      type: expect.any(String) as string,
      title: expect.any(String) as string,
      periodFrom: expect.any(String) as string,
      periodTo: expect.any(String) as string,
      createdAt: expect.any(String) as string,
    });

    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page: ReportPage = await listReportPage(server.db, actor, { limit: 2, cursor });
      expect(page.items.length).toBeLessThanOrEqual(2);
      paged.push(...page.items.map((item) => item.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(paged).toEqual(all.items.map((item) => item.id));

    const nutrition = await listReportPage(server.db, actor, { type: 'WEEKLY_NUTRITION', limit: 100 });
    expect(nutrition.items.length).toBeGreaterThan(0);
    expect(nutrition.items.every((item) => item.type === 'WEEKLY_NUTRITION')).toBe(true);
  });

  it('pages through reports created within the same millisecond without skipping any', async () => {
    const writer = await makeUser(server.db, { timeZone: TIME_ZONE });
    const writerPrincipal = { ...actor, userId: writer.id };
    const ids: string[] = [];
    for (const microseconds of ['123401', '123402', '123403', '123404']) {
      const { id } = await runReport(writer, { type: 'LAST_3_WORKOUTS', end_date: END_DATE });
      await server.db
        .updateTable('reports')
        .set({ createdAt: `2026-11-20T10:00:00.${microseconds}Z` })
        .where('id', '=', id)
        .execute();
      ids.unshift(id);
    }
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listReportPage(server.db, writerPrincipal, { limit: 1, cursor });
      paged.push(...page.items.map((item) => item.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(paged).toEqual(ids);
  });

  it("never lists another user's reports", async () => {
    const mine = await listReportPage(server.db, actor, { limit: 100 });
    const theirs = await listReportPage(server.db, rivalActor, { limit: 100 });
    const rivalIds = new Set(theirs.items.map((item) => item.id));
    expect(mine.items.length).toBeGreaterThan(0);
    expect(mine.items.filter((item) => rivalIds.has(item.id))).toEqual([]);
    for (const item of theirs.items) {
      expect(await findUserReport(server.db, rival.id, item.id)).toBeDefined();
    }
  });

  it('refuses a cursor it did not issue', async () => {
    await expectAppError(listReportPage(server.db, actor, { limit: 10, cursor: 'bm90LWEtY3Vyc29y' }), 'invalid_cursor');
  });
});

// Enable once `reportRoutes` is mounted in server/src/http/app.ts.
describe('GET /api/reports (REST)', () => {
  it('lists the reports newest first and reads one, with a token holding analysis:read', async () => {
    const older = await runReport(athlete, { type: 'WEEKLY_NUTRITION', end_date: '2026-11-13' });
    const newer = await runReport(athlete, { type: 'WEEKLY_NUTRITION', end_date: END_DATE });
    const first = await call<ReportPage>(server.url, 'GET', '/api/reports?type=WEEKLY_NUTRITION&limit=1', { token });
    expect(first.status).toBe(200);
    expect(first.body.items.map((item) => item.id)).toEqual([newer.id]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await call<ReportPage>(
      server.url,
      'GET',
      `/api/reports?type=WEEKLY_NUTRITION&limit=1&cursor=${encodeURIComponent(first.body.nextCursor ?? '')}`,
      { token },
    );
    expect(second.status).toBe(200);
    expect(second.body.items.map((item) => item.id)).toEqual([older.id]);

    const read = await call<Report>(server.url, 'GET', `/api/reports/${newer.id}`, { token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(await getReport(server.db, actor, newer.id));
  });

  it("answers 404 not_found for another user's report", async () => {
    const { id } = await runReport(rival, { type: 'LAST_3_WORKOUTS', end_date: END_DATE });
    const res = await call(server.url, 'GET', `/api/reports/${id}`, { token });
    expect(res.status).toBe(404);
    expect(asProblem(res.body).code).toBe('not_found');
  });

  it('answers 403 to a token without analysis:read', async () => {
    const narrow = (await mintToken(server.db, athlete, { scopes: ['health:read'] })).token;
    for (const path of ['/api/reports', '/api/reports/00000000-0000-4000-8000-000000000000']) {
      const res = await call(server.url, 'GET', path, { token: narrow });
      expect(res.status).toBe(403);
      expect(res.headers.get('www-authenticate')).toContain('insufficient_scope');
    }
  });
});

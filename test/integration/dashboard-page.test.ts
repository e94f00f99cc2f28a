/**
 * The `/dashboard` page (issue 10, "Dashboard"): a signed-in athlete's
 * recovery today, 90 days of recovery and CTL / ATL / TSB, and the next 3 days
 * of glycogen with meals, planned workouts and their fuel advice, drawn as
 * server-side SVG. Chromium loads it with seeded data and reads the drawn
 * points back; every number is compared with what the REST API answers.
 */
import type { FuelTimeline, PlannedWorkout, PlannedWorkoutFuel, RecoveryDay, TrainingLoad } from '@pacer/contract';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { addDays, formatInZone, localDateOf, zonedTimeMs } from '../../server/src/lib/dates.ts';
import { usePortalBrowser } from '../support/browser.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { oneHourRide } from '../support/fit-fixtures.ts';
import { call } from '../support/http.ts';
import { waitForRecompute } from '../support/recompute.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const ZONE = 'Europe/Berlin';
const HISTORY_DAYS = 90;
/** Markup in names must reach the page as text. */
const MEAL_NAME = 'Porridge <b>& honey</b>';
const PLANNED_TITLE = 'Long <i>ride</i>';
/**
 * Five days in the middle of the history with sleep only (the watch left at
 * home). On the last of them the 7-day HRV window holds 2 readings, fewer
 * than the 3 it needs, and there is no resting HR: too little for a score, so
 * a gap in the line.
 */
const SLEEP_ONLY_DAYS_BACK = [32, 31, 30, 29, 28];
const GAP_DAYS_BACK = 28;
const RIDE_DAYS_BACK = [2, 4, 7, 11, 16];

let server: TestServer;
let athlete: User;
let token: string;
let today: string;
let historyFrom: string;
let planned: PlannedWorkout;
let undurated: PlannedWorkout;

async function uploadRide(startTime: Date): Promise<void> {
  const form = new FormData();
  const bytes = oneHourRide({ startTime }).bytes;
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), 'ride.fit');
  const res = await fetch(`${server.url}/api/workouts/upload-fit`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  expect(res.status).toBe(201);
}

async function post<T>(path: string, body: unknown): Promise<T> {
  const res = await call<T>(server.url, 'POST', path, { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function get<T>(path: string): Promise<T> {
  const res = await call<T>(server.url, 'GET', path, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const settled = (user: User) => waitForRecompute(server.db, user.id);

/**
 * 90 days of wellness (five of them sleep only), five one-hour rides with
 * power, a meal today with its exact time, and two planned workouts tomorrow:
 * one of three hours, one without a duration (no fuel forecast possible).
 */
async function seed(): Promise<void> {
  const profile = await call(server.url, 'PATCH', '/api/profile', { token, body: { weight: 70, ftp: 250 } });
  expect(profile.status).toBe(200);
  for (let back = HISTORY_DAYS - 1; back >= 0; back -= 1) {
    const date = addDays(today, -back);
    const sleepSecs = 7 * 3600 + (back % 4) * 900;
    await post(
      '/api/wellness',
      SLEEP_ONLY_DAYS_BACK.includes(back)
        ? { date, sleepSecs }
        : { date, hrv: 60 + ((back * 7) % 11) - 5, restingHr: 48 + (back % 3), sleepSecs },
    );
  }
  for (const back of RIDE_DAYS_BACK) await uploadRide(new Date(zonedTimeMs(addDays(today, -back), '07:00', ZONE)));
  await post('/api/nutrition', {
    date: today,
    items: [
      {
        name: MEAL_NAME,
        carbs: 80,
        logged_at: formatInZone(zonedTimeMs(today, '08:00', ZONE), ZONE),
        absorptionType: 'FAST',
      },
    ],
  });
  const tomorrow = addDays(today, 1);
  planned = await post<PlannedWorkout>('/api/planned-workouts', {
    date: tomorrow,
    timeOfDay: '10:00',
    sport: 'ride',
    title: PLANNED_TITLE,
    durationSecs: 3 * 3600,
    trainingStress: 192,
  });
  undurated = await post<PlannedWorkout>('/api/planned-workouts', {
    date: tomorrow,
    timeOfDay: '17:00',
    sport: 'run',
    title: 'Easy run, length open',
  });
  await settled(athlete);
}

beforeAll(async () => {
  server = await startTestServer();
  athlete = await makeUser(server.db, { timeZone: ZONE });
  token = (
    await mintToken(server.db, athlete, {
      scopes: [
        'health:read',
        'health:write',
        'nutrition:read',
        'nutrition:write',
        'planning:read',
        'planning:write',
        'profile:write',
        'workout:read',
        'workout:write',
      ],
    })
  ).token;
  today = localDateOf(new Date(), ZONE);
  historyFrom = addDays(today, -(HISTORY_DAYS - 1));
  await seed();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});
const chromium = usePortalBrowser(() => server.url);

const round1 = (value: number) => Math.round(value * 10) / 10;

/** The drawn points of one series: date (or time) -> value, as the attributes say. */
async function drawnPoints(chart: Locator, series: string, key: 'data-date' | 'data-at', value: string) {
  const pairs = await chart
    .locator(`circle[data-series="${series}"]`)
    .evaluateAll(
      (circles, names) => circles.map((circle) => [circle.getAttribute(names[0]), circle.getAttribute(names[1])]),
      [key, value] as const,
    );
  return Object.fromEntries(pairs.map(([at, drawn]) => [at ?? '', Number(drawn)]));
}

async function signedInDashboard(user: User = athlete): Promise<Page> {
  return (await chromium.signedInPage(user, '/dashboard')).page;
}

describe('the /dashboard page (Chromium)', () => {
  it("shows today's stored recovery score, rounded, with its status, explanation and components", async () => {
    const recovery = await get<{ items: RecoveryDay[] }>(`/api/recovery?from=${today}&to=${today}`);
    const stored = recovery.items[0];
    expect(stored?.score).not.toBeNull();
    const page = await signedInDashboard();
    const region = page.getByRole('region', { name: 'Recovery today' });
    expect(await region.locator('.score-value').textContent()).toBe(String(Math.round(stored?.score ?? NaN)));
    expect(await region.locator('.status-label').getAttribute('data-status')).toBe(stored?.status);
    expect(await region.locator('.explanation').textContent()).toBe(stored?.explanation);
    const rows = region.locator('tbody tr');
    expect(await rows.count()).toBe(5);
    expect(await region.locator('tr[data-component="sleep"] td').first().textContent()).toBe(
      `${((stored?.components.sleep.value ?? 0) / 3600).toFixed(1)} h`,
    );
  });

  it('draws one recovery point per day with a score, at the stored score, and leaves the other days as gaps', async () => {
    const recovery = await get<{ items: RecoveryDay[] }>(`/api/recovery?from=${historyFrom}&to=${today}&limit=200`);
    const expected = Object.fromEntries(
      recovery.items.flatMap((day) => (day.score === null ? [] : [[day.date, day.score]])),
    );
    // Some days have too little data: the first weeks (no baseline yet) and the sleep-only day.
    expect(Object.keys(expected).length).toBeGreaterThan(40);
    expect(Object.keys(expected).length).toBeLessThan(HISTORY_DAYS);
    expect(expected[addDays(today, -GAP_DAYS_BACK)]).toBeUndefined();

    const page = await signedInDashboard();
    const chart = page.getByRole('img', { name: /^Recovery score per day/ });
    expect(await drawnPoints(chart, 'score', 'data-date', 'data-value')).toEqual(expected);
    // The line breaks at the gap: its path has more than one piece.
    const path = await chart.locator('.series.score path.line').getAttribute('d');
    expect(path?.match(/M/g)?.length).toBeGreaterThan(1);
    expect(await chart.getAttribute('aria-label')).toContain(`${Object.keys(expected).length} of 90 days`);
  });

  it('draws CTL, ATL and TSB per day at the stored training load, rounded to one decimal', async () => {
    const load = await get<TrainingLoad>(`/api/training-load?from=${historyFrom}&to=${today}`);
    expect(load.items).toHaveLength(HISTORY_DAYS);
    expect(load.items.at(-1)?.ctl).toBeGreaterThan(0);
    const page = await signedInDashboard();
    const chart = page.getByRole('img', { name: /^Training load per day/ });
    for (const series of ['ctl', 'atl', 'tsb'] as const) {
      const expected = Object.fromEntries(load.items.map((day) => [day.date, round1(day[series])]));
      expect(await drawnPoints(chart, series, 'data-date', 'data-value')).toEqual(expected);
    }
    for (const axis of ['Date', 'Training stress per day']) {
      expect(await chart.locator('text.axis-title', { hasText: axis }).count()).toBe(1);
    }
  });

  it('draws the next 3 days of glycogen at the timeline percents, with the meal and the planned workout marked', async () => {
    const timeline = await get<FuelTimeline>(`/api/fuel/timeline?from=${today}&to=${addDays(today, 2)}`);
    const percentAt = new Map(timeline.points.map((point) => [point.at, point.percent]));
    const onTheHour = timeline.points.filter((point) => point.at.slice(14, 16) === '00');
    expect(onTheHour.length).toBeGreaterThanOrEqual(71);

    const page = await signedInDashboard();
    const chart = page.getByRole('img', { name: /^Glycogen/ });
    const drawn = await drawnPoints(chart, 'glycogen', 'data-at', 'data-percent');
    expect(Object.keys(drawn)).toHaveLength(onTheHour.length);
    for (const [at, value] of Object.entries(drawn)) expect(value, at).toBe(percentAt.get(at));
    // The line itself has a vertex at every 15-minute step.
    const path = await chart.locator('.series.glycogen path.line').getAttribute('d');
    expect(path?.match(/[ML]/g)).toHaveLength(timeline.points.length);

    const meal = chart.locator('[data-meal]');
    expect(await meal.count()).toBe(1);
    expect(await meal.getAttribute('data-meal')).toBe(MEAL_NAME);
    expect(await meal.getAttribute('data-carbs-g')).toBe('80');
    expect(await meal.getAttribute('data-at')).toBe(timeline.meals[0]?.at);
    const band = chart.locator(`[data-workout-id="${planned.id}"]`);
    expect(await band.getAttribute('data-kind')).toBe('planned');
    expect(await page.locator('main b, main i').count()).toBe(0);
  });

  it("lists each planned workout's fuel status and advice, and leaves out one that cannot be forecast", async () => {
    const fuel = await get<PlannedWorkoutFuel>(`/api/planned-workouts/${planned.id}/fuel`);
    const unforecast = await call(server.url, 'GET', `/api/planned-workouts/${undurated.id}/fuel`, { token });
    expect(unforecast.status).toBe(422);

    const page = await signedInDashboard();
    const plans = page.getByRole('region', { name: /^Glycogen/ }).locator('li.plan');
    expect(await plans.count()).toBe(1);
    const plan = plans.first();
    expect(await plan.getAttribute('data-workout-id')).toBe(planned.id);
    expect(await plan.locator('h4').textContent()).toBe(PLANNED_TITLE);
    const status = plan.locator('.fuel-status');
    expect(await status.getAttribute('data-status')).toBe(fuel.status);
    expect(await status.textContent()).toBe(
      { ready: 'Fuelled', top_up: 'Top up', at_risk: 'At risk', not_logged: 'Not logged' }[fuel.status],
    );
    expect(fuel.advice.length).toBeGreaterThan(0);
    const advice = await plan
      .locator('ol.advice li')
      .evaluateAll((items) =>
        items.map((item) => ({ at: item.getAttribute('data-at'), carbsG: Number(item.getAttribute('data-carbs-g')) })),
      );
    expect(advice).toEqual(fuel.advice.map((item) => ({ at: item.at, carbsG: item.carbsG })));
    expect(await plan.locator('ol.advice li').first().textContent()).toContain(fuel.advice[0]?.reason ?? '?');
  });

  it('stays within a 390 px wide screen, charts scaled and tables scrolling in their own box', async () => {
    const page = await signedInDashboard();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: '/tmp/dashboard-1280.png', fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    const widths = await page.evaluate(() => ({
      document: document.documentElement.scrollWidth,
      charts: Array.from(document.querySelectorAll('svg.chart'), (svg) => svg.getBoundingClientRect().width),
    }));
    expect(widths.document).toBeLessThanOrEqual(391);
    expect(widths.charts).toHaveLength(3);
    for (const width of widths.charts) expect(width).toBeLessThanOrEqual(390);
    // The components table is wider than the phone: it scrolls inside its own box, within the screen.
    const tableBox = await page.locator('#recovery-today .table-wrap').evaluate((wrap) => ({
      overflowX: getComputedStyle(wrap).overflowX,
      right: wrap.getBoundingClientRect().right,
      scrolls: wrap.scrollWidth > wrap.clientWidth,
    }));
    expect(tableBox).toEqual({ overflowX: 'auto', right: expect.any(Number) as number, scrolls: true });
    expect(tableBox.right).toBeLessThanOrEqual(390);
    await page.screenshot({ path: '/tmp/dashboard-390.png', fullPage: true });
    // One picture per section as well: the full page is too tall to look at whole.
    for (const id of ['recovery-today', 'recovery-history', 'training-load', 'fuel']) {
      await page.locator(`section#${id}`).screenshot({ path: `/tmp/dashboard-390-${id}.png` });
    }
  });

  it('shows a note instead of the glycogen forecast while nutrition is off, and says when there is no data', async () => {
    const other = await makeUser(server.db, { timeZone: ZONE });
    await server.db
      .updateTable('users')
      .set({ featureFlags: { nutrition: false } })
      .where('id', '=', other.id)
      .execute();
    const page = await signedInDashboard(other);
    const fuel = page.getByRole('region', { name: /^Glycogen/ });
    expect(await fuel.locator('#fuel-off').textContent()).toContain('Nutrition is switched off');
    expect(await fuel.locator('svg').count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Recovery today' }).textContent()).toContain('No recovery score');
    expect(await page.locator('svg.chart').count()).toBe(0);
  });
});

describe('without a session', () => {
  it('sends the visitor to /login and back to /dashboard', async () => {
    const res = await fetch(`${server.url}/dashboard`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/login?next=%2Fdashboard');
  });
});

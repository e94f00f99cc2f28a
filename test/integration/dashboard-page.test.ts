/**
 * The `/dashboard` page (issue 10, "Dashboard"; issue 21, point 10): a
 * signed-in athlete's recovery today, open recommendations with Accept and
 * Dismiss, liver and muscle glycogen for 3 days with meals by source and each
 * planned workout's fuel status, and a Performance Management Chart (daily
 * stress, CTL / ATL, TSB over form zones, ramp, 14-day projection), drawn as
 * server-side SVG. Chromium loads it with seeded data and reads the drawn
 * points back; every number is compared with what the REST API answers, and
 * the layout is measured at 1280 and 390 px.
 */
import { randomUUID } from 'node:crypto';
import type {
  FuelTimeline,
  PlannedWorkout,
  PlannedWorkoutFuel,
  RecommendationList,
  RecoveryDay,
  TrainingLoad,
} from '@pacer/contract';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { addDays, formatInZone, localDateOf, zonedTimeMs } from '../../server/src/lib/dates.ts';
import { insertRecommendation } from '../../server/src/modules/derived/recommendations.repository.ts';
import { csrfCookie, usePortalBrowser } from '../support/browser.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { oneHourRide } from '../support/fit-fixtures.ts';
import { FUEL_STATUS_WORDS, expectDashboardLayout, measureLayout } from '../support/page-layout.ts';
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

/**
 * Form in percent of fitness for each of `days` (consecutive REST days):
 * 100 · TSB / max(the previous day's CTL, 10), rounded as drawn, the first
 * day's previous CTL being `ctlBefore`; days beyond ±100 % are left out (the
 * panel draws them as gaps).
 */
function formPercents(
  ctlBefore: number,
  days: readonly { readonly date: string; readonly tsb: number; readonly ctl: number }[],
): Record<string, number> {
  const result: Record<string, number> = {};
  let previous = ctlBefore;
  for (const day of days) {
    const percent = (100 * day.tsb) / Math.max(previous, 10);
    if (Math.abs(percent) <= 100) result[day.date] = round1(percent);
    previous = day.ctl;
  }
  return result;
}

/** intervals.icu's zones in percent (docs/science.md §1.1), written out here to check the page against. */
function zoneOfPercent(percent: number): string {
  if (percent > 20) return 'transition';
  if (percent > 5) return 'fresh';
  if (percent > -10) return 'grey';
  if (percent >= -30) return 'optimal';
  return 'high_risk';
}

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

  it('draws the PMC: daily stress bars, CTL and ATL lines, form % over the form zones, all at the stored numbers', async () => {
    // One day more than drawn: the first drawn day's form reads the CTL of the day before it.
    const load = await get<TrainingLoad>(`/api/training-load?from=${addDays(historyFrom, -1)}&to=${today}`);
    const drawnDays = load.items.filter((day) => day.date >= historyFrom);
    expect(drawnDays).toHaveLength(HISTORY_DAYS);
    // The athlete's data starts on the first drawn day: the chain starts from CTL 0 before it (§1).
    const dayBeforeHistory = load.items.find((day) => day.date < historyFrom) ?? { ctl: 0 };
    expect(drawnDays.at(-1)?.ctl).toBeGreaterThan(0);
    const page = await signedInDashboard();
    const region = page.getByRole('region', { name: 'Fitness, fatigue and form' });
    const fitness = region.getByRole('img', { name: /^Training stress per day/ });
    const form = region.getByRole('img', { name: /^Form as a percentage of fitness/ });
    for (const series of ['ctl', 'atl'] as const) {
      const expected = Object.fromEntries(drawnDays.map((day) => [day.date, round1(day[series])]));
      expect(await drawnPoints(fitness, series, 'data-date', 'data-value')).toEqual(expected);
    }
    // Form: 100 · TSB / max(CTL of the day before, 10) (docs/science.md §1.1, §2); beyond ±100 % a gap.
    const expectedForm = formPercents(dayBeforeHistory.ctl, drawnDays);
    const drawnForm = await drawnPoints(form, 'form', 'data-date', 'data-value');
    expect(Object.keys(drawnForm).sort()).toEqual(Object.keys(expectedForm).sort());
    for (const [date, value] of Object.entries(expectedForm)) {
      expect(Math.abs((drawnForm[date] ?? NaN) - value), date).toBeLessThanOrEqual(0.05 + 1e-9);
    }
    // One bar per day with stress, at the day's TSS: the five rides.
    const bars = await fitness
      .locator('rect[data-series="tss"]')
      .evaluateAll((rects) =>
        rects.map((rect) => [rect.getAttribute('data-date'), Number(rect.getAttribute('data-value'))]),
      );
    const stressed = drawnDays.filter((day) => day.tss > 0);
    expect(stressed).toHaveLength(RIDE_DAYS_BACK.length);
    expect(Object.fromEntries(bars)).toEqual(Object.fromEntries(stressed.map((day) => [day.date, round1(day.tss)])));
    // Five form zones shaded, each a band with height, at the recovery model's edges in percent.
    const zones = await form.locator('rect[data-zone]').evaluateAll((rects) =>
      rects.map((rect) => ({
        zone: rect.getAttribute('data-zone'),
        top: rect.getBoundingClientRect().top,
        height: rect.getBoundingClientRect().height,
      })),
    );
    expect(zones.map(({ zone }) => zone)).toEqual(['transition', 'fresh', 'grey', 'optimal', 'high_risk']);
    for (const { height } of zones) expect(height).toBeGreaterThan(0);
    // The optimal band spans 20 percentage points, the grey one 15 and the fresh one 15: heights 20 : 15 : 15.
    const heightOf = (zone: string) => zones.find((band) => band.zone === zone)?.height ?? NaN;
    expect(heightOf('grey') / heightOf('optimal')).toBeCloseTo(15 / 20, 2);
    expect(heightOf('fresh') / heightOf('optimal')).toBeCloseTo(15 / 20, 2);
    for (const axis of ['Date', 'Training stress (TSS/day)']) {
      expect(await fitness.locator('text.axis-title', { hasText: axis }).count()).toBe(1);
    }
    expect(await form.locator('text.axis-title', { hasText: 'Form (% of fitness)' }).count()).toBe(1);

    // Today's figures and the ramp: CTL today − CTL a week before; form as the recovery score reads it.
    const latest = drawnDays.at(-1);
    const dayBefore = drawnDays.at(-2);
    const weekBefore = drawnDays.at(-8);
    const figures = Object.fromEntries(
      await region
        .locator('.load-today .figure')
        .evaluateAll((nodes) =>
          nodes.map((node) => [node.getAttribute('data-key'), Number(node.getAttribute('data-value'))]),
        ),
    );
    const formToday = (100 * (latest?.tsb ?? NaN)) / Math.max(dayBefore?.ctl ?? NaN, 10);
    expect(figures).toEqual({
      ctl: round1(latest?.ctl ?? NaN),
      atl: round1(latest?.atl ?? NaN),
      tsb: round1(latest?.tsb ?? NaN),
      form: expect.closeTo(formToday, 1) as number,
      ramp: round1((latest?.ctl ?? NaN) - (weekBefore?.ctl ?? NaN)),
    });
    const recovery = await get<{ items: RecoveryDay[] }>(`/api/recovery?from=${today}&to=${today}`);
    expect(recovery.items[0]?.components.load.value).toBeCloseTo(formToday, 9);
    // The sentence names today's zone by the same edges.
    const zone = await region.locator('.load-today + p strong[data-zone]').getAttribute('data-zone');
    expect(zone).toBe(zoneOfPercent(formToday));
    const sentence = (await region.locator('.load-today + p').textContent())?.replace(/\s+/g, ' ') ?? '';
    expect(sentence).toMatch(/Form today is [+−±]\d+\.\d % of fitness: the [a-z ]+ zone \([^)]*%\)\./);
    expect(sentence).not.toContain('zone zone');
    // Rides began 16 days ago: fitness is still building, and the panel marks those days.
    expect((await region.locator('.load-today + p').textContent())?.replace(/\s+/g, ' ')).toContain(
      `the recovery score leaves form out until`,
    );
    const firstRide = addDays(today, -Math.max(...RIDE_DAYS_BACK));
    expect(await form.locator('rect.building').getAttribute('data-building-until')).toBe(addDays(firstRide, 42));
  });

  it('draws a dashed 14-day projection of CTL, ATL and TSB from the planned workouts, by the PMC recurrence', async () => {
    const load = await get<TrainingLoad>(`/api/training-load?from=${today}&to=${today}`);
    const stored = load.items[0];
    if (!stored) throw new Error('no training load today');
    // docs/science.md §1.1: tomorrow's 3 h ride counts its planned 192 TSS; the run without a duration counts 0.
    const expected: Record<'ctl' | 'atl' | 'form', Record<string, number>> = { ctl: {}, atl: {}, form: {} };
    const plannedTss: Record<string, number> = {};
    let { ctl, atl } = stored;
    for (let day = 1; day <= 14; day += 1) {
      const date = addDays(today, day);
      const tss = day === 1 ? 192 : 0;
      if (tss > 0) plannedTss[date] = tss;
      const percent = (100 * (ctl - atl)) / Math.max(ctl, 10);
      if (Math.abs(percent) <= 100) expected.form[date] = round1(percent);
      ctl += (tss - ctl) / 42;
      atl += (tss - atl) / 7;
      expected.ctl[date] = round1(ctl);
      expected.atl[date] = round1(atl);
    }
    const page = await signedInDashboard();
    const region = page.getByRole('region', { name: 'Fitness, fatigue and form' });
    const fitness = region.getByRole('img', { name: /^Training stress per day/ });
    const form = region.getByRole('img', { name: /^Form as a percentage of fitness/ });
    for (const [chart, series] of [
      [fitness, 'ctl'],
      [fitness, 'atl'],
      [form, 'form'],
    ] as const) {
      expect(await drawnPoints(chart, `${series}-projection`, 'data-date', 'data-value')).toEqual(expected[series]);
      const line = chart.locator(`.series.${series}.projection path.line`);
      expect(await line.evaluate((path) => getComputedStyle(path).strokeDasharray)).not.toBe('none');
    }
    const planned = await fitness
      .locator('rect[data-series="tss-planned"]')
      .evaluateAll((rects) =>
        rects.map((rect) => [rect.getAttribute('data-date'), Number(rect.getAttribute('data-value'))]),
      );
    expect(Object.fromEntries(planned)).toEqual(plannedTss);
    expect((await region.textContent())?.replace(/\s+/g, ' ')).toContain(
      '1 planned workout has neither a planned stress nor a duration',
    );
  });

  it('draws liver and muscle glycogen in grams at the timeline values, meals by source, workouts with their status', async () => {
    const timeline = await get<FuelTimeline>(`/api/fuel/timeline?from=${today}&to=${addDays(today, 2)}`);
    const fuel = await get<PlannedWorkoutFuel>(`/api/planned-workouts/${planned.id}/fuel`);
    const onTheHour = timeline.points.filter((point) => point.at.slice(14, 16) === '00');
    expect(onTheHour.length).toBeGreaterThanOrEqual(71);

    const page = await signedInDashboard();
    const region = page.getByRole('region', { name: /^Glycogen/ });
    for (const store of ['liver', 'muscle'] as const) {
      const chart = region.getByRole('img', {
        name: new RegExp(`^${store === 'liver' ? 'Liver' : 'Muscle'} glycogen in grams`),
      });
      const drawn = await drawnPoints(chart, store, 'data-at', 'data-grams');
      expect(Object.keys(drawn)).toHaveLength(onTheHour.length);
      const grams = new Map(
        timeline.points.map((point) => [point.at, store === 'liver' ? point.liverG : point.muscleG]),
      );
      for (const [at, value] of Object.entries(drawn)) expect(value, at).toBe(grams.get(at));
      // The line has a vertex at every 15-minute step.
      const path = await chart.locator(`.series.${store} path.line`).getAttribute('d');
      expect(path?.match(/[ML]/g)).toHaveLength(timeline.points.length);
      const capacity = store === 'liver' ? timeline.capacity.liverG : timeline.capacity.muscleG;
      expect(await chart.locator('text.rule-label', { hasText: `capacity ${Math.round(capacity)} g` }).count()).toBe(1);
      expect(
        await chart
          .locator('text.axis-title', { hasText: `${store === 'liver' ? 'Liver' : 'Muscle'} glycogen (g)` })
          .count(),
      ).toBe(1);
    }
    const liverChart = region.getByRole('img', { name: /^Liver glycogen in grams/ });

    // Every meal marked with its source; the one we logged is `logged`, drawn filled; planned and assumed hollow.
    const meals = await liverChart.locator('[data-meal]').evaluateAll((nodes) =>
      nodes.map((node) => ({
        at: node.getAttribute('data-at'),
        source: node.getAttribute('data-source'),
        fill: getComputedStyle(node.querySelector('path') as Element).fill,
      })),
    );
    expect(meals.map(({ at, source }) => ({ at, source }))).toEqual(
      timeline.meals.map((meal) => ({ at: meal.at, source: meal.source })),
    );
    const logged = timeline.meals.find((meal) => meal.name === MEAL_NAME);
    expect(logged?.source).toBe('logged');
    for (const meal of meals) expect(meal.fill === 'none', `${meal.source} marker fill`).toBe(meal.source !== 'logged');
    expect(await region.locator('.legend').textContent()).toMatch(/Logged meal.*Planned meal.*Assumed meal/s);

    // The planned workout's band and label carry the status word and the store that limits, as REST answers.
    const band = liverChart.locator(`rect[data-workout-id="${planned.id}"]`);
    expect(await band.getAttribute('data-kind')).toBe('planned');
    expect(await band.getAttribute('data-status')).toBe(fuel.status);
    expect(await band.getAttribute('data-limiting-store')).toBe(fuel.limitingStore ?? '');
    const word = FUEL_STATUS_WORDS[fuel.status];
    const label = liverChart.locator(`text.band-label[data-workout-id="${planned.id}"]`);
    expect(await label.textContent()).toBe(fuel.limitingStore === null ? word : `${word} · ${fuel.limitingStore}`);
    expect(await page.locator('main b, main i').count()).toBe(0);
  });

  it("lists each planned workout's status word and its advice collapsed to a plan, leaving out one that cannot be forecast", async () => {
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
    expect(await status.textContent()).toBe(FUEL_STATUS_WORDS[fuel.status]);
    // Fuel words are not recovery's words.
    for (const word of Object.values(FUEL_STATUS_WORDS)) expect(['Ready', 'Maintain', 'Recover']).not.toContain(word);
    if (fuel.limitingStore !== null) {
      expect(await plan.locator('.limiting-store').getAttribute('data-store')).toBe(fuel.limitingStore);
    }

    expect(fuel.advice.length).toBeGreaterThan(0);
    const details = plan.locator('details.advice-plan');
    expect(await details.evaluate((node) => (node as HTMLDetailsElement).open)).toBe(false);
    // Collapsed: the summary shows the plan, one line per phase; the items are hidden until opened.
    const lines = await details
      .locator('summary .plan-line')
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-phase')));
    const phases =
      fuel.plan.length > 0 ? fuel.plan.map((line) => line.phase) : [...new Set(fuel.advice.map((item) => item.phase))];
    expect(lines).toEqual(phases);
    if (fuel.plan.length > 0) {
      expect(await details.locator('summary').textContent()).toContain(fuel.plan[0]?.text ?? '?');
    } else {
      const total = fuel.advice.filter((item) => item.phase === phases[0]).reduce((sum, item) => sum + item.carbsG, 0);
      expect(await details.locator('summary .plan-line').first().textContent()).toContain(`${Math.round(total)} g`);
    }
    const items = plan.locator('ol.advice li');
    expect(await items.first().isVisible()).toBe(false);
    await details.locator('summary').click();
    expect(await items.first().isVisible()).toBe(true);
    const advice = await items.evaluateAll((nodes) =>
      nodes.map((node) => ({ at: node.getAttribute('data-at'), carbsG: Number(node.getAttribute('data-carbs-g')) })),
    );
    expect(advice).toEqual(fuel.advice.map((item) => ({ at: item.at, carbsG: item.carbsG })));
    expect(await items.first().textContent()).toContain(fuel.advice[0]?.reason ?? '?');
  });

  for (const width of [1280, 390]) {
    it(`at ${width} px: no text rendered under 11 px, no horizontal scroll, every column on screen`, async () => {
      const page = await signedInDashboard();
      await page.setViewportSize({ width, height: 900 });
      const layout = await measureLayout(page);
      expectDashboardLayout(layout, width);
      if (width === 390) {
        // The components table stacks into cards that fit, instead of scrolling.
        const table = await page.locator('#recovery-today .table-wrap').evaluate((wrap) => ({
          scrolls: wrap.scrollWidth > wrap.clientWidth,
          right: wrap.getBoundingClientRect().right,
        }));
        expect(table.scrolls).toBe(false);
        expect(table.right).toBeLessThanOrEqual(390);
        expect(layout.height).toBeLessThan(4500);
      }
      await page.screenshot({ path: `/tmp/dashboard-${width}.png`, fullPage: true });
      // One picture per section as well: the full page is too tall to look at whole.
      for (const id of ['recovery-today', 'recommendations', 'fuel', 'training-load', 'recovery-history']) {
        await page.locator(`section#${id}`).screenshot({ path: `/tmp/dashboard-${width}-${id}.png` });
      }
    });
  }

  it('a workout with no meals to judge by says "Log or plan meals" and keeps its in-ride plan line', async () => {
    // No food logged at all: no usual intake, so tomorrow's rides are `not_logged` (docs/science.md §3).
    const other = await makeUser(server.db, { timeZone: ZONE });
    const otherToken = (await mintToken(server.db, other, { scopes: ['planning:read', 'planning:write'] })).token;
    const plan = async (title: string, durationSecs: number) => {
      const res = await call<PlannedWorkout>(server.url, 'POST', '/api/planned-workouts', {
        token: otherToken,
        body: { date: addDays(today, 1), timeOfDay: '09:00', sport: 'ride', title, durationSecs },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body;
    };
    const long = await plan('Two hours', 2 * 3600);
    const short = await plan('One hour', 3600);
    await settled(other);
    const fuelOf = async (id: string) => {
      const res = await call<PlannedWorkoutFuel>(server.url, 'GET', `/api/planned-workouts/${id}/fuel`, {
        token: otherToken,
      });
      expect(res.status).toBe(200);
      return res.body;
    };
    const [longFuel, shortFuel] = await Promise.all([fuelOf(long.id), fuelOf(short.id)]);
    expect(longFuel.status).toBe('not_logged');
    expect(shortFuel.status).toBe('not_logged');
    // Over 75 minutes: the in-ride line stays, nothing before or after.
    expect(longFuel.plan.map((line) => line.phase)).toEqual(['during']);
    expect(shortFuel.plan).toEqual([]);

    const page = await signedInDashboard(other);
    const fuel = page.getByRole('region', { name: /^Glycogen/ });
    for (const [workout, rest] of [
      [long, longFuel],
      [short, shortFuel],
    ] as const) {
      const card = fuel.locator(`li.plan[data-workout-id="${workout.id}"]`);
      expect(await card.locator('.fuel-status').textContent()).toBe('Not logged');
      expect(await card.locator('.not-logged-note').textContent()).toBe('Log or plan meals for a fuel status.');
      const text = (await card.textContent())?.replace(/\s+/g, ' ') ?? '';
      expect(text).not.toContain('No advice');
      expect(text).not.toContain('Start liver');
      expect(await card.locator('.limiting-store').count()).toBe(0);
      const lines = await card
        .locator('.plan-line')
        .evaluateAll((nodes) =>
          nodes.map((node) => ({ phase: node.getAttribute('data-phase'), visible: node.checkVisibility() })),
        );
      expect(lines).toEqual(rest.plan.map((line) => ({ phase: line.phase, visible: true })));
    }
    const line = longFuel.plan[0]?.text ?? '?';
    expect(await fuel.locator(`li.plan[data-workout-id="${long.id}"] .plan-line`).textContent()).toContain(
      line.replace(/^During:\s*/, '').slice(0, 30),
    );
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

describe('open recommendations on the page (Chromium)', () => {
  let decider: User;
  let deciderToken: string;
  let workout: PlannedWorkout;
  let sequence = 0;

  /** One open `lighter_week` recommendation scaling the workout to 80 %, stored as a rule would store it. */
  async function openRecommendation(title: string): Promise<string> {
    sequence += 1;
    const row = await insertRecommendation(server.db, decider.id, {
      kind: 'lighter_week',
      dedupeKey: `dashboard-test:${sequence}`,
      plannedWorkoutId: null,
      title,
      body: 'Fitness rose by 9.0 in a week, above 8: planned stress scaled to 80 %.',
      evidence: { rule: 'ctl_ramp_too_steep', date: today, ctl: 50, ctlWeekBefore: 41, ctlRamp: 9, threshold: 8 },
      action: {
        type: 'scale_week',
        scaleTrainingStress: 0.8,
        from: addDays(today, 1),
        to: addDays(today, 7),
        plannedWorkoutIds: [workout.id],
      },
    });
    return row.id;
  }

  async function statusOf(id: string): Promise<string | undefined> {
    for (const status of ['open', 'accepted', 'dismissed', 'expired']) {
      const res = await call<RecommendationList>(server.url, 'GET', `/api/recommendations?status=${status}`, {
        token: deciderToken,
      });
      expect(res.status).toBe(200);
      if (res.body.items.some((item) => item.id === id)) return status;
    }
    return undefined;
  }

  async function plannedStress(): Promise<number | null> {
    const res = await call<PlannedWorkout>(server.url, 'GET', `/api/planned-workouts/${workout.id}`, {
      token: deciderToken,
    });
    expect(res.status).toBe(200);
    return res.body.trainingStress;
  }

  const card = (page: Page, id: string) => page.locator(`li.recommendation[data-recommendation-id="${id}"]`);

  beforeAll(async () => {
    decider = await makeUser(server.db, { timeZone: ZONE });
    deciderToken = (
      await mintToken(server.db, decider, {
        scopes: ['planning:read', 'planning:write', 'recommendations:read', 'recommendations:write'],
      })
    ).token;
    const res = await call<PlannedWorkout>(server.url, 'POST', '/api/planned-workouts', {
      token: deciderToken,
      body: { date: addDays(today, 3), sport: 'ride', title: 'Tempo', durationSecs: 3600, trainingStress: 100 },
    });
    expect(res.status).toBe(201);
    workout = res.body;
    await settled(decider);
  });

  it('dismissing through the page marks it dismissed and changes nothing else', async () => {
    const id = await openRecommendation('Lighter week (dismiss me)');
    const page = await signedInDashboard(decider);
    const item = card(page, id);
    expect(await item.locator('h3').textContent()).toBe('Lighter week (dismiss me)');
    await item.getByRole('button', { name: 'Dismiss' }).click();
    await page.waitForURL(/\/dashboard\?notice=dismissed/);
    expect(await page.getByRole('status').textContent()).toContain('Recommendation dismissed');
    expect(await card(page, id).count()).toBe(0);
    expect(await statusOf(id)).toBe('dismissed');
    expect(await plannedStress()).toBe(100);
  });

  it('accepting through the page applies its action and marks it accepted', async () => {
    const id = await openRecommendation('Lighter week (accept me)');
    const page = await signedInDashboard(decider);
    await card(page, id).getByRole('button', { name: 'Accept' }).click();
    await page.waitForURL(/\/dashboard\?notice=accepted/);
    expect(await page.getByRole('status').textContent()).toContain('Recommendation accepted');
    expect(await statusOf(id)).toBe('accepted');
    expect(await plannedStress()).toBe(80);
    await settled(decider);
  });

  it('a recommendation decided elsewhere meanwhile is a message on the page, not an error page', async () => {
    const id = await openRecommendation('Lighter week (decided elsewhere)');
    const page = await signedInDashboard(decider);
    const dismissed = await call(server.url, 'POST', `/api/recommendations/${id}/dismiss`, { token: deciderToken });
    expect(dismissed.status).toBe(200);
    await card(page, id).getByRole('button', { name: 'Accept' }).click();
    await page.waitForURL(/\/dashboard\?error=decided/);
    expect(await page.getByRole('alert').textContent()).toContain('already decided');
    expect(await statusOf(id)).toBe('dismissed');
    expect(await plannedStress()).toBe(80);
  });

  it('refuses a decision posted without the page form token', async () => {
    const id = await openRecommendation('Lighter week (forged)');
    const { context, page } = await chromium.signedInPage(decider, '/dashboard');
    const res = await context.request.post(`${server.url}/dashboard/recommendations/${id}/accept`, {
      form: { _csrf: 'not-the-token' },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    expect(await statusOf(id)).toBe('open');
    expect(await card(page, id).count()).toBe(1);

    // With the page's token, an id that is not the athlete's is a message on the dashboard.
    const unknown = await context.request.post(`${server.url}/dashboard/recommendations/${randomUUID()}/dismiss`, {
      form: { _csrf: await csrfCookie(context) },
      maxRedirects: 0,
    });
    expect(unknown.status()).toBe(303);
    expect(unknown.headers()['location']).toBe('/dashboard?error=missing#recommendations');
    await page.goto(`${server.url}${unknown.headers()['location'] ?? ''}`);
    expect(await page.getByRole('alert').textContent()).toContain('no such recommendation');
    expect(await statusOf(id)).toBe('open');
  });
});

describe('without a session', () => {
  it('sends the visitor to /login and back to /dashboard', async () => {
    const res = await fetch(`${server.url}/dashboard`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/login?next=%2Fdashboard');
  });
});

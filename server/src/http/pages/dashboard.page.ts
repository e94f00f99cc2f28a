import {
  PAGE_LIMIT_MAX,
  USER_SCOPES,
  RECOVERY_COMPONENTS,
  type FuelStatus,
  type FuelTimeline,
  type PlannedWorkout,
  type PlannedWorkoutFuel,
  type RecoveryComponent,
  type RecoveryComponentName,
  type RecoveryDay,
  type RecoveryStatus,
  type TrainingLoadDay,
} from '@pacer/contract';
import { type Request, type Response, Router } from 'express';
import type { Db } from '../../db/database.ts';
import type { User } from '../../db/tables.ts';
import type { Actor } from '../../lib/actor.ts';
import { AppError } from '../../errors.ts';
import { addDays, formatInZone, localDateOf } from '../../lib/dates.ts';
import { getRecoveryPage, getTrainingLoad } from '../../modules/derived/analytics.service.ts';
import { MAINTAIN_MIN_SCORE, READY_MIN_SCORE } from '../../modules/derived/recovery.model.ts';
import { getFuelTimeline, getPlannedWorkoutFuel } from '../../modules/derived/fuel.service.ts';
import { listPlannedWorkoutPage } from '../../modules/planned-workouts/planned-workouts.service.ts';
import type { PageDeps } from './account.pages.ts';
import {
  type AxisTick,
  type ChartBand,
  type ChartMarker,
  type ChartPoint,
  lineChart,
  niceTicks,
} from './dashboard-charts.ts';
import { html, page, type SafeHtml, sendPage } from './html.ts';
import { signedInUserOr303 } from './session-guard.ts';

/** Days of recovery and training load drawn, ending today. */
const HISTORY_DAYS = 90;
/** Days of glycogen drawn: today and the two after it. */
const FUEL_DAYS = 3;
const QUARTER_HOUR_MS = 15 * 60_000;

/**
 * The dashboard acts for its signed-in user on that user's own data, with no
 * app in between: the user holds every user scope, and what the page writes
 * is recorded as coming from `pacer-dashboard`.
 */
function actorOfSessionUser(user: User): Actor {
  return { userId: user.id, timeZone: user.timeZone, source: 'pacer-dashboard', scopes: USER_SCOPES };
}

interface PlannedFuel {
  readonly workout: PlannedWorkout;
  readonly fuel: PlannedWorkoutFuel;
}

interface DashboardData {
  readonly timeZone: string;
  readonly today: string;
  readonly now: Date;
  readonly historyFrom: string;
  readonly recovery: readonly RecoveryDay[];
  readonly load: readonly TrainingLoadDay[];
  /** `null` while the nutrition feature is off. */
  readonly fuel: { readonly timeline: FuelTimeline; readonly planned: readonly PlannedFuel[] } | null;
}

async function loadFuel(db: Db, actor: Actor, today: string, now: Date): Promise<DashboardData['fuel']> {
  const to = addDays(today, FUEL_DAYS - 1);
  const [timeline, planned] = await Promise.all([
    getFuelTimeline(db, actor, { from: today, to }, now),
    listPlannedWorkoutPage(db, actor, { from: today, to, limit: PAGE_LIMIT_MAX }),
  ]);
  const fuels = await Promise.all(
    planned.items.map(async (workout) => {
      try {
        return { workout, fuel: await getPlannedWorkoutFuel(db, actor, workout.id, now) };
      } catch (error) {
        // A workout with no duration has no forecast to show; the timeline notes it among the assumptions.
        if (error instanceof AppError && error.code === 'unprocessable') return undefined;
        throw error;
      }
    }),
  );
  return { timeline, planned: fuels.filter((entry): entry is PlannedFuel => entry !== undefined) };
}

async function loadDashboard(db: Db, user: User, now: Date): Promise<DashboardData> {
  const actor = actorOfSessionUser(user);
  const today = localDateOf(now, user.timeZone);
  const historyFrom = addDays(today, -(HISTORY_DAYS - 1));
  const [recovery, load, fuel] = await Promise.all([
    getRecoveryPage(db, actor, { from: historyFrom, to: today, limit: PAGE_LIMIT_MAX }),
    getTrainingLoad(db, actor, { from: historyFrom, to: today }),
    user.featureFlags.nutrition !== false ? loadFuel(db, actor, today, now) : Promise.resolve(null),
  ]);
  return {
    timeZone: user.timeZone,
    today,
    now,
    historyFrom,
    recovery: recovery.items,
    load: load.items,
    fuel,
  };
}

// ---- formatting -------------------------------------------------------------------------

const dayFormat = new Intl.DateTimeFormat('en-GB', {
  weekday: 'short',
  day: 'numeric',
  month: 'short',
  timeZone: 'UTC',
});
const monthDayFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
const longDayFormat = new Intl.DateTimeFormat('en-GB', { dateStyle: 'full', timeZone: 'UTC' });

/** `Tue 25 Nov` for a `YYYY-MM-DD` calendar date (formatted in UTC: the date is already local). */
const dayLabel = (date: string) => dayFormat.format(Date.parse(`${date}T00:00:00Z`));
/** `HH:MM` of a timestamp written in the athlete's offset: its wall-clock time. */
const clockOf = (at: string) => at.slice(11, 16);
const whenOf = (at: string) => `${dayLabel(at.slice(0, 10))}, ${clockOf(at)}`;
const round1 = (value: number) => Math.round(value * 10) / 10;
const grams = (value: number) => `${Math.round(value)} g`;
const percent = (value: number) => `${Math.round(value)} %`;

const RECOVERY_STATUS_LABELS: Record<RecoveryStatus, string> = {
  ready: 'Ready',
  maintain: 'Maintain',
  recover: 'Recover',
  insufficient_data: 'Not enough data',
};
const FUEL_STATUS_LABELS: Record<FuelStatus, string> = {
  ready: 'Fuelled',
  top_up: 'Top up',
  at_risk: 'At risk',
  not_logged: 'Not logged',
};
interface ComponentRow {
  readonly label: string;
  readonly value: (value: number) => string;
  /** The normal range in the same unit as the value. */
  readonly range?: (low: number, high: number) => string;
}
/** One row per component the contract names: a new component fails to compile until it has a row. */
const COMPONENT_ROWS: Record<RecoveryComponentName, ComponentRow> = {
  hrv: {
    label: 'HRV (rMSSD, today)',
    // The model works on ln(rMSSD); athletes read milliseconds.
    value: (value) => `${Math.exp(value).toFixed(1)} ms`,
    range: (low, high) => `${Math.exp(low).toFixed(1)}–${Math.exp(high).toFixed(1)} ms`,
  },
  restingHr: {
    label: 'Resting heart rate',
    value: (value) => `${round1(value)} bpm`,
    range: (low, high) => `${low.toFixed(1)}–${high.toFixed(1)} bpm`,
  },
  sleep: { label: 'Sleep', value: (value) => `${(value / 3600).toFixed(1)} h` },
  subjective: { label: 'Check-in', value: (value) => String(round1(value)) },
  load: { label: 'Form (% of fitness)', value: (value) => `${value.toFixed(0)} %` },
};

// ---- sections -----------------------------------------------------------------------------

function section(id: string, title: string, body: SafeHtml): SafeHtml {
  return html`<section id="${id}" aria-labelledby="${id}-heading">
    <h2 id="${id}-heading">${title}</h2>
    ${body}
  </section>`;
}

function componentRow(name: RecoveryComponentName, component: RecoveryComponent): SafeHtml {
  const row = COMPONENT_ROWS[name];
  const baseline = component.baseline;
  return html`<tr data-component="${name}">
    <th scope="row">${row.label}</th>
    <td class="num">${component.value === null ? '–' : row.value(component.value)}</td>
    <td class="num">${baseline && row.range ? row.range(baseline.low, baseline.high) : '–'}</td>
    <td class="num">${component.score === null ? '–' : Math.round(component.score)}</td>
    <td class="num">
      ${component.weight === null ? html`<span class="muted">left out</span>` : percent(component.weight * 100)}
    </td>
    <td class="detail">${component.detail}</td>
  </tr>`;
}

function recoveryToday(day: RecoveryDay | undefined, today: string): SafeHtml {
  if (!day) {
    return html`<p class="muted">
      No recovery score for ${dayLabel(today)} yet: log wellness (HRV, resting heart rate, sleep) to get one.
    </p>`;
  }
  return html`<div class="today" data-date="${day.date}">
      <p class="score-today status-${day.status}">
        <span class="score-value" data-score="${day.score ?? ''}">${day.score === null ? '–' : Math.round(day.score)}</span
        ><span class="score-max"> / 100</span>
      </p>
      <p class="status-label" data-status="${day.status}">${RECOVERY_STATUS_LABELS[day.status]}</p>
    </div>
    <p class="explanation">${day.explanation}</p>
    <div class="table-wrap">
      <table>
        <caption>
          What the score is made of
        </caption>
        <thead>
          <tr>
            <th scope="col">Component</th>
            <th scope="col" class="num">Value</th>
            <th scope="col" class="num">Normal range</th>
            <th scope="col" class="num">Score</th>
            <th scope="col" class="num">Weight</th>
            <th scope="col">What it saw</th>
          </tr>
        </thead>
        <tbody>
          ${RECOVERY_COMPONENTS.map((name) => componentRow(name, day.components[name]))}
        </tbody>
      </table>
    </div>`;
}

/** The dates of the history window, oldest first; a day's x is its index. */
function historyDates(from: string): string[] {
  return Array.from({ length: HISTORY_DAYS }, (_, index) => addDays(from, index));
}

/** The first of each month in the window, labelled `1 Oct`. */
function monthTicks(dates: readonly string[]): AxisTick[] {
  return dates.flatMap((date, index) =>
    date.endsWith('-01') ? [{ value: index, label: monthDayFormat.format(Date.parse(`${date}T00:00:00Z`)) }] : [],
  );
}

function recoveryChart(data: DashboardData): SafeHtml {
  const dates = historyDates(data.historyFrom);
  const byDate = new Map(data.recovery.map((day) => [day.date, day]));
  const points: ChartPoint[] = dates.map((date, index) => {
    const day = byDate.get(date);
    const score = day?.score ?? null;
    return {
      x: index,
      y: score,
      data: html`data-date="${date}" data-value="${score ?? ''}" data-series="score"`,
      title: `${dayLabel(date)}: ${score === null ? 'no score' : `${Math.round(score)} (${RECOVERY_STATUS_LABELS[day?.status ?? 'insufficient_data']})`}`,
    };
  });
  const scored = points.filter((point): point is ChartPoint & { y: number } => point.y !== null);
  if (scored.length === 0) {
    return html`<p class="muted">No day in the last ${HISTORY_DAYS} days has enough data for a score yet.</p>`;
  }
  const values = scored.map((point) => point.y);
  const label =
    `Recovery score per day from ${dayLabel(data.historyFrom)} to ${dayLabel(data.today)}, 0 to 100: ` +
    `${scored.length} of ${HISTORY_DAYS} days have a score, from ${Math.round(Math.min(...values))} ` +
    `to ${Math.round(Math.max(...values))}; days without enough data are gaps.`;
  return html`<ul class="legend" aria-hidden="true">
      <li><span class="swatch swatch-score"></span>Score</li>
      <li><span class="swatch zone-ready"></span>Ready (≥ ${READY_MIN_SCORE})</li>
      <li><span class="swatch zone-maintain"></span>Maintain (${MAINTAIN_MIN_SCORE}–${READY_MIN_SCORE})</li>
      <li><span class="swatch zone-recover"></span>Recover (&lt; ${MAINTAIN_MIN_SCORE})</li>
    </ul>
    ${lineChart({
      ariaLabel: label,
      title: 'Recovery score, last 90 days',
      x: { min: 0, max: HISTORY_DAYS - 1, ticks: monthTicks(dates), title: 'Date' },
      y: {
        min: 0,
        max: 100,
        ticks: [0, 20, 40, 60, 80, 100].map((value) => ({ value, label: String(value) })),
        title: 'Recovery score (0–100)',
      },
      yBands: [
        { from: READY_MIN_SCORE, to: 100, className: 'zone-ready' },
        { from: MAINTAIN_MIN_SCORE, to: READY_MIN_SCORE, className: 'zone-maintain' },
        { from: 0, to: MAINTAIN_MIN_SCORE, className: 'zone-recover' },
      ],
      series: [{ className: 'score', points }],
    })}`;
}

const LOAD_SERIES = [
  { key: 'ctl', label: 'CTL (fitness)' },
  { key: 'atl', label: 'ATL (fatigue)' },
  { key: 'tsb', label: 'TSB (form)' },
] as const;

function trainingLoadChart(data: DashboardData): SafeHtml {
  if (data.load.length === 0) {
    return html`<p class="muted">No training load yet: it starts with your first workout or wellness day.</p>`;
  }
  const dates = historyDates(data.historyFrom);
  const byDate = new Map(data.load.map((day) => [day.date, day]));
  const all = data.load.flatMap((day) => LOAD_SERIES.map(({ key }) => round1(day[key])));
  const ticks = niceTicks(Math.min(0, ...all), Math.max(10, ...all));
  const latest = data.load.at(-1);
  const series = LOAD_SERIES.map(({ key, label }) => ({
    className: key,
    points: dates.map((date, index): ChartPoint => {
      const day = byDate.get(date);
      const value = day === undefined ? null : round1(day[key]);
      return {
        x: index,
        y: value,
        data: html`data-date="${date}" data-value="${value ?? ''}" data-series="${key}"`,
        title: `${dayLabel(date)}: ${label} ${value ?? 'none'}`,
      };
    }),
  }));
  const label =
    `Training load per day from ${dayLabel(data.historyFrom)} to ${dayLabel(data.today)}: CTL (fitness), ` +
    `ATL (fatigue) and TSB (form).` +
    (latest
      ? ` On ${dayLabel(latest.date)}: CTL ${round1(latest.ctl)}, ATL ${round1(latest.atl)}, TSB ${round1(latest.tsb)}.`
      : '');
  return html`<ul class="legend" aria-hidden="true">
      ${LOAD_SERIES.map(({ key, label: name }) => html`<li><span class="swatch swatch-${key}"></span>${name}</li>`)}
    </ul>
    ${lineChart({
      ariaLabel: label,
      title: 'CTL, ATL and TSB, last 90 days',
      x: { min: 0, max: HISTORY_DAYS - 1, ticks: monthTicks(dates), title: 'Date' },
      y: {
        min: ticks[0] ?? 0,
        max: ticks.at(-1) ?? 1,
        ticks: ticks.map((value) => ({ value, label: String(value) })),
        title: 'Training stress per day',
      },
      series,
    })}`;
}

/** Hour ticks every 6 hours (labelled), day boundaries (major) and day names under noon. */
function fuelTicks(points: FuelTimeline['points']): AxisTick[] {
  const ticks: AxisTick[] = [];
  for (const point of points) {
    const clock = clockOf(point.at);
    const at = Date.parse(point.at);
    if (clock === '00:00') ticks.push({ value: at, label: '', grid: 'major' });
    else if (clock === '06:00' || clock === '12:00' || clock === '18:00') {
      ticks.push({ value: at, label: clock.slice(0, 2), grid: 'minor' });
    }
    if (clock === '12:00') ticks.push({ value: at, label: dayLabel(point.at.slice(0, 10)), row: 1, grid: 'none' });
  }
  return ticks;
}

/** Planned and recorded workouts: bands across the glycogen chart. */
function workoutBands(timeline: FuelTimeline): ChartBand[] {
  return timeline.workouts.map((workout) => ({
    from: Date.parse(workout.start),
    to: Date.parse(workout.end),
    className: `workout ${workout.kind}`,
    data: html`data-workout-id="${workout.id}" data-kind="${workout.kind}"`,
    title: `${workout.title ?? 'Workout'} (${workout.kind}), ${whenOf(workout.start)}–${clockOf(workout.end)}`,
  }));
}

/** The meals, and now if it falls within the chart's span. */
function fuelMarkers(data: DashboardData, timeline: FuelTimeline, span: { start: number; end: number }): ChartMarker[] {
  const nowMs = data.now.getTime();
  const meals = timeline.meals.map((meal) => ({
    at: Date.parse(meal.at),
    className: 'meal',
    data: html`data-meal="${meal.name}" data-carbs-g="${meal.carbsG}" data-at="${meal.at}"`,
    title: `${meal.name}: ${grams(meal.carbsG)} carbohydrate (${meal.absorptionType.toLowerCase()}), ${whenOf(meal.at)}`,
  }));
  if (nowMs < span.start || nowMs > span.end) return meals;
  return [
    ...meals,
    { at: nowMs, className: 'now', title: `Now, ${clockOf(formatInZone(nowMs, data.timeZone))}`, label: 'now' },
  ];
}

function glycogenPoints(timeline: FuelTimeline): ChartPoint[] {
  return timeline.points.map((point) => ({
    x: Date.parse(point.at),
    y: point.percent,
    data: html`data-at="${point.at}" data-percent="${point.percent}" data-series="glycogen"`,
    title: `${whenOf(point.at)}: ${percent(point.percent)} (${grams(point.totalG)})`,
  }));
}

/** The chart's accessible name: the span, the lowest and highest level, what is marked. */
function fuelChartLabel(data: DashboardData, timeline: FuelTimeline, first: FuelTimeline['points'][number]): string {
  const lowest = timeline.points.reduce((low, point) => (point.percent < low.percent ? point : low), first);
  const highest = timeline.points.reduce((high, point) => (point.percent > high.percent ? point : high), first);
  const planned = timeline.workouts.filter((workout) => workout.kind === 'planned');
  return (
    `Glycogen (liver and muscle) as a percentage of capacity from ${dayLabel(data.today)} to ` +
    `${dayLabel(addDays(data.today, FUEL_DAYS - 1))}: lowest ${percent(lowest.percent)} on ${whenOf(lowest.at)}, ` +
    `highest ${percent(highest.percent)}. ${timeline.meals.length} meals and ${planned.length} planned workouts marked.`
  );
}

function mealList(timeline: FuelTimeline): SafeHtml {
  if (timeline.meals.length === 0) return html`<p class="muted">No meals logged in these days.</p>`;
  return html`<h3>Meals</h3>
    <ul class="meals">
      ${timeline.meals.map(
        (meal) =>
          html`<li>
            <time datetime="${meal.at}">${whenOf(meal.at)}</time> · ${meal.name}: ${grams(meal.carbsG)} carbohydrate
            (${meal.absorptionType.toLowerCase()})
          </li>`,
      )}
    </ul>`;
}

function fuelChart(data: DashboardData, timeline: FuelTimeline): SafeHtml {
  const first = timeline.points[0];
  const last = timeline.points.at(-1);
  if (!first || !last) {
    return html`<p class="muted">No glycogen forecast yet: it is computed shortly after your first data arrives.</p>`;
  }
  const span = { start: Date.parse(first.at) - QUARTER_HOUR_MS, end: Date.parse(last.at) };
  // Whole hours of the athlete's clock (the offset may be a half hour), read from the written time.
  const onTheHour = new Set(
    timeline.points.filter((point) => point.at.slice(14, 16) === '00').map((point) => Date.parse(point.at)),
  );
  return html`<ul class="legend" aria-hidden="true">
      <li><span class="swatch swatch-glycogen"></span>Glycogen</li>
      <li><span class="swatch workout planned"></span>Planned workout</li>
      <li><span class="swatch workout recorded"></span>Recorded workout</li>
      <li><span class="swatch swatch-meal"></span>Meal</li>
    </ul>
    ${lineChart({
      ariaLabel: fuelChartLabel(data, timeline, first),
      title: 'Glycogen, next 3 days',
      x: { min: span.start, max: span.end, ticks: fuelTicks(timeline.points), title: `Time of day (${data.timeZone})` },
      y: {
        min: 0,
        max: 100,
        ticks: [0, 25, 50, 75, 100].map((value) => ({ value, label: String(value) })),
        title: 'Glycogen (% of capacity)',
      },
      // No line for a combined threshold: liver and muscle are judged apart (docs/science.md §3).
      yRules: [],
      xBands: workoutBands(timeline),
      markers: fuelMarkers(data, timeline, span),
      // The line has a vertex every 15 minutes; a marker with its numbers every hour keeps the chart legible.
      series: [
        { className: 'glycogen', points: glycogenPoints(timeline), markerAt: (point) => onTheHour.has(point.x) },
      ],
    })}
    ${mealList(timeline)}`;
}

function plannedFuelItem({ workout, fuel }: PlannedFuel): SafeHtml {
  const time = workout.timeOfDay === null ? 'any time' : workout.timeOfDay;
  return html`<li class="plan" data-workout-id="${workout.id}">
    <h4>${workout.title}</h4>
    <p class="muted">${dayLabel(workout.date)}, ${time} · ${workout.sport}</p>
    <p>
      <span class="fuel-status fuel-${fuel.status}" data-status="${fuel.status}">${FUEL_STATUS_LABELS[fuel.status]}</span>
      ${fuel.limitingStore === null ? '' : `${fuel.limitingStore === 'liver' ? 'Liver' : 'Muscle'} limits. `}Start
      ${percent(fuel.start.percent)} (liver ${grams(fuel.start.liverG)}), lowest ${percent(fuel.minimum.percent)} at
      ${clockOf(fuel.minimum.at)}, end ${percent(fuel.end.percent)} (liver ${grams(fuel.end.liverG)}).
    </p>
    ${
      fuel.advice.length === 0
        ? html`<p class="muted">No advice: the stores are enough for this workout.</p>`
        : html`<ol class="advice">
            ${fuel.advice.map(
              (item) =>
                html`<li data-at="${item.at}" data-carbs-g="${item.carbsG}">
                  <time datetime="${item.at}">${whenOf(item.at)}</time> ·
                  <strong>${grams(item.carbsG)} ${item.absorptionType.toLowerCase()}</strong>
                  <span class="reason">${item.reason}</span>
                </li>`,
            )}
          </ol>`
    }
  </li>`;
}

function fuelSection(data: DashboardData): SafeHtml {
  if (data.fuel === null) {
    return html`<p class="muted" id="fuel-off">
      Nutrition is switched off for your account, so there is no glycogen forecast. Turn the nutrition feature on
      in your profile to see it.
    </p>`;
  }
  const { timeline, planned } = data.fuel;
  return html`${fuelChart(data, timeline)}
    <h3>Planned workouts</h3>
    ${
      planned.length === 0
        ? html`<p class="muted">No planned workouts with a duration in these days.</p>`
        : html`<ul class="plans">
            ${planned.map(plannedFuelItem)}
          </ul>`
    }
    ${
      timeline.assumptions.length === 0
        ? undefined
        : html`<details>
            <summary>What the model assumed</summary>
            <ul>
              ${timeline.assumptions.map((assumption) => html`<li>${assumption}</li>`)}
            </ul>
          </details>`
    }`;
}

function dashboardPage(data: DashboardData): string {
  const today = data.recovery.find((day) => day.date === data.today);
  return page(
    'Dashboard',
    html`<h1>Dashboard</h1>
      <p>${longDayFormat.format(Date.parse(`${data.today}T00:00:00Z`))}, in your time zone (${data.timeZone}).</p>
      ${section('recovery-today', 'Recovery today', recoveryToday(today, data.today))}
      ${section('recovery-history', `Recovery, last ${HISTORY_DAYS} days`, recoveryChart(data))}
      ${section('training-load', `Training load, last ${HISTORY_DAYS} days`, trainingLoadChart(data))}
      ${section('fuel', `Glycogen, next ${FUEL_DAYS} days`, fuelSection(data))}
      <nav><a href="/">Home</a> · <a href="/settings">Settings</a></nav>`,
    'page-dashboard',
  );
}

/** `/dashboard`: the signed-in athlete's recovery, training load and glycogen, drawn from the stored results. */
export function dashboardPages(deps: PageDeps): Router {
  const router = Router();
  router.get('/dashboard', async (req: Request, res: Response) => {
    const user = signedInUserOr303(req, res);
    if (!user) return;
    sendPage(res, dashboardPage(await loadDashboard(deps.db, user, new Date())));
  });
  return router;
}

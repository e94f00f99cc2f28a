import {
  FUEL_MEAL_SOURCES,
  PAGE_LIMIT_MAX,
  USER_SCOPES,
  RECOVERY_COMPONENTS,
  type FuelAdvicePhase,
  type FuelLimitingStore,
  type FuelMealSource,
  type FuelStatus,
  type FuelTimeline,
  type Recommendation,
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
import { addDays, daysBetween, formatInZone, localDateOf } from '../../lib/dates.ts';
import {
  getLoadOutlook,
  getRecoveryPage,
  getTrainingLoad,
  type LoadOutlook,
} from '../../modules/derived/analytics.service.ts';
import { LIVER_RISK_G, MUSCLE_FLOOR_FRACTION } from '../../modules/derived/glycogen.constants.ts';
import { LOAD_PROJECTION_DAYS } from '../../modules/derived/load-projection.ts';
import {
  acceptRecommendation,
  dismissRecommendation,
  listRecommendationsOf,
} from '../../modules/derived/recommendations.service.ts';
import {
  ctlEnteringDay,
  RAMP_TOO_STEEP_CTL_PER_WEEK,
  TRAINING_HISTORY_MIN_DAYS,
} from '../../modules/derived/training-load.model.ts';
import {
  FORM_ZONE_PERCENT_BOUNDS,
  FORM_ZONES,
  type FormZone,
  formPercentOf,
  formZoneOfPercent,
  MAINTAIN_MIN_SCORE,
  READY_MIN_SCORE,
} from '../../modules/derived/recovery.model.ts';
import { getFuelTimeline, getPlannedWorkoutFuel } from '../../modules/derived/fuel.service.ts';
import { listPlannedWorkoutPage } from '../../modules/planned-workouts/planned-workouts.service.ts';
import type { PageDeps } from './account.pages.ts';
import {
  type AxisTick,
  type ChartBand,
  type ChartBar,
  type ChartMarker,
  type ChartPoint,
  type ChartSeries,
  lineChart,
  niceTicks,
} from './dashboard-charts.ts';
import { formPost, noticeOf } from './forms.ts';
import { csrfTokenFor } from './csrf.ts';
import { html, page, postButton, type SafeHtml, sendPage, statusNotice } from './html.ts';
import { signedInUserOr303 } from './session-guard.ts';

/** Days of recovery and training load drawn, ending today. */
const HISTORY_DAYS = 90;
/** Days of glycogen drawn: today and the two after it. */
const FUEL_DAYS = 3;
/** Days of planned workouts listed with their fuel status and plan: today and the six after it. */
const PLAN_DAYS = 7;
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
  readonly outlook: LoadOutlook;
  /** `null` while the nutrition feature is off. */
  readonly fuel: { readonly timeline: FuelTimeline; readonly planned: readonly PlannedFuel[] } | null;
  /** The open recommendations, newest first. */
  readonly recommendations: readonly Recommendation[];
  /** The form token of this page's Accept and Dismiss buttons. */
  readonly csrf: string;
  readonly notice: string | undefined;
  readonly error: string | undefined;
}

/** Open recommendations shown at most; the REST list has them all. */
const RECOMMENDATIONS_SHOWN = 20;

async function loadFuel(db: Db, actor: Actor, today: string, now: Date): Promise<DashboardData['fuel']> {
  const [timeline, planned] = await Promise.all([
    getFuelTimeline(db, actor, { from: today, to: addDays(today, FUEL_DAYS - 1) }, now),
    listPlannedWorkoutPage(db, actor, { from: today, to: addDays(today, PLAN_DAYS - 1), limit: PAGE_LIMIT_MAX }),
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

interface PageState {
  readonly csrf: string;
  readonly notice: string | undefined;
  readonly error: string | undefined;
}

async function loadDashboard(db: Db, user: User, now: Date, state: PageState): Promise<DashboardData> {
  const actor = actorOfSessionUser(user);
  const today = localDateOf(now, user.timeZone);
  const historyFrom = addDays(today, -(HISTORY_DAYS - 1));
  const [recovery, load, outlook, fuel, recommendations] = await Promise.all([
    getRecoveryPage(db, actor, { from: historyFrom, to: today, limit: PAGE_LIMIT_MAX }),
    getTrainingLoad(db, actor, { from: historyFrom, to: today }),
    getLoadOutlook(db, actor, now),
    user.featureFlags.nutrition !== false ? loadFuel(db, actor, today, now) : Promise.resolve(null),
    listRecommendationsOf(db, actor, { status: 'open', limit: RECOMMENDATIONS_SHOWN }),
  ]);
  return {
    timeZone: user.timeZone,
    today,
    now,
    historyFrom,
    recovery: recovery.items,
    load: load.items,
    outlook,
    fuel,
    recommendations: recommendations.items,
    ...state,
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
const STORE_LABELS: Record<FuelLimitingStore, string> = { liver: 'Liver', muscle: 'Muscle' };
const MEAL_SOURCE_LABELS: Record<FuelMealSource, string> = {
  logged: 'Logged meal',
  planned: 'Planned meal',
  assumed: 'Assumed meal (your usual intake)',
};
const PHASE_LABELS: Record<FuelAdvicePhase, string> = { before: 'Before', during: 'During', after: 'After' };
const FORM_ZONE_LABELS: Record<FormZone, string> = {
  transition: 'Transition',
  fresh: 'Fresh',
  grey: 'Grey zone',
  optimal: 'Optimal training',
  high_risk: 'High risk',
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
    <td class="num" data-label="Value">${component.value === null ? '–' : row.value(component.value)}</td>
    <td class="num" data-label="Normal range">
      ${baseline && row.range ? row.range(baseline.low, baseline.high) : '–'}
    </td>
    <td class="num" data-label="Score">${component.score === null ? '–' : Math.round(component.score)}</td>
    <td class="num" data-label="Weight">
      ${component.weight === null ? html`<span class="muted">left out</span>` : percent(component.weight * 100)}
    </td>
    <td class="detail" data-label="What it saw">${component.detail}</td>
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
    <div class="table-wrap stack">
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

/** Days on the load charts' x axis: the history, then the projection. */
const LOAD_AXIS_DAYS = HISTORY_DAYS + LOAD_PROJECTION_DAYS;

/** A signed number with one decimal: `+3.2`, `−4.0` (a true minus sign). */
function signed(value: number): string {
  const rounded = round1(value);
  return `${rounded > 0 ? '+' : rounded < 0 ? '−' : '±'}${Math.abs(rounded).toFixed(1)}`;
}

/** The history's and the projection's dates with their x (history first: a day's x is its index). */
function loadDates(data: DashboardData): { date: string; x: number }[] {
  return Array.from({ length: LOAD_AXIS_DAYS }, (_, index) => ({ date: addDays(data.historyFrom, index), x: index }));
}

type LoadKey = 'ctl' | 'atl' | 'tsb';
const LOAD_LABELS: Record<LoadKey, string> = { ctl: 'CTL (fitness)', atl: 'ATL (fatigue)', tsb: 'TSB (form)' };
/** The drawn lines: CTL and ATL in TSS/day, form in percent of fitness. */
type LineKey = 'ctl' | 'atl' | 'form';
const LINE_LABELS: Record<LineKey, string> = { ctl: 'CTL (fitness)', atl: 'ATL (fatigue)', form: 'Form' };

/** A stored or projected day, as the lines read it. */
interface LoadNumbers {
  readonly tss: number;
  readonly ctl: number;
  readonly atl: number;
  readonly tsb: number;
}

/**
 * The form panel spans at most this far either side of 0 % (docs/science.md
 * §1.1): a day beyond (CTL still tiny) is a gap rather than a squashed panel.
 */
const FORM_AXIS_LIMIT_PERCENT = 100;

/** Form as the recovery model reads it: TSB in percent of the CTL it was computed from. */
const formPercentOfDay = (day: LoadNumbers) => formPercentOf(day.tsb, ctlEnteringDay(day));

/** A line's drawn value of one day (one decimal), or null where the form panel leaves a gap. */
function lineValue(day: LoadNumbers, key: LineKey): number | null {
  if (key !== 'form') return round1(day[key]);
  const percent = formPercentOfDay(day);
  return Math.abs(percent) > FORM_AXIS_LIMIT_PERCENT ? null : round1(percent);
}

function lineTitle(day: LoadNumbers, key: LineKey): string {
  if (key !== 'form') return `${LINE_LABELS[key]} ${round1(day[key])}`;
  const percent = formPercentOfDay(day);
  return (
    `form ${signed(percent)} % of fitness (TSB ${signed(day.tsb)}), ` +
    `${FORM_ZONE_LABELS[formZoneOfPercent(percent)].toLowerCase()}`
  );
}

/**
 * One CTL, ATL or form line over the stored days, and its dashed projection
 * (joined to today's stored value, which carries no marker of its own there).
 */
function loadSeries(data: DashboardData, key: LineKey): ChartSeries[] {
  const byDate = new Map(data.load.map((day) => [day.date, day]));
  const history = historyDates(data.historyFrom).map((date, index): ChartPoint => {
    const day = byDate.get(date);
    const value = day === undefined ? null : lineValue(day, key);
    return {
      x: index,
      y: value,
      data: html`data-date="${date}" data-value="${value ?? ''}" data-series="${key}"`,
      title: `${dayLabel(date)}: ${day === undefined ? 'no data' : lineTitle(day, key)}`,
    };
  });
  const series: ChartSeries[] = [{ className: key, points: history }];
  const projection = data.outlook.projection;
  const todayPoint = history.at(-1);
  if (projection.length === 0) return series;
  const projected = projection.map((day, index): ChartPoint => {
    const value = lineValue(day, key);
    return {
      x: HISTORY_DAYS + index,
      y: value,
      data: html`data-date="${day.date}" data-value="${value ?? ''}" data-series="${key}-projection"`,
      title: `${dayLabel(day.date)} (projected from planned workouts): ${lineTitle(day, key)}`,
    };
  });
  return [
    ...series,
    {
      className: `${key} projection`,
      // Joined to today's value when today has one (form beyond ±100 % is a gap).
      points: todayPoint === undefined || todayPoint.y === null ? projected : [todayPoint, ...projected],
      markerAt: (point) => point.x >= HISTORY_DAYS,
    },
  ];
}

/** Each day's stress as a bar: recorded days solid, planned days (the projection) hollow. */
function stressBars(data: DashboardData): ChartBar[] {
  const byDate = new Map(data.load.map((day) => [day.date, day]));
  const recorded = historyDates(data.historyFrom).flatMap((date, index): ChartBar[] => {
    const tss = byDate.get(date)?.tss ?? 0;
    if (tss <= 0) return [];
    return [
      {
        x: index,
        value: tss,
        className: 'tss',
        data: html`data-date="${date}" data-value="${round1(tss)}" data-series="tss"`,
        title: `${dayLabel(date)}: ${Math.round(tss)} TSS`,
      },
    ];
  });
  const planned = data.outlook.projection.flatMap((day, index): ChartBar[] =>
    day.tss <= 0
      ? []
      : [
          {
            x: HISTORY_DAYS + index,
            value: day.tss,
            className: 'tss planned',
            data: html`data-date="${day.date}" data-value="${round1(day.tss)}" data-series="tss-planned"`,
            title: `${dayLabel(day.date)}: ${Math.round(day.tss)} TSS planned`,
          },
        ],
  );
  return [...recorded, ...planned];
}

/** The first of each month on the load axis, labelled `1 Oct`. */
function loadTicks(data: DashboardData): AxisTick[] {
  return loadDates(data).flatMap(({ date, x }) =>
    date.endsWith('-01') ? [{ value: x, label: monthDayFormat.format(Date.parse(`${date}T00:00:00Z`)) }] : [],
  );
}

function todayMarker(): ChartMarker {
  return { at: HISTORY_DAYS - 1, className: 'now', title: 'Today: the projection starts after it', label: 'today' };
}

/**
 * The first 42 days of training (docs/science.md §1.1): CTL is still building
 * from 0, so form in percent reads how new the training is, and the recovery
 * score leaves form out. `null` when no such day is on the load axis.
 */
function buildingSpan(data: DashboardData): { from: number; to: number; until: string } | null {
  const first = data.outlook.firstWorkoutDate;
  if (first === null) return null;
  const until = addDays(first, TRAINING_HISTORY_MIN_DAYS);
  const from = Math.max(0, daysBetween(data.historyFrom, first)) - 0.5;
  const to = Math.min(LOAD_AXIS_DAYS - 1, daysBetween(data.historyFrom, until)) - 0.5;
  return to <= from ? null : { from, to, until };
}

/** Today's numbers in words and figures: what the charts end with. */
function loadToday(data: DashboardData, latest: TrainingLoadDay): SafeHtml {
  const ramp = data.outlook.rampCtlPerWeek;
  const form = formPercentOfDay(latest);
  const zone = formZoneOfPercent(form);
  const figure = (key: LoadKey, value: number, shown: string) =>
    html`<div class="figure" data-key="${key}" data-value="${round1(value)}">
      <dt>${LOAD_LABELS[key]}</dt>
      <dd>${shown}</dd>
    </div>`;
  return html`<dl class="load-today" data-date="${latest.date}">
      ${figure('ctl', latest.ctl, round1(latest.ctl).toFixed(1))} ${figure('atl', latest.atl, round1(latest.atl).toFixed(1))}
      ${figure('tsb', latest.tsb, signed(latest.tsb))}
      <div class="figure" data-key="form" data-value="${round1(form)}">
        <dt>Form (% of fitness)</dt>
        <dd>${signed(form)} %</dd>
      </div>
      <div class="figure" data-key="ramp" data-value="${ramp === null ? '' : round1(ramp)}">
        <dt>Ramp (CTL change in 7 days)</dt>
        <dd>${ramp === null ? '–' : `${signed(ramp)} per week`}</dd>
      </div>
    </dl>
    <p class="muted">
      Form today is ${signed(form)} % of fitness: the
      <strong data-zone="${zone}">${zoneName(zone)}</strong> (${zoneRange(zone)}).
      ${
        data.outlook.firstWorkoutDate !== null &&
        daysBetween(data.outlook.firstWorkoutDate, data.today) < TRAINING_HISTORY_MIN_DAYS
          ? `Fitness is still building (under ${TRAINING_HISTORY_MIN_DAYS} days of training): the recovery score ` +
            `leaves form out until ${dayLabel(addDays(data.outlook.firstWorkoutDate, TRAINING_HISTORY_MIN_DAYS))}.`
          : ''
      }
      ${
        ramp !== null && ramp > RAMP_TOO_STEEP_CTL_PER_WEEK
          ? `Fitness is rising faster than ${RAMP_TOO_STEEP_CTL_PER_WEEK} per week: a ramp that steep is hard to sustain.`
          : `A ramp above +${RAMP_TOO_STEEP_CTL_PER_WEEK} per week is hard to sustain.`
      }
    </p>`;
}

/** CTL and ATL over the daily stress bars, with the projection dashed. */
function fitnessChart(data: DashboardData, latest: TrainingLoadDay): SafeHtml {
  const projected = data.outlook.projection;
  const values = [
    ...data.load.flatMap((day) => [day.tss, day.ctl, day.atl]),
    ...projected.flatMap((day) => [day.tss, day.ctl, day.atl]),
  ];
  const ticks = niceTicks(0, Math.max(10, ...values));
  const label =
    `Training stress per day (bars, TSS/day) with CTL (fitness) and ATL (fatigue) from ${dayLabel(data.historyFrom)} ` +
    `to ${dayLabel(data.today)}: on ${dayLabel(latest.date)} CTL ${round1(latest.ctl)}, ATL ${round1(latest.atl)}.` +
    (projected.length > 0 ? ` Dashed: the next ${projected.length} days projected from planned workouts.` : '');
  return lineChart({
    ariaLabel: label,
    title: 'Daily training stress, fitness and fatigue',
    x: { min: 0, max: LOAD_AXIS_DAYS - 1, ticks: loadTicks(data), title: 'Date' },
    y: {
      min: 0,
      max: ticks.at(-1) ?? 10,
      ticks: ticks.map((value) => ({ value, label: String(value) })),
      title: 'Training stress (TSS/day)',
    },
    bars: stressBars(data),
    markers: [todayMarker()],
    series: [...loadSeries(data, 'ctl'), ...loadSeries(data, 'atl')],
  });
}

/** A percentage with a true minus sign, e.g. `−30` (axis labels and zone ranges). */
const percentNumber = (value: number) => (value < 0 ? `−${Math.abs(value)}` : value > 0 ? `+${value}` : '0');

/** Form in percent of fitness over the recovery model's form zones, and its projection dashed. */
function formChart(data: DashboardData, latest: TrainingLoadDay): SafeHtml {
  const days: LoadNumbers[] = [...data.load, ...data.outlook.projection];
  const values = days.map(formPercentOfDay).filter((value) => Math.abs(value) <= FORM_AXIS_LIMIT_PERCENT);
  const ticks = niceTicks(Math.min(-40, ...values), Math.max(30, ...values));
  const low = ticks[0] ?? -40;
  const high = ticks.at(-1) ?? 30;
  const gaps = data.load.filter((day) => lineValue(day, 'form') === null).length;
  const building = buildingSpan(data);
  const today = formPercentOfDay(latest);
  const label =
    `Form as a percentage of fitness (100 × TSB ÷ CTL, entering each day) from ${dayLabel(data.historyFrom)} to ` +
    `${dayLabel(data.today)}, over the form zones: on ${dayLabel(latest.date)} ${signed(today)} %, ` +
    `${FORM_ZONE_LABELS[formZoneOfPercent(today)].toLowerCase()}.` +
    (gaps > 0 ? ` ${gaps} days beyond ±${FORM_AXIS_LIMIT_PERCENT} % (fitness still very low) are gaps.` : '');
  return lineChart({
    ariaLabel: label,
    title: 'Form (% of fitness) and its zones',
    x: { min: 0, max: LOAD_AXIS_DAYS - 1, ticks: loadTicks(data), title: 'Date' },
    y: {
      min: low,
      max: high,
      ticks: ticks.map((value) => ({ value, label: value < 0 ? `−${Math.abs(value)}` : String(value) })),
      title: 'Form (% of fitness)',
    },
    yBands: FORM_ZONES.map((zone) => ({
      from: Math.max(FORM_ZONE_PERCENT_BOUNDS[zone].from, low),
      to: Math.min(FORM_ZONE_PERCENT_BOUNDS[zone].to, high),
      className: `form-zone zone-${zone}`,
      data: html`data-zone="${zone}"`,
    })),
    ...(building === null
      ? {}
      : {
          xBands: [
            {
              from: building.from,
              to: building.to,
              className: 'building',
              data: html`data-building-until="${building.until}"`,
              title:
                `The first ${TRAINING_HISTORY_MIN_DAYS} days of training, until ${dayLabel(building.until)}: ` +
                'CTL is still building from 0, so form in percent mostly reads how new the training is.',
              label: 'CTL building',
            },
          ],
        }),
    markers: [todayMarker()],
    series: loadSeries(data, 'form'),
  });
}

/** `fresh zone`, `grey zone`: the label in a sentence, with "zone" once. */
function zoneName(zone: FormZone): string {
  const label = FORM_ZONE_LABELS[zone].toLowerCase();
  return label.endsWith(' zone') ? label : `${label} zone`;
}

function zoneRange(zone: FormZone): string {
  const { from, to } = FORM_ZONE_PERCENT_BOUNDS[zone];
  if (!Number.isFinite(to)) return `above ${percentNumber(from)} %`;
  if (!Number.isFinite(from)) return `below ${percentNumber(to)} %`;
  return `${percentNumber(from)} to ${percentNumber(to)} %`;
}

function trainingLoadSection(data: DashboardData): SafeHtml {
  const latest = data.load.at(-1);
  if (!latest) {
    return html`<p class="muted">No training load yet: it starts with your first workout or wellness day.</p>`;
  }
  const unscored = data.outlook.unscoredPlannedWorkouts;
  return html`${loadToday(data, latest)}
    <ul class="legend" aria-hidden="true">
      <li><span class="swatch swatch-tss"></span>Daily stress (TSS)</li>
      <li><span class="swatch swatch-tss-planned"></span>Planned stress</li>
      <li><span class="swatch swatch-ctl"></span>${LOAD_LABELS.ctl}</li>
      <li><span class="swatch swatch-atl"></span>${LOAD_LABELS.atl}</li>
      <li><span class="swatch swatch-projection"></span>Projection (${LOAD_PROJECTION_DAYS} days)</li>
    </ul>
    ${fitnessChart(data, latest)}
    <ul class="legend" aria-hidden="true">
      <li><span class="swatch swatch-form"></span>Form (TSB as % of CTL)</li>
      ${
        buildingSpan(data) === null
          ? undefined
          : html`<li><span class="swatch building"></span>CTL building (first ${TRAINING_HISTORY_MIN_DAYS} days of training)</li>`
      }
      ${FORM_ZONES.map(
        (zone) =>
          html`<li><span class="swatch zone-${zone}"></span>${FORM_ZONE_LABELS[zone]} (${zoneRange(zone)})</li>`,
      )}
    </ul>
    ${formChart(data, latest)}
    ${
      unscored === 0
        ? undefined
        : html`<p class="muted">
            ${unscored} planned ${unscored === 1 ? 'workout has' : 'workouts have'} neither a planned stress nor a
            duration: the projection counts ${unscored === 1 ? 'it' : 'them'} as 0.
          </p>`
    }`;
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

/** A planned workout's status and limiting store: the timeline's when it has them, else its own forecast's. */
interface WorkoutVerdict {
  readonly status: FuelStatus;
  readonly limitingStore: FuelLimitingStore | null;
}

function verdictsOf(fuel: NonNullable<DashboardData['fuel']>): Map<string, WorkoutVerdict> {
  const verdicts = new Map<string, WorkoutVerdict>(
    fuel.planned.map(({ workout, fuel: forecast }) => [
      workout.id,
      { status: forecast.status, limitingStore: forecast.limitingStore },
    ]),
  );
  for (const workout of fuel.timeline.workouts) {
    if (workout.fuelStatus !== null) {
      verdicts.set(workout.id, { status: workout.fuelStatus, limitingStore: workout.limitingStore });
    }
  }
  return verdicts;
}

/** `At risk · liver`: the status word, and the store that decides it when one does. */
function verdictLabel(verdict: WorkoutVerdict): string {
  const store = verdict.limitingStore === null ? '' : ` · ${STORE_LABELS[verdict.limitingStore].toLowerCase()}`;
  return `${FUEL_STATUS_LABELS[verdict.status]}${store}`;
}

/** Planned and recorded workouts: bands across the glycogen charts; the planned ones labelled with their status. */
function workoutBands(
  timeline: FuelTimeline,
  verdicts: ReadonlyMap<string, WorkoutVerdict>,
  labelled: boolean,
): ChartBand[] {
  return timeline.workouts.map((workout) => {
    const verdict = workout.kind === 'planned' ? verdicts.get(workout.id) : undefined;
    const when = `${whenOf(workout.start)}–${clockOf(workout.end)}`;
    return {
      from: Date.parse(workout.start),
      to: Date.parse(workout.end),
      className: `workout ${workout.kind}${verdict ? ` fuel-band-${verdict.status}` : ''}`,
      data: html`data-workout-id="${workout.id}" data-kind="${workout.kind}" data-status="${verdict?.status ?? ''}"
      data-limiting-store="${verdict?.limitingStore ?? ''}"`,
      title: `${workout.title ?? 'Workout'} (${workout.kind}), ${when}` + (verdict ? `: ${verdictLabel(verdict)}` : ''),
      ...(labelled && verdict ? { label: verdictLabel(verdict) } : {}),
    };
  });
}

/** The meals (drawn by where they come from), and now if it falls within the chart's span. */
function fuelMarkers(data: DashboardData, timeline: FuelTimeline, span: { start: number; end: number }): ChartMarker[] {
  const nowMs = data.now.getTime();
  const meals = timeline.meals.map((meal) => ({
    at: Date.parse(meal.at),
    className: `meal meal-${meal.source}`,
    data: html`data-meal="${meal.name}" data-carbs-g="${meal.carbsG}" data-at="${meal.at}" data-source="${meal.source}"`,
    title:
      `${MEAL_SOURCE_LABELS[meal.source]}: ${meal.name}, ${grams(meal.carbsG)} carbohydrate ` +
      `(${meal.absorptionType.toLowerCase()}), ${whenOf(meal.at)}`,
  }));
  if (nowMs < span.start || nowMs > span.end) return meals;
  return [
    ...meals,
    { at: nowMs, className: 'now', title: `Now, ${clockOf(formatInZone(nowMs, data.timeZone))}`, label: 'now' },
  ];
}

type Store = 'liver' | 'muscle';

function storePoints(timeline: FuelTimeline, store: Store): ChartPoint[] {
  return timeline.points.map((point) => {
    const value = store === 'liver' ? point.liverG : point.muscleG;
    return {
      x: Date.parse(point.at),
      y: value,
      data: html`data-at="${point.at}" data-grams="${value}" data-series="${store}"`,
      title: `${whenOf(point.at)}: ${STORE_LABELS[store].toLowerCase()} ${grams(value)} (all glycogen ${percent(point.percent)})`,
    };
  });
}

/** The chart's accessible name: the span, the store's lowest point, what is marked. */
function storeChartLabel(data: DashboardData, timeline: FuelTimeline, store: Store): string {
  const valueOf = (point: FuelTimeline['points'][number]) => (store === 'liver' ? point.liverG : point.muscleG);
  const lowest = timeline.points.reduce((low, point) => (valueOf(point) < valueOf(low) ? point : low));
  const capacity = store === 'liver' ? timeline.capacity.liverG : timeline.capacity.muscleG;
  const planned = timeline.workouts.filter((workout) => workout.kind === 'planned');
  return (
    `${STORE_LABELS[store]} glycogen in grams (capacity ${grams(capacity)}) from ${dayLabel(data.today)} to ` +
    `${dayLabel(addDays(data.today, FUEL_DAYS - 1))}: lowest ${grams(valueOf(lowest))} on ${whenOf(lowest.at)}. ` +
    `${timeline.meals.length} meals and ${planned.length} planned workouts marked.`
  );
}

function mealList(timeline: FuelTimeline): SafeHtml {
  if (timeline.meals.length === 0) return html`<p class="muted">No meals logged in these days.</p>`;
  const counts = FUEL_MEAL_SOURCES.flatMap((source) => {
    const count = timeline.meals.filter((meal) => meal.source === source).length;
    return count === 0 ? [] : [`${count} ${source}`];
  });
  return html`<details class="meals">
    <summary>Meals in these days (${counts.join(', ')})</summary>
    <ul>
      ${timeline.meals.map(
        (meal) =>
          html`<li data-source="${meal.source}">
            <time datetime="${meal.at}">${whenOf(meal.at)}</time> · ${meal.name}: ${grams(meal.carbsG)} carbohydrate
            (${meal.absorptionType.toLowerCase()}) · <em>${meal.source}</em>
          </li>`,
      )}
    </ul>
  </details>`;
}

/** One store's chart: its grams, its capacity and floor as rules, workouts as bands. */
function storeChart(
  data: DashboardData,
  timeline: FuelTimeline,
  verdicts: ReadonlyMap<string, WorkoutVerdict>,
  store: Store,
): SafeHtml {
  const first = timeline.points[0];
  const last = timeline.points.at(-1);
  if (!first || !last) return html``;
  const span = { start: Date.parse(first.at) - QUARTER_HOUR_MS, end: Date.parse(last.at) };
  // Whole hours of the athlete's clock (the offset may be a half hour), read from the written time.
  const onTheHour = new Set(
    timeline.points.filter((point) => point.at.slice(14, 16) === '00').map((point) => Date.parse(point.at)),
  );
  const capacity = store === 'liver' ? timeline.capacity.liverG : timeline.capacity.muscleG;
  const floor = store === 'liver' ? LIVER_RISK_G : capacity * MUSCLE_FLOOR_FRACTION;
  // Headroom above the capacity keeps its rule and label inside the plot.
  const ticks = niceTicks(0, capacity * 1.05, 6);
  return lineChart({
    ariaLabel: storeChartLabel(data, timeline, store),
    title: `${STORE_LABELS[store]} glycogen, next ${FUEL_DAYS} days`,
    x: { min: span.start, max: span.end, ticks: fuelTicks(timeline.points), title: `Time of day (${data.timeZone})` },
    y: {
      min: 0,
      max: ticks.at(-1) ?? capacity,
      ticks: ticks.map((value) => ({ value, label: String(value) })),
      title: `${STORE_LABELS[store]} glycogen (g)`,
    },
    yRules: [
      { value: capacity, className: 'rule-target', label: `capacity ${grams(capacity)}` },
      { value: floor, className: 'rule-floor', label: `${store === 'liver' ? 'risk' : 'floor'} ${grams(floor)}` },
    ],
    // The status labels go on the liver chart (the top one); the muscle chart repeats only the bands.
    xBands: workoutBands(timeline, verdicts, store === 'liver'),
    markers: fuelMarkers(data, timeline, span),
    // The line has a vertex every 15 minutes; a marker with its numbers every hour keeps the chart legible.
    series: [{ className: store, points: storePoints(timeline, store), markerAt: (point) => onTheHour.has(point.x) }],
  });
}

function fuelCharts(data: DashboardData, fuel: NonNullable<DashboardData['fuel']>): SafeHtml {
  const { timeline } = fuel;
  if (timeline.points.length === 0) {
    return html`<p class="muted">No glycogen forecast yet: it is computed shortly after your first data arrives.</p>`;
  }
  const verdicts = verdictsOf(fuel);
  return html`<ul class="legend" aria-hidden="true">
      <li><span class="swatch swatch-liver"></span>Liver (grams)</li>
      <li><span class="swatch swatch-muscle"></span>Muscle (grams)</li>
      <li><span class="swatch swatch-rule-target"></span>Capacity</li>
      <li><span class="swatch swatch-rule-floor"></span>Risk line / floor</li>
      <li><span class="swatch workout planned"></span>Planned workout</li>
      <li><span class="swatch workout recorded"></span>Recorded workout</li>
      ${FUEL_MEAL_SOURCES.map(
        (source) => html`<li><span class="swatch swatch-meal-${source}"></span>${MEAL_SOURCE_LABELS[source]}</li>`,
      )}
    </ul>
    ${storeChart(data, timeline, verdicts, 'liver')} ${storeChart(data, timeline, verdicts, 'muscle')}
    ${mealList(timeline)}`;
}

/** The advice's short plan: the server's plan lines, or one line per phase summed from the items. */
function planLines(fuel: PlannedWorkoutFuel): { phase: FuelAdvicePhase; text: string }[] {
  if (fuel.plan.length > 0) return fuel.plan;
  const phases: FuelAdvicePhase[] = ['before', 'during', 'after'];
  return phases.flatMap((phase) => {
    const items = fuel.advice.filter((item) => item.phase === phase);
    if (items.length === 0) return [];
    const total = items.reduce((sum, item) => sum + item.carbsG, 0);
    const from = items[0]?.at ?? '';
    const to = items.at(-1)?.at ?? '';
    const window = from === to ? `at ${clockOf(from)}` : `from ${clockOf(from)} to ${clockOf(to)}`;
    return [
      {
        phase,
        text: `${grams(total)} carbohydrate in ${items.length} ${items.length === 1 ? 'item' : 'items'}, ${window}`,
      },
    ];
  });
}

/** A plan line's text without the phase word it may start with (the page writes the phase itself). */
function withoutPhase(line: { phase: FuelAdvicePhase; text: string }): string {
  const prefix = `${PHASE_LABELS[line.phase]}:`;
  return line.text.startsWith(prefix) ? line.text.slice(prefix.length).trimStart() : line.text;
}

/**
 * The advice as its short plan, one line per phase. Collapsed (a `<details>`
 * opening to the timed items) when there are items; the plan alone when the
 * server gave plan lines but no items (e.g. the in-ride line of a `not_logged`
 * workout); "no advice" only when there is neither.
 */
function adviceDetails(fuel: PlannedWorkoutFuel): SafeHtml {
  const lines = planLines(fuel);
  if (lines.length === 0) {
    return fuel.status === 'not_logged'
      ? html``
      : html`<p class="muted">No advice: the stores are enough for this workout.</p>`;
  }
  const planText = lines.map(
    (line) =>
      html`<span class="plan-line" data-phase="${line.phase}"><strong>${PHASE_LABELS[line.phase]}:</strong> ${withoutPhase(line)}</span>`,
  );
  if (fuel.advice.length === 0) {
    return html`<div class="advice-plan">
      <span class="plan-title">Fuel plan</span>
      ${planText}
    </div>`;
  }
  return html`<details class="advice-plan">
    <summary>
      <span class="plan-title">Fuel plan</span>
      ${planText}
    </summary>
    <ol class="advice">
      ${fuel.advice.map(
        (item) =>
          html`<li data-at="${item.at}" data-carbs-g="${item.carbsG}" data-phase="${item.phase}">
            <time datetime="${item.at}">${whenOf(item.at)}</time> ·
            <strong>${grams(item.carbsG)} ${item.absorptionType.toLowerCase()}</strong>
            <span class="reason">${item.reason}</span>
          </li>`,
      )}
    </ol>
  </details>`;
}

/** The stores the forecast saw, or, with no meals to judge by, what to do for a status. */
function storesLine(fuel: PlannedWorkoutFuel): SafeHtml {
  if (fuel.status === 'not_logged') {
    return html`<span class="not-logged-note">Log or plan meals for a fuel status.</span>`;
  }
  return html`Start liver ${grams(fuel.start.liverG)}, muscle ${grams(fuel.start.muscleG)}; lowest liver
    ${grams(fuel.minimum.liverG)} at ${clockOf(fuel.minimum.at)}; end liver ${grams(fuel.end.liverG)}, muscle
    ${grams(fuel.end.muscleG)}.`;
}

function plannedFuelItem({ workout, fuel }: PlannedFuel): SafeHtml {
  const time = workout.timeOfDay === null ? 'any time' : workout.timeOfDay;
  return html`<li class="plan" data-workout-id="${workout.id}">
    <h4>${workout.title}</h4>
    <p class="muted">${dayLabel(workout.date)}, ${time} · ${workout.sport}</p>
    <p>
      <span class="fuel-status fuel-${fuel.status}" data-status="${fuel.status}">${FUEL_STATUS_LABELS[fuel.status]}</span>
      ${
        fuel.limitingStore === null
          ? ''
          : html`<span class="limiting-store" data-store="${fuel.limitingStore}"
              >${STORE_LABELS[fuel.limitingStore]} limits.</span
            >`
      }
      ${storesLine(fuel)}
    </p>
    ${adviceDetails(fuel)}
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
  return html`${fuelCharts(data, data.fuel)}
    <h3>Planned workouts, next ${PLAN_DAYS} days</h3>
    ${
      planned.length === 0
        ? html`<p class="muted">No planned workouts with a duration in the next ${PLAN_DAYS} days.</p>`
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

/** The open recommendations, each with Accept and Dismiss (forms posting to the routes below). */
function recommendationsSection(data: DashboardData): SafeHtml {
  const notices = html`${statusNotice(data.notice)}${
    data.error ? html`<p class="error" role="alert">${data.error}</p>` : undefined
  }`;
  if (data.recommendations.length === 0) {
    return html`${notices}
      <p class="muted">No open recommendations.</p>`;
  }
  return html`${notices}
    <ul class="recommendations">
      ${data.recommendations.map((item) => {
        const headingId = `recommendation-${item.id}`;
        return html`<li class="recommendation" data-recommendation-id="${item.id}" data-kind="${item.kind}">
          <h3 id="${headingId}">${item.title}</h3>
          <details>
            <summary>What was seen, and what accepting does</summary>
            <p>${item.body}</p>
          </details>
          <div class="decide">
            ${postButton(`/dashboard/recommendations/${item.id}/accept`, data.csrf, 'Accept', headingId)}
            ${postButton(`/dashboard/recommendations/${item.id}/dismiss`, data.csrf, 'Dismiss', headingId)}
          </div>
        </li>`;
      })}
    </ul>`;
}

function dashboardPage(data: DashboardData): string {
  const today = data.recovery.find((day) => day.date === data.today);
  return page(
    'Dashboard',
    html`<h1>Dashboard</h1>
      <p>${longDayFormat.format(Date.parse(`${data.today}T00:00:00Z`))}, in your time zone (${data.timeZone}).</p>
      ${section('recovery-today', 'Recovery today', recoveryToday(today, data.today))}
      ${section('recommendations', 'Recommendations', recommendationsSection(data))}
      ${section('fuel', `Glycogen, next ${FUEL_DAYS} days`, fuelSection(data))}
      ${section('training-load', 'Fitness, fatigue and form', trainingLoadSection(data))}
      ${section('recovery-history', `Recovery, last ${HISTORY_DAYS} days`, recoveryChart(data))}
      <nav><a href="/">Home</a> · <a href="/settings">Settings</a></nav>`,
    'page-dashboard',
  );
}

/** What `?notice=` may name after a decision: a fixed text each, the query never carries text. */
const NOTICES: Readonly<Record<string, string>> = {
  accepted: 'Recommendation accepted: its change is applied.',
  dismissed: 'Recommendation dismissed.',
};
/** What `?error=` may name when a decision could not be made. */
const ERRORS: Readonly<Record<string, string>> = {
  decided: 'That recommendation was already decided (accepted, dismissed or expired): nothing was changed.',
  missing: 'There is no such recommendation on your account.',
  failed: 'That recommendation could not be applied (what it would change has changed): nothing was changed.',
};

/** The `?error=` key of a decision the service refused. */
function decisionErrorOf(error: AppError): string {
  if (error.code === 'conflict') return 'decided';
  if (error.code === 'not_found') return 'missing';
  return 'failed';
}

async function showDashboard(deps: PageDeps, req: Request, res: Response): Promise<void> {
  const user = signedInUserOr303(req, res);
  if (!user) return;
  const state: PageState = {
    csrf: csrfTokenFor(req, res, deps.config.secureCookies),
    notice: noticeOf(req, NOTICES),
    error: typeof req.query['error'] === 'string' ? ERRORS[req.query['error']] : undefined,
  };
  sendPage(res, dashboardPage(await loadDashboard(deps.db, user, new Date(), state)));
}

/**
 * Accept or dismiss one recommendation as the signed-in athlete, through the
 * recommendations service (as REST and MCP do), then back to the dashboard
 * (303). A decided or unknown recommendation is a message there, not an error page.
 */
async function decide(deps: PageDeps, req: Request, res: Response, decision: 'accept' | 'dismiss'): Promise<void> {
  const user = signedInUserOr303(req, res, '/dashboard');
  if (!user) return;
  const actor = actorOfSessionUser(user);
  const id = String(req.params['id']);
  try {
    if (decision === 'accept') await acceptRecommendation({ db: deps.db }, actor, id);
    else await dismissRecommendation(deps.db, actor, id);
  } catch (error) {
    // A refusal is a message on the page; anything else is a fault and goes to the error handler.
    if (!(error instanceof AppError)) throw error;
    res.redirect(303, `/dashboard?error=${decisionErrorOf(error)}#recommendations`);
    return;
  }
  res.redirect(303, `/dashboard?notice=${decision === 'accept' ? 'accepted' : 'dismissed'}#recommendations`);
}

/** `/dashboard`: the signed-in athlete's recovery, recommendations, glycogen and training load, from the stored results. */
export function dashboardPages(deps: PageDeps): Router {
  return Router()
    .get('/dashboard', (req, res) => showDashboard(deps, req, res))
    .post('/dashboard/recommendations/:id/accept', formPost(), (req, res) => decide(deps, req, res, 'accept'))
    .post('/dashboard/recommendations/:id/dismiss', formPost(), (req, res) => decide(deps, req, res, 'dismiss'));
}

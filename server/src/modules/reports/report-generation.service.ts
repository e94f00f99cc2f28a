import {
  LocalDateSchema,
  ReportTypeSchema,
  type FuelLimitingStore,
  type FuelStatus,
  type RecoveryStatus,
  type ReportType,
} from '@pacer/contract';
import { z } from 'zod';
import type { DbOrTrx } from '../../db/database.ts';
import type { PlannedWorkoutRow, WellnessRow, WorkoutRow } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import { addDays, formatInZone, localMidnightMs, weekdayOf, zonedTimeMs } from '../../lib/dates.ts';
import type { AsyncJobRunner } from '../async-jobs/async-jobs.service.ts';
import { plannedWorkoutIntensity } from '../derived/exercise.ts';
import { judgePlannedFuel } from '../derived/fuel-plan.ts';
import {
  readRecoveryDays,
  readStoredFuel,
  readTrainingLoadDays,
  type StoredFuelDay,
  type StoredLoadDay,
  type StoredRecoveryDay,
} from '../derived/derived-reads.service.ts';
import { STEP_MS } from '../derived/glycogen.constants.ts';
import { findNutritionLogs, listNutritionDates } from '../nutrition/nutrition.repository.ts';
import { listPlannedWorkouts } from '../planned-workouts/planned-workouts.repository.ts';
import { listWellness } from '../wellness/wellness.repository.ts';
import { listWorkouts } from '../workouts/workouts.repository.ts';
import { insertReport } from './reports.repository.ts';

/**
 * `generate_report` (docs/design.md §3 "Idempotency and jobs"): a report made only
 * from the user's stored data, deterministic (the same rows give the same
 * Markdown and data, byte for byte), so nothing here reads the clock. The
 * builders are pure; the runner loads the period's rows, builds, and hands the
 * insert to the transaction that completes the job. Derived data (training
 * load, recovery, the fuel timeline) is read as the recompute stored it, never
 * computed here: a report shows what the API shows for the same days.
 */

export const WEEK_DAYS = 7;
export const LAST_WORKOUTS_COUNT = 3;

export interface ReportPeriod {
  readonly from: string;
  readonly to: string;
}

/** The 7 days ending at `endDate`, both included. */
export function weeklyPeriodOf(endDate: string): ReportPeriod {
  return { from: addDays(endDate, -(WEEK_DAYS - 1)), to: endDate };
}

/** A report's title depends only on its type and last day, so a caller can show it before the job has run. */
export function reportTitleOf(type: ReportType, endDate: string): string {
  const week = weeklyPeriodOf(endDate);
  switch (type) {
    case 'WEEKLY_TRAINING':
      return `Weekly training: ${week.from} to ${week.to}`;
    case 'LAST_3_WORKOUTS':
      return `Last ${String(LAST_WORKOUTS_COUNT)} workouts up to ${endDate}`;
    case 'WEEKLY_NUTRITION':
      return `Weekly nutrition: ${week.from} to ${week.to}`;
  }
}

export interface BuiltReport {
  readonly title: string;
  readonly periodFrom: string;
  readonly periodTo: string;
  readonly markdown: string;
  readonly data: Record<string, unknown>;
}

/** The workout columns a report reads; `WorkoutRow`s fit as they are. */
export type ReportWorkout = Pick<
  WorkoutRow,
  | 'id'
  | 'name'
  | 'sport'
  | 'startTime'
  | 'localDate'
  | 'elapsedSecs'
  | 'movingSecs'
  | 'distanceMeters'
  | 'ascentMeters'
  | 'avgHr'
  | 'maxHr'
  | 'avgPower'
  | 'normalizedPower'
  | 'trainingStress'
  | 'calories'
  | 'deviceSerial'
  | 'createdAt'
>;

export type ReportWellnessDay = Pick<WellnessRow, 'date' | 'hrv' | 'restingHr' | 'sleepSecs'>;

/** A stored day of the training load model (`daily_training_load`). */
export type ReportLoadDay = Pick<StoredLoadDay, 'date' | 'tss' | 'atl' | 'ctl' | 'tsb'>;

/** A stored recovery day (`daily_recovery`), without its components. */
export type ReportRecoveryDay = Pick<StoredRecoveryDay, 'date' | 'score' | 'status' | 'explanation'>;

/** One logged food item on the local date of its log. */
export interface ReportNutritionItem {
  readonly date: string;
  readonly calories: number | null;
  readonly carbs: number | null;
  readonly protein: number | null;
  readonly fat: number | null;
}

// ---------------------------------------------------------------------------
// Numbers and Markdown. Every figure is rounded where it enters `data`; the
// Markdown formats that rounded value (to fewer decimals where people need
// fewer), never the raw sum, so the two cannot disagree.

function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

function roundOrNull(value: number | null, decimals: number): number | null {
  return value === null ? null : round(value, decimals);
}

function fixed(value: number, decimals: number): string {
  return round(value, decimals).toFixed(decimals);
}

function sum(values: readonly (number | null)[]): number {
  return values.reduce<number>((total, value) => total + (value ?? 0), 0);
}

/** `h:mm`, to the nearest minute. */
function hoursMinutes(secs: number): string {
  const minutes = Math.round(secs / 60);
  return `${String(Math.floor(minutes / 60))}:${String(minutes % 60).padStart(2, '0')}`;
}

function kilometres(meters: number): string {
  return `${fixed(meters / 1000, 1)} km`;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${String(count)} ${count === 1 ? one : many}`;
}

/** A date's weekday as the report's tables show it: `Mon`. */
function shortWeekdayOf(date: string): string {
  return weekdayOf(date).slice(0, 3);
}

function datesOf(period: ReportPeriod): string[] {
  const dates: string[] = [];
  for (let date = period.from; date <= period.to; date = addDays(date, 1)) dates.push(date);
  return dates;
}

/** Text from users (workout names) inside a heading or table cell: one line, no table breaks. */
function inline(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/([\\|*_`[\]#<>])/g, '\\$1');
}

type Column = readonly [header: string, align: 'left' | 'right'];

function markdownTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${columns.map(([header]) => header).join(' | ')} |`,
    `| ${columns.map(([, align]) => (align === 'right' ? '---:' : '---')).join(' | ')} |`,
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
  ];
}

function markdownOf(lines: readonly string[]): string {
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------
// Workouts

/** Elapsed time, else moving time: what "duration" means in every report. */
function durationOf(workout: ReportWorkout): number {
  return workout.elapsedSecs ?? workout.movingSecs ?? 0;
}

function byStart(a: ReportWorkout, b: ReportWorkout): number {
  return a.startTime.getTime() - b.startTime.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Oldest start first, one workout per activity: uploads from the same device
 * with the same start time are one activity that reached us twice, and the
 * first stored counts (the rule of `possibleDuplicateOf` on workouts).
 */
export function distinctWorkouts(workouts: readonly ReportWorkout[]): ReportWorkout[] {
  const kept = new Map<string, ReportWorkout>();
  for (const workout of workouts) {
    const key =
      workout.deviceSerial === null ? `id:${workout.id}` : `${workout.deviceSerial}@${workout.startTime.toISOString()}`;
    const other = kept.get(key);
    const earlier =
      other === undefined ||
      workout.createdAt.getTime() < other.createdAt.getTime() ||
      (workout.createdAt.getTime() === other.createdAt.getTime() && workout.id < other.id);
    if (earlier) kept.set(key, workout);
  }
  return [...kept.values()].sort(byStart);
}

export interface WorkoutTotals {
  readonly workouts: number;
  readonly durationSecs: number;
  readonly distanceMeters: number;
  readonly ascentMeters: number;
  readonly trainingStress: number;
}

/** Missing figures (a swim without ascent) count as 0. */
function workoutTotalsOf(workouts: readonly ReportWorkout[]): WorkoutTotals {
  return {
    workouts: workouts.length,
    durationSecs: Math.round(sum(workouts.map(durationOf))),
    distanceMeters: round(sum(workouts.map((workout) => workout.distanceMeters)), 1),
    ascentMeters: round(sum(workouts.map((workout) => workout.ascentMeters)), 1),
    trainingStress: round(sum(workouts.map((workout) => workout.trainingStress)), 1),
  };
}

type Cells5 = readonly [string, string, string, string, string];

function workoutTotalCells(totals: WorkoutTotals): Cells5 {
  return [
    String(totals.workouts),
    hoursMinutes(totals.durationSecs),
    kilometres(totals.distanceMeters),
    `${fixed(totals.ascentMeters, 0)} m`,
    fixed(totals.trainingStress, 0),
  ];
}

const WORKOUT_TOTAL_COLUMNS: readonly Column[] = [
  ['Workouts', 'right'],
  ['Duration (h:mm)', 'right'],
  ['Distance', 'right'],
  ['Ascent', 'right'],
  ['Training stress', 'right'],
];

// ---------------------------------------------------------------------------
// WEEKLY_TRAINING

export interface WeeklyTrainingInput {
  readonly endDate: string;
  readonly workouts: readonly ReportWorkout[];
  readonly wellness: readonly ReportWellnessDay[];
  /** The stored training load days; those of the week are used. */
  readonly trainingLoad: readonly ReportLoadDay[];
  /** The stored recovery days; those of the week are used. */
  readonly recovery: readonly ReportRecoveryDay[];
}

interface WellnessAverage {
  /** `null` when no day of the period has the value. */
  readonly average: number | null;
  readonly days: number;
}

function wellnessAverageOf(values: readonly (number | null)[], decimals: number): WellnessAverage {
  const present = values.filter((value): value is number => value !== null);
  return {
    average: present.length === 0 ? null : round(sum(present) / present.length, decimals),
    days: present.length,
  };
}

function bySportOf(workouts: readonly ReportWorkout[]): (WorkoutTotals & { readonly sport: string })[] {
  const sports = [...new Set(workouts.map((workout) => workout.sport))];
  return sports
    .map((sport) => ({ sport, ...workoutTotalsOf(workouts.filter((workout) => workout.sport === sport)) }))
    .sort((a, b) => b.durationSecs - a.durationSecs || (a.sport < b.sport ? -1 : 1));
}

function trainingSection(
  period: ReportPeriod,
  totals: WorkoutTotals,
  bySport: readonly (WorkoutTotals & { sport: string })[],
  days: readonly (WorkoutTotals & { date: string })[],
  duplicates: number,
): string[] {
  if (totals.workouts === 0) {
    return ['## Training', '', `No workouts recorded between ${period.from} and ${period.to}.`];
  }
  const [workouts, duration, distance, ascent, stress] = workoutTotalCells(totals);
  return [
    '## Training',
    '',
    `- Workouts: ${workouts}`,
    `- Duration: ${duration} (h:mm)`,
    `- Distance: ${distance}`,
    `- Ascent: ${ascent}`,
    `- Training stress: ${stress}`,
    ...(duplicates > 0
      ? ['', `${plural(duplicates, 'possible duplicate upload')} (same device and start time) not counted.`]
      : []),
    '',
    '### By sport',
    '',
    ...markdownTable(
      [['Sport', 'left'], ...WORKOUT_TOTAL_COLUMNS],
      bySport.map((sport) => [inline(sport.sport), ...workoutTotalCells(sport)]),
    ),
    '',
    '### By day',
    '',
    ...markdownTable(
      [['Date', 'left'], ['Day', 'left'], ...WORKOUT_TOTAL_COLUMNS],
      days.map((day) => [day.date, shortWeekdayOf(day.date), ...workoutTotalCells(day)]),
    ),
  ];
}

function wellnessSection(
  period: ReportPeriod,
  wellness: { hrv: WellnessAverage; restingHr: WellnessAverage; sleepSecs: WellnessAverage },
): string[] {
  if (wellness.hrv.days === 0 && wellness.restingHr.days === 0 && wellness.sleepSecs.days === 0) {
    return ['## Wellness', '', `No wellness data recorded between ${period.from} and ${period.to}.`];
  }
  const row = (label: string, measure: WellnessAverage, format: (average: number) => string) => [
    label,
    measure.average === null ? 'no data' : format(measure.average),
    `${String(measure.days)} of ${String(WEEK_DAYS)}`,
  ];
  return [
    '## Wellness',
    '',
    ...markdownTable(
      [
        ['Measure', 'left'],
        ['Average', 'right'],
        ['Days with data', 'right'],
      ],
      [
        row('HRV (rMSSD)', wellness.hrv, (average) => `${fixed(average, 1)} ms`),
        row('Resting heart rate', wellness.restingHr, (average) => `${fixed(average, 1)} bpm`),
        row('Sleep', wellness.sleepSecs, (average) => `${fixed(average / 3600, 1)} h`),
      ],
    ),
  ];
}

function withinPeriod(period: ReportPeriod): (row: { readonly date: string }) => boolean {
  return (row) => row.date >= period.from && row.date <= period.to;
}

function byDate(a: { readonly date: string }, b: { readonly date: string }): number {
  return a.date < b.date ? -1 : a.date > b.date ? 1 : 0;
}

export interface TrainingLoadSummary {
  /** Stored days of the week (a day is stored once the recompute has reached it). */
  readonly days: number;
  /** The model's training stress over the week's stored days. */
  readonly trainingStress: number;
  /** CTL, ATL and TSB of the week's last stored day; `null` when none is stored. */
  readonly endOfWeek: {
    readonly date: string;
    readonly ctl: number;
    readonly atl: number;
    readonly tsb: number;
  } | null;
}

function trainingLoadSummaryOf(period: ReportPeriod, days: readonly ReportLoadDay[]): TrainingLoadSummary {
  const week = days.filter(withinPeriod(period)).sort(byDate);
  const last = week.at(-1);
  return {
    days: week.length,
    trainingStress: round(sum(week.map((day) => day.tss)), 1),
    endOfWeek: last
      ? { date: last.date, ctl: round(last.ctl, 1), atl: round(last.atl, 1), tsb: round(last.tsb, 1) }
      : null,
  };
}

function trainingLoadSection(period: ReportPeriod, load: TrainingLoadSummary): string[] {
  if (load.endOfWeek === null) {
    return ['## Training load', '', `No training load stored between ${period.from} and ${period.to}.`];
  }
  const end = load.endOfWeek;
  return [
    '## Training load',
    '',
    end.date === period.to
      ? `On ${end.date}, the last day of the week:`
      : `On ${end.date}, the latest day of the week stored:`,
    '',
    `- Fitness (CTL): ${fixed(end.ctl, 1)}`,
    `- Fatigue (ATL): ${fixed(end.atl, 1)}`,
    `- Form (TSB): ${fixed(end.tsb, 1)}`,
    `- Training stress of the week: ${fixed(load.trainingStress, 0)} (${String(load.days)} of ${String(WEEK_DAYS)} days stored)`,
    '',
    // The two stress figures differ by design; say where each comes from.
    'The load model scores every workout (from power, else heart rate, else sport and duration); the training stress under Training is what the devices recorded.',
  ];
}

const RECOVERY_STATUS_LABELS: Readonly<Record<RecoveryStatus, string>> = {
  ready: 'ready',
  maintain: 'maintain',
  recover: 'recover',
  insufficient_data: 'insufficient data',
};

export interface RecoverySummary {
  /** Each day of the week: its stored score and status, both `null` when no day is stored. */
  readonly days: readonly {
    readonly date: string;
    readonly score: number | null;
    readonly status: RecoveryStatus | null;
  }[];
  /** The week's last stored day, with its explanation; `null` when none is stored. */
  readonly latest: {
    readonly date: string;
    readonly score: number | null;
    readonly status: RecoveryStatus;
    readonly explanation: string;
  } | null;
}

function recoverySummaryOf(period: ReportPeriod, days: readonly ReportRecoveryDay[]): RecoverySummary {
  const week = new Map(days.filter(withinPeriod(period)).map((day) => [day.date, day]));
  const last = [...week.values()].sort(byDate).at(-1);
  return {
    days: datesOf(period).map((date) => {
      const day = week.get(date);
      return { date, score: day ? roundOrNull(day.score, 2) : null, status: day?.status ?? null };
    }),
    latest: last
      ? { date: last.date, score: roundOrNull(last.score, 2), status: last.status, explanation: last.explanation }
      : null,
  };
}

function recoverySection(period: ReportPeriod, recovery: RecoverySummary): string[] {
  if (recovery.latest === null) {
    return ['## Recovery', '', `No recovery scores stored between ${period.from} and ${period.to}.`];
  }
  return [
    '## Recovery',
    '',
    ...markdownTable(
      [
        ['Date', 'left'],
        ['Day', 'left'],
        ['Score', 'right'],
        ['Status', 'left'],
      ],
      recovery.days.map((day) => [
        day.date,
        shortWeekdayOf(day.date),
        day.status === null ? 'not computed' : day.score === null ? '–' : fixed(day.score, 0),
        day.status === null ? '–' : RECOVERY_STATUS_LABELS[day.status],
      ]),
    ),
    '',
    `Latest (${recovery.latest.date}): ${inline(recovery.latest.explanation)}`,
  ];
}

/** Workouts, load, wellness averages and recovery of the 7 days ending at `endDate`. */
export function buildWeeklyTrainingReport(input: WeeklyTrainingInput): BuiltReport {
  const period = weeklyPeriodOf(input.endDate);
  const inPeriod = input.workouts.filter((w) => w.localDate >= period.from && w.localDate <= period.to);
  const workouts = distinctWorkouts(inPeriod);
  const totals = workoutTotalsOf(workouts);
  const bySport = bySportOf(workouts);
  const days = datesOf(period).map((date) => ({
    date,
    ...workoutTotalsOf(workouts.filter((workout) => workout.localDate === date)),
  }));
  const wellnessDays = [...input.wellness]
    .filter((day) => day.date >= period.from && day.date <= period.to)
    .sort((a, b) => (a.date < b.date ? -1 : 1));
  const wellness = {
    hrv: wellnessAverageOf(
      wellnessDays.map((day) => day.hrv),
      1,
    ),
    restingHr: wellnessAverageOf(
      wellnessDays.map((day) => day.restingHr),
      1,
    ),
    sleepSecs: wellnessAverageOf(
      wellnessDays.map((day) => day.sleepSecs),
      0,
    ),
  };
  const duplicates = inPeriod.length - workouts.length;
  const trainingLoad = trainingLoadSummaryOf(period, input.trainingLoad);
  const recovery = recoverySummaryOf(period, input.recovery);
  const title = reportTitleOf('WEEKLY_TRAINING', input.endDate);
  return {
    title,
    periodFrom: period.from,
    periodTo: period.to,
    markdown: markdownOf([
      `# ${title}`,
      '',
      ...trainingSection(period, totals, bySport, days, duplicates),
      '',
      ...trainingLoadSection(period, trainingLoad),
      '',
      ...wellnessSection(period, wellness),
      '',
      ...recoverySection(period, recovery),
    ]),
    data: { totals, bySport, days, wellness, possibleDuplicatesExcluded: duplicates, trainingLoad, recovery },
  };
}

// ---------------------------------------------------------------------------
// LAST_3_WORKOUTS

export interface LastWorkoutsInput {
  readonly endDate: string;
  /** Any of the user's workouts; the builder picks the latest on or before `endDate`. */
  readonly workouts: readonly ReportWorkout[];
}

function workoutFiguresOf(workout: ReportWorkout) {
  return {
    id: workout.id,
    name: workout.name,
    sport: workout.sport,
    startTime: workout.startTime.toISOString(),
    localDate: workout.localDate,
    durationSecs: Math.round(durationOf(workout)),
    movingSecs: roundOrNull(workout.movingSecs, 0),
    distanceMeters: roundOrNull(workout.distanceMeters, 1),
    ascentMeters: roundOrNull(workout.ascentMeters, 1),
    avgHr: roundOrNull(workout.avgHr, 0),
    maxHr: roundOrNull(workout.maxHr, 0),
    avgPower: roundOrNull(workout.avgPower, 0),
    normalizedPower: roundOrNull(workout.normalizedPower, 0),
    trainingStress: roundOrNull(workout.trainingStress, 1),
    calories: roundOrNull(workout.calories, 0),
  };
}

type WorkoutFigures = ReturnType<typeof workoutFiguresOf>;

/** A bullet per figure the workout has; missing ones are left out. */
function workoutSection(position: number, workout: WorkoutFigures): string[] {
  const figures = (...parts: (string | null)[]) => parts.filter((part) => part !== null).join(', ');
  const lines = [
    `- Sport: ${inline(workout.sport)}`,
    `- Duration: ${hoursMinutes(workout.durationSecs)} (h:mm)` +
      (workout.movingSecs === null ? '' : `, moving ${hoursMinutes(workout.movingSecs)}`),
  ];
  if (workout.distanceMeters !== null) lines.push(`- Distance: ${kilometres(workout.distanceMeters)}`);
  if (workout.ascentMeters !== null) lines.push(`- Ascent: ${fixed(workout.ascentMeters, 0)} m`);
  if (workout.avgHr !== null || workout.maxHr !== null) {
    lines.push(
      `- Heart rate: ${figures(
        workout.avgHr === null ? null : `${String(workout.avgHr)} bpm average`,
        workout.maxHr === null ? null : `${String(workout.maxHr)} bpm max`,
      )}`,
    );
  }
  if (workout.avgPower !== null || workout.normalizedPower !== null) {
    lines.push(
      `- Power: ${figures(
        workout.avgPower === null ? null : `${String(workout.avgPower)} W average`,
        workout.normalizedPower === null ? null : `${String(workout.normalizedPower)} W normalized`,
      )}`,
    );
  }
  if (workout.trainingStress !== null) lines.push(`- Training stress: ${fixed(workout.trainingStress, 0)}`);
  if (workout.calories !== null) lines.push(`- Energy: ${String(workout.calories)} kcal`);
  return [`## ${String(position)}. ${inline(workout.name)} (${workout.localDate})`, '', ...lines];
}

/** The 3 latest workouts on or before `endDate`, newest first; fewer when fewer exist. */
export function buildLastWorkoutsReport(input: LastWorkoutsInput): BuiltReport {
  const latest = distinctWorkouts(input.workouts.filter((workout) => workout.localDate <= input.endDate))
    .reverse()
    .slice(0, LAST_WORKOUTS_COUNT)
    .map(workoutFiguresOf);
  const title = reportTitleOf('LAST_3_WORKOUTS', input.endDate);
  const intro =
    latest.length === 0
      ? `No workouts recorded on or before ${input.endDate}.`
      : latest.length < LAST_WORKOUTS_COUNT
        ? `Only ${plural(latest.length, 'workout was', 'workouts were')} recorded on or before ${input.endDate}, newest first.`
        : `The ${String(LAST_WORKOUTS_COUNT)} most recent workouts on or before ${input.endDate}, newest first.`;
  return {
    title,
    periodFrom: latest.at(-1)?.localDate ?? input.endDate,
    periodTo: input.endDate,
    markdown: markdownOf([
      `# ${title}`,
      '',
      intro,
      ...latest.flatMap((workout, index) => ['', ...workoutSection(index + 1, workout)]),
    ]),
    data: { workouts: latest },
  };
}

// ---------------------------------------------------------------------------
// WEEKLY_NUTRITION

export interface WeeklyNutritionInput {
  readonly endDate: string;
  readonly items: readonly ReportNutritionItem[];
  readonly fuel: ReportFuelInput;
}

/** A planned workout as the fuel model places it. */
export type ReportPlannedWorkout = Pick<
  PlannedWorkoutRow,
  'id' | 'date' | 'timeOfDay' | 'sport' | 'title' | 'durationSecs' | 'trainingStress' | 'structure'
>;

/** The stored glycogen timeline around the week, and what reading it needs. */
export interface ReportFuelInput {
  /** The athlete's zone: times are shown as their clock shows them. */
  readonly timeZone: string;
  /** Liver and muscle capacity, grams (the timeline's `capacity`); their sum is 100 %. */
  readonly capacity: { readonly liverG: number; readonly muscleG: number };
  /**
   * Stored days (`fuel_days`); a day either side of the week lets a workout
   * cross midnight. `usualIntake` is whether the day was computed with one
   * (the `not_logged` rule).
   */
  readonly days: readonly Pick<StoredFuelDay, 'date' | 'points' | 'usualIntake'>[];
  /** Times (epoch ms) of the logged or planned items with carbohydrate on those days (the `not_logged` rule). */
  readonly carbMealTimesMs: readonly number[];
  /** The planned workouts; those of the week are used. */
  readonly plannedWorkouts: readonly ReportPlannedWorkout[];
}

interface Intake {
  readonly calories: number;
  readonly carbs: number;
  readonly protein: number;
  readonly fat: number;
}

/** Missing values count as 0, as in the nutrition day totals. */
function intakeOf(items: readonly ReportNutritionItem[]): Intake {
  return {
    calories: round(sum(items.map((item) => item.calories)), 1),
    carbs: round(sum(items.map((item) => item.carbs)), 1),
    protein: round(sum(items.map((item) => item.protein)), 1),
    fat: round(sum(items.map((item) => item.fat)), 1),
  };
}

function intakeCells(intake: Intake): readonly [string, string, string, string] {
  return [
    `${fixed(intake.calories, 0)} kcal`,
    `${fixed(intake.carbs, 0)} g`,
    `${fixed(intake.protein, 0)} g`,
    `${fixed(intake.fat, 0)} g`,
  ];
}

function intakeSentence(intake: Intake): string {
  const [calories, carbs, protein, fat] = intakeCells(intake);
  return `${calories}, ${carbs} carbohydrate, ${protein} protein, ${fat} fat`;
}

/** The same numbers in the same order whatever order the rows came in, so float sums are identical. */
function byValue(a: ReportNutritionItem, b: ReportNutritionItem): number {
  if (a.date !== b.date) return a.date < b.date ? -1 : 1;
  for (const field of ['calories', 'carbs', 'protein', 'fat'] as const) {
    const difference = (a[field] ?? -1) - (b[field] ?? -1);
    if (difference !== 0) return difference;
  }
  return 0;
}

export interface FuelSummary {
  readonly capacityG: number;
  /** Each day of the week: its lowest stored level and when; `null` figures when the day is not stored. */
  readonly days: readonly {
    readonly date: string;
    readonly lowestPercent: number | null;
    readonly lowestTotalG: number | null;
    /** ISO 8601 with the athlete's offset: the first time the day is at its lowest. */
    readonly lowestAt: string | null;
    /** The level never moved that day (a past day without food logged is taken as balanced). */
    readonly constant: boolean | null;
  }[];
  readonly plannedWorkouts: readonly PlannedWorkoutFuelFigures[];
}

export interface PlannedWorkoutFuelFigures {
  readonly id: string;
  readonly title: string;
  readonly sport: string;
  readonly date: string;
  /** ISO 8601 with the athlete's offset; `null` without a start time. */
  readonly start: string | null;
  /** As the fuel model counts it (the structure's steps, else the planned duration). */
  readonly durationSecs: number | null;
  readonly startPercent: number | null;
  readonly minPercent: number | null;
  readonly status: FuelStatus | null;
  /** The store that decides the status (`judgePlannedFuel`); `null` when `ready`, `not_logged` or unrated. */
  readonly limitingStore: FuelLimitingStore | null;
  /** Why there is no status; `null` when there is one. */
  readonly unrated: 'no_start_time' | 'no_duration' | 'not_stored' | null;
}

/** A stored point: `[end of step (epoch ms), liver, muscle, gut]`, grams. */
type FuelPoint = StoredFuelDay['points'][number];

/** Percent of capacity of a stored point; the gut pool is not stored glycogen yet (as `percentOf`). */
function percentOfPoint(point: FuelPoint, capacity: ReportFuelInput['capacity']): number {
  return (100 * (point[1] + point[2])) / (capacity.liverG + capacity.muscleG);
}

function lowestOfDay(
  date: string,
  stored: Pick<StoredFuelDay, 'points'> | undefined,
  fuel: ReportFuelInput,
): FuelSummary['days'][number] {
  let lowest: FuelPoint | undefined;
  let highestG = Number.NEGATIVE_INFINITY;
  for (const point of stored?.points ?? []) {
    if (lowest === undefined || point[1] + point[2] < lowest[1] + lowest[2]) lowest = point;
    highestG = Math.max(highestG, point[1] + point[2]);
  }
  if (lowest === undefined) return { date, lowestPercent: null, lowestTotalG: null, lowestAt: null, constant: null };
  return {
    date,
    lowestPercent: round(percentOfPoint(lowest, fuel.capacity), 1),
    lowestTotalG: round(lowest[1] + lowest[2], 1),
    lowestAt: formatInZone(lowest[0], fuel.timeZone),
    constant: highestG === lowest[1] + lowest[2],
  };
}

/**
 * A planned workout rated on the stored timeline by the fuel service's rule
 * (`judgePlannedFuel`, fuel-plan.ts: liver and muscle judged apart, `not_logged` first): the level at the last step boundary at or
 * before its start, and the lowest from there through the first boundary at
 * or after its end. The window is the one the fuel service places it in; an
 * untimed workout is placed by the athlete's recent start times, which depend
 * on the day the question is asked, so it is listed without a status.
 */
function plannedWorkoutFuelOf(
  plan: ReportPlannedWorkout,
  levels: ReadonlyMap<number, FuelPoint>,
  fuel: Pick<ReportFuelInput, 'capacity' | 'timeZone' | 'days' | 'carbMealTimesMs'>,
): PlannedWorkoutFuelFigures {
  const { timeZone, capacity } = fuel;
  const intensity = plannedWorkoutIntensity({
    sport: plan.sport,
    durationSecs: plan.durationSecs,
    trainingStress: plan.trainingStress,
    structure: plan.structure,
  });
  const durationSecs = intensity ? Math.round(sum(intensity.blocks.map((block) => block.durationSecs))) : null;
  const startMs = plan.timeOfDay === null ? null : zonedTimeMs(plan.date, plan.timeOfDay, timeZone);
  const figures = {
    id: plan.id,
    title: plan.title,
    sport: plan.sport,
    date: plan.date,
    start: startMs === null ? null : formatInZone(startMs, timeZone),
    durationSecs,
  };
  const unrated = (reason: NonNullable<PlannedWorkoutFuelFigures['unrated']>) => ({
    ...figures,
    startPercent: null,
    minPercent: null,
    status: null,
    limitingStore: null,
    unrated: reason,
  });
  if (startMs === null) return unrated('no_start_time');
  if (intensity === null) return unrated('no_duration');
  const day = fuel.days.find((candidate) => candidate.date === plan.date);
  if (day === undefined) return unrated('not_stored');
  const endMs = startMs + sum(intensity.blocks.map((block) => block.durationSecs)) * 1000;
  const first = Math.floor(startMs / STEP_MS) * STEP_MS;
  const last = Math.ceil(endMs / STEP_MS) * STEP_MS;
  const window: FuelPoint[] = [];
  for (let at = first; at <= last; at += STEP_MS) {
    const point = levels.get(at);
    if (point === undefined) return unrated('not_stored');
    window.push(point);
  }
  const percents = window.map((point) => percentOfPoint(point, capacity));
  // The API's decision, `not_logged` included (fuel-plan.ts), on the day as stored.
  const judgement = judgePlannedFuel(
    window.map((point) => ({ liverG: point[1], muscleG: point[2] })),
    capacity,
    {
      usualIntake: day.usualIntake,
      dayStartMs: localMidnightMs(plan.date, timeZone),
      startMs,
      carbMealTimesMs: fuel.carbMealTimesMs,
    },
  );
  return {
    ...figures,
    startPercent: round(percents[0] as number, 1),
    minPercent: round(Math.min(...percents), 1),
    status: judgement.status,
    limitingStore: judgement.limitingStore,
    unrated: null,
  };
}

function byPlannedStart(a: ReportPlannedWorkout, b: ReportPlannedWorkout): number {
  // Untimed workouts last in their day, as the planned-workouts list orders them.
  const key = (plan: ReportPlannedWorkout) => `${plan.date} ${plan.timeOfDay ?? '99:99'} ${plan.id}`;
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

function fuelSummaryOf(period: ReportPeriod, fuel: ReportFuelInput): FuelSummary {
  const byDay = new Map(fuel.days.map((day) => [day.date, day]));
  const levels = new Map<number, FuelPoint>();
  for (const day of fuel.days) {
    for (const point of day.points) levels.set(point[0], point);
  }
  return {
    capacityG: round(fuel.capacity.liverG + fuel.capacity.muscleG, 1),
    days: datesOf(period).map((date) => lowestOfDay(date, byDay.get(date), fuel)),
    plannedWorkouts: fuel.plannedWorkouts
      .filter(withinPeriod(period))
      .sort(byPlannedStart)
      .map((plan) => plannedWorkoutFuelOf(plan, levels, fuel)),
  };
}

/** `HH:MM` of an ISO time with offset; the end of the day (the next midnight) reads `24:00`. */
function clockOf(at: string, date: string): string {
  return at.slice(0, 10) === date ? at.slice(11, 16) : '24:00';
}

const FUEL_STATUS_LABELS: Readonly<Record<FuelStatus, string>> = {
  ready: 'fuelled',
  top_up: 'top up',
  at_risk: 'at risk',
  not_logged: 'not logged (log or plan meals for a fuel status)',
};

const UNRATED_LABELS: Readonly<Record<NonNullable<PlannedWorkoutFuelFigures['unrated']>, string>> = {
  no_start_time: 'no start time',
  no_duration: 'no duration',
  not_stored: 'no stored timeline',
};

function percentCell(percent: number | null): string {
  return percent === null ? '–' : `${fixed(percent, 0)} %`;
}

function fuelSection(period: ReportPeriod, fuel: FuelSummary): string[] {
  const stored = fuel.days.some((day) => day.lowestPercent !== null);
  const lowest = stored
    ? [
        `Lowest glycogen (liver and muscle) of each day, from the stored timeline; 100 % is ${fixed(fuel.capacityG, 0)} g.`,
        '',
        ...markdownTable(
          [
            ['Date', 'left'],
            ['Day', 'left'],
            ['Lowest', 'right'],
            ['At', 'left'],
          ],
          fuel.days.map((day) => [
            day.date,
            shortWeekdayOf(day.date),
            day.lowestPercent === null || day.lowestTotalG === null
              ? 'not computed'
              : `${percentCell(day.lowestPercent)} (${fixed(day.lowestTotalG, 0)} g)`,
            day.lowestAt === null ? '–' : day.constant === true ? 'all day' : clockOf(day.lowestAt, day.date),
          ]),
        ),
      ]
    : [`No fuel timeline stored between ${period.from} and ${period.to}.`];
  const planned =
    fuel.plannedWorkouts.length === 0
      ? ['No planned workouts in the week.']
      : [
          ...markdownTable(
            [
              ['Date', 'left'],
              ['Start', 'left'],
              ['Workout', 'left'],
              ['Duration (h:mm)', 'right'],
              ['At start', 'right'],
              ['Lowest', 'right'],
              ['Fuel', 'left'],
            ],
            fuel.plannedWorkouts.map((plan) => [
              plan.date,
              plan.start === null ? '–' : plan.start.slice(11, 16),
              inline(plan.title),
              plan.durationSecs === null ? '–' : hoursMinutes(plan.durationSecs),
              percentCell(plan.startPercent),
              percentCell(plan.minPercent),
              plan.status === null ? UNRATED_LABELS[plan.unrated ?? 'not_stored'] : FUEL_STATUS_LABELS[plan.status],
            ]),
          ),
          '',
          // The rule is fuel-plan.ts's; a past day's timeline follows what was recorded, not the plan.
          'Fuel as the fuel service rates a planned workout, liver and muscle judged apart: at risk when the liver falls below 20 g or muscle reaches its floor (25 % of its capacity) at any point, or muscle starts below 50 % of its capacity; top up when muscle starts below 70 %; ready otherwise; not logged, whatever the stores say, when there was no usual intake (fewer than 3 days with food logged in the 14 before) and nothing with carbohydrate is logged or planned that day before the start. Read from the stored timeline, which for a day already past when it was computed follows the recorded workouts, not the plan. A workout without a start time is placed only when its own fuel is asked for, so it is not rated here.',
        ];
  return ['## Fuel', '', ...lowest, '', '### Planned workouts', '', ...planned];
}

/** Daily intake of the 7 days ending at `endDate`; averages over the days with anything logged. */
export function buildWeeklyNutritionReport(input: WeeklyNutritionInput): BuiltReport {
  const period = weeklyPeriodOf(input.endDate);
  const items = input.items.filter((item) => item.date >= period.from && item.date <= period.to).sort(byValue);
  const days = datesOf(period).map((date) => {
    const dayItems = items.filter((item) => item.date === date);
    return dayItems.length === 0
      ? { date, logged: false as const, calories: null, carbs: null, protein: null, fat: null }
      : { date, logged: true as const, ...intakeOf(dayItems) };
  });
  const logged = days.filter((day) => day.logged);
  const totals = intakeOf(items);
  const averages: Intake | null =
    logged.length === 0
      ? null
      : {
          calories: round(sum(logged.map((day) => day.calories)) / logged.length, 1),
          carbs: round(sum(logged.map((day) => day.carbs)) / logged.length, 1),
          protein: round(sum(logged.map((day) => day.protein)) / logged.length, 1),
          fat: round(sum(logged.map((day) => day.fat)) / logged.length, 1),
        };
  const fuel = fuelSummaryOf(period, input.fuel);
  const title = reportTitleOf('WEEKLY_NUTRITION', input.endDate);
  const body =
    averages === null
      ? [`No nutrition logged between ${period.from} and ${period.to}.`]
      : [
          `- Logged days: ${String(logged.length)} of ${String(WEEK_DAYS)}`,
          `- Average per logged day: ${intakeSentence(averages)}`,
          `- Total: ${intakeSentence(totals)}`,
          '',
          '## By day',
          '',
          ...markdownTable(
            [
              ['Date', 'left'],
              ['Day', 'left'],
              ['Energy', 'right'],
              ['Carbohydrate', 'right'],
              ['Protein', 'right'],
              ['Fat', 'right'],
            ],
            days.map((day) => [
              day.date,
              shortWeekdayOf(day.date),
              ...(day.logged ? intakeCells(day) : ['not logged', '–', '–', '–']),
            ]),
          ),
        ];
  return {
    title,
    periodFrom: period.from,
    periodTo: period.to,
    markdown: markdownOf([`# ${title}`, '', '## Summary', '', ...body, '', ...fuelSection(period, fuel)]),
    data: { loggedDays: logged.length, totals, averages, days, fuel },
  };
}

// ---------------------------------------------------------------------------
// Loading and the job

/** What the caller stored: `end_date` already resolved to the user's date. */
const ReportJobInputSchema = z.object({ type: ReportTypeSchema, end_date: LocalDateSchema });
type ReportJobInput = z.infer<typeof ReportJobInputSchema>;

/** Rows per read when paging through a week of workouts (a week rarely has more than a few dozen). */
const WORKOUT_PAGE = 200;

async function loadWorkoutsIn(db: DbOrTrx, userId: string, period: ReportPeriod): Promise<ReportWorkout[]> {
  const rows: ReportWorkout[] = [];
  let before: { startTime: Date; id: string } | undefined;
  for (;;) {
    const page = await listWorkouts(db, userId, { ...period, sport: undefined, before, limit: WORKOUT_PAGE });
    rows.push(...page.slice(0, WORKOUT_PAGE));
    const last = page[WORKOUT_PAGE - 1];
    if (page.length <= WORKOUT_PAGE || last === undefined) return rows;
    before = { startTime: last.startTime, id: last.id };
  }
}

/**
 * Look back in widening windows until one holds enough workouts: an athlete
 * who trains weekly costs one small indexed read, and only a long gap reads
 * further. The last window is the whole history, so "fewer" means fewer exist.
 */
const LOOKBACK_DAYS = [14, 92, 366, undefined] as const;
/** Read a few more than needed: duplicate uploads of one activity count once. */
const LATEST_READ = LAST_WORKOUTS_COUNT * 4;

async function loadLatestWorkouts(db: DbOrTrx, userId: string, endDate: string): Promise<ReportWorkout[]> {
  let rows: ReportWorkout[] = [];
  for (const days of LOOKBACK_DAYS) {
    const from = days === undefined ? '0001-01-01' : addDays(endDate, -(days - 1));
    rows = await listWorkouts(db, userId, {
      from,
      to: endDate,
      sport: undefined,
      before: undefined,
      limit: LATEST_READ,
    });
    if (distinctWorkouts(rows).length >= LAST_WORKOUTS_COUNT) break;
  }
  return rows;
}

async function loadNutritionItems(db: DbOrTrx, userId: string, period: ReportPeriod): Promise<ReportNutritionItem[]> {
  const dates = await listNutritionDates(db, userId, { ...period, after: undefined, limit: WEEK_DAYS });
  const { logs, items } = await findNutritionLogs(db, userId, dates);
  const dateOfLog = new Map(logs.map((log) => [log.id, log.date]));
  // Intake is what was eaten: planned items are not, yet (docs/science.md §3).
  return items.flatMap((item) => {
    const date = dateOfLog.get(item.logId);
    return date === undefined || item.planned
      ? []
      : [{ date, calories: item.calories, carbs: item.carbs, protein: item.protein, fat: item.fat }];
  });
}

/** Planned workouts of a week: a handful; more than this are left out of the report. */
const PLANNED_WORKOUTS_READ = 100;

/** The stored fuel timeline of the week and a day either side (as the derived module reads it), and the week's plans. */
async function loadFuel(db: DbOrTrx, userId: string, period: ReportPeriod): Promise<ReportFuelInput> {
  const fuel = await readStoredFuel(db, userId, { from: addDays(period.from, -1), to: addDays(period.to, 1) });
  const plannedWorkouts = await listPlannedWorkouts(db, userId, {
    ...period,
    after: undefined,
    limit: PLANNED_WORKOUTS_READ,
  });
  return { ...fuel, plannedWorkouts: plannedWorkouts.slice(0, PLANNED_WORKOUTS_READ) };
}

/** Reads only the period's rows of the user, by the (user, date) indexes, and returns the builder to run. */
async function loadReport(db: DbOrTrx, userId: string, input: ReportJobInput): Promise<() => BuiltReport> {
  const endDate = input.end_date;
  switch (input.type) {
    case 'WEEKLY_TRAINING': {
      const period = weeklyPeriodOf(endDate);
      const workouts = await loadWorkoutsIn(db, userId, period);
      const wellness = await listWellness(db, userId, { ...period, after: undefined, limit: WEEK_DAYS });
      const trainingLoad = await readTrainingLoadDays(db, userId, period);
      const recovery = await readRecoveryDays(db, userId, { ...period, limit: WEEK_DAYS });
      return () => buildWeeklyTrainingReport({ endDate, workouts, wellness, trainingLoad, recovery });
    }
    case 'LAST_3_WORKOUTS': {
      const workouts = await loadLatestWorkouts(db, userId, endDate);
      return () => buildLastWorkoutsReport({ endDate, workouts });
    }
    case 'WEEKLY_NUTRITION': {
      const period = weeklyPeriodOf(endDate);
      const items = await loadNutritionItems(db, userId, period);
      const fuel = await loadFuel(db, userId, period);
      return () => buildWeeklyNutritionReport({ endDate, items, fuel });
    }
  }
}

function parseJobInput(input: Record<string, unknown>): ReportJobInput {
  const parsed = ReportJobInputSchema.safeParse(input);
  if (!parsed.success) throw new AppError('validation_failed', 'The report job has no valid `type` and `end_date`.');
  return parsed.data;
}

/**
 * The `report` job. The report row takes the job's id (`report_id`) and is
 * inserted in the transaction that completes the job, so a report exists
 * exactly when its job has completed.
 */
export const runReportJob: AsyncJobRunner = async (context) => {
  const { db, job } = context;
  const input = parseJobInput(job.input);
  await context.progress(1, 3, 'Loading the stored data');
  const build = await loadReport(db, job.userId, input);
  await context.progress(2, 3, 'Computing the figures');
  const report = build();
  await context.progress(3, 3, 'Writing the report');
  return {
    result: {
      report_id: job.id,
      type: input.type,
      title: report.title,
      period_from: report.periodFrom,
      period_to: report.periodTo,
    },
    write: (trx) => insertReport(trx, { id: job.id, userId: job.userId, type: input.type, ...report }),
  };
};

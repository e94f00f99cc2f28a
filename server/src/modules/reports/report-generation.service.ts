import { LocalDateSchema, ReportTypeSchema, type ReportType } from '@pacer/contract';
import { z } from 'zod';
import type { DbOrTrx } from '../../db/database.ts';
import type { WellnessRow, WorkoutRow } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import { addDays } from '../../lib/dates.ts';
import type { AsyncJobRunner } from '../async-jobs/async-jobs.service.ts';
import { findNutritionLogs, listNutritionDates } from '../nutrition/nutrition.repository.ts';
import { listWellness } from '../wellness/wellness.repository.ts';
import { listWorkouts } from '../workouts/workouts.repository.ts';
import { insertReport } from './reports.repository.ts';

/**
 * `generate_report` (DESIGN.md §3 "Idempotency and jobs"): a report made only
 * from the user's stored data, deterministic (the same rows give the same
 * Markdown and data, byte for byte), so nothing here reads the clock. The
 * builders are pure; the runner loads the period's rows, builds, and hands the
 * insert to the transaction that completes the job.
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

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;

function weekdayOf(date: string): string {
  return WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()] as string;
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
      days.map((day) => [day.date, weekdayOf(day.date), ...workoutTotalCells(day)]),
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

/** Workouts, load and wellness averages of the 7 days ending at `endDate`. */
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
      ...wellnessSection(period, wellness),
    ]),
    data: { totals, bySport, days, wellness, possibleDuplicatesExcluded: duplicates },
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
              weekdayOf(day.date),
              ...(day.logged ? intakeCells(day) : ['not logged', '–', '–', '–']),
            ]),
          ),
        ];
  return {
    title,
    periodFrom: period.from,
    periodTo: period.to,
    markdown: markdownOf([`# ${title}`, '', '## Summary', '', ...body]),
    data: { loggedDays: logged.length, totals, averages, days },
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
  return items.flatMap((item) => {
    const date = dateOfLog.get(item.logId);
    return date === undefined
      ? []
      : [{ date, calories: item.calories, carbs: item.carbs, protein: item.protein, fat: item.fat }];
  });
}

/** Reads only the period's rows of the user, by the (user, date) indexes, and returns the builder to run. */
async function loadReport(db: DbOrTrx, userId: string, input: ReportJobInput): Promise<() => BuiltReport> {
  const endDate = input.end_date;
  switch (input.type) {
    case 'WEEKLY_TRAINING': {
      const period = weeklyPeriodOf(endDate);
      const workouts = await loadWorkoutsIn(db, userId, period);
      const wellness = await listWellness(db, userId, { ...period, after: undefined, limit: WEEK_DAYS });
      return () => buildWeeklyTrainingReport({ endDate, workouts, wellness });
    }
    case 'LAST_3_WORKOUTS': {
      const workouts = await loadLatestWorkouts(db, userId, endDate);
      return () => buildLastWorkoutsReport({ endDate, workouts });
    }
    case 'WEEKLY_NUTRITION': {
      const items = await loadNutritionItems(db, userId, weeklyPeriodOf(endDate));
      return () => buildWeeklyNutritionReport({ endDate, items });
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

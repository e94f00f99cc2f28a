/**
 * Training load model: how hard each workout was, and how the athlete's
 * fitness, fatigue and form follow from the daily sum of it.
 *
 * Stress of one workout (TSS): `hours × IF² × 100`, so an hour at threshold
 * scores 100. The intensity factor IF comes from the first source that
 * applies, and the source is kept as `method`:
 * 1. `power`: IF = NP / FTP, Coggan's Training Stress Score (H. Allen &
 *    A. Coggan, *Training and Racing with a Power Meter*, 2nd ed., VeloPress
 *    2010, ch. 7). Without NP the average power stands in for it.
 * 2. `heart_rate`: IF = (avgHr − restingHr) / (thresholdHr − restingHr),
 *    the heart-rate reserve relative to threshold (the idea behind hrTSS),
 *    clamped to [0, 1.5].
 * 3. `estimate`: a fixed IF per sport (`SPORT_INTENSITY`), for workouts with
 *    neither power nor heart rate (or a profile without FTP / heart rates).
 *
 * Fitness, fatigue and form (Banister et al. 1975, "A systems model of
 * training for athletic performance", Aust J Sports Med 7:57, in the form of
 * Coggan's Performance Manager): from the first day with data, both start at 0
 * and each day moves a fixed fraction of the way towards that day's TSS,
 *   CTL_d = CTL_{d−1} + (TSS_d − CTL_{d−1}) / 42   (chronic load, "fitness")
 *   ATL_d = ATL_{d−1} + (TSS_d − ATL_{d−1}) / 7    (acute load, "fatigue")
 * and the form entering day d is the balance of the day before,
 *   TSB_d = CTL_{d−1} − ATL_{d−1}.
 * Worked example: TSS 100 on two days in a row, nothing before. Day 1:
 * ATL 14.2857, CTL 2.3810, TSB 0; day 2: ATL 26.5306, CTL 4.7052,
 * TSB −11.9048.
 *
 * Because each day depends only on the day before, a recompute can start from
 * a stored day's {atl, ctl} and gives exactly the numbers a full run gives.
 *
 * A CTL rise of more than 8 in a week is flagged as "ramp too steep"; coaching
 * texts put a sustainable rise at about 5–8 CTL per week. The flag needs 42
 * days of training history (one CTL time constant): before that CTL is still
 * rising from its start at 0, and a new athlete's first week of 5 × 100 TSS
 * (CTL 0 → 11.35) says how new they are, not how fast their load grows.
 *
 * Dates are the athlete's local calendar dates (`YYYY-MM-DD`); the caller has
 * already put each workout on the local date it started. Day arithmetic here
 * is plain calendar arithmetic on those strings (done in UTC, where every day
 * has 24 hours). Pure functions: no database, no clock.
 */
import type { PlannedSport, TrainingLoadMethod } from '@pacer/contract';
import { addDays, daysBetween } from '../../lib/dates.ts';

/** Coggan's Performance Manager time constant for chronic training load (days). */
export const CTL_TIME_CONSTANT_DAYS = 42;
/** Coggan's Performance Manager time constant for acute training load (days). */
export const ATL_TIME_CONSTANT_DAYS = 7;
/** Clamp of the heart-rate intensity factor: hrTSS-style reserve relative to threshold. */
export const HEART_RATE_IF_MIN = 0;
export const HEART_RATE_IF_MAX = 1.5;
/** TSS of one hour at IF 1 (Allen & Coggan 2010). */
const TSS_PER_HOUR_AT_THRESHOLD = 100;
/**
 * A CTL rise above this in 7 days is "ramp too steep"; coaching texts put a
 * sustainable rise at about 5–8 per week, and the upper end is the signal.
 */
export const RAMP_TOO_STEEP_CTL_PER_WEEK = 8;
const RAMP_WINDOW_DAYS = 7;
/**
 * Days of training history (from the first workout's local date) before the
 * ramp signal and the recovery score's load part count: one CTL time constant,
 * after which CTL has reached 1 − (41/42)^42 = 63.6 % of a steady load.
 */
export const TRAINING_HISTORY_MIN_DAYS = CTL_TIME_CONSTANT_DAYS;

/**
 * Intensity factor assumed per sport when neither power nor heart rate can be
 * used. Model defaults: typical steady training intensities of each sport
 * (an endurance ride, an easy run, a strength session), below threshold.
 * The keys are the planned-workout sports of the contract, so every sport a
 * plan can name has a value. The glycogen model's exercise drain uses the
 * same table (one declaration, fuel/glycogen.constants.ts re-exports it).
 */
export const SPORT_INTENSITY: Readonly<Record<PlannedSport, number>> = {
  ride: 0.65,
  run: 0.75,
  swim: 0.7,
  row: 0.7,
  ski: 0.65,
  walk: 0.5,
  hike: 0.5,
  strength: 0.6,
  yoga: 0.4,
  other: 0.4,
};

/**
 * FIT sports (Garmin FIT profile, camelCase as the decoder stores them; the
 * snake_case spelling of the FIT SDK's C/Java profile is accepted too) mapped
 * to the sports of `SPORT_INTENSITY`. Keys are normalised (lower case, no `_`,
 * `-` or spaces). FIT has no `yoga` sport (it is a sub-sport of `training`);
 * the key is here for sources that send it as a sport. Anything not listed,
 * `generic` and `multisport` included, is `other`.
 */
const FIT_SPORT_TO_SPORT: Readonly<Record<string, PlannedSport>> = {
  cycling: 'ride',
  running: 'run',
  swimming: 'swim',
  rowing: 'row',
  crosscountryskiing: 'ski',
  walking: 'walk',
  hiking: 'hike',
  training: 'strength',
  yoga: 'yoga',
};

/**
 * FIT sub-sports that say more than their sport: `training` + `yoga` is a yoga
 * session, not strength; `fitnessEquipment` + `indoorRowing` is a row. A
 * sub-sport listed here wins over the sport.
 */
const FIT_SUB_SPORT_TO_SPORT: Readonly<Record<string, PlannedSport>> = {
  indoorcycling: 'ride',
  spin: 'ride',
  treadmill: 'run',
  indoorrunning: 'run',
  indoorrowing: 'row',
  indoorskiing: 'ski',
  indoorwalking: 'walk',
  strengthtraining: 'strength',
  yoga: 'yoga',
  pilates: 'yoga',
  flexibilitytraining: 'yoga',
  breathing: 'yoga',
};

const PLANNED_SPORT_KEYS = new Set<string>(Object.keys(SPORT_INTENSITY));

/** The method of a day: the workouts' common method, or `mixed` when they differ. */
export type DayStressMethod = TrainingLoadMethod;
/** The method of one workout: never `mixed`. */
export type StressMethod = Exclude<TrainingLoadMethod, 'mixed'>;

/** What the stress of a recorded (or planned) workout is computed from. */
export interface WorkoutStressInput {
  /** A FIT sport (`cycling`, `crossCountrySkiing`, `cross_country_skiing`) or a planned sport (`ride`). */
  readonly sport: string;
  /** A FIT sub-sport (`indoorRowing`, `yoga`); refines the sport for the estimate. */
  readonly subSport?: string | null;
  /** Seconds to score. When absent: `movingSecs`, else `elapsedSecs`. */
  readonly durationSecs?: number | null;
  readonly movingSecs?: number | null;
  readonly elapsedSecs?: number | null;
  readonly normalizedPower?: number | null;
  readonly avgPower?: number | null;
  readonly avgHr?: number | null;
}

/** The profile values the methods need; `null` when the athlete has not set them. */
export interface StressProfile {
  readonly ftp: number | null;
  readonly restingHr: number | null;
  readonly thresholdHr: number | null;
}

export interface WorkoutStress {
  readonly tss: number;
  readonly intensityFactor: number;
  readonly method: StressMethod;
}

/** The stress sport of a FIT or planned sport name; unknown names are `other`. */
export function stressSportOf(sport: string, subSport?: string | null): PlannedSport {
  const bySubSport = subSport ? FIT_SUB_SPORT_TO_SPORT[normaliseSportKey(subSport)] : undefined;
  if (bySubSport !== undefined) return bySubSport;
  const key = normaliseSportKey(sport);
  if (PLANNED_SPORT_KEYS.has(key)) return key as PlannedSport;
  return FIT_SPORT_TO_SPORT[key] ?? 'other';
}

function normaliseSportKey(name: string): string {
  return name.toLowerCase().replace(/[\s_-]/g, '');
}

/**
 * Training stress of one workout by the first method that applies: `power`,
 * then `heart_rate`, then `estimate`.
 *
 * Choices the model leaves open, made here:
 * - Duration is `durationSecs`, else moving time, else elapsed time. Moving
 *   (timer) time is what NP and average heart rate are computed over; a café
 *   stop in elapsed time would add stress that was never done. The workouts
 *   module scores TSS on the same time.
 * - Without NP, average power stands in (it is ≤ NP, so the stress is a lower
 *   bound for a variable effort); the method stays `power`, as the fuel model
 *   reads IF from "NP or avg power / FTP".
 * - Power applies only when the power value and FTP are > 0: a file of zeros
 *   (a dead power meter) falls through to heart rate. The power IF is not
 *   clamped: a short race above threshold really has IF > 1.
 * - Heart rate applies when avgHr > 0 and the profile has restingHr <
 *   thresholdHr.
 * - `null` when the duration is unknown or negative: the stress cannot be
 *   known, and is left out rather than taken as 0.
 */
export function workoutStress(workout: WorkoutStressInput, profile: StressProfile): WorkoutStress | null {
  const secs = workout.durationSecs ?? workout.movingSecs ?? workout.elapsedSecs ?? null;
  if (secs === null || !Number.isFinite(secs) || secs < 0) return null;
  const hours = secs / 3600;

  const power = positive(workout.normalizedPower) ?? positive(workout.avgPower);
  const ftp = positive(profile.ftp);
  if (power !== null && ftp !== null) return stressOf(hours, power / ftp, 'power');

  const avgHr = positive(workout.avgHr);
  const { restingHr, thresholdHr } = profile;
  if (avgHr !== null && restingHr !== null && thresholdHr !== null && thresholdHr > restingHr) {
    const reserve = (avgHr - restingHr) / (thresholdHr - restingHr);
    return stressOf(hours, Math.min(HEART_RATE_IF_MAX, Math.max(HEART_RATE_IF_MIN, reserve)), 'heart_rate');
  }

  return stressOf(hours, SPORT_INTENSITY[stressSportOf(workout.sport, workout.subSport)], 'estimate');
}

function positive(value: number | null | undefined): number | null {
  return value !== null && value !== undefined && Number.isFinite(value) && value > 0 ? value : null;
}

function stressOf(hours: number, intensityFactor: number, method: StressMethod): WorkoutStress {
  return { tss: hours * intensityFactor ** 2 * TSS_PER_HOUR_AT_THRESHOLD, intensityFactor, method };
}

/** The stress of one day: the sum over its workouts. */
export interface DailyStress {
  readonly tss: number;
  readonly method: DayStressMethod;
}

/** Stress on a local date: one workout, or a day's total. */
export interface DatedStress extends DailyStress {
  readonly date: string;
}

/**
 * Sum stress per local date. The day's method is the method all its workouts
 * share, else `mixed` (the model does not say; one word keeps the stored
 * column honest without listing every workout).
 */
export function sumDailyStress(items: Iterable<DatedStress>): Map<string, DailyStress> {
  const days = new Map<string, DailyStress>();
  for (const item of items) {
    assertStress(item.date, item.tss);
    const day = days.get(item.date);
    days.set(
      item.date,
      day === undefined
        ? { tss: item.tss, method: item.method }
        : { tss: day.tss + item.tss, method: day.method === item.method ? day.method : 'mixed' },
    );
  }
  return days;
}

/** ATL and CTL at the end of a day, as stored. */
export interface TrainingLoadState {
  readonly date: string;
  readonly atl: number;
  readonly ctl: number;
}

export interface TrainingLoadDay extends TrainingLoadState {
  /** The day's TSS; 0 on a day without workouts. */
  readonly tss: number;
  /** Form entering the day: CTL − ATL of the day before. */
  readonly tsb: number;
  /** `null` on a day without workouts. */
  readonly method: DayStressMethod | null;
}

export interface TrainingLoadSeriesOptions {
  /** First day to return, `YYYY-MM-DD`. */
  readonly fromDate: string;
  /** Last day to return, inclusive. */
  readonly toDate: string;
  /**
   * The stored state of the day before `fromDate`. When given, the run starts
   * from it and days before `fromDate` in the input are not read. When not,
   * the run starts at 0 on the first day with data (or on `fromDate`, when
   * that is earlier), so data before `fromDate` is taken into account.
   */
  readonly previous?: TrainingLoadState;
}

/**
 * ATL, CTL and TSB for every day from `fromDate` to `toDate`, one entry per
 * calendar day (days before the first data are 0). `dailyTss` is either a
 * map of per-day totals or a list of per-workout or per-day stress, which is
 * summed per date by `sumDailyStress`.
 */
export function trainingLoadSeries(
  dailyTss: ReadonlyMap<string, DailyStress> | Iterable<DatedStress>,
  options: TrainingLoadSeriesOptions,
): TrainingLoadDay[] {
  const { fromDate, toDate, previous } = options;
  assertLocalDate(fromDate);
  assertLocalDate(toDate);
  const days = isMap(dailyTss) ? checkedDays(dailyTss) : sumDailyStress(dailyTss);
  if (fromDate > toDate) return [];

  let start = fromDate;
  let atl = 0;
  let ctl = 0;
  if (previous !== undefined) {
    if (previous.date !== addDays(fromDate, -1)) {
      throw new RangeError(`previous state is of ${previous.date}, not of the day before ${fromDate}`);
    }
    ({ atl, ctl } = previous);
  } else {
    for (const date of days.keys()) if (date < start) start = date;
  }

  const series: TrainingLoadDay[] = [];
  const dayCount = daysBetween(start, toDate) + 1;
  for (let index = 0; index < dayCount; index += 1) {
    const date = addDays(start, index);
    const day = days.get(date);
    const tss = day?.tss ?? 0;
    const tsb = ctl - atl;
    ctl += (tss - ctl) / CTL_TIME_CONSTANT_DAYS;
    atl += (tss - atl) / ATL_TIME_CONSTANT_DAYS;
    if (date >= fromDate) series.push({ date, tss, atl, ctl, tsb, method: day?.method ?? null });
  }
  return series;
}

/**
 * CTL_d − CTL_{d−7}; `null` when either day is not in the series (the caller
 * decides how far back the series reaches, so a missing day is unknown, not 0).
 */
export function weeklyCtlRamp(series: readonly TrainingLoadDay[], date: string): number | null {
  const today = dayOf(series, date);
  const weekBefore = dayOf(series, addDays(date, -RAMP_WINDOW_DAYS));
  return today === undefined || weekBefore === undefined ? null : today.ctl - weekBefore.ctl;
}

/** Whole days from the first workout's local date to `date` reach TRAINING_HISTORY_MIN_DAYS. */
export function hasTrainingHistory(firstWorkoutDate: string | null, date: string): boolean {
  return firstWorkoutDate !== null && daysBetween(firstWorkoutDate, date) >= TRAINING_HISTORY_MIN_DAYS;
}

/**
 * CTL rose by more than 8 in the 7 days to `date`. `null` (the signal is
 * undefined, not "not steep") when the series does not cover both days, or
 * with fewer than 42 days of training history (`firstWorkoutDate` is the
 * first workout's local date; `null` without one).
 */
export function rampTooSteep(
  series: readonly TrainingLoadDay[],
  date: string,
  firstWorkoutDate: string | null,
): boolean | null {
  if (!hasTrainingHistory(firstWorkoutDate, date)) return null;
  const ramp = weeklyCtlRamp(series, date);
  return ramp === null ? null : ramp > RAMP_TOO_STEEP_CTL_PER_WEEK;
}

/**
 * CTL entering a day (the day before's), the CTL its TSB was computed from,
 * recovered from the day's own stored CTL and TSS by inverting
 * CTL_d = CTL_{d−1} + (TSS_d − CTL_{d−1}) / 42. It reads only the day itself,
 * so it is the same number whichever range a recompute covers.
 */
export function ctlEnteringDay(day: { readonly ctl: number; readonly tss: number }): number {
  return Math.max(0, (CTL_TIME_CONSTANT_DAYS * day.ctl - day.tss) / (CTL_TIME_CONSTANT_DAYS - 1));
}

/** A series from `trainingLoadSeries` has one entry per day, so the index is the day offset. */
function dayOf(series: readonly TrainingLoadDay[], date: string): TrainingLoadDay | undefined {
  const first = series[0];
  if (first === undefined) return undefined;
  const candidate = series[daysBetween(first.date, date)];
  return candidate?.date === date ? candidate : series.find((day) => day.date === date);
}

function checkedDays(days: ReadonlyMap<string, DailyStress>): ReadonlyMap<string, DailyStress> {
  for (const [date, day] of days) assertStress(date, day.tss);
  return days;
}

function isMap(
  value: ReadonlyMap<string, DailyStress> | Iterable<DatedStress>,
): value is ReadonlyMap<string, DailyStress> {
  return value instanceof Map;
}

function assertStress(date: string, tss: number): void {
  assertLocalDate(date);
  if (!Number.isFinite(tss) || tss < 0)
    throw new RangeError(`TSS on ${date} must be a finite number ≥ 0, got ${String(tss)}`);
}

const LOCAL_DATE = /^\d{4}-\d{2}-\d{2}$/;

function assertLocalDate(date: string): void {
  if (!LOCAL_DATE.test(date) || Number.isNaN(Date.parse(`${date}T00:00:00Z`))) {
    throw new RangeError(`not a YYYY-MM-DD date: ${date}`);
  }
}

/** What a stored workout row offers the stress model. */
export interface WorkoutRowForStress {
  readonly sport: string;
  readonly subSport: string | null;
  readonly movingSecs: number | null;
  readonly elapsedSecs: number | null;
  readonly normalizedPower: number | null;
  readonly avgPower: number | null;
  readonly avgHr: number | null;
}

/** `workoutStress` of a stored workout row (training load and the fuel model read workouts alike). */
export function stressOfWorkoutRow(row: WorkoutRowForStress, profile: StressProfile): WorkoutStress | null {
  return workoutStress(
    {
      sport: row.sport,
      subSport: row.subSport,
      movingSecs: row.movingSecs,
      elapsedSecs: row.elapsedSecs,
      normalizedPower: row.normalizedPower,
      avgPower: row.avgPower,
      avgHr: row.avgHr,
    },
    profile,
  );
}

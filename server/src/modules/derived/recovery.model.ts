/**
 * Recovery capacity score: one number from 0 to 100 for how ready the athlete
 * is to train today, built from five components, each scored 0–100 (100 =
 * best) and averaged with weights.
 *
 * - HRV (weight 0.35). The night's rMSSD in ms, used as ln(rMSSD): the log is
 *   close to normally distributed in trained athletes, raw rMSSD is skewed
 *   (Plews et al. 2012, Eur J Appl Physiol 112:3729; Plews et al. 2013,
 *   Sports Med 43:773). Two parts, each against the mean μ60 and SD σ60 of
 *   the 60 days before the last 7 (≥ 14 values), σ′ = max(σ60, 0.10): today's
 *   reading x, z_d = (x − μ60) / σ′ (HRV4Training's daily check against the
 *   normal range), and the trend, the mean m7 over the 7 days ending today,
 *   z_7 = (m7 − μ60) / σ′ (≥ 3 values: three readings a week give a valid
 *   weekly value, Plews et al. 2014, IJSPP 9:783). Each part scores
 *   70 + 30·z, clamped; the component is the mean of the parts present, so a
 *   day far below the range halves what the trend gives. The normal range
 *   shown to the athlete is μ60 ± 0.5·σ′, the smallest worthwhile change,
 *   over a 60-day baseline as HRV4Training does it.
 * - Resting heart rate (0.15). Today's value against the mean and SD of the
 *   60 days before it (≥ 14 values, SD at least 1 bpm): a morning heart rate
 *   above its usual level is a common sign of incomplete recovery (Buchheit
 *   2014, Front Physiol 5:73). Score 70 − 30·z, clamped: higher is worse.
 * - Sleep (0.25). The shortfall d = max(0, (need − slept) / need) scores
 *   100·(1 − 2d), clamped, so sleeping half the need or less scores 0. The
 *   need is 8 h unless the profile sets one (adults need 7–9 h: Watson et al.
 *   2015, Sleep 38:843). A device sleep score, when present, is averaged in.
 * - Subjective (0.10). The morning check-in on 1–5 scales (the idea of
 *   Hooper & Mackinnon 1995, Sports Med 20:321): mood and motivation score
 *   (v − 1)/4·100, fatigue and soreness (5 − v)/4·100; the mean of those given.
 * - Load (0.15). Form as a percentage of fitness, p = 100·TSB / max(CTL, 10)
 *   with the CTL the TSB was computed from. TrainingPeaks and intervals.icu
 *   treat form of −10 to −30 as the optimal training zone and below −30 as high
 *   risk; read as percent of CTL: 100 for p ≥ −10, down to 90 at −30, then 3
 *   points per percent to 0 at −60 (continuous, piecewise linear). Used only
 *   with ≥ 42 days of training history: CTL starts at 0 and needs one 42-day
 *   time constant before TSB/CTL means more than how new the athlete is.
 *
 * A component whose inputs are missing, or whose baseline is too short, is
 * left out and the other weights are scaled up to sum to 1. A score needs at
 * least two components, one of them HRV or resting HR (the physiological
 * ones); otherwise the day is `insufficient_data` with no score. Status: ≥ 70
 * `ready`, ≥ 45 `maintain`, below `recover`. The explanation names the
 * component that cost the most points: the largest weight × (100 − score).
 *
 * Worked example: HRV μ60 = ln 60, σ60 = 0.10, today and m7 = ln 55 (z
 * −0.8701 in both parts, score 43.90); resting HR 51 against 48 ± 2 (z 1.5,
 * score 25.00); 7 h of an 8 h need (75.00); mood 4, fatigue 3, soreness 2,
 * motivation 4 (68.75); TSB −10 at CTL 50, −20 % (95.00). Score 0.35·43.90 +
 * 0.15·25 + 0.25·75 + 0.10·68.75 + 0.15·95 = 58.99, `maintain`, HRV named.
 * Without the check-in and load: (0.35·43.90 + 0.15·25 + 0.25·75) / 0.75 =
 * 50.49. One bad morning: today at −3.6 SD scores 0, the week (m7 at −0.17
 * SD) 64.86, the component 32.43.
 *
 * Pure functions: no database, no clock. Dates are the athlete's local
 * `YYYY-MM-DD` dates; day arithmetic on them is calendar arithmetic.
 */
import {
  RECOVERY_COMPONENTS,
  type RecoveryComponentName,
  type RecoveryDay as RecoveryDayBody,
  type RecoveryStatus,
  type WellnessField,
  type WellnessRecord,
} from '@pacer/contract';
import { addDays, daysBetween } from '../../lib/dates.ts';
import { TRAINING_HISTORY_MIN_DAYS } from './training-load.model.ts';

/** Component weights (model defaults); they sum to 1 and are renormalised over the available components. */
export const RECOVERY_WEIGHTS = {
  hrv: 0.35,
  restingHr: 0.15,
  sleep: 0.25,
  subjective: 0.1,
  load: 0.15,
} as const satisfies Record<RecoveryComponentName, number>;
/** The contract's order; it also breaks ties when naming the component that lowered the score most. */
const COMPONENT_ORDER = RECOVERY_COMPONENTS;

/** A 7-day HRV mean needs ≥ 3 readings (Plews et al. 2014, IJSPP 9:783). */
export const HRV_WEEK_DAYS = 7;
export const HRV_WEEK_MIN_VALUES = 3;
/** 60-day HRV baseline before the 7-day window (HRV4Training's method); ≥ 14 values (model default). */
export const HRV_BASELINE_DAYS = 60;
export const HRV_BASELINE_MIN_VALUES = 14;
/** Floor on σ60 of ln(rMSSD), so a very steady baseline does not turn noise into large z (model default). */
export const HRV_SD_FLOOR = 0.1;
/** Normal range μ60 ± 0.5·σ: the smallest worthwhile change (HRV4Training's default). */
export const HRV_NORMAL_RANGE_SD = 0.5;
/** Weight of today's reading in the HRV component; the 7-day trend has the rest (model default: equal). */
export const HRV_TODAY_WEIGHT = 0.5;
/** Resting HR baseline: the 60 days before today, ≥ 14 values, SD at least 1 bpm (model defaults). */
export const RESTING_HR_BASELINE_DAYS = 60;
export const RESTING_HR_BASELINE_MIN_VALUES = 14;
export const RESTING_HR_SD_FLOOR_BPM = 1;
/** HRV and resting HR: 70 at the baseline mean, 30 points per SD (model default). */
const SCORE_AT_BASELINE = 70;
const SCORE_POINTS_PER_SD = 30;
/** Sleep need when the profile sets none: 8 h, inside the 7–9 h adults need (Watson et al. 2015, Sleep 38:843). */
export const DEFAULT_SLEEP_NEED_SECS = 8 * 3600;
/** Each 1% of sleep need missed costs 2 points: half the need or less scores 0 (model default). */
const SLEEP_POINTS_PER_SHORTFALL = 2;
/**
 * Load: the score as a function of form in percent of fitness, through these
 * points and flat outside them (docs/science.md §2). −10 and −30 are the
 * edges of the optimal training zone of TrainingPeaks and intervals.icu, read
 * as percent of CTL; 0 at −60, twice the high-risk edge (model default).
 */
export const LOAD_SCORE_POINTS = [
  { percent: -60, score: 0 },
  { percent: -30, score: 90 },
  { percent: -10, score: 100 },
] as const;
/** CTL below this counts as this in TSB / CTL (model default): a single ride would swing p by hundreds of percent. */
export const LOAD_CTL_FLOOR = 10;
/**
 * The form zones of TrainingPeaks and intervals.icu read as percent of fitness
 * (intervals.icu's percentage mode; docs/science.md §1.1 and §2), highest first.
 * The dashboard's form panel shades these same zones.
 */
export const FORM_ZONES = ['transition', 'fresh', 'grey', 'optimal', 'high_risk'] as const;
export type FormZone = (typeof FORM_ZONES)[number];
/**
 * Each zone's range in percent of CTL (open ends infinite). The optimal zone
 * holds both its edges; every other edge belongs to the zone nearer the
 * optimal one (+5 is grey, +20 fresh).
 */
export const FORM_ZONE_PERCENT_BOUNDS: Readonly<Record<FormZone, { readonly from: number; readonly to: number }>> = {
  transition: { from: 20, to: Number.POSITIVE_INFINITY },
  fresh: { from: 5, to: 20 },
  grey: { from: -10, to: 5 },
  optimal: { from: -30, to: -10 },
  high_risk: { from: Number.NEGATIVE_INFINITY, to: -30 },
};
/** The load counts only with this many days of training history: one CTL time constant (docs/science.md §1). */
export const LOAD_MIN_DAYS_SINCE_FIRST_WORKOUT = TRAINING_HISTORY_MIN_DAYS;
/** A score needs ≥ 2 components, HRV or resting HR among them. */
const MIN_COMPONENTS = 2;
/** Status thresholds on the 0–100 score. */
export const READY_MIN_SCORE = 70;
export const MAINTAIN_MIN_SCORE = 45;
/** Check-in answers are on 1–5 scales (the wellness contract). */
const CHECK_IN_MIN = 1;
const CHECK_IN_MAX = 5;

/**
 * ln(rMSSD) and resting HR are summed in fixed point (integer micro-units of
 * ln ms, milli-bpm), so window sums are exact integers: a day's statistics do
 * not depend on which range the day was computed in, and a recompute from any
 * date gives bit-for-bit the numbers of a full recompute. 1e-6 of ln ms is far
 * below any device's resolution, and 60 squared values stay below 2^53.
 */
const HRV_FIXED_POINT = 1e6;
const RESTING_HR_FIXED_POINT = 1e3;
/** Days of history a day reads: the 60-day HRV baseline and the 7-day window. */
export const RECOVERY_HISTORY_DAYS = HRV_BASELINE_DAYS + HRV_WEEK_DAYS;

/**
 * The check-in answers the subjective component reads, in the order ties go,
 * and which end of the 1–5 scale is better: higher for mood and motivation,
 * lower for fatigue and soreness.
 */
const CHECK_IN_ITEMS = {
  mood: { better: 'high', low: 'Low mood' },
  fatigue: { better: 'low', low: 'Fatigue' },
  soreness: { better: 'low', low: 'Soreness' },
  motivation: { better: 'high', low: 'Low motivation' },
} as const satisfies Partial<Record<WellnessField, { readonly better: 'high' | 'low'; readonly low: string }>>;
type CheckInField = keyof typeof CHECK_IN_ITEMS;
const CHECK_IN_FIELDS = Object.keys(CHECK_IN_ITEMS) as CheckInField[];

/** Every wellness field the score reads: what the analytics repository selects. */
export const RECOVERY_WELLNESS_FIELDS = [
  'hrv',
  'restingHr',
  'sleepSecs',
  'sleepScore',
  ...CHECK_IN_FIELDS,
] as const satisfies readonly WellnessField[];

/** One day of wellness as stored; only the fields the score reads. */
export type WellnessDay = { readonly date: string } & Readonly<
  Partial<Pick<WellnessRecord, (typeof RECOVERY_WELLNESS_FIELDS)[number]>>
>;

/** Count, mean and sample SD (n − 1) of the values in a window; `null` when too few to say. */
export interface WindowStats {
  readonly count: number;
  readonly mean: number | null;
  readonly sd: number | null;
}

export type CheckIn = { readonly [K in CheckInField]: number | null };

/** Everything one day's score is computed from, already summarised. */
export interface RecoveryInputs {
  readonly date: string;
  /** Today's ln(rMSSD) (`null` without a reading today); statistics of the 7 days ending today and the 60 before. */
  readonly hrv: { readonly today: number | null; readonly week: WindowStats; readonly baseline: WindowStats };
  /** Today's resting HR (bpm) and the statistics of the 60 days before today. */
  readonly restingHr: { readonly today: number | null; readonly baseline: WindowStats };
  readonly sleep: { readonly secs: number | null; readonly sleepScore: number | null; readonly needSecs: number };
  readonly checkIn: CheckIn;
  /**
   * TSB of the day (form entering it), the CTL it was computed from (the day
   * before's), and whole days from the first workout's date to today
   * (`null`: no workout yet).
   */
  readonly load: {
    readonly tsb: number | null;
    readonly ctl: number | null;
    readonly daysSinceFirstWorkout: number | null;
  };
}

/**
 * What every component reports. `value` is the component's main input as
 * used (a number); the other fields of each component type say more.
 */
interface ComponentResult {
  readonly value: number | null;
  /** 0–100, 2 decimals; `null` when the component is left out. */
  readonly score: number | null;
  /** The renormalised weight used; 0 when left out (or when there is no score). */
  readonly weight: number;
  /** weight × score: the points this component adds to the score. */
  readonly contribution: number;
  readonly available: boolean;
  /** Why the component is left out; `null` when it is used. */
  readonly reason: string | null;
  /** What the component saw, in plain words (the reason, when left out). */
  readonly detail: string;
}

/** A baseline's mean and SD as measured, the normal range around it, and how many days it rests on. */
export interface NormalRange {
  readonly mean: number;
  readonly sd: number;
  readonly low: number;
  readonly high: number;
  readonly days: number;
}

export interface HrvComponent extends ComponentResult {
  /** x: today's ln(rMSSD); `null` without a reading today (the trend alone is scored). */
  readonly value: number | null;
  /** exp(x) in ms, for display. */
  readonly valueMs: number | null;
  /** m7: the mean of ln(rMSSD) over the 7 days ending today; `null` with fewer than 3 readings. */
  readonly trend: number | null;
  /** exp(m7) in ms (the geometric mean of the week), for display. */
  readonly trendMs: number | null;
  /** HRV readings in the 7 days ending today. */
  readonly days: number;
  /**
   * μ60 and σ60 of ln(rMSSD) (σ as measured), the normal range
   * μ60 ± 0.5·max(σ60, 0.10) in ln units, the readings it rests on, and the
   * same in ms.
   */
  readonly baseline:
    (NormalRange & { readonly ms: { readonly mean: number; readonly low: number; readonly high: number } }) | null;
  /** z of today's reading and of the 7-day mean against the baseline; `null` for a part not present. */
  readonly zToday: number | null;
  readonly zTrend: number | null;
  /** Each part's score (unrounded); the component's score is their mean. */
  readonly todayScore: number | null;
  readonly trendScore: number | null;
}

export interface RestingHrComponent extends ComponentResult {
  /** Today's resting HR, bpm. */
  readonly value: number | null;
  /** Mean and SD (bpm) of the 60 days before today; normal range mean ± 0.5·max(SD, 1). */
  readonly baseline: NormalRange | null;
  readonly z: number | null;
}

export interface SleepComponent extends ComponentResult {
  /** Seconds slept. */
  readonly value: number | null;
  readonly sleepScore: number | null;
  readonly needSecs: number;
  /** d = max(0, (need − slept) / need). */
  readonly shortfall: number | null;
  readonly baseline: null;
}

export interface SubjectiveComponent extends ComponentResult {
  /** No single input: the answers are in `checkIn`. */
  readonly value: null;
  readonly checkIn: CheckIn | null;
  readonly baseline: null;
}

export interface LoadComponent extends ComponentResult {
  /** p: form as a percentage of fitness, 100·TSB / max(CTL, 10). */
  readonly value: number | null;
  readonly tsb: number | null;
  /** The CTL the TSB was computed from (the day before's). */
  readonly ctl: number | null;
  readonly daysSinceFirstWorkout: number | null;
  readonly baseline: null;
}

/** One result per component the contract names, each with what its model saw. */
export interface RecoveryComponents extends Readonly<Record<RecoveryComponentName, ComponentResult>> {
  readonly hrv: HrvComponent;
  readonly restingHr: RestingHrComponent;
  readonly sleep: SleepComponent;
  readonly subjective: SubjectiveComponent;
  readonly load: LoadComponent;
}

/**
 * The contract's day with the model's richer components. `score` has 2
 * decimals and is `null` with `insufficient_data`; `explanation` names what
 * lowered the score most, or what data is missing.
 */
export interface RecoveryDay extends Readonly<Omit<RecoveryDayBody, 'components'>> {
  readonly components: RecoveryComponents;
}

/** A component before weighting: its score, what it was computed from, and a sentence for the explanation. */
type Scored<C extends ComponentResult> = Omit<C, 'weight' | 'contribution' | 'available'> & {
  /** "HRV below your normal range": the subject of "… lowered today's score most." */
  readonly cause: string | null;
};

/**
 * The score of one day from summary statistics. This is the model itself;
 * `recoveryForDay` and `recoverySeries` only summarise a wellness history
 * into `RecoveryInputs` and call it.
 *
 * Choices the model leaves open, made here:
 * - Component scores are rounded to 2 decimals first and the score is the
 *   weighted sum of those rounded scores, so the numbers shown add up exactly
 *   as in the model's worked example.
 * - Status is decided on the score before its 2-decimal rounding (69.996 is
 *   `maintain`): ≥ 70 ready, < 70 and ≥ 45 maintain, < 45 recover.
 * - With too little data the available components keep their scores, but
 *   weights and contributions are 0: nothing was averaged.
 * - Ties in the largest loss go to the component first in the table (HRV,
 *   resting HR, sleep, check-in, load).
 */
export function scoreComponents(inputs: RecoveryInputs): RecoveryDay {
  const scored = {
    hrv: scoreHrv(inputs.hrv),
    restingHr: scoreRestingHr(inputs.restingHr),
    sleep: scoreSleep(inputs.sleep),
    subjective: scoreCheckIn(inputs.checkIn),
    load: scoreLoad(inputs.load),
  };
  const available = COMPONENT_ORDER.filter((name) => scored[name].score !== null);
  const enough = available.length >= MIN_COMPONENTS && (available.includes('hrv') || available.includes('restingHr'));
  const totalWeight = available.reduce((sum, name) => sum + RECOVERY_WEIGHTS[name], 0);
  const weightOf = (name: RecoveryComponentName) =>
    enough && scored[name].score !== null ? RECOVERY_WEIGHTS[name] / totalWeight : 0;
  const finish = <C extends ComponentResult>(name: RecoveryComponentName, part: Scored<C>) => {
    const { cause: _cause, ...rest } = part;
    const weight = weightOf(name);
    return { ...rest, weight, contribution: weight * (part.score ?? 0), available: part.score !== null };
  };
  const components: RecoveryComponents = {
    hrv: finish<HrvComponent>('hrv', scored.hrv),
    restingHr: finish<RestingHrComponent>('restingHr', scored.restingHr),
    sleep: finish<SleepComponent>('sleep', scored.sleep),
    subjective: finish<SubjectiveComponent>('subjective', scored.subjective),
    load: finish<LoadComponent>('load', scored.load),
  };

  if (!enough) {
    return {
      date: inputs.date,
      score: null,
      status: 'insufficient_data',
      components,
      explanation: insufficientExplanation(available),
    };
  }

  const unrounded = available.reduce((sum, name) => sum + components[name].contribution, 0);
  let largest: RecoveryComponentName | undefined;
  let largestLoss = 0;
  for (const name of available) {
    const loss = components[name].weight * (100 - (components[name].score ?? 100));
    if (loss > largestLoss) {
      largest = name;
      largestLoss = loss;
    }
  }
  return {
    date: inputs.date,
    score: round2(unrounded),
    status: statusOf(unrounded),
    components,
    explanation:
      largest === undefined
        ? 'Every measure is at its best today; nothing lowered the score.'
        : `${scored[largest].cause ?? 'One component'} lowered today's score most.`,
  };
}

function statusOf(score: number): Exclude<RecoveryStatus, 'insufficient_data'> {
  if (score >= READY_MIN_SCORE) return 'ready';
  if (score >= MAINTAIN_MIN_SCORE) return 'maintain';
  return 'recover';
}

function insufficientExplanation(available: readonly RecoveryComponentName[]): string {
  if (!available.includes('hrv') && !available.includes('restingHr')) {
    return (
      'Not enough data for a score yet: it needs HRV (3 readings in the last 7 days and 14 in the 60 days before) ' +
      'or a resting heart rate today with 14 in the 60 days before.'
    );
  }
  return 'Not enough data for a score yet: besides HRV or resting heart rate it needs sleep, a check-in or training load today.';
}

/**
 * The athlete's normal range around a baseline: mean ± HRV_NORMAL_RANGE_SD
 * standard deviations, the deviation floored (`sdUsed`) so a very steady
 * baseline does not make every small change look abnormal. `null` until the
 * baseline has a mean and a deviation.
 */
function normalRange(
  baseline: { readonly mean: number | null; readonly sd: number | null; readonly count: number },
  sdUsed: number | null,
): NormalRange | null {
  if (baseline.mean === null || baseline.sd === null || sdUsed === null) return null;
  return {
    mean: baseline.mean,
    sd: baseline.sd,
    low: baseline.mean - HRV_NORMAL_RANGE_SD * sdUsed,
    high: baseline.mean + HRV_NORMAL_RANGE_SD * sdUsed,
    days: baseline.count,
  };
}

function scoreHrv(hrv: RecoveryInputs['hrv']): Scored<HrvComponent> {
  const { today, week, baseline } = hrv;
  const trend = week.count >= HRV_WEEK_MIN_VALUES ? week.mean : null;
  const sdUsed = baseline.sd === null ? null : Math.max(baseline.sd, HRV_SD_FLOOR);
  const band = normalRange(baseline, sdUsed);
  const shown =
    band === null
      ? null
      : { ...band, ms: { mean: Math.exp(band.mean), low: Math.exp(band.low), high: Math.exp(band.high) } };
  const seen = {
    value: today,
    valueMs: today === null ? null : Math.exp(today),
    trend,
    trendMs: trend === null ? null : Math.exp(trend),
    days: week.count,
    baseline: shown,
  };
  const notScored = { zToday: null, zTrend: null, todayScore: null, trendScore: null };
  const missing =
    baseline.count < HRV_BASELINE_MIN_VALUES
      ? `${String(baseline.count)} HRV readings in the 60-day baseline, ${String(HRV_BASELINE_MIN_VALUES)} needed`
      : today === null && trend === null
        ? week.count === 0
          ? 'no HRV in the last 7 days'
          : `no HRV today and ${String(week.count)} readings in the last 7 days, ${String(HRV_WEEK_MIN_VALUES)} needed`
        : null;
  if (missing !== null || band === null || shown === null || sdUsed === null) {
    return leftOut({ ...seen, ...notScored }, missing ?? 'no HRV baseline');
  }
  const zOf = (value: number | null) => (value === null ? null : (value - band.mean) / sdUsed);
  const scoreOf = (z: number | null) => (z === null ? null : clampScore(SCORE_AT_BASELINE + SCORE_POINTS_PER_SD * z));
  const zToday = zOf(today);
  const zTrend = zOf(trend);
  const todayScore = scoreOf(zToday);
  const trendScore = scoreOf(zTrend);
  const score =
    todayScore !== null && trendScore !== null
      ? HRV_TODAY_WEIGHT * todayScore + (1 - HRV_TODAY_WEIGHT) * trendScore
      : (todayScore ?? trendScore ?? 0);
  const whereOf = (value: number) => (value < band.low ? 'below' : value > band.high ? 'above' : 'within');
  const range = `${oneDecimal(shown.ms.low)}–${oneDecimal(shown.ms.high)} ms`;
  const trendText =
    trend === null
      ? `${String(week.count)} readings in the last 7 days, too few for a trend`
      : `7-day mean ${oneDecimal(Math.exp(trend))} ms (${String(week.count)} readings)`;
  const detail =
    today === null
      ? `No HRV reading today; ${trendText} against your normal ${range}`
      : `Today ${oneDecimal(Math.exp(today))} ms, ${whereOf(today)} your normal ${range}; ${trendText}` +
        (trend === null
          ? ''
          : whereOf(trend) === whereOf(today)
            ? `, ${whereOf(trend)} it too`
            : `, ${whereOf(trend)} it`);
  // The part with the lower z words the cause (today on a tie).
  const lowerIsTrend = zTrend !== null && (zToday === null || zTrend < zToday);
  const lower = lowerIsTrend ? (trend as number) : (today as number);
  const bothAbove = [today, trend].every((value) => value === null || whereOf(value) === 'above');
  return {
    ...seen,
    zToday,
    zTrend,
    todayScore,
    trendScore,
    score: round2(score),
    reason: null,
    detail,
    cause:
      whereOf(lower) === 'below'
        ? lowerIsTrend && today !== null
          ? "HRV's 7-day trend below your normal range"
          : 'HRV below your normal range'
        : bothAbove
          ? 'HRV, though above your normal range,'
          : 'HRV within, not above, your normal range',
  };
}

function scoreRestingHr(restingHr: RecoveryInputs['restingHr']): Scored<RestingHrComponent> {
  const { today, baseline } = restingHr;
  const sdUsed = baseline.sd === null ? null : Math.max(baseline.sd, RESTING_HR_SD_FLOOR_BPM);
  const shown = normalRange(baseline, sdUsed);
  const seen = { value: today, baseline: shown };
  const missing =
    today === null
      ? 'no resting heart rate today'
      : baseline.count < RESTING_HR_BASELINE_MIN_VALUES
        ? `${String(baseline.count)} resting heart rates in the previous 60 days, ${String(RESTING_HR_BASELINE_MIN_VALUES)} needed`
        : null;
  if (missing !== null || today === null || shown === null || sdUsed === null) {
    return leftOut({ ...seen, z: null }, missing ?? 'no resting heart rate baseline');
  }
  const z = (today - shown.mean) / sdUsed;
  // The same ±0.5 SD band as HRV decides the wording; the model names a band for HRV only.
  const where = today > shown.high ? 'above' : today < shown.low ? 'below' : 'within';
  return {
    ...seen,
    z,
    score: round2(clampScore(SCORE_AT_BASELINE - SCORE_POINTS_PER_SD * z)),
    reason: null,
    detail: `Resting heart rate ${oneDecimal(today)} bpm against your normal ${oneDecimal(shown.low)}–${oneDecimal(shown.high)} bpm`,
    cause:
      where === 'above'
        ? 'Resting heart rate above your normal range'
        : where === 'below'
          ? 'Resting heart rate, though below your normal range,'
          : 'Resting heart rate within, not below, your normal range',
  };
}

/**
 * Sleep. When only the device's sleep score is known (no duration), that
 * score alone is the component: it is a measure of the same night, and
 * leaving it out would throw away the only sleep data of the day.
 */
function scoreSleep(sleep: RecoveryInputs['sleep']): Scored<SleepComponent> {
  const { secs, sleepScore, needSecs } = sleep;
  const shortfall = secs === null ? null : Math.max(0, (needSecs - secs) / needSecs);
  const seen = { value: secs, sleepScore, needSecs, shortfall, baseline: null };
  if (secs === null && sleepScore === null) return leftOut(seen, 'no sleep recorded for last night');
  const byDuration = shortfall === null ? null : clampScore(100 * (1 - SLEEP_POINTS_PER_SHORTFALL * shortfall));
  const score =
    byDuration === null ? (sleepScore as number) : sleepScore === null ? byDuration : (byDuration + sleepScore) / 2;
  const scoreText = sleepScore === null ? '' : `sleep score ${String(sleepScore)}`;
  return {
    ...seen,
    score: round2(score),
    reason: null,
    detail:
      secs === null
        ? `Sleep score ${String(sleepScore)}`
        : `${hours(secs)} h slept, need ${hours(needSecs)} h${scoreText && `, ${scoreText}`}`,
    cause:
      secs !== null && shortfall !== null && shortfall > 0
        ? `Sleep short of your need (${hours(secs)} of ${hours(needSecs)} h)`
        : sleepScore !== null
          ? `A sleep score of ${String(sleepScore)}`
          : 'Sleep',
  };
}

function scoreCheckIn(checkIn: CheckIn): Scored<SubjectiveComponent> {
  const items = CHECK_IN_FIELDS.map((name) => ({ name, value: checkIn[name], ...CHECK_IN_ITEMS[name] }));
  const range = CHECK_IN_MAX - CHECK_IN_MIN;
  const answered = items.flatMap((item) =>
    item.value === null
      ? []
      : [
          {
            ...item,
            value: item.value,
            score:
              item.better === 'high'
                ? ((item.value - CHECK_IN_MIN) / range) * 100
                : ((CHECK_IN_MAX - item.value) / range) * 100,
          },
        ],
  );
  if (answered.length === 0) {
    return leftOut({ value: null, checkIn: null, baseline: null }, 'no check-in today');
  }
  const score = answered.reduce((sum, item) => sum + item.score, 0) / answered.length;
  const worst = answered.reduce((a, b) => (b.score < a.score ? b : a));
  return {
    value: null,
    checkIn,
    baseline: null,
    score: round2(score),
    reason: null,
    detail: `Check-in: ${answered.map((item) => `${item.name} ${String(item.value)}`).join(', ')} (of ${String(CHECK_IN_MAX)})`,
    cause: `${worst.low} in your check-in (${String(worst.value)} of ${String(CHECK_IN_MAX)})`,
  };
}

/** The load score of form p (% of fitness): piecewise linear through LOAD_SCORE_POINTS, flat outside. */
export function loadScoreOfFormPercent(percent: number): number {
  const points = LOAD_SCORE_POINTS;
  const first = points[0];
  const last = points[points.length - 1] as (typeof points)[number];
  if (percent <= first.percent) return first.score;
  if (percent >= last.percent) return last.score;
  for (let index = 1; index < points.length; index += 1) {
    const right = points[index] as (typeof points)[number];
    const left = points[index - 1] as (typeof points)[number];
    if (percent <= right.percent) {
      return left.score + ((percent - left.percent) * (right.score - left.score)) / (right.percent - left.percent);
    }
  }
  return last.score;
}

/** Form as a percentage of fitness: 100·TSB / max(CTL, 10), with the CTL the TSB was computed from (docs/science.md §2). */
export function formPercentOf(tsb: number, ctlEnteringDay: number): number {
  return (100 * tsb) / Math.max(ctlEnteringDay, LOAD_CTL_FLOOR);
}

/** The form zone a percentage of fitness falls in (FORM_ZONE_PERCENT_BOUNDS; edges go towards the optimal zone). */
export function formZoneOfPercent(percent: number): FormZone {
  const bounds = FORM_ZONE_PERCENT_BOUNDS;
  if (percent > bounds.transition.from) return 'transition';
  if (percent > bounds.fresh.from) return 'fresh';
  if (percent > bounds.grey.from) return 'grey';
  if (percent >= bounds.optimal.from) return 'optimal';
  return 'high_risk';
}

const edge = (value: number) => (value > 0 ? `+${String(value)}` : String(value));
const { transition, fresh, grey, optimal, high_risk: highRisk } = FORM_ZONE_PERCENT_BOUNDS;
/** How a load component's detail names its zone. */
const FORM_ZONE_DETAILS: Record<FormZone, string> = {
  transition: `the transition zone, very fresh (above ${edge(transition.from)} %)`,
  fresh: `fresh (${edge(fresh.from)} to ${edge(fresh.to)} %)`,
  grey: `the grey zone (${edge(grey.from)} to ${edge(grey.to)} %)`,
  optimal: `the optimal training zone (${edge(optimal.to)} to ${edge(optimal.from)} %)`,
  high_risk: `the high-risk zone (below ${edge(highRisk.to)} %)`,
};

function scoreLoad(load: RecoveryInputs['load']): Scored<LoadComponent> {
  const { tsb, ctl, daysSinceFirstWorkout } = load;
  const percent = tsb === null || ctl === null ? null : formPercentOf(tsb, ctl);
  const seen = { value: percent, tsb, ctl, daysSinceFirstWorkout, baseline: null };
  const missing =
    daysSinceFirstWorkout === null || daysSinceFirstWorkout < 0
      ? 'no workouts yet'
      : daysSinceFirstWorkout < LOAD_MIN_DAYS_SINCE_FIRST_WORKOUT
        ? `${String(daysSinceFirstWorkout)} days of training history, ${String(LOAD_MIN_DAYS_SINCE_FIRST_WORKOUT)} needed`
        : null;
  if (missing !== null || percent === null || tsb === null || ctl === null) {
    return leftOut(seen, missing ?? 'no training load for today');
  }
  const formText = `Form ${signed(percent)} % of fitness (TSB ${oneDecimal(tsb)}, CTL ${oneDecimal(ctl)})`;
  return {
    ...seen,
    score: round2(loadScoreOfFormPercent(percent)),
    reason: null,
    detail: `${formText}: ${FORM_ZONE_DETAILS[formZoneOfPercent(percent)]}`,
    cause:
      formZoneOfPercent(percent) === 'high_risk'
        ? `Fatigue from recent training (form ${signed(percent)} % of fitness, below ${edge(highRisk.to)} %)`
        : `Fatigue from recent training (form ${signed(percent)} % of fitness)`,
  };
}

/** A component left out: what it saw, and why. */
function leftOut<T extends object>(seen: T, reason: string) {
  return { ...seen, score: null, reason, detail: reason.charAt(0).toUpperCase() + reason.slice(1), cause: null };
}

/** What `recoveryForDay` reads. */
export interface RecoveryDayInput {
  readonly date: string;
  /**
   * Wellness days; the 67 days ending on `date` are read (HRV and resting HR
   * per date, and today's sleep and check-in), others are ignored. One entry
   * per date.
   */
  readonly history: readonly WellnessDay[];
  /** Default 8 h. */
  readonly sleepNeedSecs?: number | null;
  /** TSB of the day from the training load model. */
  readonly tsb?: number | null;
  /** The CTL that TSB was computed from: the day before's. */
  readonly ctl?: number | null;
  /** Whole days from the first workout's local date to `date`; `null` when there is none. */
  readonly daysSinceFirstWorkout?: number | null;
}

/** The recovery score of one day. */
export function recoveryForDay(input: RecoveryDayInput): RecoveryDay {
  const days = recoveryDays(input.history, {
    fromDate: input.date,
    toDate: input.date,
    sleepNeedSecs: input.sleepNeedSecs ?? null,
    loadOf: () => ({
      tsb: input.tsb ?? null,
      ctl: input.ctl ?? null,
      daysSinceFirstWorkout: input.daysSinceFirstWorkout ?? null,
    }),
  });
  return days[0] as RecoveryDay;
}

export interface RecoverySeriesOptions {
  readonly fromDate: string;
  /** Inclusive. */
  readonly toDate: string;
  /** Default 8 h. */
  readonly sleepNeedSecs?: number | null;
  /**
   * TSB per date (from the training load series) and the CTL it was computed
   * from (the day before's); a date not in it has no load component.
   */
  readonly loadByDate?: ReadonlyMap<string, { readonly tsb: number; readonly ctl: number }>;
  /** Local date of the athlete's first workout; `null` or absent when there is none. */
  readonly firstWorkoutDate?: string | null;
}

/**
 * The recovery score of every day from `fromDate` to `toDate` from one
 * wellness history (which should reach 66 days before `fromDate`). The
 * windows slide one day at a time with exact integer sums, so a year costs
 * O(days), and each day equals `recoveryForDay` of that day exactly.
 */
export function recoverySeries(history: readonly WellnessDay[], options: RecoverySeriesOptions): RecoveryDay[] {
  const { loadByDate, firstWorkoutDate } = options;
  if (firstWorkoutDate) assertLocalDate(firstWorkoutDate);
  return recoveryDays(history, {
    fromDate: options.fromDate,
    toDate: options.toDate,
    sleepNeedSecs: options.sleepNeedSecs ?? null,
    loadOf: (date) => ({
      tsb: loadByDate?.get(date)?.tsb ?? null,
      ctl: loadByDate?.get(date)?.ctl ?? null,
      daysSinceFirstWorkout: firstWorkoutDate ? daysBetween(firstWorkoutDate, date) : null,
    }),
  });
}

interface RecoveryDaysOptions {
  readonly fromDate: string;
  readonly toDate: string;
  readonly sleepNeedSecs: number | null;
  readonly loadOf: (date: string) => RecoveryInputs['load'];
}

/** The day's check-in answers, `null` for each one not given. */
function checkInOf(day: WellnessDay | undefined): CheckIn {
  return Object.fromEntries(CHECK_IN_FIELDS.map((field) => [field, finiteOrNull(day?.[field])])) as CheckIn;
}

/**
 * Summarise the history day by day and score each day. Days are indexed from
 * `origin`, 66 days before `fromDate`, so every window of every day lies
 * inside the arrays.
 */
function recoveryDays(history: readonly WellnessDay[], options: RecoveryDaysOptions): RecoveryDay[] {
  const { fromDate, toDate, loadOf } = options;
  assertLocalDate(fromDate);
  assertLocalDate(toDate);
  const needSecs = options.sleepNeedSecs ?? DEFAULT_SLEEP_NEED_SECS;
  if (!(needSecs > 0)) throw new RangeError(`sleep need must be > 0 seconds, got ${String(needSecs)}`);
  if (fromDate > toDate) return [];

  const origin = addDays(fromDate, -(RECOVERY_HISTORY_DAYS - 1));
  const length = daysBetween(origin, toDate) + 1;
  const entries: (WellnessDay | undefined)[] = new Array<WellnessDay | undefined>(length);
  const lnHrv: (number | null)[] = new Array<number | null>(length).fill(null);
  const restingHr: (number | null)[] = new Array<number | null>(length).fill(null);
  for (const day of history) {
    assertLocalDate(day.date);
    const index = daysBetween(origin, day.date);
    if (index < 0 || index >= length) continue;
    if (entries[index] !== undefined) throw new RangeError(`two wellness entries for ${day.date}`);
    entries[index] = day;
    // A value that is not a positive number is a missing one (the contract never stores one).
    if (isPositive(day.hrv)) lnHrv[index] = Math.round(Math.log(day.hrv) * HRV_FIXED_POINT);
    if (isPositive(day.restingHr)) restingHr[index] = Math.round(day.restingHr * RESTING_HR_FIXED_POINT);
  }

  // Windows as [first, last] day offsets relative to the scored day.
  const hrvWeek = slidingWindow(lnHrv, -(HRV_WEEK_DAYS - 1), 0);
  const hrvBaseline = slidingWindow(lnHrv, -(RECOVERY_HISTORY_DAYS - 1), -HRV_WEEK_DAYS);
  const restingHrBaseline = slidingWindow(restingHr, -RESTING_HR_BASELINE_DAYS, -1);

  const days: RecoveryDay[] = [];
  for (let index = RECOVERY_HISTORY_DAYS - 1; index < length; index += 1) {
    hrvWeek.moveTo(index);
    hrvBaseline.moveTo(index);
    restingHrBaseline.moveTo(index);
    const date = addDays(origin, index);
    const today = entries[index];
    const lnHrvToday = lnHrv[index] ?? null;
    days.push(
      scoreComponents({
        date,
        hrv: {
          today: lnHrvToday === null ? null : lnHrvToday / HRV_FIXED_POINT,
          week: hrvWeek.stats(HRV_FIXED_POINT),
          baseline: hrvBaseline.stats(HRV_FIXED_POINT),
        },
        restingHr: {
          today: isPositive(today?.restingHr) ? today.restingHr : null,
          baseline: restingHrBaseline.stats(RESTING_HR_FIXED_POINT),
        },
        sleep: { secs: finiteOrNull(today?.sleepSecs), sleepScore: finiteOrNull(today?.sleepScore), needSecs },
        checkIn: checkInOf(today),
        load: loadOf(date),
      }),
    );
  }
  return days;
}

/**
 * Count, sum and sum of squares of the integer values in [day + first,
 * day + last], moved forward one day at a time. Sums of integers below 2^53
 * are exact, so the result does not depend on where the sliding started.
 */
function slidingWindow(values: readonly (number | null)[], first: number, last: number) {
  let count = 0;
  let sum = 0;
  let sumOfSquares = 0;
  let at: number | undefined;
  const add = (index: number, sign: 1 | -1) => {
    const value = values[index];
    if (value === null || value === undefined) return;
    count += sign;
    sum += sign * value;
    sumOfSquares += sign * value * value;
  };
  return {
    moveTo(day: number): void {
      if (at === undefined || day !== at + 1) {
        count = 0;
        sum = 0;
        sumOfSquares = 0;
        for (let index = day + first; index <= day + last; index += 1) add(index, 1);
      } else {
        add(day + last, 1);
        add(at + first, -1);
      }
      at = day;
    },
    /** Mean and sample SD (n − 1) in the values' own unit. */
    stats(scale: number): WindowStats {
      if (count === 0) return { count, mean: null, sd: null };
      const mean = sum / count / scale;
      if (count < 2) return { count, mean, sd: null };
      const variance = Math.max(0, (sumOfSquares - (sum * sum) / count) / (count - 1));
      return { count, mean, sd: Math.sqrt(variance) / scale };
    },
  };
}

function isPositive(value: number | null | undefined): value is number {
  return value !== null && value !== undefined && Number.isFinite(value) && value > 0;
}

function finiteOrNull(value: number | null | undefined): number | null {
  return value !== null && value !== undefined && Number.isFinite(value) ? value : null;
}

function clampScore(score: number): number {
  return Math.min(100, Math.max(0, score));
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

function hours(secs: number): string {
  return (secs / 3600).toFixed(1);
}

function oneDecimal(value: number): string {
  return value.toFixed(1);
}

/** A whole percentage with its sign: "+5", "-20", "0". */
function signed(value: number): string {
  const rounded = Math.round(value) + 0; // + 0: no "-0"
  return rounded > 0 ? `+${String(rounded)}` : String(rounded);
}

const LOCAL_DATE = /^\d{4}-\d{2}-\d{2}$/;

function assertLocalDate(date: string): void {
  if (!LOCAL_DATE.test(date) || Number.isNaN(Date.parse(`${date}T00:00:00Z`))) {
    throw new RangeError(`not a YYYY-MM-DD date: ${date}`);
  }
}

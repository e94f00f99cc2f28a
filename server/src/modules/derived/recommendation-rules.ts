/**
 * Recommendation rules: what the derived data suggests the athlete change.
 * Each rule reads the stored recovery score, training load and fuel plans,
 * and cites in `evidence` the numbers and the threshold that fired it, so a
 * suggestion can be traced as the scores themselves can.
 *
 * 1. Low recovery before a hard workout (`easier_workout`). The latest
 *    recovery score (today's, else yesterday's; an older one says nothing
 *    about today) is `recover`, below 45, the recovery model's lowest band,
 *    and a planned workout from today through the next 2 days is hard:
 *    - its planned stress is at least 80 (`trainingStress`, else the stress
 *      of its steps as the fuel model reads them: Σ hours × IF² × 100), or
 *    - its duration-weighted intensity factor is at least 0.85 (upper tempo
 *      and above in Coggan's power levels: sweet spot, threshold and VO2max
 *      sessions), from its steps' %FTP or heart-rate zones, else from its
 *      planned stress and duration, else the sport's typical IF.
 *    Either is enough: a long ride can be hard by volume, a short interval
 *    session by intensity. What is suggested depends on how long recovery
 *    has been low, counted as consecutive days in `recover` up to the latest
 *    score (the stored days of the last 14 are read; `recoverDays`,
 *    `recoverSince` in the evidence):
 *    - 3 days or more: rest, or at most 60 minutes easy. Accepting swaps the
 *      session for the structure generator's `recovery` intent (45-55 % FTP,
 *      or heart-rate zone 1, between an easy warm-up and cool-down) over the
 *      planned length or 60 minutes, whichever is shorter, its stress
 *      computed from those steps; resting is the athlete's own call (skip the
 *      session). Three days is where a low score stops being one bad night:
 *      the recovery score's HRV trend is a 7-day mean (docs/science.md §2),
 *      and a low score over several days is the pattern of functional
 *      overreaching, whose remedy is reduced load (days of rest or very easy
 *      training) rather than a slightly easier session (Meeusen et al. 2013,
 *      Med Sci Sports Exerc 45:186, the ECSS/ACSM consensus on overtraining).
 *      The easy session is Coggan's active recovery level (below 56 % of
 *      FTP); 60 minutes is the model's ceiling on it (docs/science.md §2):
 *      an hour of it is about 26 TSS, a fifth of a long ride, so it adds
 *      little fatigue. The issue that asked for this saw six days in
 *      `recover` answered with a 130 TSS ride made a 107.5 TSS endurance
 *      ride of the same length.
 *    - 1 or 2 days: the same session as an endurance ride or run of the same
 *      length (the structure generator's `endurance` intent), as before: one
 *      or two low days are often a single bad night, and the athlete keeps the
 *      session's volume at an easier intensity.
 *    Choices:
 *    - It is suggested only when that variant is really easier, at most 90 %
 *      of the planned stress. A long steady ride that is hard by volume alone
 *      is already an endurance session; swapping in another changes nothing.
 *    - The rest suggestion has its own key (`easier-rest:`): reaching the
 *      third day in `recover` is a new situation, asked about even when the
 *      endurance variant was decided the day before.
 *    - The situation is the workout on its date, not the day's score: once
 *      the athlete has decided about that workout, a new score the next
 *      morning does not ask again (moving the workout to another day does).
 * 2. Fuel short (`fuel_advice`). A planned workout from now through the
 *    next 2 days whose predicted glycogen is `at_risk` (the liver below 20 g
 *    during it, or muscle at its floor or starting below 50 %) or `top_up`
 *    (muscle starting below 70 %), see the fuel plan, gets the fuel model's
 *    advice as the suggestion: its body is the reason in one line and then
 *    the plan's lines (before, during, after), and accepting takes the advised
 *    items (the model has checked that eating exactly those makes the workout
 *    `ready`, where any advice within its limits can). Choices:
 *    - Every workout longer than 75 minutes now has advice (a coach's plan,
 *      whatever the stores say), shown with the workout's fuel. A suggestion
 *      asks the athlete to change something, so it opens only when the plan
 *      changes the status: `at_risk` or `top_up`. One for every `ready` long
 *      ride would be a standing suggestion per long ride, noise that hides
 *      the ones that matter; `not_logged` has no status to fix.
 *    - Workouts that have started are left out (the advice can no longer be
 *      followed), and so is advice that is empty.
 *    The caller runs this rule only while the athlete's `nutrition` feature
 *    is on: without food logs every workout ahead looks unfuelled.
 * 3. Ramp too steep (`lighter_week`). CTL rose by more than 8 in the 7 days
 *    to the latest day of training load (the training-load model's ramp
 *    signal; coaching texts put a sustainable rise at about 5-8 a week), and
 *    the athlete has 42 days of training history by then (before that CTL is
 *    still rising from its start at 0: a new athlete's first week of 5 × 100
 *    TSS is not a ramp too steep; docs/science.md §1). The
 *    suggestion is a lighter week: the planned workouts from today through
 *    the end of a 7-day window scaled to 80 % of their stress and duration.
 *    Choices:
 *    - 80 % is a moderate cut that keeps every session and its intensities;
 *      an athlete who wants a real recovery week cuts more by hand.
 *    - A suggestion covers 7 days from the day it was first made. While that
 *      window runs, the rule names the same suggestion (its key is that day),
 *      so an accepted or dismissed lighter week is not offered again for
 *      days the athlete already decided about, and an accepted one is never
 *      applied twice to the same workout.
 *    - Without planned workouts in the window there is nothing to make
 *      lighter, and no suggestion; the ramp still shows in the training load.
 *    - Without a stored day 7 days before the latest, or before 42 days of
 *      training history, there is no ramp (the signal is undefined, not
 *      zero), as in the training-load model.
 *
 * Each suggestion has a `dedupeKey` naming the situation: the workout and its
 * date for rules 1 and 2, the window's first day for rule 3. A situation
 * keeps its key while it lasts, so recomputing updates the open suggestion
 * instead of adding another, and a decided one stays decided.
 *
 * Pure functions: no database, no clock (`today` is given).
 */
import type {
  PlannedSport,
  PlannedStep,
  PlannedStructure,
  PlannedWorkoutFuel,
  RecommendationAction,
} from '@pacer/contract';
import type { RecommendationEvidence, RecommendationKind } from '@pacer/contract';
import { addDays } from '../../lib/dates.ts';
import {
  hasTrainingHistory,
  weeklyCtlRamp,
  RAMP_TOO_STEEP_CTL_PER_WEEK,
  type TrainingLoadDay,
} from './training-load.model.ts';
import { plannedWorkoutIntensity } from './exercise.ts';
import { AT_RISK_MUSCLE_START_PERCENT, LIVER_RISK_G, READY_MUSCLE_START_PERCENT } from './glycogen.constants.ts';
import { buildWorkoutStructure } from '../planned-workouts/structure-generation.service.ts';

/** The recovery model's `recover` band: a score below this. */
export const RECOVER_BELOW_SCORE = 45;
/** A planned workout is hard from this planned stress on... */
export const HARD_TRAINING_STRESS = 80;
/** ...or from this intensity factor on. */
export const HARD_INTENSITY_FACTOR = 0.85;
/** The easier variant must carry at most this share of the planned stress to be worth suggesting. */
export const EASIER_VARIANT_MAX_STRESS_SHARE = 0.9;
/** Rule 1: this many consecutive days in `recover` or more make the suggestion rest or at most 60 minutes easy. */
export const REST_AFTER_RECOVER_DAYS = 3;
/** Rule 1: the easy session suggested then lasts at most this long (Coggan's active recovery: under an hour). */
export const EASY_SESSION_MAX_SECS = 60 * 60;
/** Rule 1: the days of stored recovery read to count consecutive days in `recover`, the latest included. */
export const RECOVER_STREAK_LOOKBACK_DAYS = 14;
/** Rules 1 and 2 look at planned workouts from today through this many days ahead. */
export const LOOKAHEAD_DAYS = 2;
/** Rule 3: stress and duration of the week's planned workouts are multiplied by this. */
export const LIGHTER_WEEK_SCALE = 0.8;
/** Rule 3: the days a lighter week covers, its first day included. */
export const LIGHTER_WEEK_DAYS = 7;

/** A planned workout as the rules read it. */
export interface PlannedWorkoutInput {
  readonly id: string;
  readonly date: string;
  readonly title: string;
  readonly sport: PlannedSport;
  readonly durationSecs: number | null;
  readonly trainingStress: number | null;
  readonly structure: PlannedStructure | null;
}

export interface RecoveryInput {
  readonly date: string;
  readonly score: number;
  readonly status: string;
}

export interface RuleInputs {
  /** The athlete's local today. */
  readonly today: string;
  /** The latest recovery score with a value; `undefined` without one. */
  readonly recovery: RecoveryInput | undefined;
  /**
   * Stored recovery days (any status) of the RECOVER_STREAK_LOOKBACK_DAYS up
   * to today, in any order: rule 1 counts the consecutive days in `recover`
   * up to the latest score. Empty means only `recovery` is known.
   */
  readonly recentRecovery: readonly { readonly date: string; readonly status: string }[];
  /** Local date of the athlete's first workout; `null` without one (rule 3 needs 42 days of history). */
  readonly firstWorkoutDate: string | null;
  /** Training load days ending with the latest, at least the 8 days that give its weekly ramp. */
  readonly load: readonly TrainingLoadDay[];
  /** Planned workouts from today through the lighter week's last day that have not started. */
  readonly planned: readonly PlannedWorkoutInput[];
  /** Fuel plans of the planned workouts within the lookahead (empty when the rule is off). */
  readonly fuel: readonly PlannedWorkoutFuel[];
  readonly thresholds: { readonly ftp: number | null; readonly thresholdHr: number | null };
  /** First day of the latest lighter-week suggestion, when its 7 days include today. */
  readonly lighterWeekStartedOn: string | null;
}

export interface Suggestion {
  readonly kind: RecommendationKind;
  readonly dedupeKey: string;
  readonly plannedWorkoutId: string | null;
  readonly title: string;
  readonly body: string;
  readonly evidence: RecommendationEvidence;
  readonly action: RecommendationAction;
}

/** Every rule over the inputs; each situation once. */
export function evaluateRecommendationRules(inputs: RuleInputs): Suggestion[] {
  const suggestions = [
    ...easierWorkoutSuggestions(inputs),
    ...fuelAdviceSuggestions(inputs),
    ...lighterWeekSuggestions(inputs),
  ];
  return [...new Map(suggestions.map((suggestion) => [suggestion.dedupeKey, suggestion])).values()];
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const round2 = (value: number) => Math.round(value * 100) / 100;

/** Planned stress and intensity of a workout as the fuel model reads them; `null` where unknown. */
export function plannedLoadOf(workout: PlannedWorkoutInput): {
  readonly trainingStress: number | null;
  readonly intensityFactor: number | null;
  readonly durationSecs: number | null;
} {
  const intensity = plannedWorkoutIntensity({
    sport: workout.sport,
    durationSecs: workout.durationSecs,
    trainingStress: workout.trainingStress,
    structure: workout.structure,
  });
  if (!intensity) return { trainingStress: workout.trainingStress, intensityFactor: null, durationSecs: null };
  let secs = 0;
  let weighted = 0;
  let stress = 0;
  for (const block of intensity.blocks) {
    secs += block.durationSecs;
    weighted += block.durationSecs * block.intensityFactor;
    stress += (block.durationSecs / 3600) * block.intensityFactor ** 2 * 100;
  }
  return {
    trainingStress: workout.trainingStress ?? stress,
    intensityFactor: secs > 0 ? weighted / secs : null,
    durationSecs: secs > 0 ? secs : null,
  };
}

/**
 * Consecutive days in `recover` up to and including `latest`, and the first
 * of them. Calendar days: a day missing from `days` or in another status ends
 * the run. `latest` is the day of the latest score, which the caller has
 * found in `recover`, so it counts whether or not `days` holds it.
 */
export function recoverStreak(
  days: readonly { readonly date: string; readonly status: string }[],
  latest: string,
): { readonly days: number; readonly since: string } {
  const statusOf = new Map(days.map((day) => [day.date, day.status]));
  let since = latest;
  let count = 1;
  while (statusOf.get(addDays(since, -1)) === 'recover') {
    since = addDays(since, -1);
    count += 1;
  }
  return { days: count, since };
}

/** Rule 1: low recovery before a hard planned workout. */
export function easierWorkoutSuggestions(inputs: RuleInputs): Suggestion[] {
  const { recovery } = inputs;
  if (recovery === undefined || recovery.status !== 'recover' || !(recovery.score < RECOVER_BELOW_SCORE)) return [];
  const streak = recoverStreak(inputs.recentRecovery, recovery.date);
  const rest = streak.days >= REST_AFTER_RECOVER_DAYS;
  const last = addDays(inputs.today, LOOKAHEAD_DAYS);
  const suggestions: Suggestion[] = [];
  for (const workout of inputs.planned) {
    if (workout.date < inputs.today || workout.date > last) continue;
    const load = plannedLoadOf(workout);
    const stress = load.trainingStress;
    const hard =
      (stress !== null && stress >= HARD_TRAINING_STRESS) ||
      (load.intensityFactor !== null && load.intensityFactor >= HARD_INTENSITY_FACTOR);
    if (!hard || stress === null || load.durationSecs === null) continue;
    // Whole seconds: a distance step's time is its distance at the middle of its pace range.
    const plannedSecs = Math.round(load.durationSecs);
    const durationSecs = rest ? Math.min(plannedSecs, EASY_SESSION_MAX_SECS) : plannedSecs;
    const intent = rest ? 'recovery' : 'endurance';
    const variant = buildWorkoutStructure({
      sport: workout.sport,
      intent,
      durationSecs,
      ftp: inputs.thresholds.ftp,
      thresholdHr: inputs.thresholds.thresholdHr,
    });
    // Shorter than a warm-up, steady part and cool-down can fill: no such variant exists.
    if (variant.durationSecs > durationSecs) continue;
    if (variant.trainingStress > stress * EASIER_VARIANT_MAX_STRESS_SHARE) continue;
    const score = Math.round(recovery.score);
    const intensityFactor = round2(load.intensityFactor ?? 0);
    const minutes = Math.round(variant.durationSecs / 60);
    const hardText =
      `“${workout.title}” on ${workout.date} is hard: planned stress ${String(round1(stress))}, ` +
      `intensity factor ${String(intensityFactor)}.`;
    const streakText =
      streak.days === 1
        ? `Your recovery score is ${String(score)} (${recovery.date}), in the recover band below ${String(RECOVER_BELOW_SCORE)}, `
        : `Your recovery has been in the recover band (below ${String(RECOVER_BELOW_SCORE)}) for ${String(streak.days)} days in a row ` +
          `(since ${streak.since}; ${String(score)} on ${recovery.date}), `;
    suggestions.push({
      kind: 'easier_workout',
      dedupeKey: `${rest ? 'easier-rest' : 'easier'}:${workout.id}:${workout.date}`,
      plannedWorkoutId: workout.id,
      title: rest
        ? `Rest, or make “${workout.title}” at most 60 minutes easy`
        : `Make “${workout.title}” an easy endurance session`,
      body: rest
        ? `Rest, or at most 60 minutes easy. ${streakText}and ${hardText} ` +
          `After ${String(REST_AFTER_RECOVER_DAYS)} or more days in the recover band a lighter session of the same length is not enough. ` +
          `Accepting replaces it with ${String(minutes)} minutes easy (planned stress ${String(variant.trainingStress)}); ` +
          `to rest instead, skip the session.`
        : `${streakText}and ${hardText} ` +
          `Accepting replaces its steps with an endurance session of the same length ` +
          `(planned stress ${String(variant.trainingStress)}).`,
      evidence: {
        rule: 'low_recovery_before_hard_workout',
        recoveryDate: recovery.date,
        recoveryScore: round2(recovery.score),
        recoveryThreshold: RECOVER_BELOW_SCORE,
        date: workout.date,
        plannedTss: round1(stress),
        intensityFactor,
        hardTss: HARD_TRAINING_STRESS,
        hardIntensityFactor: HARD_INTENSITY_FACTOR,
        recoverDays: streak.days,
        recoverSince: streak.since,
        restAfterRecoverDays: REST_AFTER_RECOVER_DAYS,
      },
      action: {
        type: 'swap_structure',
        plannedWorkoutId: workout.id,
        intent,
        structure: variant.structure,
        durationSecs: variant.durationSecs,
        trainingStress: variant.trainingStress,
      },
    });
  }
  return suggestions;
}

/** Rule 2: a planned workout short of fuel. */
export function fuelAdviceSuggestions(inputs: RuleInputs): Suggestion[] {
  const last = addDays(inputs.today, LOOKAHEAD_DAYS);
  const byId = new Map(inputs.planned.map((workout) => [workout.id, workout]));
  const suggestions: Suggestion[] = [];
  for (const plan of inputs.fuel) {
    const workout = byId.get(plan.plannedWorkoutId);
    if (!workout || workout.date < inputs.today || workout.date > last) continue;
    // `at_risk` or `top_up` only (see the top of this file).
    const status = plan.status;
    if ((status !== 'at_risk' && status !== 'top_up') || plan.advice.length === 0) continue;
    const grams = plan.advice.reduce((sum, item) => sum + item.carbsG, 0);
    suggestions.push({
      kind: 'fuel_advice',
      dedupeKey: `fuel:${workout.id}:${workout.date}`,
      plannedWorkoutId: workout.id,
      title: `Fuel “${workout.title}”: ${String(grams)} g of carbohydrate`,
      body: [fuelReason(workout, plan), ...plan.plan.map((line) => line.text)].join('\n'),
      evidence: {
        rule: 'fuel_at_risk',
        date: workout.date,
        status,
        limitingStore: plan.limitingStore,
        startPercent: plan.start.percent,
        minPercent: plan.minimum.percent,
        startLiverG: plan.start.liverG,
        startMuscleG: plan.start.muscleG,
        lowestLiverG: plan.minimum.liverG,
        startThreshold: AT_RISK_MUSCLE_START_PERCENT,
        minimumThreshold: LIVER_RISK_G,
      },
      action: {
        type: 'log_nutrition',
        plannedWorkoutId: workout.id,
        items: plan.advice.map((item) => ({
          at: item.at,
          carbsG: item.carbsG,
          absorptionType: item.absorptionType,
          reason: item.reason,
        })),
      },
    });
  }
  return suggestions;
}

/** The first line of a fuel suggestion: the status, the store that decides it, and the predicted levels. */
function fuelReason(workout: PlannedWorkoutInput, plan: PlannedWorkoutFuel): string {
  const levels = `predicted glycogen ${String(plan.start.percent)} % at the start and ${String(plan.minimum.percent)} % at the lowest point`;
  const why =
    plan.status === 'top_up'
      ? `needs a top-up: muscle glycogen starts below ${String(READY_MUSCLE_START_PERCENT)} %`
      : plan.limitingStore === 'liver'
        ? `is at risk, the liver limiting: it falls below ${String(LIVER_RISK_G)} g during the workout (blood glucose runs short)`
        : `is at risk, the muscle limiting: muscle glycogen reaches its floor or starts below ${String(AT_RISK_MUSCLE_START_PERCENT)} %`;
  return `“${workout.title}” on ${workout.date} ${why}; ${levels}.`;
}

/** Rule 3: CTL ramp over the limit. */
export function lighterWeekSuggestions(inputs: RuleInputs): Suggestion[] {
  const latest = inputs.load.at(-1);
  if (latest === undefined) return [];
  // Before 42 days of training history CTL is still rising from 0: no ramp signal (docs/science.md §1).
  if (!hasTrainingHistory(inputs.firstWorkoutDate, latest.date)) return [];
  const ramp = weeklyCtlRamp(inputs.load, latest.date);
  if (ramp === null || !(ramp > RAMP_TOO_STEEP_CTL_PER_WEEK)) return [];
  const startedOn = inputs.lighterWeekStartedOn ?? inputs.today;
  const to = addDays(startedOn, LIGHTER_WEEK_DAYS - 1);
  const from = inputs.today > startedOn ? inputs.today : startedOn;
  const workouts = inputs.planned.filter(
    (workout) =>
      workout.date >= from &&
      workout.date <= to &&
      (workout.trainingStress !== null || workout.durationSecs !== null || workout.structure !== null),
  );
  if (workouts.length === 0) return [];
  const weekBefore = latest.ctl - ramp;
  const percent = Math.round(LIGHTER_WEEK_SCALE * 100);
  return [
    {
      kind: 'lighter_week',
      dedupeKey: `lighter:${startedOn}`,
      plannedWorkoutId: null,
      title: `Make the week to ${to} lighter`,
      body:
        `Your fitness (CTL) rose by ${String(round1(ramp))} in the 7 days to ${latest.date} ` +
        `(from ${String(round1(weekBefore))} to ${String(round1(latest.ctl))}); a rise of more than ` +
        `${String(RAMP_TOO_STEEP_CTL_PER_WEEK)} a week is steeper than is usually sustainable. ` +
        `Accepting scales the ${String(workouts.length)} planned workout${workouts.length === 1 ? '' : 's'} from ${from} to ${to} ` +
        `to ${String(percent)} % of their stress and duration.`,
      evidence: {
        rule: 'ctl_ramp_too_steep',
        date: latest.date,
        ctl: round2(latest.ctl),
        ctlWeekBefore: round2(weekBefore),
        ctlRamp: round2(ramp),
        threshold: RAMP_TOO_STEEP_CTL_PER_WEEK,
      },
      action: {
        type: 'scale_week',
        scaleTrainingStress: LIGHTER_WEEK_SCALE,
        from,
        to,
        plannedWorkoutIds: workouts.map((workout) => workout.id),
      },
    },
  ];
}

/**
 * A planned workout made lighter by `factor`: its stress, its duration and
 * the length of each of its steps (time and distance), so the steps still
 * add up to the duration and the fuel model, which prefers the steps, sees
 * the shorter session too. Intensities stay: TSS is proportional to time at
 * a given intensity, so stress and time scale together. Durations are
 * rounded to whole seconds (at least 1), stress to 0.1.
 */
export function scalePlannedWorkout(
  workout: Pick<PlannedWorkoutInput, 'durationSecs' | 'trainingStress' | 'structure'>,
  factor: number,
): { durationSecs?: number; trainingStress?: number; structure?: PlannedStructure } {
  const scaled: { durationSecs?: number; trainingStress?: number; structure?: PlannedStructure } = {};
  if (workout.durationSecs !== null) scaled.durationSecs = Math.max(1, Math.round(workout.durationSecs * factor));
  if (workout.trainingStress !== null) scaled.trainingStress = round1(workout.trainingStress * factor);
  if (workout.structure !== null) {
    scaled.structure = { steps: workout.structure.steps.map((step) => scaleStep(step, factor)) };
  }
  return scaled;
}

function scaleStep<T extends PlannedStep | Extract<PlannedStep, { type: 'interval' }>['steps'][number]>(
  step: T,
  factor: number,
): T {
  if (step.type === 'interval') {
    return { ...step, steps: step.steps.map((part) => scaleStep(part, factor)) };
  }
  const duration =
    step.duration.type === 'time'
      ? { type: 'time' as const, secs: Math.max(1, Math.round(step.duration.secs * factor)) }
      : { type: 'distance' as const, meters: Math.max(1, round1(step.duration.meters * factor)) };
  return { ...step, duration };
}

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
 *    session by intensity. The suggestion is the same session as an
 *    endurance ride or run of the same length (the structure generator's
 *    `endurance` intent). Choices:
 *    - It is suggested only when that variant is really easier, at most 90 %
 *      of the planned stress. A long steady ride that is hard by volume alone
 *      is already an endurance session; swapping in another changes nothing.
 *    - The situation is the workout on its date, not the day's score: once
 *      the athlete has decided about that workout, a new score the next
 *      morning does not ask again (moving the workout to another day does).
 * 2. Fuel at risk (`fuel_advice`). A planned workout from now through the
 *    next 2 days whose predicted glycogen is `at_risk` (start below 50 % or
 *    lowest point below 20 %, see the fuel plan) gets the fuel model's
 *    advice as the suggestion: accepting logs the advised items (the model
 *    has checked that eating exactly those makes the workout `ready`, where
 *    any advice within its limits can). Workouts that have started are
 *    left out (the advice can no longer be followed), and so is advice that
 *    is empty. The caller runs this rule only while the athlete's `nutrition`
 *    feature is on: without food logs every workout ahead looks unfuelled.
 * 3. Ramp too steep (`lighter_week`). CTL rose by more than 8 in the 7 days
 *    to the latest day of training load (the training-load model's ramp
 *    signal; coaching texts put a sustainable rise at about 5-8 a week). The
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
 *    - Without a stored day 7 days before the latest there is no ramp (the
 *      signal is undefined, not zero), as in the training-load model.
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
import { weeklyCtlRamp, RAMP_TOO_STEEP_CTL_PER_WEEK, type TrainingLoadDay } from './training-load.model.ts';
import { plannedWorkoutIntensity } from './exercise.ts';
import { AT_RISK_MUSCLE_START_PERCENT, LIVER_RISK_G } from './glycogen.constants.ts';
import { buildWorkoutStructure } from '../planned-workouts/structure-generation.service.ts';

/** The recovery model's `recover` band: a score below this. */
export const RECOVER_BELOW_SCORE = 45;
/** A planned workout is hard from this planned stress on... */
export const HARD_TRAINING_STRESS = 80;
/** ...or from this intensity factor on. */
export const HARD_INTENSITY_FACTOR = 0.85;
/** The easier variant must carry at most this share of the planned stress to be worth suggesting. */
export const EASIER_VARIANT_MAX_STRESS_SHARE = 0.9;
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

/** Rule 1: low recovery before a hard planned workout. */
export function easierWorkoutSuggestions(inputs: RuleInputs): Suggestion[] {
  const { recovery } = inputs;
  if (recovery === undefined || recovery.status !== 'recover' || !(recovery.score < RECOVER_BELOW_SCORE)) return [];
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
    const durationSecs = Math.round(load.durationSecs);
    const variant = buildWorkoutStructure({
      sport: workout.sport,
      intent: 'endurance',
      durationSecs,
      ftp: inputs.thresholds.ftp,
      thresholdHr: inputs.thresholds.thresholdHr,
    });
    // Shorter than a warm-up, steady part and cool-down can fill: no variant of the same length exists.
    if (variant.durationSecs > durationSecs) continue;
    if (variant.trainingStress > stress * EASIER_VARIANT_MAX_STRESS_SHARE) continue;
    const score = Math.round(recovery.score);
    const intensityFactor = round2(load.intensityFactor ?? 0);
    suggestions.push({
      kind: 'easier_workout',
      dedupeKey: `easier:${workout.id}:${workout.date}`,
      plannedWorkoutId: workout.id,
      title: `Make “${workout.title}” an easy endurance session`,
      body:
        `Your recovery score is ${String(score)} (${recovery.date}), in the recover band below ${String(RECOVER_BELOW_SCORE)}, ` +
        `and “${workout.title}” on ${workout.date} is hard: planned stress ${String(round1(stress))}, intensity factor ${String(intensityFactor)}. ` +
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
      },
      action: {
        type: 'swap_structure',
        plannedWorkoutId: workout.id,
        intent: 'endurance',
        structure: variant.structure,
        durationSecs: variant.durationSecs,
        trainingStress: variant.trainingStress,
      },
    });
  }
  return suggestions;
}

/** Rule 2: a planned workout at risk on fuel. */
export function fuelAdviceSuggestions(inputs: RuleInputs): Suggestion[] {
  const last = addDays(inputs.today, LOOKAHEAD_DAYS);
  const byId = new Map(inputs.planned.map((workout) => [workout.id, workout]));
  const suggestions: Suggestion[] = [];
  for (const plan of inputs.fuel) {
    const workout = byId.get(plan.plannedWorkoutId);
    if (!workout || workout.date < inputs.today || workout.date > last) continue;
    if (plan.status !== 'at_risk' || plan.advice.length === 0) continue;
    const grams = plan.advice.reduce((sum, item) => sum + item.carbsG, 0);
    suggestions.push({
      kind: 'fuel_advice',
      dedupeKey: `fuel:${workout.id}:${workout.date}`,
      plannedWorkoutId: workout.id,
      title: `Fuel “${workout.title}”: ${String(grams)} g of carbohydrate`,
      body:
        `Predicted glycogen for “${workout.title}” on ${workout.date}: ${String(plan.start.percent)} % at the start ` +
        `and ${String(plan.minimum.percent)} % at the lowest point, the ${plan.limitingStore ?? 'stores'} limiting. ` +
        `The liver below ${String(LIVER_RISK_G)} g during the workout (blood glucose runs short), or muscle at its floor or ` +
        `below ${String(AT_RISK_MUSCLE_START_PERCENT)} % at the start, is at risk. ` +
        `Accepting plans the advice as food (planned, not eaten): ${plan.advice.map((item) => `${String(item.carbsG)} g ${item.absorptionType} at ${item.at.slice(11, 16)}`).join(', ')}.`,
      evidence: {
        rule: 'fuel_at_risk',
        date: workout.date,
        status: 'at_risk',
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

/** Rule 3: CTL ramp over the limit. */
export function lighterWeekSuggestions(inputs: RuleInputs): Suggestion[] {
  const latest = inputs.load.at(-1);
  if (latest === undefined) return [];
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

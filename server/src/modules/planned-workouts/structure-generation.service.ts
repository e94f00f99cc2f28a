import type {
  GenerateWorkoutStructureInput,
  PlannedSport,
  PlannedStep,
  PlannedStructure,
  SimpleStep,
  StepTarget,
  WorkoutIntent,
} from '@pacer/contract';
import { AppError } from '../../errors.ts';
import type { AsyncJobRunner } from '../async-jobs/async-jobs.service.ts';
import { getProfile } from '../profile/profile.service.ts';
import { findPlannedWorkout, updatePlannedWorkout } from './planned-workouts.repository.ts';
import { recordChange } from '../changes/changes.repository.ts';

/**
 * Steps for a planned workout from its intent, duration and the athlete's
 * thresholds (`generate_workout_structure`). Rides get power targets in % of
 * FTP; other sports heart-rate zones. Zones follow the usual 5-zone split of
 * threshold power (Coggan: recovery < 56 %, endurance 56-75 %, tempo 76-90 %,
 * threshold 91-105 %, VO2max 106-120 %; "sweet spot" 88-94 %) and of
 * lactate-threshold heart rate (Friel: Z1 < 81 %, Z2 81-89 %, Z3 90-93 %,
 * Z4 94-99 %, Z5 >= 100 %). Labels name watts or bpm when the profile has
 * FTP or threshold HR.
 */

interface IntentPlan {
  /** Work interval: seconds, % FTP range, HR zone. */
  readonly work?: { readonly secs: number; readonly min: number; readonly max: number; readonly zone: number };
  /** Recovery between work intervals, seconds. */
  readonly recoverySecs?: number;
  /** The steady part (the whole main set when there is no work interval). */
  readonly steady: { readonly min: number; readonly max: number; readonly zone: number };
}

/** The steady rest of the main set around interval work (the upper endurance zone). */
const BETWEEN_INTERVALS = { min: 60, max: 70, zone: 2 } as const;

/** An interval session: `work` repeated with `recoverySecs` between, the rest of the main set steady. */
function intervals(work: NonNullable<IntentPlan['work']>, recoverySecs: number): IntentPlan {
  return { work, recoverySecs, steady: BETWEEN_INTERVALS };
}

const PLANS: Readonly<Record<WorkoutIntent, IntentPlan>> = {
  recovery: { steady: { min: 45, max: 55, zone: 1 } },
  endurance: { steady: { min: 60, max: 75, zone: 2 } },
  tempo: intervals({ secs: 15 * 60, min: 76, max: 90, zone: 3 }, 5 * 60),
  sweet_spot: intervals({ secs: 12 * 60, min: 88, max: 94, zone: 3 }, 4 * 60),
  threshold: intervals({ secs: 8 * 60, min: 95, max: 105, zone: 4 }, 4 * 60),
  vo2max: intervals({ secs: 3 * 60, min: 106, max: 120, zone: 5 }, 3 * 60),
};
const EASY = { min: 50, max: 60, zone: 1 } as const;
/** Intensity factor assumed for a heart-rate zone when estimating stress. */
const ZONE_INTENSITY = [0, 0.55, 0.7, 0.82, 0.95, 1.1] as const;
/** Friel's zones as fractions of threshold heart rate: [lower, upper). */
const HR_ZONE_BOUNDS = [
  [0, 0],
  [0.65, 0.81],
  [0.81, 0.9],
  [0.9, 0.94],
  [0.94, 1.0],
  [1.0, 1.06],
] as const;

export interface StructureOptions {
  readonly sport: PlannedSport;
  readonly intent: WorkoutIntent;
  readonly durationSecs: number;
  readonly ftp: number | null;
  readonly thresholdHr: number | null;
}

export interface GeneratedStructure {
  readonly structure: PlannedStructure;
  readonly durationSecs: number;
  /** hours × IF² × 100 over the steps (IF = the middle of each step's range). */
  readonly trainingStress: number;
}

type ZoneRange = IntentPlan['steady'];

function stepTarget(options: StructureOptions, range: ZoneRange): StepTarget {
  return options.sport === 'ride'
    ? { type: 'power', minPercentFtp: range.min, maxPercentFtp: range.max }
    : { type: 'heartRateZone', zone: range.zone };
}

function stepLabel(options: StructureOptions, what: string, range: ZoneRange): string {
  if (options.sport === 'ride') {
    const watts = options.ftp
      ? ` (${Math.round((options.ftp * range.min) / 100)}-${Math.round((options.ftp * range.max) / 100)} W)`
      : '';
    return `${what} at ${range.min}-${range.max}% FTP${watts}`;
  }
  const bounds = HR_ZONE_BOUNDS[range.zone] ?? [0, 0];
  const bpm = options.thresholdHr
    ? ` (${Math.round(options.thresholdHr * bounds[0])}-${Math.round(options.thresholdHr * bounds[1])} bpm)`
    : '';
  return `${what} in heart-rate zone ${range.zone}${bpm}`;
}

function stepIntensity(options: StructureOptions, range: ZoneRange): number {
  return options.sport === 'ride' ? (range.min + range.max) / 200 : (ZONE_INTENSITY[range.zone] ?? 0.7);
}

/** One timed step at a range, labelled `what`. */
function timedStep<T extends SimpleStep['type']>(
  options: StructureOptions,
  type: T,
  secs: number,
  range: ZoneRange,
  what: string,
) {
  return {
    type,
    duration: { type: 'time' as const, secs },
    target: stepTarget(options, range),
    label: stepLabel(options, what, range),
  };
}

/** The steps as they are laid out, and their training stress summed in that order. */
interface Layout {
  readonly options: StructureOptions;
  readonly steps: PlannedStep[];
  stress: number;
}

function addStress(layout: Layout, secs: number, range: ZoneRange): void {
  layout.stress += (secs / 3600) * stepIntensity(layout.options, range) ** 2 * 100;
}

function addTimedStep(layout: Layout, type: SimpleStep['type'], secs: number, range: ZoneRange, what: string): void {
  layout.steps.push(timedStep(layout.options, type, secs, range, what));
  addStress(layout, secs, range);
}

/** The main set: as many work intervals as fit (at most 20), the rest steady; all steady when none fits. */
function addMainSet(layout: Layout, plan: IntentPlan, mainSecs: number): void {
  const { options } = layout;
  const { work, recoverySecs = 0 } = plan;
  const repeats = work ? Math.min(20, Math.floor((mainSecs + recoverySecs) / (work.secs + recoverySecs))) : 0;
  if (!work || repeats < 1) {
    // No room for one interval (or an intent without intervals): the main set is steady.
    addTimedStep(layout, 'steady', mainSecs, plan.steady, 'Steady');
    return;
  }
  const intervalSecs = repeats * work.secs + (repeats - 1) * recoverySecs;
  layout.steps.push({
    type: 'interval',
    repeat: repeats,
    steps: [
      timedStep(options, 'work', work.secs, work, 'Work'),
      ...(recoverySecs > 0 ? [timedStep(options, 'recovery', recoverySecs, EASY, 'Recover')] : []),
    ],
    label: `${repeats} × ${work.secs / 60} min`,
  });
  addStress(layout, repeats * work.secs, work);
  addStress(layout, (repeats - 1) * recoverySecs, EASY);
  const rest = mainSecs - intervalSecs;
  if (rest >= 60) addTimedStep(layout, 'steady', rest, plan.steady, 'Steady');
}

/** Deterministic: the same options give the same steps. */
export function buildWorkoutStructure(options: StructureOptions): GeneratedStructure {
  const warmupSecs = clamp(Math.round((options.durationSecs * 0.15) / 60) * 60, 5 * 60, 15 * 60);
  const cooldownSecs = clamp(Math.round((options.durationSecs * 0.1) / 60) * 60, 5 * 60, 10 * 60);
  const mainSecs = Math.max(60, options.durationSecs - warmupSecs - cooldownSecs);

  const layout: Layout = { options, steps: [], stress: 0 };
  addTimedStep(layout, 'warmup', warmupSecs, EASY, 'Warm up');
  addMainSet(layout, PLANS[options.intent], mainSecs);
  addTimedStep(layout, 'cooldown', cooldownSecs, EASY, 'Cool down');

  return {
    structure: { steps: layout.steps },
    durationSecs: warmupSecs + mainSecs + cooldownSecs,
    trainingStress: Math.round(layout.stress * 10) / 10,
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** Without a duration on the workout or in the call: one hour. */
const DEFAULT_DURATION_SECS = 3600;

/**
 * The `structure_generation` job: write the generated steps, duration and
 * estimated training stress to the planned workout (in the transaction that
 * completes the job).
 */
export const runStructureGenerationJob: AsyncJobRunner = async ({ db, job, progress }) => {
  const input = job.input as Pick<GenerateWorkoutStructureInput, 'planned_workout_id' | 'intent' | 'duration_secs'>;
  const planned = await findPlannedWorkout(db, job.userId, input.planned_workout_id);
  if (!planned) throw new AppError('not_found', `No planned workout ${input.planned_workout_id}.`);
  const profile = await getProfile(db, job.userId);
  await progress(1, 2, 'Building the steps');
  const generated = buildWorkoutStructure({
    sport: planned.sport,
    intent: input.intent,
    durationSecs: input.duration_secs ?? planned.durationSecs ?? DEFAULT_DURATION_SECS,
    ftp: profile.ftp,
    thresholdHr: profile.thresholdHr,
  });
  await progress(2, 2, 'Saving the steps');
  return {
    result: {
      planned_workout_id: planned.id,
      intent: input.intent,
      steps: generated.structure.steps.length,
      duration_secs: generated.durationSecs,
      training_stress: generated.trainingStress,
    },
    async write(trx) {
      const updated = await updatePlannedWorkout(trx, job.userId, planned.id, {
        structure: JSON.stringify(generated.structure),
        durationSecs: generated.durationSecs,
        trainingStress: generated.trainingStress,
      });
      if (!updated) throw new AppError('not_found', `The planned workout ${planned.id} was deleted.`);
      await recordChange(trx, { userId: job.userId, kind: 'planned_workouts', fromDate: updated.date });
    },
  };
};

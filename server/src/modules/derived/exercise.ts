import type { PlannedSport, PlannedStep, PlannedStructure, StepDuration, StepTarget } from '@pacer/contract';
import {
  CARBOHYDRATE_SHARE_POINTS,
  DEFAULT_FTP_WATTS_PER_KG,
  HEART_RATE_ZONE_INTENSITY_FACTORS,
  KCAL_PER_G_CARBOHYDRATE,
  METABOLIC_KCAL_PER_HOUR_PER_WATT,
  SPORT_INTENSITY_FACTORS,
} from './glycogen.constants.ts';

/**
 * Exercise demand of the glycogen model: how many grams of carbohydrate a
 * period of exercise burns, from its intensity factor (IF, power / FTP) and
 * the athlete's FTP, and how a planned workout's intensity is read from its
 * structure, its planned stress or its sport.
 */

/**
 * Share of exercise energy drawn from carbohydrate at `intensityFactor`:
 * straight lines between CARBOHYDRATE_SHARE_POINTS, 1.0 beyond the last
 * point. Continuous everywhere, so the drain has no jump at any breakpoint.
 * An IF below 0 is treated as 0.
 */
export function carbohydrateShare(intensityFactor: number): number {
  const points = CARBOHYDRATE_SHARE_POINTS;
  const x = Math.max(0, intensityFactor);
  for (let i = 1; i < points.length; i += 1) {
    const [x1, y1] = points[i] as readonly [number, number];
    if (x <= x1) {
      const [x0, y0] = points[i - 1] as readonly [number, number];
      return y0 + ((y1 - y0) * (x - x0)) / (x1 - x0);
    }
  }
  return (points[points.length - 1] as readonly [number, number])[1];
}

/**
 * Carbohydrate burned per hour of exercise at a mechanical power, grams:
 * metabolic kcal/h = 3.6 × W (about 24 % gross efficiency: 1 kJ of work ≈
 * 1 kcal), of which the share f(IF) is carbohydrate, grams = kcal / 4. The
 * power says how much work is done, the intensity factor how hard it is.
 */
export function exerciseCarbohydratePerHourG(watts: number, intensityFactor: number): number {
  const kcalPerHour = watts * METABOLIC_KCAL_PER_HOUR_PER_WATT;
  return (kcalPerHour * carbohydrateShare(intensityFactor)) / KCAL_PER_G_CARBOHYDRATE;
}

/**
 * Carbohydrate burned over `minutes` of exercise, grams: proportional to the
 * time, so a workout covering 7 of a step's 15 minutes demands 7/15 of a full
 * step.
 */
export function exerciseCarbohydrateG(watts: number, intensityFactor: number, minutes: number): number {
  return (exerciseCarbohydratePerHourG(watts, intensityFactor) * minutes) / 60;
}

/** FTP assumed without one on the profile: 3.0 W/kg. */
export function defaultFtpWatts(massKg: number): number {
  return DEFAULT_FTP_WATTS_PER_KG * massKg;
}

/** The sport's typical IF, used when nothing more specific is known. */
export function sportIntensityFactor(sport: PlannedSport): number {
  return SPORT_INTENSITY_FACTORS[sport];
}

/**
 * IF implied by a planned training stress over a duration: TSS = hours × IF²
 * × 100 (Coggan), so IF = sqrt(TSS / (hours × 100)). `null` without a
 * positive duration.
 */
export function intensityFromTrainingStress(trainingStress: number, durationSecs: number): number | null {
  if (!(durationSecs > 0) || !(trainingStress >= 0)) return null;
  const hours = durationSecs / 3600;
  return Math.sqrt(trainingStress / (hours * 100));
}

/**
 * IF of one planned step:
 * - a power target: the middle of its %FTP range;
 * - a heart-rate zone: HEART_RATE_ZONE_INTENSITY_FACTORS;
 * - a pace target or no target: the sport's IF. Choice: pace says how fast,
 *   not how hard relative to the athlete's threshold, and the model has no
 *   threshold pace, so it falls back to the sport like a free step.
 */
export function stepIntensityFactor(target: StepTarget | undefined, sport: PlannedSport): number {
  if (target === undefined) return sportIntensityFactor(sport);
  switch (target.type) {
    case 'power':
      return (target.minPercentFtp + target.maxPercentFtp) / 200;
    case 'heartRateZone':
      return HEART_RATE_ZONE_INTENSITY_FACTORS[target.zone as 1 | 2 | 3 | 4 | 5];
    case 'pace':
      return sportIntensityFactor(sport);
  }
}

/** A period of exercise as the simulation takes it. */
export interface ExerciseInput {
  /** Epoch ms; need not fall on step boundaries. */
  readonly startMs: number;
  /** End of the elapsed time, stops included. */
  readonly endMs: number;
  /** How hard relative to FTP (NP / FTP when recorded with power): sets the carbohydrate share. */
  readonly intensityFactor: number;
  /** Mechanical power while moving, W (average power of the file, else IF × FTP): sets the energy. */
  readonly watts: number;
  /**
   * Moving time over elapsed time, 0–1 (1 for planned workouts): each minute of
   * the period is this much exercise at `watts` and the rest stopped, at rest.
   */
  readonly movingFraction: number;
}

/** A stretch of a planned workout at one intensity. */
export interface IntensityBlock {
  readonly durationSecs: number;
  readonly intensityFactor: number;
}

/** Where a planned workout's intensity came from, for the response's assumptions. */
export type PlannedIntensitySource = 'structure' | 'training_stress' | 'sport';

export interface PlannedWorkoutIntensity {
  readonly blocks: readonly IntensityBlock[];
  readonly source: PlannedIntensitySource;
}

export interface PlannedWorkoutIntensityOptions {
  readonly sport: PlannedSport;
  readonly durationSecs: number | null;
  readonly trainingStress: number | null;
  readonly structure: PlannedStructure | null;
}

/**
 * The intensity of a planned workout over time, in the model's order of
 * preference: the structure's steps; else IF from the planned stress and
 * duration; else the sport's IF over the planned duration.
 *
 * Choices the model's rules leave open:
 * - The structure is used when at least one step has a power or heart-rate
 *   target (only those say how hard relative to the athlete) and every
 *   step's time is known. A structure of pace and free steps alone says
 *   nothing the sport's IF does not, so the planned stress comes first then.
 * - A distance step's time is its distance at the middle of its pace range;
 *   a distance step with no pace target has no known time, and then the
 *   structure is not used.
 * - The structure's own total time wins over `durationSecs` when both exist.
 * - `null` when neither the structure nor `durationSecs` gives a time: the
 *   caller cannot place the workout and says so.
 */
export function plannedWorkoutIntensity(options: PlannedWorkoutIntensityOptions): PlannedWorkoutIntensity | null {
  const { sport, durationSecs, trainingStress, structure } = options;
  if (structure !== null) {
    const blocks = structureBlocks(structure, sport);
    if (blocks !== null) return { blocks, source: 'structure' };
  }
  if (durationSecs === null || !(durationSecs > 0)) return null;
  if (trainingStress !== null) {
    const intensityFactor = intensityFromTrainingStress(trainingStress, durationSecs);
    if (intensityFactor !== null) return { blocks: [{ durationSecs, intensityFactor }], source: 'training_stress' };
  }
  return { blocks: [{ durationSecs, intensityFactor: sportIntensityFactor(sport) }], source: 'sport' };
}

/** Steps of a structure in the order done, interval blocks repeated out. */
function flattenSteps(steps: readonly PlannedStep[]): { duration: StepDuration; target: StepTarget | undefined }[] {
  const flat: { duration: StepDuration; target: StepTarget | undefined }[] = [];
  for (const step of steps) {
    if (step.type === 'interval') {
      for (let r = 0; r < step.repeat; r += 1) {
        for (const part of step.steps) flat.push({ duration: part.duration, target: part.target });
      }
    } else {
      flat.push({ duration: step.duration, target: step.target });
    }
  }
  return flat;
}

function stepDurationSecs(duration: StepDuration, target: StepTarget | undefined): number | null {
  if (duration.type === 'time') return duration.secs;
  if (target?.type !== 'pace') return null;
  return (duration.meters / 1000) * ((target.minSecsPerKm + target.maxSecsPerKm) / 2);
}

/**
 * Intensity blocks of a structure, or `null` when it is not usable (see
 * plannedWorkoutIntensity).
 */
function structureBlocks(structure: PlannedStructure, sport: PlannedSport): IntensityBlock[] | null {
  const flat = flattenSteps(structure.steps);
  const informative = flat.some((step) => step.target?.type === 'power' || step.target?.type === 'heartRateZone');
  if (!informative) return null;
  const blocks: IntensityBlock[] = [];
  for (const step of flat) {
    const secs = stepDurationSecs(step.duration, step.target);
    if (secs === null) return null;
    blocks.push({ durationSecs: secs, intensityFactor: stepIntensityFactor(step.target, sport) });
  }
  return blocks;
}

/**
 * Exercise periods for the simulation from a workout's blocks, starting at
 * `startMs`, each at IF × the athlete's FTP and moving throughout. Block ends are rounded to the
 * millisecond so that consecutive blocks meet exactly.
 */
export function exerciseFromBlocks(
  startMs: number,
  blocks: readonly IntensityBlock[],
  ftpWatts: number,
): ExerciseInput[] {
  const periods: ExerciseInput[] = [];
  let elapsedSecs = 0;
  for (const block of blocks) {
    const from = startMs + Math.round(elapsedSecs * 1000);
    elapsedSecs += block.durationSecs;
    const to = startMs + Math.round(elapsedSecs * 1000);
    if (to > from) {
      const intensityFactor = block.intensityFactor;
      periods.push({ startMs: from, endMs: to, intensityFactor, watts: intensityFactor * ftpWatts, movingFraction: 1 });
    }
  }
  return periods;
}

import { ABSORPTION_PROFILES, STEP_MS, type AbsorptionProfile, type AbsorptionType } from './glycogen.constants.ts';

/**
 * Release of an eaten item's carbohydrate into the gut pool. The release rate
 * is a triangle: zero until the lag `a`, rising linearly to its peak at `p`,
 * falling linearly to zero at the end `e` (minutes after eating), with area
 * equal to the item's carbohydrate. Release over any window is the exact
 * integral of that triangle, so the release of all windows adds up to the
 * item and never more (a midpoint rule over 15-minute steps does not: it
 * overshoots where the triangle bends).
 */

/**
 * Fraction of an item released by `minutes` after eating: the integral of the
 * triangle from 0 to `minutes`, divided by its area. Continuous, 0 up to the
 * lag, 1 from the end on, non-decreasing in between.
 */
export function releasedFraction(profile: AbsorptionProfile, minutes: number): number {
  const { lagMin: a, peakMin: p, endMin: e } = profile;
  if (minutes <= a) return 0;
  if (minutes >= e) return 1;
  // Triangle of base e − a and height 2 / (e − a) has unit area.
  if (minutes <= p) return (minutes - a) ** 2 / ((p - a) * (e - a));
  return 1 - (e - minutes) ** 2 / ((e - p) * (e - a));
}

/** One eaten item, as the model sees it. */
export interface MealInput {
  /** When it was eaten (`logged_at`), epoch ms; need not fall on a step boundary. */
  readonly atMs: number;
  readonly carbsG: number;
  readonly absorptionType: AbsorptionType;
}

/**
 * Grams of `meal` released between `fromMs` and `toMs` (epoch ms, from ≤ to).
 * Computed from absolute times so that the same window gives the same number
 * whichever simulation start it is seen from.
 */
export function releaseBetween(meal: MealInput, fromMs: number, toMs: number): number {
  const profile = ABSORPTION_PROFILES[meal.absorptionType];
  const from = releasedFraction(profile, (fromMs - meal.atMs) / 60_000);
  const to = releasedFraction(profile, (toMs - meal.atMs) / 60_000);
  // Never negative: where the two halves of the triangle meet, rounding could
  // otherwise put the fraction just after the peak one ulp below the one at it.
  return Math.max(0, meal.carbsG * (to - from));
}

/**
 * Release of one item in each of `steps` steps of STEP_MS starting at
 * `startAtMs`: element k is the grams released during
 * [startAtMs + k·STEP_MS, startAtMs + (k + 1)·STEP_MS). An item eaten before
 * `startAtMs` contributes only what it still releases from `startAtMs` on;
 * one eaten mid-step (07:07) releases from its own minute.
 */
export function releasePerStep(meal: MealInput, startAtMs: number, steps: number): number[] {
  const release = new Array<number>(steps).fill(0);
  const { first, last } = activeSteps(meal, startAtMs, steps);
  for (let k = first; k <= last; k += 1) {
    const stepStart = startAtMs + k * STEP_MS;
    release[k] = releaseBetween(meal, stepStart, stepStart + STEP_MS);
  }
  return release;
}

/**
 * First and last step index (inclusive, clipped to [0, steps − 1]) in which
 * `meal` may release anything; `first > last` when it releases nothing in
 * the simulated window.
 */
export function activeSteps(meal: MealInput, startAtMs: number, steps: number): { first: number; last: number } {
  const profile = ABSORPTION_PROFILES[meal.absorptionType];
  const releaseStartMs = meal.atMs + profile.lagMin * 60_000;
  const releaseEndMs = meal.atMs + profile.endMin * 60_000;
  const first = Math.max(0, Math.floor((releaseStartMs - startAtMs) / STEP_MS));
  const last = Math.min(steps - 1, Math.ceil((releaseEndMs - startAtMs) / STEP_MS) - 1);
  return { first, last };
}

import type { DbOrTrx } from '../../db/database.ts';
import {
  findModelProfile,
  listRecovery,
  listTrainingLoad,
  type StoredLoadDay,
  type StoredRecoveryDay,
} from './analytics.repository.ts';
import { localMidnightMs, addDays } from '../../lib/dates.ts';
import { findLatestWellnessWeight, listFoodItemsBetween, listFuelDays, type StoredFuelDay } from './fuel.repository.ts';
import { DEFAULT_BODY_MASS_KG } from './glycogen.constants.ts';
import { capacityFor, type GlycogenCapacity } from './glycogen.model.ts';

export type { StoredFuelDay, StoredLoadDay, StoredRecoveryDay };

/**
 * The derived numbers as the recompute stored them, for readers outside this
 * module (reports): they read here, never the tables, so what they show is
 * what the API shows for the same days.
 */

/** Training load of the days `from`..`to` (both included), oldest first. */
export async function readTrainingLoadDays(
  db: DbOrTrx,
  userId: string,
  period: { readonly from: string; readonly to: string },
): Promise<StoredLoadDay[]> {
  return listTrainingLoad(db, userId, period.from, period.to);
}

/** Recovery of the days `from`..`to` (both included), oldest first, at most `limit`. */
export async function readRecoveryDays(
  db: DbOrTrx,
  userId: string,
  period: { readonly from: string; readonly to: string; readonly limit: number },
): Promise<StoredRecoveryDay[]> {
  return listRecovery(db, userId, { ...period, after: undefined });
}

/** The stored fuel timeline of some days, with what it is relative to. */
export interface StoredFuel {
  /** The athlete's zone: the days are their calendar days. */
  readonly timeZone: string;
  /** Liver and muscle capacity, grams (the timeline's `capacity`); their sum is 100 %. */
  readonly capacity: GlycogenCapacity;
  readonly days: StoredFuelDay[];
  /**
   * Times (epoch ms) of the logged or planned items with carbohydrate on
   * those days: what `not_logged` looks at (fuel-plan.ts `isFuelNotLogged`).
   */
  readonly carbMealTimesMs: number[];
}

/**
 * The stored fuel days `from`..`to` (both included), and when carbohydrate
 * was logged or planned on them. Body mass as the fuel
 * service takes it: the profile's weight, else the latest wellness weight,
 * else the model's default.
 */
export async function readStoredFuel(
  db: DbOrTrx,
  userId: string,
  period: { readonly from: string; readonly to: string },
): Promise<StoredFuel> {
  const profile = await findModelProfile(db, userId);
  const massKg = profile?.weightKg ?? (await findLatestWellnessWeight(db, userId)) ?? DEFAULT_BODY_MASS_KG;
  const capacity = capacityFor(massKg);
  const timeZone = profile?.timeZone ?? 'UTC';
  const [days, items] = await Promise.all([
    listFuelDays(db, userId, period.from, period.to),
    listFoodItemsBetween(db, userId, {
      fromMs: localMidnightMs(period.from, timeZone),
      toMs: localMidnightMs(addDays(period.to, 1), timeZone),
      timeZone,
    }),
  ]);
  return {
    timeZone,
    capacity,
    days,
    carbMealTimesMs: items.filter((item) => item.carbs > 0).map((item) => item.loggedAt.getTime()),
  };
}

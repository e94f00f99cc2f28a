import { ABSORPTION_TYPES, type AbsorptionType } from '@pacer/contract';
import { addDays } from '../../lib/dates.ts';

/**
 * # Usual intake and assumed meals (docs/science.md §3, "Usual intake")
 *
 * The athlete's usual meals, from the food they logged over the 14 days
 * before today, fill the rest of today and the future days where nothing is
 * logged or planned for a meal slot. Pure: the caller gives each item's local
 * date and clock time (the athlete's zone is its business) and turns the
 * assumed meals' local times back into instants.
 */

/** The meal slots an item can fill; OTHER items and RAPID items belong to none. */
export const MEAL_SLOTS = ['BREAKFAST', 'LUNCH', 'DINNER', 'SNACK'] as const;
export type MealSlot = (typeof MEAL_SLOTS)[number];

/** The fewest logged days, of the window, that give a usual intake. */
export const USUAL_INTAKE_MIN_DAYS = 3;
/** The window the usual intake is taken from: this many local days before today. */
export const USUAL_INTAKE_WINDOW_DAYS = 14;

/** Local clock times (minutes after midnight) that place an item without a `meal` in a slot. */
const BREAKFAST_FROM_MIN = 4 * 60;
const LUNCH_FROM_MIN = 11 * 60;
const DINNER_FROM_MIN = 16 * 60;

/** A nutrition item as the slotting sees it: its local date and clock time, and what it is. */
export interface DayItem {
  /** The athlete's local date of `logged_at`. */
  readonly date: string;
  /** Local clock time, whole minutes after midnight (0–1439). */
  readonly minutes: number;
  readonly carbsG: number;
  readonly absorptionType: AbsorptionType;
  readonly meal: string | null;
  readonly planned: boolean;
}

/** One usual meal: a slot's median time, median grams and most common type. */
export interface UsualMeal {
  readonly slot: MealSlot;
  readonly minutes: number;
  readonly carbsG: number;
  readonly absorptionType: AbsorptionType;
}

export interface UsualIntake {
  /** Days of the window with eaten carbohydrate in some slot. */
  readonly loggedDays: number;
  /** In slot order (breakfast, lunch, dinner, snack); empty when no slot is on half the days. */
  readonly meals: readonly UsualMeal[];
}

/** An assumed meal on one local day. */
export interface AssumedMeal extends UsualMeal {
  readonly date: string;
}

/**
 * The slot of an item: its `meal` when it names one, else its local time.
 * OTHER and RAPID items (in-ride fuel, which the advice plans per workout)
 * have none: they never form the usual intake and never replace an assumed meal.
 */
export function slotOf(item: Pick<DayItem, 'meal' | 'absorptionType' | 'minutes'>): MealSlot | null {
  if (item.absorptionType === 'RAPID' || item.meal === 'OTHER') return null;
  if (item.meal !== null && (MEAL_SLOTS as readonly string[]).includes(item.meal)) return item.meal as MealSlot;
  if (item.minutes < BREAKFAST_FROM_MIN) return 'SNACK';
  if (item.minutes < LUNCH_FROM_MIN) return 'BREAKFAST';
  if (item.minutes < DINNER_FROM_MIN) return 'LUNCH';
  return 'DINNER';
}

const typeRank = (type: AbsorptionType) => ABSORPTION_TYPES.indexOf(type);

/** A canonical order, so nothing depends on the order items were logged in. */
function canonical(items: readonly DayItem[]): DayItem[] {
  return [...items].sort(
    (a, b) =>
      a.date.localeCompare(b.date) ||
      a.minutes - b.minutes ||
      b.carbsG - a.carbsG ||
      typeRank(a.absorptionType) - typeRank(b.absorptionType),
  );
}

/** The median: the middle value, or the mean of the two middle ones. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The most common type; a tie goes to the first in the contract's order. */
function mostCommon(types: readonly AbsorptionType[]): AbsorptionType {
  let best: AbsorptionType = 'BALANCED';
  let bestCount = 0;
  for (const type of ABSORPTION_TYPES) {
    const count = types.filter((candidate) => candidate === type).length;
    if (count > bestCount) {
      best = type;
      bestCount = count;
    }
  }
  return best;
}

/** One slot on one day: its first item's time, its grams, its largest item's type (the earliest on a tie). */
function slotDayOf(items: readonly DayItem[]): { minutes: number; carbsG: number; absorptionType: AbsorptionType } {
  // Items come in canonical order: the first is the earliest, and a later item wins only when strictly larger.
  const first = items[0] as DayItem;
  let largest = first;
  for (const item of items) if (item.carbsG > largest.carbsG) largest = item;
  return {
    minutes: first.minutes,
    carbsG: items.reduce((sum, item) => sum + item.carbsG, 0),
    absorptionType: largest.absorptionType,
  };
}

/**
 * The usual intake from the eaten items of the 14 days before `today`
 * (items outside that window, planned ones and those without carbohydrate
 * are ignored), or `null` with fewer than 3 logged days.
 */
export function usualIntakeOf(items: readonly DayItem[], today: string): UsualIntake | null {
  const from = addDays(today, -USUAL_INTAKE_WINDOW_DAYS);
  const bySlot = new Map<MealSlot, Map<string, DayItem[]>>(MEAL_SLOTS.map((slot) => [slot, new Map()]));
  for (const item of canonical(items)) {
    if (item.planned || item.carbsG <= 0 || item.date < from || item.date >= today) continue;
    const slot = slotOf(item);
    if (slot === null) continue;
    const days = bySlot.get(slot) as Map<string, DayItem[]>;
    days.set(item.date, [...(days.get(item.date) ?? []), item]);
  }
  const loggedDays = new Set([...bySlot.values()].flatMap((days) => [...days.keys()])).size;
  if (loggedDays < USUAL_INTAKE_MIN_DAYS) return null;
  const meals: UsualMeal[] = [];
  for (const slot of MEAL_SLOTS) {
    const days = [...(bySlot.get(slot) as Map<string, DayItem[]>).values()].map(slotDayOf);
    if (2 * days.length < loggedDays) continue;
    meals.push({
      slot,
      // Half a minute rounds up.
      minutes: Math.floor(median(days.map((day) => day.minutes)) + 0.5),
      carbsG: median(days.map((day) => day.carbsG)),
      absorptionType: mostCommon(days.map((day) => day.absorptionType)),
    });
  }
  return { loggedDays, meals };
}

export interface AssumedMealsOptions {
  /** First and last local day to fill (days before `today` are never filled). */
  readonly from: string;
  readonly to: string;
  readonly today: string;
  /** The local clock time now, minutes: today only slots after it are assumed. */
  readonly nowMinutes: number;
}

/**
 * The assumed meals from `from` to `to`: each usual slot on each day that
 * has no logged or planned item of that slot (any item, carbohydrate or
 * not), on today only after now. A logged or planned item so replaces its
 * slot's assumed meal whole, never adds to it.
 */
export function assumedMealsFor(
  usual: UsualIntake | null,
  items: readonly DayItem[],
  options: AssumedMealsOptions,
): AssumedMeal[] {
  if (usual === null || usual.meals.length === 0) return [];
  const taken = new Set<string>();
  for (const item of items) {
    const slot = slotOf(item);
    if (slot !== null) taken.add(`${item.date}|${slot}`);
  }
  const assumed: AssumedMeal[] = [];
  const first = options.from > options.today ? options.from : options.today;
  for (let date = first; date <= options.to; date = addDays(date, 1)) {
    for (const meal of usual.meals) {
      if (taken.has(`${date}|${meal.slot}`)) continue;
      if (date === options.today && meal.minutes <= options.nowMinutes) continue;
      assumed.push({ date, ...meal });
    }
  }
  return assumed;
}

/** A planned or recorded workout's span, epoch ms: from its start up to but not including its end. */
export interface WorkoutSpan {
  readonly startMs: number;
  readonly endMs: number;
}

/**
 * Where an assumed meal at `atMs` is eaten: at its time, or, when that falls
 * inside a workout (at or after its start, before its end), at the workout's
 * end: the athlete eats it after the ride, and food during a ride is the
 * advice's job (docs/science.md §3, "Assumed meals and workouts"). A meal moved
 * into another workout moves on to that one's end. Terminates: every move is
 * to a later end.
 */
export function assumedMealTimeMs(atMs: number, workouts: readonly WorkoutSpan[]): number {
  let at = atMs;
  for (let moved = true; moved;) {
    moved = false;
    for (const workout of workouts) {
      if (at >= workout.startMs && at < workout.endMs) {
        at = workout.endMs;
        moved = true;
      }
    }
  }
  return at;
}

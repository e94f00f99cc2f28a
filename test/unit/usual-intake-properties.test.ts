/**
 * Invariants of the usual intake and the assumed meals on random histories
 * (docs/science.md §3): nothing depends on the order items were logged in,
 * a workout's fuel status included; a logged or planned item replaces its
 * slot's assumed meal whole, so no slot of a day is counted twice. Fixed seed
 * and bounded runs, so a failure reproduces.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assessWorkoutFuel } from '../../server/src/modules/derived/fuel-plan.ts';
import { capacityFor, simulateGlycogen, type MealInput } from '../../server/src/modules/derived/glycogen.model.ts';
import { addDays } from '../../server/src/lib/dates.ts';
import {
  assumedMealsFor,
  MEAL_SLOTS,
  slotOf,
  usualIntakeOf,
  type DayItem,
} from '../../server/src/modules/derived/usual-intake.model.ts';

const RUNS = { numRuns: 150, seed: 20_261_127 };
const TODAY = '2026-11-20';
const TOMORROW = addDays(TODAY, 1);
const TYPES = ['RAPID', 'FAST', 'BALANCED', 'DENSE', 'HYPER_LOAD'] as const;

const itemArb = (dates: fc.Arbitrary<string>): fc.Arbitrary<DayItem> =>
  fc.record({
    date: dates,
    minutes: fc.integer({ min: 0, max: 1439 }),
    carbsG: fc.integer({ min: 0, max: 200 }),
    absorptionType: fc.constantFrom(...TYPES),
    meal: fc.constantFrom(null, 'BREAKFAST', 'LUNCH', 'DINNER', 'SNACK', 'OTHER'),
    planned: fc.boolean(),
  });
/** Eaten meals tagged with their slot, on random days of the window. */
const mealDaysArb = fc
  .array(
    fc.record({
      offset: fc.integer({ min: -14, max: -1 }),
      slots: fc.subarray([...MEAL_SLOTS]),
      minutes: fc.integer({ min: 0, max: 1439 }),
      carbsG: fc.integer({ min: 1, max: 200 }),
      absorptionType: fc.constantFrom('FAST' as const, 'BALANCED' as const, 'DENSE' as const, 'HYPER_LOAD' as const),
    }),
    { maxLength: 14 },
  )
  .map((days) =>
    days.flatMap((day) =>
      day.slots.map((meal, index): DayItem => ({
        date: addDays(TODAY, day.offset),
        minutes: (day.minutes + index * 97) % 1440,
        carbsG: day.carbsG + index,
        absorptionType: day.absorptionType,
        meal,
        planned: false,
      })),
    ),
  );
/** Meals over the 14-day window, and any items over it, a day before it and today. */
const historyArb = fc
  .tuple(
    mealDaysArb,
    fc.array(itemArb(fc.integer({ min: -15, max: 0 }).map((offset) => addDays(TODAY, offset))), { maxLength: 20 }),
  )
  .map(([meals, noise]) => [...meals, ...noise]);
const tomorrowArb = fc.array(itemArb(fc.constant(TOMORROW)), { maxLength: 6 });

/** A permutation of `items` by a random key per item. */
const shuffledArb = <T>(items: readonly T[]) =>
  fc
    .array(fc.double({ noNaN: true }), { minLength: items.length, maxLength: items.length })
    .map((keys) => items.map((item, index) => ({ item, key: keys[index] ?? 0 })).sort((a, b) => a.key - b.key))
    .map((pairs) => pairs.map((pair) => pair.item));

const options = { from: TOMORROW, to: TOMORROW, today: TODAY, nowMinutes: 0 };
const utcMs = (date: string, minutes: number) => Date.parse(`${date}T00:00:00Z`) + minutes * 60_000;

describe('usual intake invariants', () => {
  it('the usual intake and the assumed meals do not depend on the order items were logged in', () => {
    fc.assert(
      fc.property(
        historyArb.chain((history) => fc.tuple(fc.constant(history), shuffledArb(history))),
        tomorrowArb.chain((day) => fc.tuple(fc.constant(day), shuffledArb(day))),
        ([history, reordered], [day, dayReordered]) => {
          const usual = usualIntakeOf(history, TODAY);
          expect(usualIntakeOf(reordered, TODAY)).toEqual(usual);
          expect(assumedMealsFor(usual, dayReordered, options)).toEqual(assumedMealsFor(usual, day, options));
        },
      ),
      RUNS,
    );
  });

  it('a workout’s fuel status does not depend on the order of its day’s meals, assumed ones included', () => {
    const capacity = capacityFor(70);
    const startAt = utcMs(TOMORROW, 0);
    fc.assert(
      fc.property(
        historyArb,
        tomorrowArb,
        fc.integer({ min: 5 * 60, max: 16 * 60 }),
        fc.integer({ min: 30, max: 300 }),
        fc.double({ min: 0.5, max: 1.05, noNaN: true }),
        fc.integer(),
        (history, day, startMinutes, minutes, intensityFactor, seed) => {
          const usual = usualIntakeOf(history, TODAY);
          const meals: MealInput[] = [
            ...day.map((food) => ({
              atMs: utcMs(food.date, food.minutes),
              carbsG: food.carbsG,
              absorptionType: food.absorptionType,
            })),
            ...assumedMealsFor(usual, day, options).map((meal) => ({
              atMs: utcMs(meal.date, meal.minutes),
              carbsG: meal.carbsG,
              absorptionType: meal.absorptionType,
            })),
          ];
          const workout = {
            startMs: startAt + startMinutes * 60_000,
            endMs: startAt + (startMinutes + minutes) * 60_000,
          };
          const exercise = [{ ...workout, intensityFactor, watts: intensityFactor * 250, movingFraction: 1 }];
          const start = { liverG: 60, muscleG: 300, gutG: 0 };
          const statusOf = (ordered: readonly MealInput[]) => {
            const run = { capacity, start, startAt };
            const simulation = simulateGlycogen({ ...run, steps: 96, meals: ordered, exercise });
            const { status, limitingStore } = assessWorkoutFuel(simulation, run, workout);
            return { status, limitingStore };
          };
          // A deterministic reordering from the seed: rotate, then reverse.
          const rotated = meals
            .map((_, index) => meals[(index + Math.abs(seed)) % meals.length] as MealInput)
            .reverse();
          expect(statusOf(rotated)).toEqual(statusOf(meals));
        },
      ),
      { ...RUNS, numRuns: 60 },
    );
  });

  it('a logged or planned item replaces its slot’s assumed meal whole: no slot of a day is counted twice', () => {
    let replaced = 0;
    fc.assert(
      fc.property(historyArb, tomorrowArb, itemArb(fc.constant(TOMORROW)), (history, day, added) => {
        const usual = usualIntakeOf(history, TODAY);
        const before = assumedMealsFor(usual, day, options);
        const after = assumedMealsFor(usual, [...day, added], options);
        const slot = slotOf(added);
        // Adding an item only ever removes the assumed meal of its own slot, and only that one.
        expect(after).toEqual(before.filter((meal) => meal.slot !== slot));
        if (after.length < before.length) replaced += 1;
        // Each slot of the day is either logged/planned or assumed, never both.
        for (const candidate of MEAL_SLOTS) {
          const logged = [...day, added].some((food) => slotOf(food) === candidate);
          const assumed = after.filter((meal) => meal.slot === candidate).length;
          if (logged) expect(assumed).toBe(0);
          expect(assumed).toBeLessThanOrEqual(1);
        }
      }),
      RUNS,
    );
    // The random histories do give usual intakes whose meals get replaced.
    expect(replaced).toBeGreaterThan(10);
  });
});

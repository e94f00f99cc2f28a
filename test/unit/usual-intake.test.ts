/**
 * The usual intake and the assumed meals (docs/science.md §3, "Usual intake"):
 * worked example U by hand, the slot of an item, the window and the three-day
 * minimum, and where assumed meals go (each slot that nothing logged or
 * planned fills; today only after now).
 */
import { describe, expect, it } from 'vitest';
import {
  assumedMealsFor,
  assumedMealTimeMs,
  slotOf,
  usualIntakeOf,
  type DayItem,
} from '../../server/src/modules/derived/usual-intake.model.ts';

const TODAY = '2026-11-20';
const at = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
const item = (
  date: string,
  time: string,
  carbsG: number,
  absorptionType: DayItem['absorptionType'],
  meal: string | null,
): DayItem => ({
  date,
  minutes: at(time),
  carbsG,
  absorptionType,
  meal,
  planned: false,
});

/** Worked example U's four logged days. */
const EXAMPLE_H: DayItem[] = [
  item('2026-11-07', '07:00', 80, 'BALANCED', 'BREAKFAST'),
  item('2026-11-07', '12:30', 100, 'BALANCED', 'LUNCH'),
  item('2026-11-07', '19:00', 120, 'DENSE', 'DINNER'),
  item('2026-11-09', '07:30', 60, 'FAST', 'BREAKFAST'),
  item('2026-11-09', '13:00', 90, 'BALANCED', 'LUNCH'),
  item('2026-11-09', '16:00', 30, 'FAST', 'SNACK'),
  item('2026-11-09', '19:30', 100, 'DENSE', 'DINNER'),
  item('2026-11-12', '08:00', 70, 'BALANCED', 'BREAKFAST'),
  item('2026-11-12', '12:00', 110, 'BALANCED', null),
  item('2026-11-12', '15:00', 25, 'RAPID', 'SNACK'),
  item('2026-11-12', '18:30', 140, 'BALANCED', 'DINNER'),
  item('2026-11-18', '07:10', 50, 'BALANCED', 'BREAKFAST'),
  item('2026-11-18', '07:40', 20, 'BALANCED', 'BREAKFAST'),
  item('2026-11-18', '20:00', 130, 'DENSE', 'DINNER'),
];

describe('usual intake', () => {
  it('reproduces worked example U', () => {
    expect(usualIntakeOf(EXAMPLE_H, TODAY)).toEqual({
      loggedDays: 4,
      meals: [
        { slot: 'BREAKFAST', minutes: at('07:20'), carbsG: 70, absorptionType: 'BALANCED' },
        { slot: 'LUNCH', minutes: at('12:30'), carbsG: 100, absorptionType: 'BALANCED' },
        { slot: 'DINNER', minutes: at('19:15'), carbsG: 125, absorptionType: 'DENSE' },
      ],
    });
  });

  it('slots an item by its meal, else by its local time; OTHER and RAPID items have no slot', () => {
    expect(slotOf({ meal: 'DINNER', absorptionType: 'BALANCED', minutes: at('07:00') })).toBe('DINNER');
    expect(slotOf({ meal: null, absorptionType: 'BALANCED', minutes: at('03:59') })).toBe('SNACK');
    expect(slotOf({ meal: null, absorptionType: 'BALANCED', minutes: at('04:00') })).toBe('BREAKFAST');
    expect(slotOf({ meal: null, absorptionType: 'FAST', minutes: at('10:59') })).toBe('BREAKFAST');
    expect(slotOf({ meal: null, absorptionType: 'FAST', minutes: at('11:00') })).toBe('LUNCH');
    expect(slotOf({ meal: null, absorptionType: 'DENSE', minutes: at('16:00') })).toBe('DINNER');
    expect(slotOf({ meal: 'OTHER', absorptionType: 'BALANCED', minutes: at('12:00') })).toBeNull();
    expect(slotOf({ meal: 'BREAKFAST', absorptionType: 'RAPID', minutes: at('08:00') })).toBeNull();
  });

  it('needs 3 logged days in the 14 before today, and ignores planned items, today and older days', () => {
    const twoDays = EXAMPLE_H.filter((food) => food.date < '2026-11-12');
    expect(usualIntakeOf(twoDays, TODAY)).toBeNull();
    // A gel alone does not make a logged day.
    expect(usualIntakeOf([...twoDays, item('2026-11-12', '15:00', 25, 'RAPID', 'SNACK')], TODAY)).toBeNull();
    const noise = [
      { ...item('2026-11-13', '08:00', 500, 'HYPER_LOAD', 'BREAKFAST'), planned: true },
      item(TODAY, '08:00', 500, 'HYPER_LOAD', 'BREAKFAST'),
      item('2026-11-05', '08:00', 500, 'HYPER_LOAD', 'BREAKFAST'),
    ];
    expect(usualIntakeOf([...twoDays, ...noise], TODAY)).toBeNull();
    // The window's first day (today − 14) counts.
    expect(usualIntakeOf([...twoDays, item('2026-11-06', '08:00', 40, 'FAST', 'BREAKFAST')], TODAY)?.loggedDays).toBe(
      3,
    );
  });
});

describe('assumed meals', () => {
  const usual = usualIntakeOf(EXAMPLE_H, TODAY);

  it('fill each slot nothing logged or planned fills, never on top of it (example U)', () => {
    const lunch = { ...item('2026-11-21', '12:00', 60, 'FAST', 'LUNCH'), planned: true };
    const assumed = assumedMealsFor(usual, [lunch], {
      from: '2026-11-21',
      to: '2026-11-21',
      today: TODAY,
      nowMinutes: 0,
    });
    expect(assumed).toEqual([
      { date: '2026-11-21', slot: 'BREAKFAST', minutes: at('07:20'), carbsG: 70, absorptionType: 'BALANCED' },
      { date: '2026-11-21', slot: 'DINNER', minutes: at('19:15'), carbsG: 125, absorptionType: 'DENSE' },
    ]);
    expect(assumed.reduce((sum, meal) => sum + meal.carbsG, 0) + lunch.carbsG).toBe(255);
  });

  it('a slot with any item, even without carbohydrate, gets none; OTHER and RAPID items replace nothing', () => {
    const items = [
      item('2026-11-21', '07:00', 0, 'BALANCED', 'BREAKFAST'),
      item('2026-11-21', '12:00', 50, 'FAST', 'OTHER'),
      item('2026-11-21', '19:00', 40, 'RAPID', 'DINNER'),
    ];
    const assumed = assumedMealsFor(usual, items, {
      from: '2026-11-21',
      to: '2026-11-21',
      today: TODAY,
      nowMinutes: 0,
    });
    expect(assumed.map((meal) => meal.slot)).toEqual(['LUNCH', 'DINNER']);
  });

  it('today, only after now; never before today; none without a usual intake', () => {
    const today = assumedMealsFor(usual, [], { from: '2026-11-19', to: TODAY, today: TODAY, nowMinutes: at('10:00') });
    expect(today.map((meal) => `${meal.date} ${meal.slot}`)).toEqual([`${TODAY} LUNCH`, `${TODAY} DINNER`]);
    expect(assumedMealsFor(null, [], { from: TODAY, to: '2026-11-25', today: TODAY, nowMinutes: 0 })).toEqual([]);
  });
});

describe('assumed meals and workouts (example U, tomorrow)', () => {
  const HOUR = 3_600_000;
  // Times on one day as hours after midnight, in ms: the rule is on instants.
  const h = (hours: number) => hours * HOUR;
  const lunch = h(12.5);

  it('moves a meal inside a workout to its end: a ride 12:00-14:00 takes the 12:30 lunch to 14:00', () => {
    expect(assumedMealTimeMs(lunch, [{ startMs: h(12), endMs: h(14) }])).toBe(h(14));
  });

  it('leaves a meal at a workout’s end or outside it where it is; a meal at the start is inside', () => {
    expect(assumedMealTimeMs(lunch, [{ startMs: h(10), endMs: h(12.5) }])).toBe(lunch);
    expect(assumedMealTimeMs(lunch, [{ startMs: h(13), endMs: h(15) }])).toBe(lunch);
    expect(assumedMealTimeMs(lunch, [])).toBe(lunch);
    expect(assumedMealTimeMs(lunch, [{ startMs: lunch, endMs: h(13) }])).toBe(h(13));
  });

  it('moves on through a workout that starts where the first ends, whatever order they come in', () => {
    const first = { startMs: h(12), endMs: h(13) };
    const second = { startMs: h(13), endMs: h(14.25) };
    expect(assumedMealTimeMs(lunch, [first, second])).toBe(h(14.25));
    expect(assumedMealTimeMs(lunch, [second, first])).toBe(h(14.25));
  });
});

/**
 * Issue 21's realistic athlete, seeded through the real HTTP API (REST with a
 * token, FIT files through POST /api/workouts/upload-fit): 70 kg, FTP 250,
 * Europe/Berlin; 60 normal days of wellness with day-to-day noise (one of them
 * a single-day HRV crash), then a bad week (HRV down, resting HR up, poor
 * sleep, a heavy check-in); 27 rides with power, 6 of them a training camp of
 * 3–5 h a day with a café stop and food on the bike; meals with their times on
 * most past days; and two planned rides: 2.5 h tomorrow at 09:00 (IF 0.75) and
 * an untimed 4 h ride in 3 days (IF 0.7).
 *
 * Everything is deterministic (a seeded PRNG, no Math.random) but for "today",
 * which is the real clock's date in the athlete's zone: the server judges the
 * future from now. Today's meals are logged only up to now.
 *
 * No vitest here: the figures script (test/bench/fuel-figures.ts) seeds the
 * same athlete on a server it started. Waiting for the derived recompute is
 * the caller's (test/support/recompute.ts in the tests).
 */
import type { AbsorptionType, NutritionItemInput, PlannedWorkout, PlannedWorkoutFuel, Scope } from '@pacer/contract';
import { addDays, formatInZone, localDateOf, zonedTimeMs } from '../../server/src/lib/dates.ts';
import { buildFitActivity, steadyRideSamples, type RideStop } from './fit-fixtures.ts';
import { call } from './http.ts';

export const REALISTIC_ZONE = 'Europe/Berlin';
export const REALISTIC_WEIGHT_KG = 70;
export const REALISTIC_FTP = 250;

/** Every scope the seeding and the coach's checks use. */
export const REALISTIC_ATHLETE_SCOPES: readonly Scope[] = [
  'profile:read',
  'profile:write',
  'health:read',
  'health:write',
  'nutrition:read',
  'nutrition:write',
  'planning:read',
  'planning:write',
  'workout:read',
  'workout:write',
  'recommendations:read',
];

/** Days of normal wellness, then the bad week (its last day is today). */
export const NORMAL_DAYS = 60;
export const BAD_WEEK_DAYS = 7;
/** The single-day HRV crash in the normal period (days before today). */
export const HRV_CRASH_DAYS_BACK = 40;
/** rMSSD on the crash day: ln(42/60) = −0.357, −3.6 SD at the model's 0.10 SD floor. */
export const HRV_CRASH_MS = 42;
/** The camp: 6 days in a row (days before today, oldest first), each ride's length in hours. */
export const CAMP_DAYS_BACK = [20, 19, 18, 17, 16, 15] as const;
const CAMP_HOURS = [3.5, 4.5, 5, 3, 4.5, 4] as const;
/** Rides outside the camp: 19 in the normal weeks, 2 in the bad week (days before today). */
const NORMAL_RIDE_DAYS_BACK = [65, 63, 60, 58, 56, 53, 51, 49, 46, 44, 42, 39, 37, 35, 32, 30, 25, 13, 9] as const;
const BAD_WEEK_RIDE_DAYS_BACK = [5, 2] as const;
/** Past days with no food logged at all (none of them a ride day). */
const NO_FOOD_DAYS_BACK = [61, 47, 33, 27] as const;
/** A normal night for the liver's overnight drop: dinner on this day, breakfast the next (no ride on either). */
export const NORMAL_NIGHT_DAYS_BACK = 12;
/** A past day with food logged and a recorded 2 h ride at 14:00 with nothing eaten on the bike. */
export const FOOD_AND_RIDE_DAYS_BACK = 9;

export interface SeededRide {
  readonly date: string;
  readonly start: string;
  readonly elapsedSecs: number;
  readonly movingSecs: number;
  /** Mean power while moving, W. */
  readonly watts: number;
  readonly camp: boolean;
}

export interface SeededMeal {
  readonly date: string;
  readonly at: string;
  readonly name: string;
  readonly carbsG: number;
  readonly meal: 'BREAKFAST' | 'LUNCH' | 'DINNER' | 'SNACK';
  readonly absorptionType: AbsorptionType;
}

export interface RealisticAthlete {
  readonly today: string;
  readonly tomorrow: string;
  readonly firstDay: string;
  readonly campDates: readonly string[];
  readonly badWeekDates: readonly string[];
  readonly hrvCrashDate: string;
  readonly normalNight: { readonly dinnerDate: string; readonly breakfastDate: string };
  readonly foodAndRideDate: string;
  readonly rides: readonly SeededRide[];
  readonly meals: readonly SeededMeal[];
  /** Tomorrow 09:00, 2.5 h, IF 0.75. */
  readonly shortRide: PlannedWorkout;
  /** In 3 days, no time of day, 4 h, IF 0.7. */
  readonly longRide: PlannedWorkout;
  /** Wall-clock milliseconds of each seeding phase. */
  readonly timings: Readonly<Record<string, number>>;
}

/** Mulberry32: a small deterministic PRNG (uniform on [0, 1)). */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A standard normal draw (Box–Muller) from a uniform source. */
function gaussian(uniform: () => number): number {
  const u = Math.max(uniform(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
}

const clampInt = (value: number, min: number, max: number) => Math.min(max, Math.max(min, Math.round(value)));

/** `HH:MM` plus minutes (same day). */
function clockPlus(clock: string, minutes: number): string {
  const [hours = 0, mins = 0] = clock.split(':').map(Number);
  const total = hours * 60 + mins + Math.round(minutes);
  return `${String(Math.floor(total / 60)).padStart(2, '0')}:${String(total % 60).padStart(2, '0')}`;
}

/** Run `task` over `items`, at most `limit` at a time, keeping the order of the results. */
async function inParallel<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

interface Api {
  readonly baseUrl: string;
  readonly token: string;
}

async function send<T>(api: Api, method: string, path: string, body: unknown, ok: readonly number[]): Promise<T> {
  const res = await call<T>(api.baseUrl, method, path, { token: api.token, body });
  if (!ok.includes(res.status)) {
    throw new Error(`${method} ${path} answered ${String(res.status)}: ${JSON.stringify(res.body)}`);
  }
  return res.body;
}

function wellnessOf(daysBack: number, date: string, uniform: () => number): Record<string, unknown> {
  const bad = daysBack < BAD_WEEK_DAYS;
  const camp = (CAMP_DAYS_BACK as readonly number[]).includes(daysBack);
  const noise = { hrv: gaussian(uniform), rhr: gaussian(uniform), sleep: gaussian(uniform), mood: uniform() };
  const hrv =
    daysBack === HRV_CRASH_DAYS_BACK
      ? HRV_CRASH_MS
      : Math.round(10 * Math.exp(Math.log(bad ? 44 : 60) + 0.07 * noise.hrv)) / 10;
  const restingHr = clampInt((bad ? 55 : camp ? 49 : 48) + 1.2 * noise.rhr, 40, 70);
  const sleepHours = (bad ? 5.4 : 7.5) + 0.3 * noise.sleep;
  const checkIn = bad
    ? { mood: 2, fatigue: 4, soreness: 4, motivation: 2 }
    : camp
      ? { mood: 4, fatigue: 3, soreness: 3, motivation: 4 }
      : { mood: noise.mood < 0.3 ? 3 : 4, fatigue: 2, soreness: noise.mood > 0.8 ? 2 : 1, motivation: 4 };
  return { date, hrv, restingHr, sleepSecs: Math.round(sleepHours * 60) * 60, ...checkIn };
}

/** The rides, oldest first. Camp: 09:00, 3–5 h with a 30-minute café stop at half way. Else 14:00. */
function ridesOf(today: string): SeededRide[] {
  const rides: SeededRide[] = [];
  NORMAL_RIDE_DAYS_BACK.forEach((back, index) => {
    // A week's pattern: 1.5 h endurance, 1 h tempo, 2 h, 3 h on the weekend ride (every fourth).
    const hours = back === FOOD_AND_RIDE_DAYS_BACK ? 2 : (([1.5, 1, 2, 3] as const)[index % 4] ?? 1.5);
    const watts = hours === 1 ? 200 : hours === 3 ? 165 : 175;
    rides.push({
      date: addDays(today, -back),
      start: '14:00',
      elapsedSecs: hours * 3600,
      movingSecs: hours * 3600,
      watts,
      camp: false,
    });
  });
  CAMP_DAYS_BACK.forEach((back, index) => {
    const moving = (CAMP_HOURS[index] as number) * 3600;
    rides.push({
      date: addDays(today, -back),
      start: '09:00',
      elapsedSecs: moving + 1800,
      movingSecs: moving,
      watts: index % 2 === 0 ? 170 : 160,
      camp: true,
    });
  });
  for (const back of BAD_WEEK_RIDE_DAYS_BACK) {
    rides.push({
      date: addDays(today, -back),
      start: '14:00',
      elapsedSecs: 5400,
      movingSecs: 5400,
      watts: 160,
      camp: false,
    });
  }
  return rides.sort((a, b) => a.date.localeCompare(b.date));
}

/** The café stop of a ride: 30 minutes at half the moving time; none for a ride without stopped time. */
function stopsOf(ride: SeededRide): RideStop[] {
  const stopped = ride.elapsedSecs - ride.movingSecs;
  return stopped > 0 ? [{ fromSecs: Math.round(ride.movingSecs / 2), secs: stopped }] : [];
}

/** A day's meals: breakfast, lunch, an afternoon snack, dinner; a ride moves them and adds food around it. */
function mealsOf(date: string, ride: SeededRide | undefined, uniform: () => number): SeededMeal[] {
  const jitter = (grams: number) => Math.round(grams * (0.9 + 0.2 * uniform()));
  const meal = (
    at: string,
    name: string,
    carbsG: number,
    kind: SeededMeal['meal'],
    absorptionType: AbsorptionType = 'BALANCED',
  ): SeededMeal => ({ date, at, name, carbsG, meal: kind, absorptionType });
  if (ride?.camp) {
    const end = clockPlus(ride.start, ride.elapsedSecs / 60);
    const onBike: SeededMeal[] = [];
    // 45 g an hour on the bike from the first hour on (bars and gels), none in the café stop's half hour.
    for (let hour = 1; hour * 3600 < ride.elapsedSecs - 1800; hour += 1) {
      onBike.push(meal(clockPlus(ride.start, hour * 60), 'Bar and gel', 45, 'SNACK', 'FAST'));
    }
    return [
      meal('07:00', 'Porridge, honey, banana', jitter(130), 'BREAKFAST'),
      ...onBike,
      meal(clockPlus(end, 30), 'Pasta and bread', jitter(120), 'LUNCH'),
      meal('17:00', 'Rice cakes and juice', jitter(60), 'SNACK', 'FAST'),
      meal('19:30', 'Rice, chicken, vegetables', jitter(160), 'DINNER'),
    ];
  }
  const day = [
    meal('07:30', 'Muesli and yoghurt', jitter(85), 'BREAKFAST'),
    meal('12:30', 'Sandwich and fruit', jitter(100), 'LUNCH'),
  ];
  if (ride) {
    day.push(meal(clockPlus(ride.start, ride.elapsedSecs / 60 + 15), 'Recovery shake', jitter(50), 'SNACK', 'FAST'));
  } else {
    day.push(meal('16:00', 'Banana and biscuits', jitter(40), 'SNACK', 'FAST'));
  }
  day.push(meal('19:00', 'Pasta with tomato sauce', jitter(110), 'DINNER'));
  return day;
}

async function uploadRide(api: Api, ride: SeededRide, serial: number): Promise<void> {
  const fit = buildFitActivity({
    startTime: new Date(zonedTimeMs(ride.date, ride.start, REALISTIC_ZONE)),
    sport: 'cycling',
    subSport: 'road',
    samples: steadyRideSamples({ durationSecs: ride.elapsedSecs, watts: ride.watts, stops: stopsOf(ride) }),
    serialNumber: 3_500_000_000 + serial,
  });
  const form = new FormData();
  form.append('file', new Blob([fit.bytes as Uint8Array<ArrayBuffer>]), `ride-${ride.date}.fit`);
  const res = await fetch(`${api.baseUrl}/api/workouts/upload-fit`, {
    method: 'POST',
    headers: { authorization: `Bearer ${api.token}` },
    body: form,
  });
  if (res.status !== 201) throw new Error(`upload of ${ride.date} answered ${String(res.status)}: ${await res.text()}`);
}

/** Planned training stress of `hours` at intensity factor `intensity`: 100 × h × IF². */
const stressOf = (hours: number, intensity: number) => Math.round(100 * hours * intensity * intensity * 10) / 10;

/**
 * Seed the athlete for the user the token belongs to. `now` decides "today"
 * (the real clock by default, as the server's).
 */
export async function seedRealisticAthlete(
  baseUrl: string,
  token: string,
  now: Date = new Date(),
): Promise<RealisticAthlete> {
  const api = { baseUrl, token };
  const timings: Record<string, number> = {};
  const timed = async <T>(phase: string, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await run();
    timings[phase] = Math.round(performance.now() - started);
    return result;
  };
  const today = localDateOf(now, REALISTIC_ZONE);
  const totalDays = NORMAL_DAYS + BAD_WEEK_DAYS;
  const firstDay = addDays(today, -(totalDays - 1));
  const uniform = prng(21);

  await timed('profile', () =>
    send(
      api,
      'PATCH',
      '/api/profile',
      {
        timeZone: REALISTIC_ZONE,
        weight: REALISTIC_WEIGHT_KG,
        ftp: REALISTIC_FTP,
        restingHr: 48,
        maxHr: 190,
        thresholdHr: 170,
      },
      [200],
    ),
  );

  const wellness = Array.from({ length: totalDays }, (_, index) => {
    const back = totalDays - 1 - index;
    return wellnessOf(back, addDays(today, -back), uniform);
  });
  await timed('wellness', () => inParallel(wellness, 4, (body) => send(api, 'POST', '/api/wellness', body, [201])));

  const rides = ridesOf(today);
  const rideOn = new Map(rides.map((ride) => [ride.date, ride]));
  const nowMs = now.getTime();
  const meals: SeededMeal[] = [];
  for (let back = totalDays - 1; back >= 0; back -= 1) {
    if ((NO_FOOD_DAYS_BACK as readonly number[]).includes(back)) continue;
    const date = addDays(today, -back);
    for (const item of mealsOf(date, rideOn.get(date), uniform)) {
      // Today: only what has been eaten by now.
      if (zonedTimeMs(item.date, item.at, REALISTIC_ZONE) <= nowMs) meals.push(item);
    }
  }
  const mealDays = [...new Set(meals.map((item) => item.date))];
  await timed('nutrition', () =>
    inParallel(mealDays, 4, (date) =>
      send(
        api,
        'POST',
        '/api/nutrition',
        {
          date,
          items: meals
            .filter((item) => item.date === date)
            .map((item): NutritionItemInput => ({
              name: item.name,
              carbs: item.carbsG,
              meal: item.meal,
              planned: false,
              logged_at: formatInZone(zonedTimeMs(item.date, item.at, REALISTIC_ZONE), REALISTIC_ZONE),
              absorptionType: item.absorptionType,
            })),
        },
        [201],
      ),
    ),
  );

  // One file at a time: the server decodes one FIT file per user at once (429 otherwise).
  await timed('rides', async () => {
    for (const [index, ride] of rides.entries()) await uploadRide(api, ride, index);
  });

  const tomorrow = addDays(today, 1);
  const [shortRide, longRide] = await timed('planned', () =>
    Promise.all([
      send<PlannedWorkout>(
        api,
        'POST',
        '/api/planned-workouts',
        {
          date: tomorrow,
          timeOfDay: '09:00',
          sport: 'ride',
          title: 'Endurance 2.5 h',
          durationSecs: 9000,
          trainingStress: stressOf(2.5, 0.75),
        },
        [201],
      ),
      send<PlannedWorkout>(
        api,
        'POST',
        '/api/planned-workouts',
        {
          date: addDays(today, 3),
          sport: 'ride',
          title: 'Long ride 4 h',
          durationSecs: 4 * 3600,
          trainingStress: stressOf(4, 0.7),
        },
        [201],
      ),
    ]),
  );

  return {
    today,
    tomorrow,
    firstDay,
    campDates: CAMP_DAYS_BACK.map((back) => addDays(today, -back)),
    badWeekDates: Array.from({ length: BAD_WEEK_DAYS }, (_, index) => addDays(today, index - (BAD_WEEK_DAYS - 1))),
    hrvCrashDate: addDays(today, -HRV_CRASH_DAYS_BACK),
    normalNight: {
      dinnerDate: addDays(today, -NORMAL_NIGHT_DAYS_BACK),
      breakfastDate: addDays(today, -NORMAL_NIGHT_DAYS_BACK + 1),
    },
    foodAndRideDate: addDays(today, -FOOD_AND_RIDE_DAYS_BACK),
    rides,
    meals,
    shortRide,
    longRide,
    timings,
  };
}

/**
 * Log the advice of planned workouts exactly as given (each item at its time,
 * grams and absorption type), as an athlete who follows it would: one
 * `POST /api/nutrition` per local date. The dates must hold no items of this
 * token's app yet (an upsert replaces them); the planned days of the fixture hold none.
 */
export async function eatAdvice(baseUrl: string, token: string, fuels: readonly PlannedWorkoutFuel[]): Promise<void> {
  const byDate = new Map<string, NutritionItemInput[]>();
  for (const fuel of fuels) {
    for (const item of fuel.advice) {
      const date = item.at.slice(0, 10);
      const items = byDate.get(date) ?? [];
      items.push({
        name: `Advice (${item.phase})`,
        carbs: item.carbsG,
        // OTHER, as an accepted recommendation plans it: advice takes no meal slot, so it replaces no usual meal.
        meal: 'OTHER',
        planned: false,
        logged_at: item.at,
        absorptionType: item.absorptionType,
      });
      byDate.set(date, items);
    }
  }
  for (const [date, items] of byDate) {
    await send({ baseUrl, token }, 'POST', '/api/nutrition', { date, items }, [201]);
  }
}

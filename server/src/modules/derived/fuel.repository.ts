import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';
import type { AbsorptionType } from './glycogen.constants.ts';
import type { MealSlot } from './usual-intake.model.ts';

/** A nutrition item as the model takes it, with its local date and clock time for the meal slots. */
export interface FuelMealRow {
  readonly name: string;
  /** 0 when the item has no carbohydrate. */
  readonly carbs: number;
  readonly absorptionType: AbsorptionType;
  readonly loggedAt: Date;
  readonly meal: string | null;
  readonly planned: boolean;
  /** The athlete's local date of `logged_at`. */
  readonly localDate: string;
  /** Local clock time of `logged_at`, whole minutes after midnight. */
  readonly localMinutes: number;
}

/** Local date and clock minutes of `logged_at` in the athlete's zone, computed by the database. */
function localTimeColumns(timeZone: string) {
  return [
    sql<string>`(logged_at at time zone ${timeZone})::date::text`.as('localDate'),
    sql<number>`(extract(hour from logged_at at time zone ${timeZone}) * 60 + extract(minute from logged_at at time zone ${timeZone}))::int`.as(
      'localMinutes',
    ),
  ] as const;
}

/** Every nutrition item eaten or planned in a time window (with carbohydrate or not: any item fills its meal slot). */
export async function listFoodItemsBetween(
  db: DbOrTrx,
  userId: string,
  window: { readonly fromMs: number; readonly toMs: number; readonly timeZone: string },
): Promise<FuelMealRow[]> {
  const rows = await db
    .selectFrom('nutritionItems')
    .select(['name', 'carbs', 'absorptionType', 'loggedAt', 'meal', 'planned', ...localTimeColumns(window.timeZone)])
    .where('userId', '=', userId)
    .where('loggedAt', '>=', new Date(window.fromMs))
    .where('loggedAt', '<', new Date(window.toMs))
    .orderBy('loggedAt')
    .execute();
  return rows.map((row) => ({ ...row, carbs: row.carbs ?? 0 }));
}

/** The eaten (not planned) items with carbohydrate in a time window: what the usual intake is taken from. */
export async function listEatenCarbItemsBetween(
  db: DbOrTrx,
  userId: string,
  window: { readonly fromMs: number; readonly toMs: number; readonly timeZone: string },
): Promise<FuelMealRow[]> {
  return db
    .selectFrom('nutritionItems')
    .select(['name', 'carbs', 'absorptionType', 'loggedAt', 'meal', 'planned', ...localTimeColumns(window.timeZone)])
    .where('userId', '=', userId)
    .where('planned', '=', false)
    .where('carbs', '>', 0)
    .where('loggedAt', '>=', new Date(window.fromMs))
    .where('loggedAt', '<', new Date(window.toMs))
    .orderBy('loggedAt')
    .execute() as Promise<FuelMealRow[]>;
}

/** The user's dates (the logs' calendar dates) with at least one nutrition item, in a range. */
export async function listLoggedFoodDates(db: DbOrTrx, userId: string, from: string, to: string): Promise<string[]> {
  const rows = await db
    .selectFrom('nutritionLogs as l')
    .select('l.date')
    .distinct()
    .where('l.userId', '=', userId)
    .where('l.date', '>=', from)
    .where('l.date', '<=', to)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('nutritionItems as i')
          .select('i.id')
          .whereRef('i.userId', '=', 'l.userId')
          .whereRef('i.logId', '=', 'l.id'),
      ),
    )
    .execute();
  return rows.map((row) => row.date);
}

export interface RecordedWorkoutRow {
  readonly id: string;
  readonly name: string | null;
  readonly sport: string;
  readonly subSport: string | null;
  readonly startTime: Date;
  readonly elapsedSecs: number | null;
  readonly movingSecs: number | null;
  readonly normalizedPower: number | null;
  readonly avgPower: number | null;
  readonly avgHr: number | null;
}

export async function listRecordedWorkoutsBetween(
  db: DbOrTrx,
  userId: string,
  fromMs: number,
  toMs: number,
): Promise<RecordedWorkoutRow[]> {
  return db
    .selectFrom('workouts')
    .select([
      'id',
      'name',
      'sport',
      'subSport',
      'startTime',
      'elapsedSecs',
      'movingSecs',
      'normalizedPower',
      'avgPower',
      'avgHr',
    ])
    .where('userId', '=', userId)
    .where('startTime', '>=', new Date(fromMs))
    .where('startTime', '<', new Date(toMs))
    .orderBy('startTime')
    .execute();
}

/** Local start times (`HH:MM`) of the user's recorded workouts since `sinceMs`, for untimed planned workouts. */
export async function listRecentStartTimes(
  db: DbOrTrx,
  userId: string,
  timeZone: string,
  sinceMs: number,
): Promise<string[]> {
  const { rows } = await sql<{ time: string }>`
    select to_char(start_time at time zone ${timeZone}, 'HH24:MI') as time
    from workouts where user_id = ${userId} and start_time >= ${new Date(sinceMs)}`.execute(db);
  return rows.map((row) => row.time);
}

/** The first date anything feeding the fuel model exists (food, workout, plan), or `null`. */
export async function findFirstFuelDataDate(db: DbOrTrx, userId: string): Promise<string | null> {
  const { rows } = await sql<{ first: string | null }>`
    select least(
      (select min(date) from nutrition_logs where user_id = ${userId}),
      (select min(local_date) from workouts where user_id = ${userId}),
      (select min(date) from planned_workouts where user_id = ${userId}))::text as first`.execute(db);
  return rows[0]?.first ?? null;
}

/** The latest wellness weight, kilograms. */
export async function findLatestWellnessWeight(db: DbOrTrx, userId: string): Promise<number | null> {
  const row = await db
    .selectFrom('wellness')
    .select('weight')
    .where('userId', '=', userId)
    .where('weight', 'is not', null)
    .orderBy('date', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.weight ?? null;
}

export interface StoredFuelDay {
  readonly date: string;
  readonly startState: { liverG: number; muscleG: number; gutG: number };
  readonly endState: { liverG: number; muscleG: number; gutG: number };
  /** `[end of step (epoch ms), liver, muscle, gut]` per step. */
  readonly points: [number, number, number, number][];
  readonly assumptions: string[];
  /** A recorded workout on the day is more than the logged food can fuel. */
  readonly incompleteLog: boolean;
  /** The assumed meals (usual intake) the day was drawn with: `[atMs, carbsG, absorptionType, slot]` each. */
  readonly assumedMeals: [number, number, AbsorptionType, MealSlot][];
  /** Whether the athlete had a usual intake when the day was drawn. */
  readonly usualIntake: boolean;
}

export async function findFuelDay(db: DbOrTrx, userId: string, date: string): Promise<StoredFuelDay | undefined> {
  return db
    .selectFrom('fuelDays')
    .select(['date', 'startState', 'endState', 'points', 'assumptions', 'incompleteLog', 'assumedMeals', 'usualIntake'])
    .where('userId', '=', userId)
    .where('date', '=', date)
    .executeTakeFirst() as Promise<StoredFuelDay | undefined>;
}

export async function listFuelDays(db: DbOrTrx, userId: string, from: string, to: string): Promise<StoredFuelDay[]> {
  return db
    .selectFrom('fuelDays')
    .select(['date', 'startState', 'endState', 'points', 'assumptions', 'incompleteLog', 'assumedMeals', 'usualIntake'])
    .where('userId', '=', userId)
    .where('date', '>=', from)
    .where('date', '<=', to)
    .orderBy('date')
    .execute() as Promise<StoredFuelDay[]>;
}

export async function replaceFuelDaysFrom(
  db: DbOrTrx,
  userId: string,
  fromDate: string,
  days: readonly StoredFuelDay[],
): Promise<void> {
  await db.deleteFrom('fuelDays').where('userId', '=', userId).where('date', '>=', fromDate).execute();
  // A year of days in a few statements: each row carries up to 100 points.
  for (let index = 0; index < days.length; index += 100) {
    await db
      .insertInto('fuelDays')
      .values(
        days.slice(index, index + 100).map((day) => ({
          userId,
          date: day.date,
          startState: JSON.stringify(day.startState),
          endState: JSON.stringify(day.endState),
          points: JSON.stringify(day.points),
          assumptions: JSON.stringify(day.assumptions),
          incompleteLog: day.incompleteLog,
          assumedMeals: JSON.stringify(day.assumedMeals),
          usualIntake: day.usualIntake,
        })),
      )
      .execute();
  }
}

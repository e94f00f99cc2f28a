import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';
import type { PlannedWorkoutRow, PlannedWorkoutsTable } from '../../db/tables.ts';
import type { PlannedWorkoutPosition } from './planned-workouts.cursor.ts';

/** Columns a caller may write; `structure` as JSON text, like every jsonb column we write. */
export interface PlannedWorkoutValues {
  readonly date?: string;
  readonly timeOfDay?: string | null;
  readonly sport?: PlannedWorkoutsTable['sport'];
  readonly title?: string;
  readonly description?: string | null;
  readonly durationSecs?: number | null;
  readonly trainingStress?: number | null;
  readonly structure?: string | null;
}

export interface NewPlannedWorkoutRow extends PlannedWorkoutValues {
  readonly userId: string;
  readonly date: string;
  readonly sport: PlannedWorkoutsTable['sport'];
  readonly title: string;
  readonly source: string;
}

export async function insertPlannedWorkout(db: DbOrTrx, row: NewPlannedWorkoutRow): Promise<PlannedWorkoutRow> {
  return db.insertInto('plannedWorkouts').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Scoped to the owner: another user's id finds nothing, exactly like an unknown id. */
export async function findPlannedWorkout(
  db: DbOrTrx,
  userId: string,
  id: string,
): Promise<PlannedWorkoutRow | undefined> {
  return db
    .selectFrom('plannedWorkouts')
    .selectAll()
    .where('userId', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** One statement; `undefined` when the user has no workout with this id. */
export async function updatePlannedWorkout(
  db: DbOrTrx,
  userId: string,
  id: string,
  values: PlannedWorkoutValues,
): Promise<PlannedWorkoutRow | undefined> {
  return db
    .updateTable('plannedWorkouts')
    .set({ ...values, updatedAt: sql`now()` })
    .where('userId', '=', userId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** `true` when a row was deleted. */
/** The deleted workout's date; `undefined` when the user had no workout with this id. */
export async function deletePlannedWorkout(db: DbOrTrx, userId: string, id: string): Promise<string | undefined> {
  const row = await db
    .deleteFrom('plannedWorkouts')
    .where('userId', '=', userId)
    .where('id', '=', id)
    .returning('date')
    .executeTakeFirst();
  return row?.date;
}

export interface PlannedWorkoutWindow {
  readonly from: string;
  readonly to: string;
  readonly after: PlannedWorkoutPosition | undefined;
  readonly limit: number;
}

/** The sort key of a row's start time: `''` (no time) sorts before any `HH:MM`. */
const timeKey = sql<string>`coalesce(time_of_day, '')`;

/**
 * Rows in the window in keyset order (date, start time, id), matching the
 * index `planned_workouts_user_order_idx`; one more than `limit` tells the
 * caller another page exists.
 */
export async function listPlannedWorkouts(
  db: DbOrTrx,
  userId: string,
  window: PlannedWorkoutWindow,
): Promise<PlannedWorkoutRow[]> {
  let query = db
    .selectFrom('plannedWorkouts')
    .selectAll()
    .where('userId', '=', userId)
    .where('date', '>=', window.from)
    .where('date', '<=', window.to);
  const after = window.after;
  if (after !== undefined) {
    query = query.where(sql<boolean>`(date, ${timeKey}, id) > (${after.date}::date, ${after.time}, ${after.id}::uuid)`);
  }
  return query
    .orderBy('date')
    .orderBy(timeKey)
    .orderBy('id')
    .limit(window.limit + 1)
    .execute();
}

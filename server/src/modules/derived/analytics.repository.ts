import { inDatePage } from '../../db/date-page.ts';
import { sql } from 'kysely';
import type { RecoveryDay, TrainingLoadDay } from '@pacer/contract';
import type { DbOrTrx } from '../../db/database.ts';
import { RECOVERY_WELLNESS_FIELDS, type WellnessDay } from './recovery.model.ts';

/** What the models read about the athlete. */
export interface ModelProfile {
  readonly timeZone: string;
  readonly ftpWatts: number | null;
  readonly restingHr: number | null;
  readonly thresholdHr: number | null;
  readonly weightKg: number | null;
}

export async function findModelProfile(db: DbOrTrx, userId: string): Promise<ModelProfile | undefined> {
  return db
    .selectFrom('users')
    .select(['timeZone', 'ftpWatts', 'restingHr', 'thresholdHr', 'weightKg'])
    .where('id', '=', userId)
    .executeTakeFirst();
}

/** The first local date with a workout and with wellness (each `null` when there is none). */
export async function findFirstDataDates(
  db: DbOrTrx,
  userId: string,
): Promise<{ firstWorkout: string | null; firstWellness: string | null }> {
  const { rows } = await sql<{ firstWorkout: string | null; firstWellness: string | null }>`
    select (select min(local_date) from workouts where user_id = ${userId})::text as first_workout,
           (select min(date) from wellness where user_id = ${userId})::text as first_wellness`.execute(db);
  return rows[0] ?? { firstWorkout: null, firstWellness: null };
}

export interface WorkoutModelRow {
  readonly localDate: string;
  readonly sport: string;
  readonly subSport: string | null;
  readonly elapsedSecs: number | null;
  readonly movingSecs: number | null;
  readonly normalizedPower: number | null;
  readonly avgPower: number | null;
  readonly avgHr: number | null;
}

export async function listWorkoutsFrom(db: DbOrTrx, userId: string, fromDate: string): Promise<WorkoutModelRow[]> {
  return db
    .selectFrom('workouts')
    .select(['localDate', 'sport', 'subSport', 'elapsedSecs', 'movingSecs', 'normalizedPower', 'avgPower', 'avgHr'])
    .where('userId', '=', userId)
    .where('localDate', '>=', fromDate)
    .orderBy('localDate')
    .execute();
}

export async function listWellnessBetween(
  db: DbOrTrx,
  userId: string,
  from: string,
  to: string,
): Promise<WellnessDay[]> {
  return db
    .selectFrom('wellness')
    .select(['date', ...RECOVERY_WELLNESS_FIELDS])
    .where('userId', '=', userId)
    .where('date', '>=', from)
    .where('date', '<=', to)
    .orderBy('date')
    .execute();
}

/** A stored day is the contract's day: the table keeps it as the API shows it. */
export type StoredLoadDay = TrainingLoadDay;

export async function findTrainingLoadDay(
  db: DbOrTrx,
  userId: string,
  date: string,
): Promise<StoredLoadDay | undefined> {
  return db
    .selectFrom('dailyTrainingLoad')
    .select(['date', 'tss', 'atl', 'ctl', 'tsb', 'method'])
    .where('userId', '=', userId)
    .where('date', '=', date)
    .executeTakeFirst();
}

export async function listTrainingLoad(
  db: DbOrTrx,
  userId: string,
  from: string,
  to: string,
): Promise<StoredLoadDay[]> {
  return db
    .selectFrom('dailyTrainingLoad')
    .select(['date', 'tss', 'atl', 'ctl', 'tsb', 'method'])
    .where('userId', '=', userId)
    .where('date', '>=', from)
    .where('date', '<=', to)
    .orderBy('date')
    .execute();
}

/** Replace the user's stored days from `fromDate` on with `days` (one statement each way). */
export async function replaceTrainingLoadFrom(
  db: DbOrTrx,
  userId: string,
  fromDate: string,
  days: readonly StoredLoadDay[],
): Promise<void> {
  await db.deleteFrom('dailyTrainingLoad').where('userId', '=', userId).where('date', '>=', fromDate).execute();
  if (days.length === 0) return;
  await db
    .insertInto('dailyTrainingLoad')
    .values(days.map((day) => ({ userId, ...day })))
    .execute();
}

/** A stored day is the contract's day: the table keeps it as the API shows it. */
export type StoredRecoveryDay = RecoveryDay;

export async function replaceRecoveryFrom(
  db: DbOrTrx,
  userId: string,
  fromDate: string,
  days: readonly StoredRecoveryDay[],
): Promise<void> {
  await db.deleteFrom('dailyRecovery').where('userId', '=', userId).where('date', '>=', fromDate).execute();
  if (days.length === 0) return;
  await db
    .insertInto('dailyRecovery')
    .values(days.map((day) => ({ userId, ...day, components: JSON.stringify(day.components) })))
    .execute();
}

export async function listRecovery(
  db: DbOrTrx,
  userId: string,
  window: { readonly from: string; readonly to: string; readonly after: string | undefined; readonly limit: number },
): Promise<StoredRecoveryDay[]> {
  return inDatePage(
    db.selectFrom('dailyRecovery').select(['date', 'score', 'status', 'components', 'explanation']),
    userId,
    window,
  ).execute();
}

/**
 * Users whose stored derived data stops before their local today (a new day
 * has begun since their last recompute), with the last stored date.
 */
export async function listUsersBehindToday(
  db: DbOrTrx,
  limit: number,
): Promise<{ userId: string; lastDate: string }[]> {
  const { rows } = await sql<{ userId: string; lastDate: string }>`
    select l.user_id, max(l.date)::text as last_date
    from daily_training_load l join users u on u.id = l.user_id
    where u.active
    group by l.user_id, u.time_zone
    having max(l.date) < (now() at time zone u.time_zone)::date
    limit ${limit}`.execute(db);
  return rows;
}

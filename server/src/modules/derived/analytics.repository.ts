import { inDatePage } from '../../db/date-page.ts';
import { sql } from 'kysely';
import type { RecoveryDay, TrainingLoadDay } from '@pacer/contract';
import { type DbOrTrx, precompiled, preparedStatement } from '../../db/database.ts';
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

/**
 * The statement that makes a user's stored days of a derived table from a
 * date on exactly the days given, in one round trip: the days arrive as one
 * JSON array (`json_to_recordset`: the text is read once, row by row, where
 * `jsonb` would first build the whole array as a tree, ~1.4 ms more of the
 * server's time for 60 recovery days), a day no longer computed is deleted, a
 * new day is inserted, and a stored day is updated only when one of its
 * values differs (`is distinct from`; jsonb compares by value). A day whose
 * numbers did not change keeps its row: a wellness day whose sleep alone
 * changed rewrites that day's recovery, not the 60 after it, and a burst of
 * runs leaves no dead rows for the days it did not move. Its text is the same
 * for any number of days, so it is compiled once and runs as a named prepared
 * statement. The values arrive as JSON numbers: every number the models
 * produce is finite, and float8 reads a JS number's shortest text back exactly.
 */
function storeDaysFrom(
  table: 'daily_training_load' | 'daily_recovery',
  columns: readonly (readonly [string, string])[],
) {
  const names = columns.map(([name]) => name);
  const list = (prefix: string) => sql.raw(names.map((name) => `${prefix}${name}`).join(', '));
  return precompiled(3, (db: DbOrTrx, userId: string, fromDate: string, days: string) =>
    sql`with target as (select ${userId}::uuid as user_id, ${fromDate}::date as from_date),
      day as (
        select * from json_to_recordset(${days}::json)
          as day(date date, ${sql.raw(columns.map(([name, type]) => `${name} ${type}`).join(', '))})
      ),
      gone as (
        delete from ${sql.table(table)} stored using target
        where stored.user_id = target.user_id and stored.date >= target.from_date
          and stored.date not in (select date from day)
      )
    insert into ${sql.table(table)} (user_id, date, ${list('')})
    select target.user_id, day.date, ${list('day.')} from target, day
    on conflict (user_id, date) do update set ${sql.raw(names.map((name) => `${name} = excluded.${name}`).join(', '))}
    where (${list(`${table}.`)}) is distinct from (${list('excluded.')})
    ${preparedStatement(`store_${table}_from`)}`.compile(db),
  );
}

const storeTrainingLoadQuery = storeDaysFrom('daily_training_load', [
  ['tss', 'double precision'],
  ['atl', 'double precision'],
  ['ctl', 'double precision'],
  ['tsb', 'double precision'],
  ['method', 'text'],
]);

/** Make the user's stored training load from `fromDate` on exactly `days` (`storeDaysFrom`: only what differs is written). */
export async function storeTrainingLoadFrom(
  db: DbOrTrx,
  userId: string,
  fromDate: string,
  days: readonly StoredLoadDay[],
): Promise<void> {
  await db.executeQuery(storeTrainingLoadQuery(db, userId, fromDate, JSON.stringify(days)));
}

/** A stored day is the contract's day: the table keeps it as the API shows it. */
export type StoredRecoveryDay = RecoveryDay;

const storeRecoveryQuery = storeDaysFrom('daily_recovery', [
  ['score', 'double precision'],
  ['status', 'text'],
  ['components', 'jsonb'],
  ['explanation', 'text'],
]);

/** Make the user's stored recovery from `fromDate` on exactly `days` (`storeDaysFrom`: only what differs is written). */
export async function storeRecoveryFrom(
  db: DbOrTrx,
  userId: string,
  fromDate: string,
  days: readonly StoredRecoveryDay[],
): Promise<void> {
  await db.executeQuery(storeRecoveryQuery(db, userId, fromDate, JSON.stringify(days)));
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

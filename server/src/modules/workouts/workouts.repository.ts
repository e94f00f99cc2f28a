import type { ActivityFileFormat } from '@pacer/contract';
import { type Expression, type Insertable, type RawBuilder, sql } from 'kysely';
import { type DbOrTrx, precompiled, preparedStatement } from '../../db/database.ts';
import type { WorkoutRow, WorkoutsTable } from '../../db/tables.ts';
import { UPSERT_INSERTED, UPSERT_UPDATED_AT } from '../../db/upsert.ts';
import { changeRecordsOf } from '../changes/changes.repository.ts';

/** A workout row with the id of another workout that looks like the same activity. */
export type WorkoutWithDuplicate = WorkoutRow & { possibleDuplicateOf: string | null };

/**
 * Another of the user's workouts from the same device (serial) with the same
 * start time: the same activity that reached us twice (e.g. from the watch's
 * app and from a training platform, with different bytes). The oldest wins.
 */
function possibleDuplicateOf() {
  return sql<string | null>`(
    SELECT other.id FROM workouts AS other
    WHERE other.user_id = workouts.user_id
      AND other.device_serial = workouts.device_serial
      AND other.start_time = workouts.start_time
      AND other.id <> workouts.id
    ORDER BY other.created_at, other.id
    LIMIT 1
  )`.as('possibleDuplicateOf');
}

export async function findWorkout(db: DbOrTrx, userId: string, id: string): Promise<WorkoutWithDuplicate | undefined> {
  return db
    .selectFrom('workouts')
    .selectAll()
    .select(possibleDuplicateOf())
    .where('userId', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function findWorkoutIdByFile(db: DbOrTrx, userId: string, sha256: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('workouts')
    .select('id')
    .where('userId', '=', userId)
    .where('fileSha256', '=', sha256)
    .modifyEnd(preparedStatement('find_workout_by_file'))
    .executeTakeFirst();
  return row?.id;
}

export type NewWorkoutRow = Insertable<WorkoutsTable>;

/** What a re-upload of the same bytes may change; absent fields keep their value. */
export interface WorkoutRelabel {
  readonly name?: string;
  /** JSON text of the metadata object. */
  readonly metadata?: string;
}

/**
 * Whether a re-upload sent a name and metadata: booleans, or the
 * precompiled statement's placeholders for them (`precompiled`).
 */
interface RelabelSent {
  readonly nameSent: unknown;
  readonly metadataSent: unknown;
}

function relabelSent(relabel: WorkoutRelabel): RelabelSent {
  return { nameSent: relabel.name !== undefined, metadataSent: relabel.metadata !== undefined };
}

/** The re-upload's value when it sent one (`sent`, a parameter), else the stored one. */
function relabelled<T>(sent: unknown, excluded: Expression<T>, stored: Expression<T>): RawBuilder<T> {
  return sql<T>`case when ${sent}::boolean then ${excluded} else ${stored} end`;
}

/**
 * Insert, or on the (user, file hash) key update only what a re-upload
 * changes, in one statement: concurrent identical uploads serialise on the
 * unique index and exactly one of them creates the row (db/upsert.ts tells
 * which). What a re-upload sent is
 * a value, not a different text: for rows with the same columns the text is
 * the same, so it can run as a prepared statement.
 */
function upsertWorkoutQuery(db: DbOrTrx, row: NewWorkoutRow, sent: RelabelSent) {
  return db
    .insertInto('workouts')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['userId', 'fileSha256']).doUpdateSet((eb) => ({
        updatedAt: UPSERT_UPDATED_AT,
        name: relabelled(sent.nameSent, eb.ref('excluded.name'), eb.ref('workouts.name')),
        metadata: relabelled(sent.metadataSent, eb.ref('excluded.metadata'), eb.ref('workouts.metadata')),
      })),
    );
}

/** `upsertWorkoutQuery` alone: a workout without its file (imports and tests that make workouts directly). */
export async function upsertWorkout(
  db: DbOrTrx,
  row: NewWorkoutRow,
  relabel: WorkoutRelabel,
): Promise<{ id: string; created: boolean }> {
  return upsertWorkoutQuery(db, row, relabelSent(relabel))
    .returning('id')
    .returning(UPSERT_INSERTED.as('created'))
    .executeTakeFirstOrThrow();
}

/**
 * What an upload stores of a workout: every column it sets, each one
 * present (null where the file has no value), so the upsert's SQL text is
 * the same for every upload.
 */
export type UploadedWorkoutRow = Required<Omit<NewWorkoutRow, 'id' | 'createdAt' | 'updatedAt'>>;

/** The columns of `UploadedWorkoutRow`, in the order the upsert's parameters take them. */
const UPLOADED_WORKOUT_COLUMNS = [
  'userId',
  'fileSha256',
  'fileSize',
  'fileName',
  'fileFormat',
  'name',
  'metadata',
  'source',
  'sport',
  'subSport',
  'startTime',
  'localDate',
  'utcOffsetMinutes',
  'elapsedSecs',
  'movingSecs',
  'distanceMeters',
  'ascentMeters',
  'avgHr',
  'maxHr',
  'avgPower',
  'maxPower',
  'normalizedPower',
  'avgCadence',
  'calories',
  'trainingStress',
  'laps',
  'deviceManufacturer',
  'deviceProduct',
  'deviceSerial',
  'truncated',
] as const satisfies readonly (keyof UploadedWorkoutRow)[];
// A column added to the table (and so to the row) and not to the list fails here.
const _everyUploadedColumnListed: Exclude<
  keyof UploadedWorkoutRow,
  (typeof UPLOADED_WORKOUT_COLUMNS)[number]
> extends never
  ? true
  : never = true;

/**
 * The statement of `upsertWorkoutWithFile`, built and compiled once
 * (`precompiled`): its text never changes, only its values (the row's
 * columns in `UPLOADED_WORKOUT_COLUMNS` order, whether the re-upload sent a
 * name and metadata, the file's bytes). Building it (four CTEs, thirty
 * columns) through Kysely's builder, plugins and compiler on every upload
 * cost about a millisecond of the event loop between the decode and the
 * insert, on the upload's critical path.
 */
const upsertWorkoutWithFileQuery = precompiled(
  UPLOADED_WORKOUT_COLUMNS.length + 3,
  (db: DbOrTrx, ...values: readonly unknown[]) => {
    const row = Object.fromEntries(
      UPLOADED_WORKOUT_COLUMNS.map((column, index) => [column, values[index]]),
    ) as unknown as NewWorkoutRow;
    const [nameSent, metadataSent, bytes] = values.slice(UPLOADED_WORKOUT_COLUMNS.length);
    // Every value is a placeholder; the constants are literals in the text (`sql.lit`).
    return (
      db
        .with('upserted', () =>
          upsertWorkoutQuery(db, row, { nameSent, metadataSent })
            .returningAll()
            .returning(UPSERT_INSERTED.as('created')),
        )
        .with('file', (qb) =>
          qb
            .insertInto('workoutFiles')
            .columns(['workoutId', 'userId', 'bytes'])
            .expression((eb) =>
              eb
                .selectFrom('upserted')
                .select(['upserted.id', 'upserted.userId', sql<Buffer>`${bytes}::bytea`.as('bytes')])
                .where('upserted.created', '=', sql.lit(true)),
            ),
        )
        .with('changed', (qb) =>
          changeRecordsOf(
            'workouts',
            qb
              .selectFrom('upserted')
              .select(['upserted.userId', 'upserted.localDate as fromDate'])
              .where('upserted.created', '=', sql.lit(true)),
          ),
        )
        .selectFrom('upserted as workouts')
        .selectAll()
        .select(possibleDuplicateOf())
        // One text for every upload: planned once per connection.
        .modifyEnd(preparedStatement('upsert_workout_with_file'))
        .compile()
    );
  },
);

/**
 * An uploaded workout, its original file and its change record in one
 * statement (one round trip, atomic without a transaction of its own): the
 * upsert of `upsertWorkoutQuery`; when it created the row, the file beside
 * it and the change record of its local date (a relabel changes no derived
 * number); and the row as `findWorkout` reads it. A concurrent upload of the
 * same bytes that won the insert keeps its file (the same bytes).
 */
export async function upsertWorkoutWithFile(
  db: DbOrTrx,
  row: UploadedWorkoutRow,
  relabel: WorkoutRelabel,
  bytes: Buffer,
): Promise<{ workout: WorkoutWithDuplicate; created: boolean }> {
  const sent = relabelSent(relabel);
  const { rows } = await db.executeQuery(
    upsertWorkoutWithFileQuery(
      db,
      ...UPLOADED_WORKOUT_COLUMNS.map((column) => row[column]),
      sent.nameSent,
      sent.metadataSent,
      bytes,
    ),
  );
  const first = rows[0];
  if (!first) throw new Error('the workout upsert returned no row');
  const { created, ...workout } = first;
  return { workout, created };
}

/** A re-upload of known bytes: relabel without decoding again. `undefined` when the row is gone. */
export async function relabelWorkout(
  db: DbOrTrx,
  userId: string,
  id: string,
  relabel: WorkoutRelabel,
): Promise<string | undefined> {
  const row = await db
    .updateTable('workouts')
    .set({ ...relabel, updatedAt: sql`now()` })
    .where('userId', '=', userId)
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

/**
 * Keep decoded streams for the next read. Only while the workout exists (a
 * delete may have won the race), and the first writer wins.
 */
export async function cacheWorkoutStreams(
  db: DbOrTrx,
  streams: { workoutId: string; userId: string; streamsJson: string },
): Promise<void> {
  await db
    .insertInto('workoutStreams')
    .columns(['workoutId', 'userId', 'streams'])
    .expression(
      db
        .selectFrom('workouts')
        .select(['id', 'userId', sql<string>`${streams.streamsJson}::json`.as('streams')])
        .where('id', '=', streams.workoutId)
        .where('userId', '=', streams.userId),
    )
    .onConflict((oc) => oc.columns(['userId', 'workoutId']).doNothing())
    .execute();
}

export interface WorkoutWindow {
  /** Local dates, inclusive. */
  readonly from: string;
  readonly to: string;
  readonly sport: string | undefined;
  /** Keyset: only rows strictly before this (startTime, id), newest first. */
  readonly before: { readonly startTime: Date; readonly id: string } | undefined;
  readonly limit: number;
}

/** Rows in the window, newest first; one more than `limit` tells the caller another page exists. */
export async function listWorkouts(
  db: DbOrTrx,
  userId: string,
  window: WorkoutWindow,
): Promise<WorkoutWithDuplicate[]> {
  let query = db
    .selectFrom('workouts')
    .selectAll()
    .select(possibleDuplicateOf())
    .where('userId', '=', userId)
    .where('localDate', '>=', window.from)
    .where('localDate', '<=', window.to);
  if (window.sport !== undefined) query = query.where('sport', '=', window.sport);
  if (window.before !== undefined) {
    const { startTime, id } = window.before;
    query = query.where(sql<boolean>`(start_time, id) < (${startTime}, ${id}::uuid)`);
  }
  return query
    .orderBy('startTime', 'desc')
    .orderBy('id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

export async function findWorkoutFile(
  db: DbOrTrx,
  userId: string,
  id: string,
): Promise<
  | { bytes: Buffer; name: string; fileName: string | null; fileSha256: string; fileFormat: ActivityFileFormat }
  | undefined
> {
  return db
    .selectFrom('workoutFiles')
    .innerJoin('workouts', (join) =>
      join.onRef('workouts.userId', '=', 'workoutFiles.userId').onRef('workouts.id', '=', 'workoutFiles.workoutId'),
    )
    .select(['workoutFiles.bytes', 'workouts.name', 'workouts.fileName', 'workouts.fileSha256', 'workouts.fileFormat'])
    .where('workoutFiles.userId', '=', userId)
    .where('workoutFiles.workoutId', '=', id)
    .executeTakeFirst();
}

/** The workout's start and its cached streams (`null` until first decoded); `undefined`: no such workout. */
export async function findWorkoutStreams(
  db: DbOrTrx,
  userId: string,
  id: string,
): Promise<{ startTime: Date; fileSize: number; streamsJson: string | null } | undefined> {
  return (
    db
      .selectFrom('workouts')
      .leftJoin('workoutStreams', (join) =>
        join
          .onRef('workoutStreams.userId', '=', 'workouts.userId')
          .onRef('workoutStreams.workoutId', '=', 'workouts.id'),
      )
      // As text: the service parses it once.
      .select([
        'workouts.startTime',
        'workouts.fileSize',
        sql<string | null>`workout_streams.streams::text`.as('streamsJson'),
      ])
      .where('workouts.userId', '=', userId)
      .where('workouts.id', '=', id)
      .executeTakeFirst()
  );
}

/** `true` when the user's workout existed and is gone (its file and streams cascade). */
/** The deleted workout's local date; `undefined` when the user had no workout with this id. */
export async function deleteWorkout(db: DbOrTrx, userId: string, id: string): Promise<string | undefined> {
  const row = await db
    .deleteFrom('workouts')
    .where('userId', '=', userId)
    .where('id', '=', id)
    .returning('localDate')
    .executeTakeFirst();
  return row?.localDate;
}

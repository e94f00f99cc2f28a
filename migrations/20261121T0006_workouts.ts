import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('workouts')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    // SHA-256 of the original bytes, lowercase hex: the upsert key with user_id.
    .addColumn('file_sha256', 'text', (col) => col.notNull().check(sql`file_sha256 ~ '^[0-9a-f]{64}$'`))
    .addColumn('file_size', 'integer', (col) => col.notNull())
    .addColumn('file_name', 'text')
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('metadata', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    // Client id (public) of the app that first uploaded the file.
    .addColumn('source', 'text', (col) => col.notNull())
    .addColumn('sport', 'text', (col) => col.notNull())
    .addColumn('sub_sport', 'text')
    .addColumn('start_time', 'timestamptz', (col) => col.notNull())
    .addColumn('local_date', 'date', (col) => col.notNull())
    // The activity's own UTC offset (from the file's local_timestamp), when it records one.
    .addColumn('utc_offset_minutes', 'integer')
    .addColumn('elapsed_secs', 'double precision')
    .addColumn('moving_secs', 'double precision')
    .addColumn('distance_meters', 'double precision')
    .addColumn('ascent_meters', 'double precision')
    .addColumn('avg_hr', 'double precision')
    .addColumn('max_hr', 'double precision')
    .addColumn('avg_power', 'double precision')
    .addColumn('max_power', 'double precision')
    .addColumn('normalized_power', 'double precision')
    .addColumn('avg_cadence', 'double precision')
    .addColumn('calories', 'double precision')
    .addColumn('training_stress', 'double precision')
    .addColumn('laps', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('device_manufacturer', 'text')
    .addColumn('device_product', 'text')
    .addColumn('device_serial', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('workouts_user_file_key', ['user_id', 'file_sha256'])
    .execute();
  // The list: a user's workouts in a local-date range, newest first (keyset on start_time, id).
  await db.schema
    .createIndex('workouts_user_date_idx')
    .on('workouts')
    .columns(['user_id', 'local_date', 'start_time', 'id'])
    .execute();
  // possibleDuplicateOf: the same device and start time among one user's workouts.
  await db.schema
    .createIndex('workouts_user_device_start_idx')
    .on('workouts')
    .columns(['user_id', 'device_serial', 'start_time'])
    .where('device_serial', 'is not', null)
    .execute();

  // The original bytes, apart so that lists never read them.
  await db.schema
    .createTable('workout_files')
    .addColumn('workout_id', 'uuid', (col) => col.primaryKey().references('workouts.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('bytes', 'bytea', (col) => col.notNull())
    .execute();

  // The decoded time series, one JSON array per channel, decoded from the file on first read.
  // `json`, not `jsonb`: never queried inside, and a 10-hour ride's 300 000 numbers insert
  // in about half the time when PostgreSQL only checks the text.
  await db.schema
    .createTable('workout_streams')
    .addColumn('workout_id', 'uuid', (col) => col.primaryKey().references('workouts.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('streams', 'json', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('workout_streams').ifExists().execute();
  await db.schema.dropTable('workout_files').ifExists().execute();
  await db.schema.dropTable('workouts').ifExists().execute();
}

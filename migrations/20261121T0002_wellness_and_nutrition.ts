import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('wellness')
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('date', 'date', (col) => col.notNull())
    .addColumn('hrv', 'double precision')
    .addColumn('resting_hr', 'integer')
    .addColumn('sleep_secs', 'integer')
    .addColumn('sleep_deep_secs', 'integer')
    .addColumn('sleep_light_secs', 'integer')
    .addColumn('sleep_rem_secs', 'integer')
    .addColumn('sleep_awake_secs', 'integer')
    .addColumn('sleep_score', 'integer')
    .addColumn('weight', 'double precision')
    .addColumn('body_fat', 'double precision')
    .addColumn('vo2max', 'double precision')
    .addColumn('sp_o2', 'double precision')
    .addColumn('respiration', 'double precision')
    .addColumn('steps', 'integer')
    .addColumn('stress', 'integer')
    .addColumn('mood', 'integer')
    .addColumn('fatigue', 'integer')
    .addColumn('soreness', 'integer')
    .addColumn('motivation', 'integer')
    .addColumn('comments', 'text')
    .addColumn('raw_json', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('wellness_pkey', ['user_id', 'date'])
    .execute();

  await db.schema
    .createTable('nutrition_logs')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('date', 'date', (col) => col.notNull())
    .addColumn('source', 'text', (col) => col.notNull())
    .addColumn('raw_json', 'jsonb')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('nutrition_logs_user_date_source_key', ['user_id', 'date', 'source'])
    .execute();

  await db.schema
    .createTable('nutrition_items')
    .addColumn('id', 'bigserial', (col) => col.primaryKey())
    .addColumn('log_id', 'uuid', (col) => col.notNull().references('nutrition_logs.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('position', 'integer', (col) => col.notNull())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('carbs', 'double precision')
    .addColumn('protein', 'double precision')
    .addColumn('fat', 'double precision')
    .addColumn('fiber', 'double precision')
    .addColumn('sugar', 'double precision')
    .addColumn('calories', 'double precision')
    .addColumn('water_ml', 'double precision')
    .addColumn('quantity', 'double precision')
    .addColumn('meal', 'text')
    .addColumn('logged_at', 'timestamptz', (col) => col.notNull())
    .addColumn('logged_at_offset_minutes', 'integer', (col) => col.notNull())
    .addColumn('absorption_type', 'text', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('nutrition_items_log_idx')
    .on('nutrition_items')
    .columns(['log_id', 'position'])
    .execute();
  // The glycogen timeline reads a user's intake by time.
  await db.schema
    .createIndex('nutrition_items_user_time_idx')
    .on('nutrition_items')
    .columns(['user_id', 'logged_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('nutrition_items').ifExists().execute();
  await db.schema.dropTable('nutrition_logs').ifExists().execute();
  await db.schema.dropTable('wellness').ifExists().execute();
}

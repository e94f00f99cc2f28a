import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // One row per user whose derived data is stale, from `from_date` on. Written in the
  // transaction of every input write (the earliest date wins), consumed by the recompute job.
  await db.schema
    .createTable('analytics_recompute_requests')
    .addColumn('user_id', 'uuid', (col) => col.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('from_date', 'date', (col) => col.notNull())
    .addColumn('requested_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('daily_training_load')
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('date', 'date', (col) => col.notNull())
    .addColumn('tss', 'double precision', (col) => col.notNull())
    .addColumn('atl', 'double precision', (col) => col.notNull())
    .addColumn('ctl', 'double precision', (col) => col.notNull())
    .addColumn('tsb', 'double precision', (col) => col.notNull())
    .addColumn('method', 'text')
    .addPrimaryKeyConstraint('daily_training_load_pkey', ['user_id', 'date'])
    .execute();

  await db.schema
    .createTable('daily_recovery')
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('date', 'date', (col) => col.notNull())
    .addColumn('score', 'double precision')
    .addColumn('status', 'text', (col) =>
      col.notNull().check(sql`status IN ('ready', 'maintain', 'recover', 'insufficient_data')`),
    )
    .addColumn('components', 'jsonb', (col) => col.notNull())
    .addColumn('explanation', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('daily_recovery_pkey', ['user_id', 'date'])
    .execute();

  // The glycogen chain, one row per local day: the state it starts and ends with and its points.
  await db.schema
    .createTable('fuel_days')
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('date', 'date', (col) => col.notNull())
    .addColumn('start_state', 'jsonb', (col) => col.notNull())
    .addColumn('end_state', 'jsonb', (col) => col.notNull())
    .addColumn('points', 'jsonb', (col) => col.notNull())
    .addColumn('assumptions', 'jsonb', (col) => col.notNull())
    .addPrimaryKeyConstraint('fuel_days_pkey', ['user_id', 'date'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['fuel_days', 'daily_recovery', 'daily_training_load', 'analytics_recompute_requests']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

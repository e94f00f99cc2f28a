import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Append-only change records: an input write adds one in its own transaction (user, what changed, from which
  // date); the derived-data drainer deletes the ones it served in the transaction that writes the derived rows.
  await db.schema
    .createTable('derived_changes')
    .addColumn('id', 'bigserial', (col) => col.primaryKey())
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (col) =>
      col
        .notNull()
        .check(sql`kind in ('wellness', 'nutrition', 'workouts', 'profile', 'planned_workouts', 'day_rollover')`),
    )
    .addColumn('from_date', 'date', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  // The drainer finds the users with changes and takes one user's changes at a time.
  await db.schema.createIndex('derived_changes_user_id_id').on('derived_changes').columns(['user_id', 'id']).execute();

  // Replaced by derived_changes: one row per user, upserted by every write, with a pg-boss job per request.
  await db.schema.dropTable('analytics_recompute_requests').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('analytics_recompute_requests')
    .addColumn('user_id', 'uuid', (col) => col.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('from_date', 'date', (col) => col.notNull())
    .addColumn('requested_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('job_queued_at', 'timestamptz')
    .execute();
  await db.schema.dropTable('derived_changes').execute();
}

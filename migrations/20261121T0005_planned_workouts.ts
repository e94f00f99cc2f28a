import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('planned_workouts')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('date', 'date', (col) => col.notNull())
    // `HH:MM`, the user's local wall-clock time; text so it sorts and round-trips as sent.
    .addColumn('time_of_day', 'text', (col) => col.check(sql`time_of_day ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'`))
    .addColumn('sport', 'text', (col) =>
      col
        .notNull()
        .check(sql`sport IN ('ride', 'run', 'swim', 'walk', 'hike', 'row', 'ski', 'strength', 'yoga', 'other')`),
    )
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('duration_secs', 'integer')
    .addColumn('training_stress', 'double precision')
    .addColumn('structure', 'jsonb')
    // Client id (public) of the app that created the workout.
    .addColumn('source', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  // The list's keyset: date, then start time (untimed first: '' sorts before any `HH:MM`), then id.
  await sql`CREATE INDEX planned_workouts_user_order_idx ON planned_workouts (user_id, date, (coalesce(time_of_day, '')), id)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('planned_workouts').ifExists().execute();
}

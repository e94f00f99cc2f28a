import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // What the rules suggest to the athlete after each recompute, and what became of it.
  await db.schema
    .createTable('recommendations')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (col) =>
      col.notNull().check(sql`kind IN ('easier_workout', 'fuel_advice', 'lighter_week')`),
    )
    .addColumn('status', 'text', (col) =>
      col.notNull().check(sql`status IN ('open', 'accepted', 'dismissed', 'expired')`),
    )
    // The planned workout it is about (none for a lighter week); deleting the workout deletes it.
    .addColumn('planned_workout_id', 'uuid', (col) => col.references('planned_workouts.id').onDelete('cascade'))
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('body', 'text', (col) => col.notNull())
    // What fired it (the rule and its numbers) and what accepting it applies.
    .addColumn('evidence', 'jsonb', (col) => col.notNull())
    .addColumn('action', 'jsonb', (col) => col.notNull())
    // One recommendation per situation: the rule names it, so a refresh finds it again.
    .addColumn('dedupe_key', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('decided_at', 'timestamptz')
    .addUniqueConstraint('recommendations_user_dedupe_key', ['user_id', 'dedupe_key'])
    .execute();
  await db.schema
    .createIndex('recommendations_user_status_idx')
    .on('recommendations')
    .columns(['user_id', 'status', 'created_at'])
    .execute();
  await db.schema
    .createIndex('recommendations_planned_workout_idx')
    .on('recommendations')
    .column('planned_workout_id')
    .where('planned_workout_id', 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('recommendations').ifExists().execute();
}

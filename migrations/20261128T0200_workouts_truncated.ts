import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // A workout made of the records a damaged FIT file still held (a recording cut off when the battery died, or
  // stretches that could not be read). Files stored before could not have been damaged: they were refused.
  await sql`alter table workouts add column truncated boolean not null default false`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table workouts drop column truncated`.execute(db);
}

import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // A day with a recorded workout the logged food cannot fuel: the log is incomplete (docs/science.md §3). Existing
  // days are rewritten by the next recompute; until then they read as complete, which is what they were drawn as.
  await sql`alter table fuel_days add column incomplete_log boolean not null default false`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table fuel_days drop column incomplete_log`.execute(db);
}

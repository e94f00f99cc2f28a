import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // The recovery model changed (issue 21: HRV judged today and over 7 days, load as form in % of CTL after 42 days of
  // training history; docs/science.md §2), and a stored day keeps the numbers of the model that wrote it. One change
  // record per user with recovery days asks the derived-data drainer to rewrite them from the first: `wellness`
  // feeds recovery only, and the recompute refreshes the recommendations after it.
  await sql`insert into derived_changes (user_id, kind, from_date)
            select user_id, 'wellness', min(date) from daily_recovery group by user_id`.execute(db);
}

export async function down(): Promise<void> {
  // Nothing to undo: the change records are consumed by the drainer, and a recompute is always safe to have done.
}

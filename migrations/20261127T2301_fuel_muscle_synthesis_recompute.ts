import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // The glycogen model changed (issue 21: muscle stores at most its synthesis rate, slowing as it fills; what it cannot
  // take goes to the liver, then is oxidised; docs/science.md §3), and a stored fuel day keeps the levels of the model
  // that drew it, each day starting from the one before. One change record per user with a stored chain asks the
  // derived-data drainer to redraw it from its first day: kind `nutrition` feeds fuel only.
  await sql`insert into derived_changes (user_id, kind, from_date)
            select user_id, 'nutrition', min(date) from fuel_days group by user_id`.execute(db);
}

export async function down(): Promise<void> {
  // Nothing to undo: the change records are consumed by the drainer, and a recompute is always safe to have done.
}

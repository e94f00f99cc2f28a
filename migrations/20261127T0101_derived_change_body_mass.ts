import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

const KINDS_BEFORE = `'wellness', 'nutrition', 'workouts', 'profile', 'planned_workouts', 'day_rollover'`;

export async function up(db: Kysely<any>): Promise<void> {
  // A wellness write that sends a weight records `body_mass`: the fuel model reads the latest weight, the recovery
  // model never does, so a wellness day without one leaves fuel alone.
  await sql`alter table derived_changes drop constraint derived_changes_kind_check`.execute(db);
  await sql`alter table derived_changes add constraint derived_changes_kind_check
    check (kind in (${sql.raw(KINDS_BEFORE)}, 'body_mass'))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // An older server knows no `body_mass`: its days are wellness days from the same date (fuel included then).
  await sql`update derived_changes set kind = 'wellness' where kind = 'body_mass'`.execute(db);
  await sql`alter table derived_changes drop constraint derived_changes_kind_check`.execute(db);
  await sql`alter table derived_changes add constraint derived_changes_kind_check
    check (kind in (${sql.raw(KINDS_BEFORE)}))`.execute(db);
}

import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // A change record is appended by every input write. Its foreign key to users made each append lock the user's
  // row (FOR KEY SHARE: a tuple lock, a WAL record, and contention on the users page between athletes writing at
  // once), about a sixth of the wellness upsert's cost. The records are a queue, consumed within seconds: a record
  // whose user is gone (a user row deleted by hand; nothing in the service deletes one) is consumed by the next run,
  // which computes nothing for it (recomputeUser).
  await sql`alter table derived_changes drop constraint derived_changes_user_id_fkey`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from derived_changes c where not exists (select from users u where u.id = c.user_id)`.execute(db);
  await sql`
    alter table derived_changes add constraint derived_changes_user_id_fkey
      foreign key (user_id) references users (id) on delete cascade
  `.execute(db);
}

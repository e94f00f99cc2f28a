import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Read-your-writes with a read replica (issue 23): when a grant's tokens last wrote, read where the bearer
  // lookup already joins the grant, so every API process routes that caller's next reads to the primary.
  await sql`alter table oauth_grants add column last_write_at timestamptz`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table oauth_grants drop column last_write_at`.execute(db);
}

import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Sign-in attempts per account (`account:<e-mail, lower case>`) and per client address (`address:<ip>`):
  // how many were counted since the last success (or since the count went stale), and until when
  // further attempts are refused. Every API process reads and writes the same rows.
  await db.schema
    .createTable('login_throttles')
    .addColumn('key', 'text', (col) => col.primaryKey())
    .addColumn('attempts', 'integer', (col) => col.notNull())
    .addColumn('locked_until', 'timestamptz')
    .addColumn('last_attempt_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('login_throttles_last_attempt_at')
    .on('login_throttles')
    .column('last_attempt_at')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('login_throttles').execute();
}

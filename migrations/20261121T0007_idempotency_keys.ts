import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // One row per Idempotency-Key of a REST write, scoped to the caller (app and
  // user). The primary key is the claim: the first request inserts the row,
  // a concurrent one conflicts on it. The response is stored once the first
  // request has answered, and replayed until `expires_at`.
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('claim_id', 'uuid', (col) => col.notNull())
    .addColumn('fingerprint', 'text', (col) => col.notNull())
    .addColumn('method', 'text', (col) => col.notNull())
    .addColumn('path', 'text', (col) => col.notNull())
    .addColumn('request_content_length', 'bigint')
    .addColumn('body_sha256', 'text')
    .addColumn('state', 'text', (col) => col.notNull().check(sql`state IN ('in_progress', 'completed')`))
    .addColumn('response_status', 'integer')
    .addColumn('response_content_type', 'text')
    .addColumn('response_body', 'bytea')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('completed_at', 'timestamptz')
    .addColumn('lease_expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pkey', ['user_id', 'client_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_idx').on('idempotency_keys').column('expires_at').execute();

  // Every REST request now bumps a token and an address counter. Each counter
  // is one hot row: with a logged table every bump waits for its commit's WAL
  // flush while holding the row lock, so concurrent requests of one client
  // queue behind fsyncs (measured: POST /api/wellness 294 -> 85 req/s).
  // Unlogged, a commit that wrote only counters does not wait for a flush.
  // The cost is acceptable for counters: after a crash PostgreSQL empties the
  // table (every window restarts), and standbys do not carry it.
  await sql`ALTER TABLE rate_limit_counters SET UNLOGGED`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE rate_limit_counters SET LOGGED`.execute(db);
  await db.schema.dropTable('idempotency_keys').ifExists().execute();
}

import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Dynamically registered (RFC 7591) clients are shared per redirect-URI set
  // (specification §4.2): the key is a hash of the normalized set, unique
  // among DCR clients so concurrent identical registrations create one client.
  await db.schema.alterTable('oauth_clients').addColumn('redirect_set_key', 'text').execute();
  await sql`CREATE UNIQUE INDEX oauth_clients_dcr_redirect_set_key ON oauth_clients (redirect_set_key) WHERE kind = 'dcr'`.execute(
    db,
  );
  await sql`ALTER TABLE oauth_clients ADD CONSTRAINT oauth_clients_dcr_has_redirect_set_key CHECK (kind <> 'dcr' OR redirect_set_key IS NOT NULL)`.execute(
    db,
  );

  // Fixed-window rate-limit counters, one row per key, shared by every process.
  await db.schema
    .createTable('rate_limit_counters')
    .addColumn('key', 'text', (col) => col.primaryKey())
    .addColumn('count', 'integer', (col) => col.notNull())
    .addColumn('window_started_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('rate_limit_counters_expires_idx')
    .on('rate_limit_counters')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_limit_counters').ifExists().execute();
  await sql`ALTER TABLE oauth_clients DROP CONSTRAINT IF EXISTS oauth_clients_dcr_has_redirect_set_key`.execute(db);
  await sql`DROP INDEX IF EXISTS oauth_clients_dcr_redirect_set_key`.execute(db);
  await db.schema.alterTable('oauth_clients').dropColumn('redirect_set_key').execute();
}

import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // The webhook secret, sealed (AES-256-GCM with the server's key), so the
  // server can check an HMAC signature made with it. The SHA-256 hash stays
  // the one the plain secret is compared with.
  await db.schema.alterTable('oauth_clients').addColumn('webhook_secret_sealed', 'text').execute();

  // One row per request to POST /api/webhooks/oauth/{clientId} of a known app,
  // stored before the answer. `body` is the raw text as received (the bytes a
  // signature covers); headers and query are stored with secrets redacted.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('client_id', 'text', (col) => col.notNull().references('oauth_clients.client_id').onDelete('cascade'))
    .addColumn('received_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('body', 'text', (col) => col.notNull())
    .addColumn('headers', 'jsonb', (col) => col.notNull())
    .addColumn('query', 'jsonb', (col) => col.notNull())
    .addColumn('source_ip', 'text')
    .addColumn('secret_matched', 'boolean', (col) => col.notNull())
    .addColumn('auth_method', 'text', (col) => col.check(sql`auth_method IN ('header', 'query', 'signature')`))
    .addColumn('webhook_id', 'text')
    .addColumn('duplicate_of', 'uuid')
    .addColumn('event', 'text')
    .addColumn('state', 'text', (col) =>
      col
        .notNull()
        .check(
          sql`state IN ('received', 'queued', 'processing', 'processed', 'failed', 'ignored', 'rejected', 'dead_letter')`,
        ),
    )
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('replays', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('error_code', 'text')
    .addColumn('last_error', 'text')
    .addColumn('result', 'jsonb')
    .addColumn('queued_at', 'timestamptz')
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  // The portal lists an app's deliveries newest first, optionally by state.
  await db.schema
    .createIndex('webhook_deliveries_client_received_idx')
    .on('webhook_deliveries')
    .columns(['client_id', 'received_at desc', 'id desc'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_client_state_idx')
    .on('webhook_deliveries')
    .columns(['client_id', 'state', 'received_at desc', 'id desc'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_received_idx')
    .on('webhook_deliveries')
    .column('received_at')
    .execute();

  // X-Webhook-Id claims: the first matched delivery with an id takes it for
  // 7 days; the primary key makes concurrent duplicates conflict.
  await db.schema
    .createTable('webhook_ids')
    .addColumn('client_id', 'text', (col) => col.notNull().references('oauth_clients.client_id').onDelete('cascade'))
    .addColumn('webhook_id', 'text', (col) => col.notNull())
    .addColumn('delivery_id', 'uuid', (col) => col.notNull())
    .addColumn('received_at', 'timestamptz', (col) => col.notNull())
    .addPrimaryKeyConstraint('webhook_ids_pkey', ['client_id', 'webhook_id'])
    .execute();
  await db.schema.createIndex('webhook_ids_received_idx').on('webhook_ids').column('received_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_ids').ifExists().execute();
  await db.schema.dropTable('webhook_deliveries').ifExists().execute();
  await db.schema.alterTable('oauth_clients').dropColumn('webhook_secret_sealed').execute();
}

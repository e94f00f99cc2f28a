import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // A delivery whose secret did not match keeps only the start of its body;
  // these say what was received. Null on rows stored before: their `body` is
  // the whole payload, so its length and hash are computed from it when read.
  await db.schema
    .alterTable('webhook_deliveries')
    .addColumn('body_bytes', 'integer')
    .addColumn('body_sha256', 'text')
    // True when `body` holds a preview (the first few KiB), not the payload.
    .addColumn('body_truncated', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();

  // Signed deliveries without X-Webhook-Id: the first matched delivery of a
  // signature takes it (keyed by the SHA-256 of the signature), so a re-send
  // within the window in which the signature verifies is a duplicate.
  await db.schema
    .createTable('webhook_signatures')
    .addColumn('client_id', 'text', (col) => col.notNull().references('oauth_clients.client_id').onDelete('cascade'))
    .addColumn('signature_sha256', 'text', (col) => col.notNull())
    .addColumn('delivery_id', 'uuid', (col) => col.notNull())
    .addColumn('received_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('webhook_signatures_pkey', ['client_id', 'signature_sha256'])
    .execute();
  await db.schema
    .createIndex('webhook_signatures_received_idx')
    .on('webhook_signatures')
    .column('received_at')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_signatures').ifExists().execute();
  await db.schema
    .alterTable('webhook_deliveries')
    .dropColumn('body_truncated')
    .dropColumn('body_sha256')
    .dropColumn('body_bytes')
    .execute();
}

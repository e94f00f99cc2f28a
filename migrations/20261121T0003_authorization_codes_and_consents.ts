import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oauth_authorization_codes')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('code_hash', 'text', (col) => col.notNull().unique())
    .addColumn('client_id', 'uuid', (col) => col.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (col) => col.notNull())
    .addColumn('scopes', sql`text[]`, (col) => col.notNull())
    .addColumn('resource', 'text')
    .addColumn('code_challenge', 'text', (col) => col.notNull())
    .addColumn('code_challenge_method', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('consumed_at', 'timestamptz')
    // The grant the code was exchanged for: a replayed code revokes it (RFC 6749 §4.1.2).
    .addColumn('grant_id', 'uuid', (col) => col.references('oauth_grants.id').onDelete('set null'))
    .execute();

  // What a user approved for a client and resource, so the consent page is not
  // shown again unless new scopes are asked for (or prompt=consent).
  await db.schema
    .createTable('oauth_consents')
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'uuid', (col) => col.notNull().references('oauth_clients.id').onDelete('cascade'))
    // '' for the REST resource (no resource indicator, or the base URL).
    .addColumn('resource', 'text', (col) => col.notNull())
    .addColumn('scopes', sql`text[]`, (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('oauth_consents_pkey', ['user_id', 'client_id', 'resource'])
    .execute();

  // Refresh-token rotation keeps the chain: each new token points at the one it replaced.
  await db.schema
    .alterTable('oauth_refresh_tokens')
    .addColumn('replaced_by', 'uuid', (col) => col.references('oauth_refresh_tokens.id').onDelete('set null'))
    .execute();
  await db.schema.alterTable('oauth_access_tokens').addColumn('refresh_token_id', 'uuid').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_access_tokens').dropColumn('refresh_token_id').execute();
  await db.schema.alterTable('oauth_refresh_tokens').dropColumn('replaced_by').execute();
  await db.schema.dropTable('oauth_consents').ifExists().execute();
  await db.schema.dropTable('oauth_authorization_codes').ifExists().execute();
}

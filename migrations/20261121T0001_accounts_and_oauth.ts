import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('password_hash', 'text', (col) => col.notNull())
    .addColumn('role', 'text', (col) =>
      col
        .notNull()
        .defaultTo('user')
        .check(sql`role IN ('user', 'admin')`),
    )
    .addColumn('active', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('name', 'text')
    .addColumn('time_zone', 'text', (col) => col.notNull().defaultTo('UTC'))
    .addColumn('weight_kg', 'double precision')
    .addColumn('ftp_watts', 'integer')
    .addColumn('max_hr', 'integer')
    .addColumn('resting_hr', 'integer')
    .addColumn('threshold_hr', 'integer')
    .addColumn('sex', 'text', (col) => col.check(sql`sex IN ('female', 'male', 'other')`))
    .addColumn('birth_date', 'date')
    .addColumn('feature_flags', 'jsonb', (col) => col.notNull().defaultTo(sql`'{"nutrition": true}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`.execute(db);

  await db.schema
    .createTable('sessions')
    .addColumn('id_hash', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('sessions_user_id_idx').on('sessions').column('user_id').execute();

  await db.schema
    .createTable('oauth_clients')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('client_id', 'text', (col) => col.notNull().unique())
    .addColumn('client_secret_hash', 'text')
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('owner_user_id', 'uuid', (col) => col.references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (col) => col.notNull().check(sql`kind IN ('developer', 'app', 'dcr')`))
    .addColumn('is_public', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('redirect_uris', sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'`))
    .addColumn('scopes', sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'`))
    .addColumn('webhook_secret_hash', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  // Each user has at most one built-in developer client (developer tokens).
  await sql`CREATE UNIQUE INDEX oauth_clients_one_developer_client ON oauth_clients (owner_user_id) WHERE kind = 'developer'`.execute(
    db,
  );

  await db.schema
    .createTable('oauth_grants')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('client_id', 'uuid', (col) => col.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('scopes', sql`text[]`, (col) => col.notNull())
    .addColumn('resource', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('oauth_grants_user_idx').on('oauth_grants').columns(['user_id', 'client_id']).execute();

  for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens']) {
    await db.schema
      .createTable(table)
      .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
      .addColumn('grant_id', 'uuid', (col) => col.notNull().references('oauth_grants.id').onDelete('cascade'))
      .addColumn('token_hash', 'text', (col) => col.notNull().unique())
      .addColumn('scopes', sql`text[]`, (col) => col.notNull())
      .addColumn('resource', 'text')
      .addColumn('expires_at', 'timestamptz', (col) => (table === 'oauth_access_tokens' ? col.notNull() : col))
      .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
      .addColumn('revoked_at', 'timestamptz')
      .$call((builder) => (table === 'oauth_refresh_tokens' ? builder.addColumn('rotated_at', 'timestamptz') : builder))
      .execute();
    await db.schema.createIndex(`${table}_grant_idx`).on(table).column('grant_id').execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'oauth_refresh_tokens',
    'oauth_access_tokens',
    'oauth_grants',
    'oauth_clients',
    'sessions',
    'users',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

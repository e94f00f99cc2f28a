import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Client addresses an account signed in from successfully, so a sign-in from one of them is hashed in the lane
  // of known browsers. `key` is SHA-256 of "<user id>:<address>": the address itself is not kept.
  await db.schema
    .createTable('login_known_addresses')
    .addColumn('key', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('last_signed_in_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('login_known_addresses_last_signed_in_at')
    .on('login_known_addresses')
    .column('last_signed_in_at')
    .execute();
  await db.schema.createIndex('login_known_addresses_user_id').on('login_known_addresses').column('user_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('login_known_addresses').execute();
}

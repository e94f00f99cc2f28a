import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Refused requests on /mcp were one row each: 500 random tokens wrote 500 rows. Now one row per minute, client
  // address and reason holds a count, so a flood from one address adds a row a minute.
  await db.schema
    .createTable('mcp_auth_failure_counts')
    .addColumn('at', 'timestamptz', (col) => col.notNull().defaultTo(sql`date_trunc('minute', now())`))
    .addColumn('client_ip', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('reason', 'text', (col) => col.notNull())
    .addColumn('count', 'integer', (col) => col.notNull().defaultTo(1))
    .addPrimaryKeyConstraint('mcp_auth_failure_counts_pkey', ['at', 'client_ip', 'reason'])
    .execute();
  await sql`
    insert into mcp_auth_failure_counts (at, client_ip, reason, count)
    select date_trunc('minute', at), '', reason, count(*)::int from mcp_auth_failures group by 1, 3`.execute(db);
  await db.schema.dropTable('mcp_auth_failures').execute();
  await db.schema.alterTable('mcp_auth_failure_counts').renameTo('mcp_auth_failures').execute();
  await sql`alter table mcp_auth_failures rename constraint mcp_auth_failure_counts_pkey to mcp_auth_failures_pkey`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mcp_auth_failures').renameTo('mcp_auth_failure_counts').execute();
  await db.schema
    .createTable('mcp_auth_failures')
    .addColumn('id', 'bigserial', (col) => col.primaryKey())
    .addColumn('at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('reason', 'text', (col) => col.notNull())
    .execute();
  await sql`
    insert into mcp_auth_failures (at, reason)
    select at, reason from mcp_auth_failure_counts, generate_series(1, count)`.execute(db);
  await db.schema.dropTable('mcp_auth_failure_counts').execute();
  await db.schema.createIndex('mcp_auth_failures_at_idx').on('mcp_auth_failures').column('at').execute();
}

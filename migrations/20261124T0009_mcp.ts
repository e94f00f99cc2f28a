import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Facts an assistant keeps about the athlete (`remember_memory`, `list_memories`).
  await db.schema
    .createTable('memories')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('content', 'text', (col) => col.notNull().check(sql`char_length(content) BETWEEN 1 AND 600`))
    .addColumn('category', 'text', (col) => col.notNull())
    .addColumn('pinned', 'boolean', (col) => col.notNull().defaultTo(false))
    // Public client id of the app (assistant) that stored it.
    .addColumn('source', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('memories_user_idx').on('memories').columns(['user_id', 'created_at']).execute();

  // Durable async jobs behind `generate_report`, `sync_data` and `generate_workout_structure`.
  await db.schema
    .createTable('async_jobs')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('type', 'text', (col) =>
      col.notNull().check(sql`type IN ('report', 'trigger_run', 'structure_generation')`),
    )
    .addColumn('status', 'text', (col) =>
      col.notNull().check(sql`status IN ('queued', 'running', 'completed', 'failed')`),
    )
    .addColumn('input', 'jsonb', (col) => col.notNull())
    .addColumn('progress', 'jsonb')
    .addColumn('result', 'jsonb')
    .addColumn('error', 'text')
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('async_jobs_user_idx').on('async_jobs').columns(['user_id', 'created_at']).execute();

  // Finished reports; the id is the `report` job's id (`report_id`).
  await db.schema
    .createTable('reports')
    .addColumn('id', 'uuid', (col) => col.primaryKey().references('async_jobs.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('period_from', 'date', (col) => col.notNull())
    .addColumn('period_to', 'date', (col) => col.notNull())
    .addColumn('markdown', 'text', (col) => col.notNull())
    .addColumn('data', 'jsonb', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('reports_user_idx').on('reports').columns(['user_id', 'created_at']).execute();

  // One row per tool call, for GET /api/admin/mcp/stats; purged by the maintenance job.
  await db.schema
    .createTable('mcp_executions')
    .addColumn('id', 'bigserial', (col) => col.primaryKey())
    .addColumn('tool', 'text', (col) => col.notNull())
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('user_id', 'uuid', (col) => col.notNull())
    .addColumn('started_at', 'timestamptz', (col) => col.notNull())
    .addColumn('duration_ms', 'double precision', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull().check(sql`status IN ('ok', 'error')`))
    .addColumn('error_code', 'text')
    .addColumn('args_sha256', 'text', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('mcp_executions_started_idx').on('mcp_executions').column('started_at').execute();

  // Refused requests on /mcp (no token, bad token, client off the allowlist, missing scope).
  await db.schema
    .createTable('mcp_auth_failures')
    .addColumn('id', 'bigserial', (col) => col.primaryKey())
    .addColumn('at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('reason', 'text', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('mcp_auth_failures_at_idx').on('mcp_auth_failures').column('at').execute();

  // Why a grant was revoked: the stats count refresh-token reuse (a leaked token) separately.
  await db.schema.alterTable('oauth_grants').addColumn('revoked_reason', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_grants').dropColumn('revoked_reason').execute();
  for (const table of ['mcp_auth_failures', 'mcp_executions', 'reports', 'async_jobs', 'memories']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

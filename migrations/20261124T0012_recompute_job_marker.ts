import { type Kysely } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // When the recompute job serving this request was enqueued; null once a run has started on it.
  // A write finding a fresh value knows a queued job will read its change and sends none.
  await db.schema.alterTable('analytics_recompute_requests').addColumn('job_queued_at', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('analytics_recompute_requests').dropColumn('job_queued_at').execute();
}

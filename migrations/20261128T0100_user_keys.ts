import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

/**
 * Keys ready for distribution by user (issue 23): every table of a user's data
 * gets a primary key that starts with `user_id`, and every foreign key between
 * two such tables carries `user_id` too. PostgreSQL requires the partition key
 * in every unique constraint of a partitioned table (manual, "Table
 * Partitioning", 5.11.2.3 Limitations), and a distributed PostgreSQL such as
 * Citus co-locates rows that join on the distribution column; both need this
 * first. Ids do not change (URLs keep them); rows stay where they are.
 *
 * Webhook deliveries belong to an app until they are processed (they are
 * stored before their body is read, and a rejected one names no user): their
 * key starts with the app's `client_id`. The worker finds a delivery, and an
 * async job, by its id alone (the queue's payload holds only the id), so
 * those two tables keep a plain index on `id`.
 *
 * Not re-keyed: the tables looked up by a secret before any user is known
 * (sessions, OAuth grants, codes and tokens, login addresses, idempotency is
 * already keyed by user), which route a request to its user rather than hold
 * the user's data.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Children first: their foreign keys depend on the parents' primary keys being replaced.
  await sql`
    alter table workout_files drop constraint workout_files_workout_id_fkey;
    alter table workout_streams drop constraint workout_streams_workout_id_fkey;
    alter table nutrition_items drop constraint nutrition_items_log_id_fkey;
    alter table recommendations drop constraint recommendations_planned_workout_id_fkey;
    alter table reports drop constraint reports_id_fkey;

    alter table workouts drop constraint workouts_pkey, add constraint workouts_pkey primary key (user_id, id);
    alter table planned_workouts drop constraint planned_workouts_pkey,
      add constraint planned_workouts_pkey primary key (user_id, id);
    alter table nutrition_logs drop constraint nutrition_logs_pkey,
      add constraint nutrition_logs_pkey primary key (user_id, id);
    alter table async_jobs drop constraint async_jobs_pkey, add constraint async_jobs_pkey primary key (user_id, id);

    alter table workout_files drop constraint workout_files_pkey,
      add constraint workout_files_pkey primary key (user_id, workout_id),
      add constraint workout_files_workout_fkey foreign key (user_id, workout_id)
        references workouts (user_id, id) on delete cascade;
    alter table workout_streams drop constraint workout_streams_pkey,
      add constraint workout_streams_pkey primary key (user_id, workout_id),
      add constraint workout_streams_workout_fkey foreign key (user_id, workout_id)
        references workouts (user_id, id) on delete cascade;
    alter table nutrition_items drop constraint nutrition_items_pkey,
      add constraint nutrition_items_pkey primary key (user_id, id),
      add constraint nutrition_items_log_fkey foreign key (user_id, log_id)
        references nutrition_logs (user_id, id) on delete cascade;
    alter table recommendations drop constraint recommendations_pkey,
      add constraint recommendations_pkey primary key (user_id, id),
      add constraint recommendations_planned_workout_fkey foreign key (user_id, planned_workout_id)
        references planned_workouts (user_id, id) on delete cascade;
    alter table reports drop constraint reports_pkey,
      add constraint reports_pkey primary key (user_id, id),
      add constraint reports_job_fkey foreign key (user_id, id) references async_jobs (user_id, id) on delete cascade;

    alter table memories drop constraint memories_pkey, add constraint memories_pkey primary key (user_id, id);
    alter table mcp_executions drop constraint mcp_executions_pkey,
      add constraint mcp_executions_pkey primary key (user_id, id);
    alter table derived_changes drop constraint derived_changes_pkey,
      add constraint derived_changes_pkey primary key (user_id, id);
    drop index derived_changes_user_id_id;

    alter table webhook_deliveries drop constraint webhook_deliveries_pkey,
      add constraint webhook_deliveries_pkey primary key (client_id, id);
  `.execute(db);

  // Lookups that know only the id: the queue's workers.
  await db.schema.createIndex('async_jobs_id_idx').on('async_jobs').column('id').execute();
  await db.schema.createIndex('webhook_deliveries_id_idx').on('webhook_deliveries').column('id').execute();
  // A log's items, and the recommendations of a planned workout (the cascade's lookup), within one user.
  await db.schema.dropIndex('nutrition_items_log_idx').execute();
  await db.schema
    .createIndex('nutrition_items_log_idx')
    .on('nutrition_items')
    .columns(['user_id', 'log_id', 'position'])
    .execute();
  await db.schema.dropIndex('recommendations_planned_workout_idx').execute();
  await sql`create index recommendations_planned_workout_idx on recommendations (user_id, planned_workout_id)
            where planned_workout_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop index recommendations_planned_workout_idx;
    create index recommendations_planned_workout_idx on recommendations (planned_workout_id)
      where planned_workout_id is not null;
    drop index nutrition_items_log_idx;
    create index nutrition_items_log_idx on nutrition_items (log_id, position);
    drop index webhook_deliveries_id_idx;
    drop index async_jobs_id_idx;

    alter table webhook_deliveries drop constraint webhook_deliveries_pkey,
      add constraint webhook_deliveries_pkey primary key (id);
    create index derived_changes_user_id_id on derived_changes (user_id, id);
    alter table derived_changes drop constraint derived_changes_pkey,
      add constraint derived_changes_pkey primary key (id);
    alter table mcp_executions drop constraint mcp_executions_pkey, add constraint mcp_executions_pkey primary key (id);
    alter table memories drop constraint memories_pkey, add constraint memories_pkey primary key (id);

    alter table reports drop constraint reports_job_fkey, drop constraint reports_pkey,
      add constraint reports_pkey primary key (id);
    alter table recommendations drop constraint recommendations_planned_workout_fkey,
      drop constraint recommendations_pkey, add constraint recommendations_pkey primary key (id);
    alter table nutrition_items drop constraint nutrition_items_log_fkey, drop constraint nutrition_items_pkey,
      add constraint nutrition_items_pkey primary key (id);
    alter table workout_streams drop constraint workout_streams_workout_fkey, drop constraint workout_streams_pkey,
      add constraint workout_streams_pkey primary key (workout_id);
    alter table workout_files drop constraint workout_files_workout_fkey, drop constraint workout_files_pkey,
      add constraint workout_files_pkey primary key (workout_id);

    alter table async_jobs drop constraint async_jobs_pkey, add constraint async_jobs_pkey primary key (id);
    alter table nutrition_logs drop constraint nutrition_logs_pkey, add constraint nutrition_logs_pkey primary key (id);
    alter table planned_workouts drop constraint planned_workouts_pkey,
      add constraint planned_workouts_pkey primary key (id);
    alter table workouts drop constraint workouts_pkey, add constraint workouts_pkey primary key (id);

    alter table reports add constraint reports_id_fkey foreign key (id) references async_jobs (id) on delete cascade;
    alter table recommendations add constraint recommendations_planned_workout_id_fkey foreign key (planned_workout_id)
      references planned_workouts (id) on delete cascade;
    alter table nutrition_items add constraint nutrition_items_log_id_fkey foreign key (log_id)
      references nutrition_logs (id) on delete cascade;
    alter table workout_streams add constraint workout_streams_workout_id_fkey foreign key (workout_id)
      references workouts (id) on delete cascade;
    alter table workout_files add constraint workout_files_workout_id_fkey foreign key (workout_id)
      references workouts (id) on delete cascade;
  `.execute(db);
}

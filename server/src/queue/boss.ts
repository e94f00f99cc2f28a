import { fromKysely, PgBoss, type Job, type SendOptions } from 'pg-boss';
import { type RawBuilder, sql } from 'kysely';
import { preparedStatementMarker, type DbOrTrx } from '../db/database.ts';
import type { BatchStatement } from '../db/statement-batch.ts';
import type { Logger } from '../logger.ts';
import type { QueueDefinition } from './queue-definition.ts';
import { ALL_QUEUES, SCHEDULES } from './queues.ts';

export const BOSS_SCHEMA = 'pgboss';

export interface JobContext {
  readonly logger: Logger;
  readonly jobId: string;
}
export type JobHandler<TPayload> = (payload: TPayload, context: JobContext) => Promise<void>;

export interface QueueHandlerBinding<TPayload> {
  readonly queue: QueueDefinition<TPayload>;
  // Method syntax: a list of bindings holds handlers of different payload types.
  handle(payload: TPayload, context: JobContext): Promise<void>;
}

/** Pairs a queue with its handler; the payload type must agree. */
export function bindHandler<TPayload>(
  queue: QueueDefinition<TPayload>,
  handle: JobHandler<TPayload>,
): QueueHandlerBinding<TPayload> {
  return { queue, handle };
}

export interface StartBossOptions {
  readonly connectionString: string;
  readonly logger: Logger;
  /** Run maintenance and cron (worker processes); API-only processes just send. */
  readonly maintenance: boolean;
  /** pg-boss's own connections (PACER_QUEUE_POOL_SIZE; default 5). */
  readonly poolSize?: number;
}

export async function startBoss(options: StartBossOptions): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: options.connectionString,
    schema: BOSS_SCHEMA,
    application_name: 'pacer-queue',
    max: options.poolSize ?? 5,
    // Wake workers the moment a job is committed instead of polling (docs/design.md §5).
    useListenNotify: options.maintenance,
    supervise: options.maintenance,
    // The supervise/monitor pass is what retries jobs whose worker died
    // (expired) and dead-letters them; pg-boss runs it every 60 s by default,
    // which left a killed worker's webhook deliveries in `processing` for up
    // to 90 s after their 30 s expiry.
    superviseIntervalSeconds: 10,
    monitorIntervalSeconds: 10,
    schedule: options.maintenance,
  });
  boss.on('error', (error) => options.logger.error({ err: error }, 'queue error'));
  boss.on('warning', (warning) => options.logger.warn({ warning }, 'queue warning'));
  await boss.start();
  for (const queue of ALL_QUEUES) {
    await boss.createQueue(queue.name, queue.options);
    // A queue's policy is fixed when it is created (pg-boss refuses to change it); the rest follows the code.
    const { policy: _policy, ...changeable } = queue.options;
    await boss.updateQueue(queue.name, changeable);
  }
  return boss;
}

export async function installSchedules(boss: PgBoss): Promise<void> {
  for (const schedule of SCHEDULES) {
    await boss.schedule(schedule.queue.name, schedule.cron, schedule.payload, { tz: 'UTC' });
  }
}

/**
 * `fromKysely`, with pg-boss's job insert run as a named prepared statement:
 * its text is the same on every send with the same options, and PostgreSQL
 * planning it on every send cost more than running it (measured on webhook
 * ingest: 1.34 ms unprepared, 0.46 ms prepared).
 */
const SEND_MARKER = preparedStatementMarker('pgboss_send');

function preparedQueueDb(db: DbOrTrx): ReturnType<typeof fromKysely> {
  const executor = fromKysely(db);
  return { executeSql: (text, values) => executor.executeSql(`${text.trimEnd()} ${SEND_MARKER}`, values) };
}

/**
 * Enqueue a job in the caller's transaction (or on the pool): the job exists
 * exactly when the rows it belongs to were committed.
 */
export async function enqueue<TPayload>(
  boss: PgBoss,
  db: DbOrTrx,
  queue: QueueDefinition<TPayload>,
  payload: NoInfer<TPayload>,
  options: Omit<SendOptions, 'db'> = {},
): Promise<string | null> {
  const data = queue.payload.parse(payload) as object;
  return boss.send(queue.name, data, { ...options, db: preparedQueueDb(db) });
}

/**
 * The statement `enqueue` would run, without running it: for a write that
 * sends it along with its own statements in one round trip and one
 * transaction (`runAtomically`). pg-boss still builds the job and its SQL;
 * only the execution is the caller's.
 */
export async function enqueueStatement<TPayload>(
  boss: PgBoss,
  queue: QueueDefinition<TPayload>,
  payload: NoInfer<TPayload>,
  options: Omit<SendOptions, 'db'> = {},
): Promise<BatchStatement> {
  const data = queue.payload.parse(payload) as object;
  let captured: BatchStatement | undefined;
  const capture = {
    executeSql: (text: string, values: unknown[] = []) => {
      // One insert per send is pg-boss's way (a second one only for singletonNextSlot, which is not used).
      if (captured) return Promise.reject(new Error(`pg-boss ran a second statement to send a ${queue.name} job`));
      captured = { sql: `${text.trimEnd()} ${SEND_MARKER}`, parameters: values };
      // What a successful insert answers: one row with the job's id (unknown until it runs).
      return Promise.resolve({ rows: [{ id: null }] });
    },
  };
  await boss.send(queue.name, data, { ...options, db: capture });
  if (!captured) throw new Error(`pg-boss ran no statement to send a ${queue.name} job`);
  return captured;
}

/** Where pg-boss's insert reads the jobs to insert from (`insertJobs` in pg-boss's plans.js). */
const JOB_ROWS = 'json_to_recordset($1::text::json)';

/**
 * `statement` (an `enqueueStatement`) turned into one that inserts its job
 * only when `condition` holds as it runs, e.g. on what an earlier statement
 * of the same transaction wrote: the job rows it reads become none
 * otherwise. `condition` gets one extra parameter, `value`, as `$n`, and
 * must add none of its own. Checked against pg-boss's SQL on every call: a
 * pg-boss whose insert reads its jobs another way fails here, loudly.
 */
export function sendOnlyWhen(
  db: DbOrTrx,
  statement: BatchStatement,
  condition: (value: RawBuilder<unknown>) => RawBuilder<boolean>,
  value: unknown,
): BatchStatement {
  const at = statement.sql.indexOf(JOB_ROWS);
  if (at < 0 || statement.sql.includes(JOB_ROWS, at + 1)) {
    throw new Error(`pg-boss's send statement does not read its jobs from ${JOB_ROWS} once; see sendOnlyWhen`);
  }
  const compiled = condition(sql.raw(`$${statement.parameters.length + 1}`)).compile(db);
  if (compiled.parameters.length > 0) throw new Error('sendOnlyWhen: the condition must take no parameters of its own');
  const rows = `json_to_recordset(case when ${compiled.sql} then $1::text::json else '[]'::json end)`;
  return {
    sql: statement.sql.slice(0, at) + rows + statement.sql.slice(at + JOB_ROWS.length),
    parameters: [...statement.parameters, value],
  };
}

/** Start one worker per bound queue; each job's payload is validated before its handler runs. */
export async function startWorkers(
  boss: PgBoss,
  bindings: readonly QueueHandlerBinding<unknown>[],
  logger: Logger,
): Promise<void> {
  for (const binding of bindings) {
    const { queue } = binding;
    await boss.work(queue.name, queue.work, async (jobs: Job<object>[]) => {
      for (const job of jobs) {
        const jobLogger = logger.child({ queue: queue.name, jobId: job.id });
        const parsed = queue.payload.safeParse(job.data);
        if (!parsed.success) {
          jobLogger.error({ issues: parsed.error.issues }, 'job payload rejected');
          throw new Error(`invalid payload for ${queue.name}`);
        }
        await binding.handle(parsed.data, { logger: jobLogger, jobId: job.id });
      }
    });
  }
}

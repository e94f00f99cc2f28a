import { fromKysely, PgBoss, type Job, type SendOptions } from 'pg-boss';
import { preparedStatementMarker, type DbOrTrx } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { QueueDefinition } from './queue-definition.ts';
import { ALL_QUEUES, RETIRED_QUEUES, SCHEDULES } from './queues.ts';

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
  // A no-op once gone: pg-boss ignores a queue it does not know.
  for (const name of RETIRED_QUEUES) await boss.deleteQueue(name);
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

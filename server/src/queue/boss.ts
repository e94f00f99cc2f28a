import { fromKysely, PgBoss, type ConstructorOptions, type DatabaseOptions, type Job, type SendOptions } from 'pg-boss';
// pg-boss's own connection handling (pool, LISTEN with heartbeat and reconnect), not part of its
// documented API: SessionListenDb reuses it rather than writing a second LISTEN client.
import PgBossDb from 'pg-boss/dist/db.js';
import { preparedStatementMarker, type DbOrTrx } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { StartupError } from '../startup-error.ts';
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
  /** pg-boss's pool (DATABASE_URL: through a transaction-mode pooler, if there is one). */
  readonly connectionString: string;
  /**
   * Where the LISTEN connection of a worker goes (PACER_DATABASE_SESSION_URL):
   * a LISTEN lives in a server session, which a transaction-mode pooler hands
   * to other clients between transactions. Unset: `connectionString`.
   */
  readonly sessionConnectionString?: string;
  readonly logger: Logger;
  /** Run maintenance and cron (worker processes); API-only processes just send. */
  readonly maintenance: boolean;
  /** pg-boss's own connections (PACER_QUEUE_POOL_SIZE; default 5). */
  readonly poolSize?: number;
  /**
   * Install or migrate pg-boss's schema and bring Pacer's queues up to date
   * (writes). False: write nothing, only check that both are, and throw a
   * `QueuesNotReady` if not.
   */
  readonly migrate: boolean;
}

/** The queue schema or a queue is missing and this process may not create it (PACER_MIGRATE_ON_START=false, or an API process). */
export class QueuesNotReady extends StartupError {
  constructor(cause: string, options?: ErrorOptions) {
    super(
      'database_not_migrated',
      cause,
      'Run `npm run pacer -- migrate` against this database (or start a worker with PACER_MIGRATE_ON_START=true), then start again',
      options,
    );
  }
}

/**
 * pg-boss's connection handling with its LISTEN connection on another URL:
 * the pool's queries go through the pooler, the LISTEN session goes direct.
 * pg-boss opens and closes it as its own (it checks for its `Db`'s marker).
 */
class SessionListenDb extends PgBossDb {
  readonly #session: PgBossDb;

  constructor(pooled: DatabaseOptions, session: DatabaseOptions) {
    super(pooled);
    this.#session = new PgBossDb(session);
    this.#session.on('error', (error: unknown) => this.emit('error', error));
  }

  override async open(): Promise<void> {
    await super.open();
    // Opens a pool that connects only if queried; listen() makes a pg.Client of its own.
    await this.#session.open();
  }

  override async close(): Promise<void> {
    if (this.#session.opened) await this.#session.close();
    await super.close();
  }

  override listen(...args: Parameters<PgBossDb['listen']>): ReturnType<PgBossDb['listen']> {
    return this.#session.listen(...args);
  }
}

function bossConnection(options: StartBossOptions): ConstructorOptions {
  const pooled = {
    connectionString: options.connectionString,
    application_name: 'pacer-queue',
    max: options.poolSize ?? 5,
  };
  const session = options.sessionConnectionString;
  if (session === undefined || session === options.connectionString) return pooled;
  return {
    db: new SessionListenDb(pooled, { connectionString: session, application_name: 'pacer-queue-listen', max: 1 }),
  };
}

/** What pg-boss's start throws when its schema is missing or older than this pg-boss (contractor.check). */
function isSchemaNotReady(error: unknown): boolean {
  return error instanceof Error && /pg-boss is not installed|requires migrations/.test(error.message);
}

export async function startBoss(options: StartBossOptions): Promise<PgBoss> {
  const boss = new PgBoss({
    ...bossConnection(options),
    schema: BOSS_SCHEMA,
    // Off: pg-boss only checks its schema version, and runs no background migration (which writes).
    migrate: options.migrate,
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
  try {
    await boss.start();
    if (options.migrate) await createQueues(boss);
    else await checkQueues(boss);
  } catch (error) {
    await boss.stop({ graceful: false, close: true }).catch(() => undefined);
    if (isSchemaNotReady(error)) {
      throw new QueuesNotReady(
        `the job queue's schema (pg-boss) is ${(error as Error).message.includes('not installed') ? 'not installed' : 'older than this version'}`,
        { cause: error },
      );
    }
    throw error;
  }
  return boss;
}

/** Create the queues, bring their options up to date, drop retired ones: part of migrating. */
async function createQueues(boss: PgBoss): Promise<void> {
  for (const queue of ALL_QUEUES) {
    await boss.createQueue(queue.name, queue.options);
    // A queue's policy is fixed when it is created (pg-boss refuses to change it); the rest follows the code.
    const { policy: _policy, ...changeable } = queue.options;
    await boss.updateQueue(queue.name, changeable);
  }
  // A no-op once gone: pg-boss ignores a queue it does not know.
  for (const name of RETIRED_QUEUES) await boss.deleteQueue(name);
}

/** Every queue this version sends to exists: read only, for a process that does not migrate. */
async function checkQueues(boss: PgBoss): Promise<void> {
  const names = ALL_QUEUES.map((queue) => queue.name);
  const found = new Set((await boss.getQueues(names)).map((queue) => queue.name));
  const missing = names.filter((name) => !found.has(name));
  if (missing.length > 0) throw new QueuesNotReady(`the job queue ${missing.join(', ')} does not exist`);
}

/**
 * The queue part of `migrate`: install or migrate pg-boss's schema and create
 * the queues, with a pg-boss instance that does nothing else and stops.
 */
export async function migrateQueues(options: {
  readonly connectionString: string;
  readonly logger: Logger;
}): Promise<void> {
  const boss = await startBoss({ ...options, maintenance: false, poolSize: 1, migrate: true });
  await boss.stop({ graceful: false, close: true });
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

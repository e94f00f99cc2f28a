import type {
  AsyncJobProgress,
  AsyncJobStatus,
  AsyncJobStatusInput,
  AsyncJobStatusValue,
  AsyncJobType,
} from '@pacer/contract';
import type { Transaction } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Config } from '../../config.ts';
import type { Database, Db } from '../../db/database.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { AsyncJobRow } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import { UUID_PATTERN } from '../../lib/cursor.ts';
import type { Logger } from '../../logger.ts';
import { enqueue } from '../../queue/boss.ts';
import { asyncJobQueue } from '../../queue/queues.ts';
import type { Actor } from '../../lib/actor.ts';
import {
  completeAsyncJob,
  failAsyncJob,
  findUserAsyncJob,
  insertAsyncJob,
  setAsyncJobProgress,
  startAsyncJobAttempt,
} from './async-jobs.repository.ts';

/** How long a caller should wait before polling a job that has not finished. */
export const POLL_AFTER_SECS = { queued: 2, running: 1 } as const satisfies Record<
  Exclude<AsyncJobStatusValue, 'completed' | 'failed'>,
  number
>;

export interface StartAsyncJobDeps {
  readonly db: Db;
  readonly boss: PgBoss;
}

/**
 * Record the job and enqueue its pg-boss job in one transaction (docs/design.md
 * §2): a job row exists exactly when a worker will pick it up.
 */
export async function startAsyncJob(
  deps: StartAsyncJobDeps,
  actor: Actor,
  type: AsyncJobType,
  input: Record<string, unknown>,
): Promise<AsyncJobRow> {
  return inTransaction(deps.db, async (trx) => {
    const job = await insertAsyncJob(trx, { userId: actor.userId, clientId: actor.source, type, input });
    await enqueue(deps.boss, trx, asyncJobQueue, { jobId: job.id });
    return job;
  });
}

/** `get_async_job_status`: an unknown id, another user's, or one of another type is `not_found`. */
export async function getAsyncJobStatus(db: Db, actor: Actor, input: AsyncJobStatusInput): Promise<AsyncJobStatus> {
  const job = UUID_PATTERN.test(input.job_id)
    ? await findUserAsyncJob(db, actor.userId, input.job_type, input.job_id)
    : undefined;
  if (!job) throw new AppError('not_found', `No ${input.job_type} job ${input.job_id}.`);
  return toAsyncJobStatus(job);
}

export function toAsyncJobStatus(job: AsyncJobRow): AsyncJobStatus {
  const finished = job.status === 'completed' || job.status === 'failed';
  return {
    job_type: job.type,
    job_id: job.id,
    status: job.status,
    completed: job.status === 'completed',
    failed: job.status === 'failed',
    ...(job.status === 'running' && job.progress ? { progress: job.progress } : {}),
    poll_after_seconds: finished ? 0 : POLL_AFTER_SECS[job.status as keyof typeof POLL_AFTER_SECS],
    ...(job.error !== null ? { error: job.error } : {}),
    ...(job.status === 'completed' && job.result ? { result: job.result } : {}),
    created_at: new Date(job.createdAt).toISOString(),
    ...(job.startedAt ? { started_at: new Date(job.startedAt).toISOString() } : {}),
    ...(job.completedAt ? { completed_at: new Date(job.completedAt).toISOString() } : {}),
  };
}

export interface AsyncJobRunContext {
  readonly db: Db;
  /** For runners whose writes enqueue further jobs (in the completing transaction). */
  readonly boss: PgBoss;
  readonly config: Config;
  readonly job: AsyncJobRow;
  readonly logger: Logger;
  readonly progress: (step: number, total: number, message: string) => Promise<void>;
}

/**
 * What a job produced: its result (shown by `get_async_job_status`) and the
 * writes that go with it, committed in the transaction that marks the job
 * completed, so a job killed half-way has written nothing.
 */
export interface AsyncJobOutcome {
  readonly result: Record<string, unknown>;
  /** The job's writes; what it returns is added to `result` (counts known only once written). */
  write?(trx: Transaction<Database>): Promise<Record<string, unknown> | void>;
}

export type AsyncJobRunner = (context: AsyncJobRunContext) => Promise<AsyncJobOutcome>;

/** Which service runs which kind of async job (wired in job-handlers.ts). */
export type AsyncJobRunners = Readonly<Record<AsyncJobType, AsyncJobRunner>>;

export interface RunAsyncJobOptions {
  readonly boss: PgBoss;
  readonly config: Config;
  readonly runners: AsyncJobRunners;
  /** pg-boss will not retry after this attempt: a transient error fails the job for good. */
  readonly lastAttempt: boolean;
  readonly logger: Logger;
}

export type AsyncJobRunOutcome = 'completed' | 'failed' | 'skipped' | 'retry';

/** The job left `running` while it ran (it failed for good meanwhile): nothing of it is kept. */
class JobNotRunning extends Error {}

/** True for errors a retry cannot cure: the services' own rules. */
function isFinal(error: unknown): error is AppError {
  return error instanceof AppError && error.code !== 'internal_error' && error.code !== 'service_unavailable';
}

/** Work one job: take it, run it, and record the outcome; transient failures are left to pg-boss to retry. */
export async function runAsyncJob(db: Db, jobId: string, options: RunAsyncJobOptions): Promise<AsyncJobRunOutcome> {
  const job = await startAsyncJobAttempt(db, jobId);
  if (!job) return 'skipped';
  const logger = options.logger.child({ asyncJobId: job.id, asyncJobType: job.type, attempt: job.attempts });
  const context: AsyncJobRunContext = {
    db,
    boss: options.boss,
    config: options.config,
    job,
    logger,
    progress: (step, total, message) => {
      const progress: AsyncJobProgress = { step, total, message };
      return setAsyncJobProgress(db, job.id, progress);
    },
  };
  try {
    const outcome = await options.runners[job.type](context);
    await db.transaction().execute(async (trx) => {
      const written = await outcome.write?.(trx);
      // Failed or dead-lettered meanwhile: roll the job's writes back with it.
      if (!(await completeAsyncJob(trx, job.id, { ...outcome.result, ...(written ?? {}) }))) throw new JobNotRunning();
    });
    return 'completed';
  } catch (error) {
    if (error instanceof JobNotRunning) return 'skipped';
    if (isFinal(error) || options.lastAttempt) {
      const message = isFinal(error) ? error.message : 'The job failed on every attempt; try again later.';
      logger.warn({ err: error }, 'async job failed');
      await failAsyncJob(db, job.id, message);
      return 'failed';
    }
    logger.warn({ err: error }, 'async job attempt failed; it will be retried');
    return 'retry';
  }
}

/** A job pg-boss gave up on (its workers kept dying): failed, never left `running`. */
export async function deadLetterAsyncJob(db: Db, jobId: string): Promise<boolean> {
  return failAsyncJob(db, jobId, 'The job could not be finished; try again later.');
}

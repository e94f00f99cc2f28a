import type { JobResult, PgBoss } from 'pg-boss';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import { asyncJobDeadLetterQueue, asyncJobQueue } from '../../queue/queues.ts';
import { type AsyncJobRunners, deadLetterAsyncJob, runAsyncJob } from './async-jobs.service.ts';

/**
 * The async-job worker: woken by NOTIFY, works a few jobs at a time, each
 * settled on its own. pg-boss heartbeats each job while its handler runs, so
 * a job whose worker was killed is handed to another one (`heartbeatSeconds`).
 * `runners` come from the process wiring (job-handlers.ts): the modules that
 * run jobs sit above this one.
 */
export async function startAsyncJobWorkers(
  boss: PgBoss,
  deps: { readonly db: Db; readonly config: Config; readonly logger: Logger; readonly runners: AsyncJobRunners },
) {
  const logger = deps.logger.child({ queue: asyncJobQueue.name });
  await boss.work(
    asyncJobQueue.name,
    { ...asyncJobQueue.work, perJobResults: true, includeMetadata: true },
    async (jobs): Promise<JobResult[]> =>
      Promise.all(
        jobs.map(async (job): Promise<JobResult> => {
          const parsed = asyncJobQueue.payload.safeParse(job.data);
          if (!parsed.success) return { id: job.id, status: 'deadletter', output: { error: 'invalid payload' } };
          try {
            const outcome = await runAsyncJob(deps.db, parsed.data.jobId, {
              boss,
              config: deps.config,
              runners: deps.runners,
              lastAttempt: job.retryCount >= job.retryLimit,
              logger,
            });
            return outcome === 'retry'
              ? { id: job.id, status: 'failed', output: { error: 'transient failure' } }
              : { id: job.id, status: 'completed' };
          } catch (error) {
            // The database was unreachable even for recording the outcome: pg-boss retries.
            logger.error({ err: error, jobId: job.id }, 'async job failed');
            return { id: job.id, status: 'failed', output: { error: String(error) } };
          }
        }),
      ),
  );
  await boss.work(asyncJobDeadLetterQueue.name, asyncJobDeadLetterQueue.work, async (jobs) => {
    for (const job of jobs) {
      const parsed = asyncJobDeadLetterQueue.payload.safeParse(job.data);
      if (parsed.success && (await deadLetterAsyncJob(deps.db, parsed.data.jobId))) {
        logger.warn({ asyncJobId: parsed.data.jobId }, 'async job dead-lettered');
      }
    }
  });
}

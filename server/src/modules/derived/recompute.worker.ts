import type { JobResult, PgBoss } from 'pg-boss';
import type { Db } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import { analyticsRecomputeQueue } from '../../queue/queues.ts';
import { recomputeUser } from './recompute.service.ts';

/** The recompute worker: woken by NOTIFY; one user's recomputes take turns (a per-user lock in the service). */
export async function startRecomputeWorkers(boss: PgBoss, deps: { readonly db: Db; readonly logger: Logger }) {
  const logger = deps.logger.child({ queue: analyticsRecomputeQueue.name });
  await boss.work(
    analyticsRecomputeQueue.name,
    { ...analyticsRecomputeQueue.work, perJobResults: true, includeMetadata: true },
    async (jobs): Promise<JobResult[]> =>
      Promise.all(
        jobs.map(async (job): Promise<JobResult> => {
          const parsed = analyticsRecomputeQueue.payload.safeParse(job.data);
          if (!parsed.success) return { id: job.id, status: 'deadletter', output: { error: 'invalid payload' } };
          try {
            const outcome = await recomputeUser(deps.db, parsed.data.userId);
            if (outcome) logger.debug({ userId: parsed.data.userId, ...outcome }, 'derived data recomputed');
            return { id: job.id, status: 'completed' };
          } catch (error) {
            logger.error({ err: error, userId: parsed.data.userId }, 'recompute failed; it will be retried');
            return { id: job.id, status: 'failed', output: { error: String(error) } };
          }
        }),
      ),
  );
}

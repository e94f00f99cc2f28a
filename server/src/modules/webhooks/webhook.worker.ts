import type { JobResult, PgBoss } from 'pg-boss';
import type { Db } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import { webhookDeadLetterQueue, webhookDeliveryQueue } from '../../queue/queues.ts';
import { deadLetter, processDelivery } from './webhook-processing.service.ts';

/**
 * The delivery worker: woken by NOTIFY, takes up to `batchSize` jobs at a
 * time and works them concurrently; each job is settled on its own
 * (`perJobResults`), so one transient failure retries only its delivery.
 */
export async function startWebhookWorkers(boss: PgBoss, deps: { readonly db: Db; readonly logger: Logger }) {
  const logger = deps.logger.child({ queue: webhookDeliveryQueue.name });
  await boss.work(
    webhookDeliveryQueue.name,
    { ...webhookDeliveryQueue.work, perJobResults: true, includeMetadata: true },
    async (jobs): Promise<JobResult[]> =>
      Promise.all(
        jobs.map(async (job): Promise<JobResult> => {
          const parsed = webhookDeliveryQueue.payload.safeParse(job.data);
          if (!parsed.success) {
            logger.error({ jobId: job.id, issues: parsed.error.issues }, 'job payload rejected');
            return { id: job.id, status: 'deadletter', output: { error: 'invalid payload' } };
          }
          try {
            const outcome = await processDelivery(deps.db, parsed.data.deliveryId, {
              lastAttempt: job.retryCount >= job.retryLimit,
              logger,
            });
            return outcome.kind === 'retry'
              ? { id: job.id, status: 'failed', output: { error: outcome.error } }
              : { id: job.id, status: 'completed' };
          } catch (error) {
            // The database was unreachable even for recording the outcome: let pg-boss retry.
            logger.error({ err: error, jobId: job.id }, 'webhook delivery job failed');
            return {
              id: job.id,
              status: 'failed',
              output: { error: error instanceof Error ? error.message : String(error) },
            };
          }
        }),
      ),
  );

  await boss.work(webhookDeadLetterQueue.name, webhookDeadLetterQueue.work, async (jobs) => {
    for (const job of jobs) {
      const parsed = webhookDeadLetterQueue.payload.safeParse(job.data);
      if (!parsed.success) continue;
      if (await deadLetter(deps.db, parsed.data.deliveryId)) {
        logger.warn({ deliveryId: parsed.data.deliveryId }, 'webhook delivery dead-lettered');
      }
    }
  });
}

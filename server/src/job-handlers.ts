import type { Db } from './db/database.ts';
import { purgeExpired } from './modules/maintenance/maintenance.service.ts';
import { purgeOldDeliveries } from './modules/webhooks/webhook-retention.service.ts';
import { bindHandler } from './queue/boss.ts';
import { analyticsRolloverQueue, purgeExpiredQueue, purgeWebhooksQueue } from './queue/queues.ts';
import { recordDayRollovers } from './modules/derived/recompute.service.ts';
import type { PgBoss } from 'pg-boss';
import type { AsyncJobRunners } from './modules/async-jobs/async-jobs.service.ts';
import { runStructureGenerationJob } from './modules/planned-workouts/structure-generation.service.ts';
import { runReportJob } from './modules/reports/report-generation.service.ts';
import { runSyncJob } from './modules/webhooks/webhook-sync.service.ts';

/** Which service handles which queue (the webhook delivery worker is in modules/webhooks/webhook.worker.ts). */
export function jobHandlers(deps: { readonly db: Db; readonly boss: PgBoss; readonly webhookRetentionDays: number }) {
  return [
    bindHandler(purgeExpiredQueue, async (payload, context) => {
      const removed = await purgeExpired(deps.db, payload.graceDays);
      context.logger.info(removed, 'purged expired rows');
    }),
    bindHandler(analyticsRolloverQueue, async (_payload, context) => {
      const users = await recordDayRollovers(deps.db);
      if (users > 0) context.logger.info({ users }, 'derived data rolled over to a new day');
    }),
    bindHandler(purgeWebhooksQueue, async (_payload, context) => {
      const removed = await purgeOldDeliveries(deps.db, deps.webhookRetentionDays);
      context.logger.info(removed, 'purged old webhook deliveries');
    }),
  ];
}

/** Which service runs which kind of async job (modules/async-jobs runs them; the runners sit above it). */
export const ASYNC_JOB_RUNNERS: AsyncJobRunners = {
  report: runReportJob,
  trigger_run: runSyncJob,
  structure_generation: runStructureGenerationJob,
};

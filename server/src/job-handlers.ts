import type { Db } from './db/database.ts';
import { purgeExpired } from './modules/accounts/maintenance.service.ts';
import { purgeOldDeliveries } from './modules/webhooks/webhook-retention.service.ts';
import { bindHandler } from './queue/boss.ts';
import { analyticsRolloverQueue, purgeExpiredQueue, purgeWebhooksQueue } from './queue/queues.ts';
import { requestDayRollovers } from './modules/derived/recompute-request.ts';
import type { PgBoss } from 'pg-boss';

/** Which service handles which queue (the webhook delivery worker is in modules/webhooks/webhook.worker.ts). */
export function jobHandlers(deps: { readonly db: Db; readonly boss: PgBoss; readonly webhookRetentionDays: number }) {
  return [
    bindHandler(purgeExpiredQueue, async (payload, context) => {
      const removed = await purgeExpired(deps.db, payload.graceDays);
      context.logger.info(removed, 'purged expired rows');
    }),
    bindHandler(analyticsRolloverQueue, async (_payload, context) => {
      const users = await requestDayRollovers(deps);
      if (users > 0) context.logger.info({ users }, 'derived data rolled over to a new day');
    }),
    bindHandler(purgeWebhooksQueue, async (_payload, context) => {
      const removed = await purgeOldDeliveries(deps.db, deps.webhookRetentionDays);
      context.logger.info(removed, 'purged old webhook deliveries');
    }),
  ];
}

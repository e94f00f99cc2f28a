import type { Db } from '../db/database.ts';
import { purgeExpired } from '../modules/accounts/maintenance.service.ts';
import { purgeOldDeliveries } from '../modules/webhooks/webhook-retention.service.ts';
import { bindHandler } from './boss.ts';
import { purgeExpiredQueue, purgeWebhooksQueue } from './queues.ts';

/** Which service handles which queue (the webhook delivery worker is in modules/webhooks/webhook.worker.ts). */
export function jobHandlers(deps: { readonly db: Db; readonly webhookRetentionDays: number }) {
  return [
    bindHandler(purgeExpiredQueue, async (payload, context) => {
      const removed = await purgeExpired(deps.db, payload.graceDays);
      context.logger.info(removed, 'purged expired rows');
    }),
    bindHandler(purgeWebhooksQueue, async (_payload, context) => {
      const removed = await purgeOldDeliveries(deps.db, deps.webhookRetentionDays);
      context.logger.info(removed, 'purged old webhook deliveries');
    }),
  ];
}

import type { Db } from '../../db/database.ts';
import { WEBHOOK_ID_WINDOW_DAYS } from './webhook-ingest.service.ts';
import { deleteDeliveriesReceivedBefore, deleteWebhookIdsReceivedBefore } from './webhooks.repository.ts';

const DAY_MS = 86_400_000;

/**
 * Retention (`PACER_WEBHOOK_RETENTION_DAYS`): deliveries received more than
 * `retentionDays` ago, whatever their state, and `X-Webhook-Id` claims past
 * their 7-day window.
 */
export async function purgeOldDeliveries(
  db: Db,
  retentionDays: number,
  now: Date = new Date(),
): Promise<{ readonly deliveries: number; readonly webhookIds: number }> {
  return db.transaction().execute(async (trx) => ({
    deliveries: await deleteDeliveriesReceivedBefore(trx, new Date(now.getTime() - retentionDays * DAY_MS)),
    webhookIds: await deleteWebhookIdsReceivedBefore(trx, new Date(now.getTime() - WEBHOOK_ID_WINDOW_DAYS * DAY_MS)),
  }));
}

import type { Db } from '../../db/database.ts';
import { SIGNATURE_WINDOW_SECS, WEBHOOK_ID_WINDOW_DAYS } from './webhook-ingest.service.ts';
import {
  deleteDeliveriesReceivedBefore,
  deleteSignatureClaimsReceivedBefore,
  deleteWebhookIdsReceivedBefore,
} from './webhooks.repository.ts';

const DAY_MS = 86_400_000;

/**
 * Retention (`PACER_WEBHOOK_RETENTION_DAYS`): deliveries received more than
 * `retentionDays` ago, whatever their state, `X-Webhook-Id` claims past
 * their 7-day window and signature claims past theirs (11 minutes).
 */
export async function purgeOldDeliveries(
  db: Db,
  retentionDays: number,
  now: Date = new Date(),
): Promise<{ readonly deliveries: number; readonly webhookIds: number; readonly signatures: number }> {
  return db.transaction().execute(async (trx) => ({
    deliveries: await deleteDeliveriesReceivedBefore(trx, new Date(now.getTime() - retentionDays * DAY_MS)),
    webhookIds: await deleteWebhookIdsReceivedBefore(trx, new Date(now.getTime() - WEBHOOK_ID_WINDOW_DAYS * DAY_MS)),
    signatures: await deleteSignatureClaimsReceivedBefore(trx, new Date(now.getTime() - SIGNATURE_WINDOW_SECS * 1000)),
  }));
}

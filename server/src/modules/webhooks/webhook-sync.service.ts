import type { SyncDataInput } from '@pacer/contract';
import { AppError } from '../../errors.ts';
import { enqueue } from '../../queue/boss.ts';
import { webhookDeliveryQueue } from '../../queue/queues.ts';
import type { AsyncJobRunner } from '../async-jobs/async-jobs.service.ts';
import { findUserById } from '../accounts/user.repository.ts';
import { retryOptionsOf } from './webhook-ingest.service.ts';
import { findUserRetryableDeliveries, requeueDelivery } from './webhooks.repository.ts';

/** Deliveries one `sync_data` run re-queues at most; a larger backlog takes another run. */
export const SYNC_DELIVERIES_MAX = 500;

/**
 * `sync_data` (job type `trigger_run`): re-apply the athlete's webhook
 * deliveries that failed or were dead-lettered on the requested days, from
 * apps the athlete still grants access. Each is re-queued with its pg-boss
 * job in the transaction that completes the run, and goes through the same
 * processing as a new delivery. The input's days are the user's calendar
 * days, resolved by the tool (`from`, `to`).
 */
export const runSyncJob: AsyncJobRunner = async ({ db, boss, config, job, progress }) => {
  const input = job.input as Required<Pick<SyncDataInput, 'from' | 'to'>>;
  const user = await findUserById(db, job.userId);
  if (!user) throw new AppError('not_found', 'The account no longer exists.');
  await progress(1, 2, 'Looking for failed deliveries');
  const deliveries = await findUserRetryableDeliveries(db, {
    userId: job.userId,
    timeZone: user.timeZone,
    from: input.from,
    to: input.to,
    limit: SYNC_DELIVERIES_MAX,
  });
  await progress(2, 2, `Re-queueing ${deliveries.length} deliveries`);
  return {
    result: {
      from: input.from,
      to: input.to,
      deliveries_found: deliveries.length,
      more_remaining: deliveries.length === SYNC_DELIVERIES_MAX,
    },
    async write(trx) {
      let requeued = 0;
      for (const delivery of deliveries) {
        // Skipped when another run or a replay took it in the meantime.
        const row = await requeueDelivery(trx, delivery.clientId, delivery.id, ['failed', 'dead_letter']);
        if (!row) continue;
        await enqueue(boss, trx, webhookDeliveryQueue, { deliveryId: row.id }, retryOptionsOf(config));
        requeued++;
      }
      return { deliveries_requeued: requeued };
    },
  };
};

import { z } from 'zod';
import { defineQueue } from './queue-definition.ts';

/** Deletes sessions and tokens that expired more than `graceDays` ago. */
export const purgeExpiredQueue = defineQueue({
  name: 'maintenance.purge-expired',
  payload: z.strictObject({ graceDays: z.number().int().min(0).max(365).default(1) }),
  options: { retryLimit: 3, retryBackoff: true, expireInSeconds: 300, notify: true },
  work: { batchSize: 1, pollingIntervalSeconds: 30 },
});

/** Every queue this build knows; each is created at start-up. */
export const ALL_QUEUES = [purgeExpiredQueue] as const;

/** Cron schedules (UTC) the worker role installs. */
export const SCHEDULES = [{ queue: purgeExpiredQueue, cron: '17 * * * *', payload: { graceDays: 1 } }] as const;

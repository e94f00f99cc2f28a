import { z } from 'zod';
import { defineQueue } from './queue-definition.ts';

/** An hourly maintenance job: one at a time, retried a few times, polled slowly (it is scheduled, not urgent). */
const SCHEDULED_JOB = {
  options: { retryLimit: 3, retryBackoff: true, expireInSeconds: 300, notify: true },
  work: { batchSize: 1, pollingIntervalSeconds: 30 },
} as const;

/** A dead-letter queue: its handler only marks the row failed, so it retries often and works in batches. */
const DEAD_LETTER_JOB = {
  options: { retryLimit: 10, retryBackoff: true, expireInSeconds: 60, notify: true },
  work: { batchSize: 10, pollingIntervalSeconds: 5 },
} as const;

/** The busy queues: batches settled job by job, woken by NOTIFY, with a slow poll as a backstop. */
const BATCHED_WORK = {
  perJobResults: true,
  includeMetadata: true,
  pollingIntervalSeconds: 2,
  notifyPollingIntervalSeconds: 5,
} as const;

/** Deletes sessions and tokens that expired more than `graceDays` ago. */
export const purgeExpiredQueue = defineQueue({
  name: 'maintenance.purge-expired',
  payload: z.strictObject({ graceDays: z.number().int().min(0).max(365).default(1) }),
  ...SCHEDULED_JOB,
});

/**
 * Deliveries whose job pg-boss gave up on (transient failures past the retry
 * limit, or a worker that died holding it too often): the handler marks the
 * delivery `dead_letter`, so nothing stays `processing` forever.
 */
export const webhookDeadLetterQueue = defineQueue({
  name: 'webhooks.dead-letter',
  payload: z.strictObject({ deliveryId: z.uuid() }),
  ...DEAD_LETTER_JOB,
});

/**
 * One job per matched webhook delivery, sent in the transaction that stores
 * it. Workers wake on NOTIFY and take batches; each job is settled on its own
 * (`perJobResults`). `retryLimit` and `retryDelay` are set per send from
 * `PACER_WEBHOOK_MAX_ATTEMPTS` / `PACER_WEBHOOK_RETRY_DELAY_SECONDS`. A job
 * whose worker dies is retried after `expireInSeconds`.
 */
export const webhookDeliveryQueue = defineQueue({
  name: 'webhooks.deliver',
  payload: z.strictObject({ deliveryId: z.uuid() }),
  options: {
    retryLimit: 5,
    retryBackoff: true,
    retryDelay: 5,
    retryDelayMax: 600,
    expireInSeconds: 30,
    notify: true,
    deadLetter: webhookDeadLetterQueue.name,
  },
  work: {
    ...BATCHED_WORK,
    batchSize: 25,
    burstWhenBatchFull: true,
  },
});

/** Deletes webhook deliveries older than the retention (PACER_WEBHOOK_RETENTION_DAYS; the job reads the config). */
export const purgeWebhooksQueue = defineQueue({
  name: 'maintenance.purge-webhooks',
  payload: z.strictObject({}),
  ...SCHEDULED_JOB,
});

/** Async jobs pg-boss gave up on (a worker that kept dying): the handler marks the job `failed`. */
export const asyncJobDeadLetterQueue = defineQueue({
  name: 'jobs.dead-letter',
  payload: z.strictObject({ jobId: z.uuid() }),
  ...DEAD_LETTER_JOB,
});

/**
 * One job per MCP async tool call (`generate_report`, `sync_data`,
 * `generate_workout_structure`), sent in the transaction that writes its
 * `async_jobs` row. Workers heartbeat: a worker that dies mid-job is noticed
 * within about `heartbeatSeconds` plus a monitor pass, and the job runs again.
 */
export const asyncJobQueue = defineQueue({
  name: 'jobs.run',
  payload: z.strictObject({ jobId: z.uuid() }),
  options: {
    retryLimit: 3,
    retryBackoff: true,
    retryDelay: 2,
    retryDelayMax: 60,
    expireInSeconds: 600,
    heartbeatSeconds: 10,
    notify: true,
    deadLetter: asyncJobDeadLetterQueue.name,
  },
  work: {
    ...BATCHED_WORK,
    batchSize: 4,
    // A backlog (after a restart, or once calls stop arriving) is worked batch after batch, not one per poll.
    burstWhenBatchFull: true,
  },
});

/** Hourly: users whose derived data ends before their local today get a change record (the day rolled over). */
export const analyticsRolloverQueue = defineQueue({
  name: 'analytics.rollover',
  payload: z.strictObject({}),
  ...SCHEDULED_JOB,
});

/** Every queue this build knows; each is created at start-up (a dead-letter queue before its source). */
export const ALL_QUEUES = [
  purgeExpiredQueue,
  webhookDeadLetterQueue,
  webhookDeliveryQueue,
  purgeWebhooksQueue,
  asyncJobDeadLetterQueue,
  asyncJobQueue,
  analyticsRolloverQueue,
] as const;

/**
 * Queues of earlier builds, deleted at start-up with their jobs:
 * `analytics.recompute-user` gave way to change records (modules/changes/).
 */
export const RETIRED_QUEUES = ['analytics.recompute-user'] as const;

/** Cron schedules (UTC) the worker role installs. */
export const SCHEDULES = [
  { queue: purgeExpiredQueue, cron: '17 * * * *', payload: { graceDays: 1 } },
  { queue: purgeWebhooksQueue, cron: '23 * * * *', payload: {} },
  { queue: analyticsRolloverQueue, cron: '5 * * * *', payload: {} },
] as const;

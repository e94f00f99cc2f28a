import type { Db } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import { jsonNestsDeeperThan } from '../../lib/json-depth.ts';
import { applyEvent, parseEvents, PermanentEventError } from './webhook-events.ts';
import { deadLetterDelivery, settleDelivery, startAttempt } from './webhooks.repository.ts';

/** What the queue should do with the job after an attempt. */
export type AttemptOutcome =
  /** Settled (processed, failed, ignored, dead-lettered) or nothing to do: complete the job. */
  | { readonly kind: 'done' }
  /** A transient error with attempts left: fail the job so pg-boss retries it with backoff. */
  | { readonly kind: 'retry'; readonly error: string };

export interface AttemptContext {
  /** No retry follows this attempt: a transient failure dead-letters the delivery. */
  readonly lastAttempt: boolean;
  readonly logger: Logger;
}

/** Set when the row changed under us (replayed, purged): the attempt's work is rolled back. */
class AttemptLost extends Error {}

/**
 * One processing attempt of a delivery, exactly once in effect: the events'
 * writes (with their change records) and the `processed` mark commit in one
 * transaction, passed down to each event's service, so an attempt
 * that dies half-way leaves no trace and the retry starts clean. A delivery
 * is re-entered from `processing` only by a retry of its own job.
 */
export async function processDelivery(db: Db, deliveryId: string, context: AttemptContext): Promise<AttemptOutcome> {
  // Gone, settled, or its app deleted (its deliveries go with it): nothing to do.
  const delivery = await startAttempt(db, deliveryId);
  if (!delivery) return { kind: 'done' };
  const client = { id: delivery.clientRowId, clientId: delivery.clientId };

  let body: unknown;
  try {
    // Ingest refuses deeper bodies; one stored before it did is not parsed (events nest 3-4 levels).
    if (jsonNestsDeeperThan(delivery.body)) throw new Error('too deep');
    body = JSON.parse(delivery.body);
  } catch {
    // Ingest refuses bodies that are not JSON or too deep; a stored one can only be damaged or older.
    await settleDelivery(db, deliveryId, {
      state: 'failed',
      errorCode: 'invalid_json',
      lastError: 'Body is not JSON (or nests deeper than 64 levels).',
    });
    return { kind: 'done' };
  }
  const { known, skipped } = parseEvents(body);
  if (known.length === 0) {
    const reason = skipped.map((entry) => entry.reason).join('; ') || 'empty array: no events';
    await settleDelivery(db, deliveryId, {
      state: 'ignored',
      errorCode: skipped.some((entry) => entry.event !== null) ? 'unknown_event' : 'not_an_event',
      lastError: reason,
      result: { applied: [], skipped },
    });
    return { kind: 'done' };
  }

  try {
    await db.transaction().execute(async (trx) => {
      const applied = [];
      for (const event of known) applied.push(await applyEvent({ db: trx }, client, event));
      const settled = await settleDelivery(trx, deliveryId, { state: 'processed', result: { applied, skipped } });
      if (!settled) throw new AttemptLost();
    });
    return { kind: 'done' };
  } catch (error) {
    if (error instanceof AttemptLost) return { kind: 'done' };
    if (error instanceof PermanentEventError) {
      await settleDelivery(db, deliveryId, {
        state: 'failed',
        errorCode: error.code,
        lastError: error.message,
        result: { errors: error.errors },
      });
      return { kind: 'done' };
    }
    const message = error instanceof Error ? error.message : String(error);
    context.logger.warn(
      { err: error, deliveryId, lastAttempt: context.lastAttempt },
      'webhook delivery attempt failed',
    );
    if (context.lastAttempt) {
      await settleDelivery(db, deliveryId, {
        state: 'dead_letter',
        errorCode: 'retries_exhausted',
        lastError: message,
      });
      return { kind: 'done' };
    }
    await settleDelivery(db, deliveryId, { state: 'queued', errorCode: 'transient', lastError: message });
    return { kind: 'retry', error: message };
  }
}

/** pg-boss dead-lettered the job (e.g. its worker died on every attempt). */
export async function deadLetter(db: Db, deliveryId: string): Promise<boolean> {
  return deadLetterDelivery(db, deliveryId, 'processing did not finish within the job expiry on any attempt');
}

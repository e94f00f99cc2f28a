import type { WebhookDelivery, WebhookDeliveryState } from '@pacer/contract';
import { AppError } from '../../errors.ts';
import { enqueue } from '../../queue/boss.ts';
import { webhookDeliveryQueue } from '../../queue/queues.ts';
import { findClientOwnedBy } from '../oauth/client.repository.ts';
import { retryOptionsOf, type WebhookDeps } from './webhook-ingest.service.ts';
import {
  countDeliveriesByState,
  findDelivery,
  listDeliveries,
  type ListedDelivery,
  requeueDelivery,
  type StoredDelivery,
} from './webhooks.repository.ts';
import { shownPayload } from './webhook-payload.ts';
import { decodeCursor, encodeCursor, UUID_PATTERN, keysetPage } from '../../lib/cursor.ts';

/** States a developer may replay from: settled, and the secret matched (a `rejected` one never is). */
export const REPLAYABLE_STATES = [
  'processed',
  'failed',
  'ignored',
  'dead_letter',
] as const satisfies readonly WebhookDeliveryState[];

export interface DeliveryListQuery {
  readonly state?: WebhookDeliveryState | undefined;
  readonly cursor?: string | undefined;
  readonly limit: number;
}

export interface DeliveryList {
  readonly items: WebhookDelivery[];
  readonly nextCursor: string | null;
  readonly counts: Record<string, number>;
}

/** The owner's app, or "not found" (never 403: another developer's app id is not confirmed). */
async function ownedApp(deps: Pick<WebhookDeps, 'db'>, ownerUserId: string, clientId: string) {
  const client = await findClientOwnedBy(deps.db, { ownerUserId, clientId }, ['app']);
  if (!client) throw new AppError('not_found', 'No such app among yours.');
  return client;
}

/** Keyset cursor: received time (microseconds, as PostgreSQL keeps it) and id of the page's last delivery. */
function encodeDeliveryCursor(row: ListedDelivery): string {
  return encodeCursor({ r: row.receivedAtExact, i: row.id });
}

/** ISO UTC with up to microseconds. */
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$/;

function decodeDeliveryCursor(cursor: string): { receivedAt: string; id: string } {
  return decodeCursor(cursor, ({ r, i }) =>
    i !== undefined &&
    UUID_PATTERN.test(i) &&
    r !== undefined &&
    CURSOR_TIME.test(r) &&
    // A real instant (no 30 February), so PostgreSQL can read it.
    !Number.isNaN(Date.parse(r)) &&
    new Date(r).toISOString().slice(0, 19) === r.slice(0, 19)
      ? { receivedAt: r, id: i }
      : undefined,
  );
}

/**
 * The delivery as the portal shows it. The stored body is text, parsed only
 * when it is all of the payload and nests within the depth limit, so what is
 * sent back can always be serialised; a rejected delivery (only a preview is
 * kept, or, stored before that, the whole body of someone without the
 * secret) and anything too deep show the start of their text instead.
 */
export function toWebhookDelivery(row: StoredDelivery): WebhookDelivery {
  const shown = shownPayload(row.body, !row.bodyTruncated && row.state !== 'rejected');
  return {
    id: row.id,
    clientId: row.clientId,
    receivedAt: row.receivedAt.toISOString(),
    event: row.event,
    payload: shown.payload,
    payloadPreview: shown.payloadPreview,
    payloadBytes: row.payloadBytes,
    payloadSha256: row.payloadSha256,
    headers: row.headers,
    query: row.query,
    sourceIp: row.sourceIp,
    secretMatched: row.secretMatched,
    authMethod: row.authMethod,
    webhookId: row.webhookId,
    duplicateOf: row.duplicateOf,
    state: row.state,
    attempts: row.attempts,
    replays: row.replays,
    errorCode: row.errorCode,
    error: row.lastError,
    result: row.result ?? null,
    queuedAt: row.queuedAt?.toISOString() ?? null,
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** An app's deliveries, newest first (keyset pagination on received time and id). */
export async function listAppDeliveries(
  deps: Pick<WebhookDeps, 'db'>,
  ownerUserId: string,
  clientId: string,
  query: DeliveryListQuery,
): Promise<DeliveryList> {
  const client = await ownedApp(deps, ownerUserId, clientId);
  const rows = await listDeliveries(deps.db, client.clientId, {
    state: query.state,
    before: query.cursor === undefined ? undefined : decodeDeliveryCursor(query.cursor),
    limit: query.limit,
  });
  return {
    ...keysetPage(rows, query.limit, toWebhookDelivery, encodeDeliveryCursor),
    counts: await countDeliveriesByState(deps.db, client.clientId),
  };
}

export async function getAppDelivery(
  deps: Pick<WebhookDeps, 'db'>,
  ownerUserId: string,
  clientId: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const client = await ownedApp(deps, ownerUserId, clientId);
  const row = await findDelivery(deps.db, client.clientId, deliveryId);
  if (!row) throw new AppError('not_found', 'No such delivery.');
  return toWebhookDelivery(row);
}

/**
 * Replay: put a settled delivery back to `queued` and enqueue it in the same
 * transaction; the worker processes it through the same path as a new one.
 */
export async function replayAppDelivery(
  deps: WebhookDeps,
  ownerUserId: string,
  clientId: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const client = await ownedApp(deps, ownerUserId, clientId);
  return deps.db.transaction().execute(async (trx) => {
    const requeued = await requeueDelivery(trx, client.clientId, deliveryId, REPLAYABLE_STATES);
    if (!requeued) {
      const current = await findDelivery(trx, client.clientId, deliveryId);
      if (!current) throw new AppError('not_found', 'No such delivery.');
      throw new AppError(
        'conflict',
        current.state === 'rejected'
          ? 'A rejected delivery (its secret did not match) is never processed.'
          : `The delivery is ${current.state}; only ${REPLAYABLE_STATES.join(', ')} deliveries can be replayed.`,
      );
    }
    await enqueue(deps.boss, trx, webhookDeliveryQueue, { deliveryId }, retryOptionsOf(deps.config));
    return toWebhookDelivery(requeued);
  });
}

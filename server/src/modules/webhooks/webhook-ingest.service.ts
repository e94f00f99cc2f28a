import { randomUUID } from 'node:crypto';
import type { PgBoss } from 'pg-boss';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { WebhookDeliveryState } from '@pacer/contract';
import { AppError } from '../../errors.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { enqueue } from '../../queue/boss.ts';
import { webhookDeliveryQueue } from '../../queue/queues.ts';
import { authenticateWebhook, SIGNATURE_TOLERANCE_SECS, type WebhookCredentials } from './webhook-auth.ts';
import { PAYLOAD_PREVIEW_BYTES, sha256HexOf, utf8Prefix } from './webhook-payload.ts';
import {
  claimSignature,
  claimWebhookId,
  findSignatureHolder,
  findWebhookClient,
  findWebhookIdHolder,
  insertDelivery,
  lockRejectedDeliveries,
  trimRejectedDeliveries,
} from './webhooks.repository.ts';
import type { DbOrTrx } from '../../db/database.ts';

/** `X-Webhook-Id` de-duplicates within this window. */
export const WEBHOOK_ID_WINDOW_DAYS = 7;
/**
 * A signed delivery without `X-Webhook-Id` de-duplicates by its signature for
 * this long: a timestamp is accepted up to 5 minutes either side of our
 * clock, so one signature verifies over at most 10 minutes; a minute more
 * covers clocks of API processes that differ a little.
 */
export const SIGNATURE_WINDOW_SECS = 2 * SIGNATURE_TOLERANCE_SECS + 60;

export interface WebhookDeps {
  readonly db: Db;
  readonly boss: PgBoss;
  readonly secretBox: SecretBox;
  readonly config: Config;
}

export interface IncomingDelivery {
  readonly clientId: string;
  /** The bytes as received; already checked to be JSON. */
  readonly rawBody: Buffer;
  readonly body: unknown;
  readonly credentials: WebhookCredentials;
  readonly webhookId: string | undefined;
  /** Headers and query with secrets already redacted. */
  readonly headers: Record<string, string>;
  readonly query: Record<string, string | string[]>;
  readonly sourceIp: string | undefined;
}

/** The specification's §2.5 acknowledgement, plus `duplicate` for a repeated `X-Webhook-Id`. */
export interface WebhookAck {
  readonly status: 'success';
  readonly message: 'Data captured';
  readonly receivedAt: string;
  readonly secretMatched: boolean;
  readonly duplicate?: true;
}

export interface IngestResult {
  readonly ack: WebhookAck;
  readonly deliveryId: string;
  readonly state: WebhookDeliveryState;
}

export function retryOptionsOf(config: Config) {
  return {
    retryLimit: config.webhooks.maxAttempts - 1,
    retryDelay: config.webhooks.retryDelaySecs,
    retryBackoff: true,
  } as const;
}

/** Why a matched delivery is a repeat, and of which delivery. */
interface Repeat {
  readonly duplicateOf: string | null;
  readonly reason: string;
}

/**
 * A matched delivery that repeats an earlier one: the same `X-Webhook-Id`
 * within 7 days, or, sent without an id, the same signature (the same
 * timestamp and bytes) within the window it verifies in. A plain-secret
 * delivery without an id is never a repeat: nothing names it.
 */
async function claimOrRepeat(
  trx: DbOrTrx,
  clientId: string,
  deliveryId: string,
  incoming: IncomingDelivery,
  signatureSha256: string | undefined,
): Promise<Repeat | undefined> {
  if (incoming.webhookId !== undefined) {
    const { webhookId } = incoming;
    if (await claimWebhookId(trx, { clientId, webhookId, deliveryId, windowDays: WEBHOOK_ID_WINDOW_DAYS })) return;
    return {
      duplicateOf: (await findWebhookIdHolder(trx, clientId, webhookId)) ?? null,
      reason: `X-Webhook-Id was already received within ${WEBHOOK_ID_WINDOW_DAYS} days.`,
    };
  }
  if (signatureSha256 === undefined) return;
  if (await claimSignature(trx, { clientId, signatureSha256, deliveryId, windowSecs: SIGNATURE_WINDOW_SECS })) return;
  return {
    duplicateOf: (await findSignatureHolder(trx, clientId, signatureSha256)) ?? null,
    reason: 'The same signature (timestamp and body) was already received; send X-Webhook-Id to name deliveries.',
  };
}

/**
 * Store a delivery and, when its secret matched and it is not a repeat,
 * enqueue its processing in the same transaction: once we answer 200 the
 * delivery and its job exist together, or neither does. A delivery with a
 * wrong or missing secret is kept as `rejected`, with only a preview of its
 * body (anyone can post to a public client id), within the app's cap on
 * rejected bytes; a repeat as `ignored` with a link to the first.
 */
export async function ingestDelivery(deps: WebhookDeps, incoming: IncomingDelivery): Promise<IngestResult> {
  const client = await findWebhookClient(deps.db, incoming.clientId);
  if (!client) throw new AppError('not_found', `No app with client id ${incoming.clientId}.`);
  const auth = authenticateWebhook(client, incoming.credentials, incoming.rawBody, deps.secretBox);
  const event =
    incoming.body !== null && typeof incoming.body === 'object' && !Array.isArray(incoming.body)
      ? (incoming.body as Record<string, unknown>)['event']
      : undefined;
  const truncated = !auth.matched && incoming.rawBody.length > PAYLOAD_PREVIEW_BYTES;
  const capBytes = deps.config.webhooks.rejectedBytesPerApp;

  return deps.db.transaction().execute(async (trx) => {
    const deliveryId = randomUUID();
    let state: WebhookDeliveryState = auth.matched ? 'queued' : 'rejected';
    const repeat = auth.matched
      ? await claimOrRepeat(trx, client.clientId, deliveryId, incoming, auth.signatureSha256)
      : undefined;
    if (repeat) state = 'ignored';
    if (state === 'rejected' && capBytes > 0) await lockRejectedDeliveries(trx, client.clientId);
    const stored = await insertDelivery(trx, {
      id: deliveryId,
      clientId: client.clientId,
      body: auth.matched ? incoming.rawBody.toString('utf8') : utf8Prefix(incoming.rawBody),
      bodyBytes: incoming.rawBody.length,
      bodySha256: sha256HexOf(incoming.rawBody),
      bodyTruncated: truncated,
      headers: JSON.stringify(incoming.headers),
      query: JSON.stringify(incoming.query),
      sourceIp: incoming.sourceIp ?? null,
      secretMatched: auth.matched,
      authMethod: auth.method,
      webhookId: incoming.webhookId ?? null,
      duplicateOf: repeat?.duplicateOf ?? null,
      event: typeof event === 'string' ? event.slice(0, 200) : null,
      state,
      ...(state === 'rejected'
        ? { errorCode: 'secret_mismatch', lastError: auth.reason ?? 'secret does not match' }
        : {}),
      ...(repeat ? { errorCode: 'duplicate', lastError: repeat.reason, finishedAt: new Date() } : {}),
      ...(state === 'queued' ? { queuedAt: new Date() } : {}),
      ...(state === 'rejected' ? { finishedAt: new Date() } : {}),
    });
    if (state === 'rejected' && capBytes > 0) {
      await trimRejectedDeliveries(trx, { clientId: client.clientId, capBytes, keepId: deliveryId });
    }
    if (state === 'queued') {
      await enqueue(deps.boss, trx, webhookDeliveryQueue, { deliveryId }, retryOptionsOf(deps.config));
    }
    return {
      deliveryId,
      state,
      ack: {
        status: 'success',
        message: 'Data captured',
        receivedAt: stored.receivedAt.toISOString(),
        secretMatched: auth.matched,
        ...(state === 'ignored' ? { duplicate: true as const } : {}),
      },
    };
  });
}

import { randomUUID } from 'node:crypto';
import type { PgBoss } from 'pg-boss';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { WebhookDeliveryState } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { enqueue } from '../../queue/boss.ts';
import { webhookDeliveryQueue } from '../../queue/queues.ts';
import { authenticateWebhook, type WebhookCredentials } from './webhook-auth.ts';
import { claimWebhookId, findWebhookClient, findWebhookIdHolder, insertDelivery } from './webhooks.repository.ts';

/** `X-Webhook-Id` de-duplicates within this window. */
export const WEBHOOK_ID_WINDOW_DAYS = 7;

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

/**
 * Store a delivery and, when its secret matched and it is not a repeat,
 * enqueue its processing in the same transaction: once we answer 200 the
 * delivery and its job exist together, or neither does. A delivery with a
 * wrong or missing secret is kept as `rejected`; a repeated `X-Webhook-Id`
 * as `ignored` with a link to the first.
 */
export async function ingestDelivery(deps: WebhookDeps, incoming: IncomingDelivery): Promise<IngestResult> {
  const client = await findWebhookClient(deps.db, incoming.clientId);
  if (!client) throw new AppError('not_found', `No app with client id ${incoming.clientId}.`);
  const auth = authenticateWebhook(client, incoming.credentials, incoming.rawBody, deps.secretBox);
  const event =
    incoming.body !== null && typeof incoming.body === 'object' && !Array.isArray(incoming.body)
      ? (incoming.body as Record<string, unknown>)['event']
      : undefined;

  return deps.db.transaction().execute(async (trx) => {
    const deliveryId = randomUUID();
    let state: WebhookDeliveryState = auth.matched ? 'queued' : 'rejected';
    let duplicateOf: string | null = null;
    if (auth.matched && incoming.webhookId !== undefined) {
      const claimed = await claimWebhookId(trx, {
        clientId: client.clientId,
        webhookId: incoming.webhookId,
        deliveryId,
        windowDays: WEBHOOK_ID_WINDOW_DAYS,
      });
      if (!claimed) {
        state = 'ignored';
        duplicateOf = (await findWebhookIdHolder(trx, client.clientId, incoming.webhookId)) ?? null;
      }
    }
    const stored = await insertDelivery(trx, {
      id: deliveryId,
      clientId: client.clientId,
      body: incoming.rawBody.toString('utf8'),
      headers: JSON.stringify(incoming.headers),
      query: JSON.stringify(incoming.query),
      sourceIp: incoming.sourceIp ?? null,
      secretMatched: auth.matched,
      authMethod: auth.method,
      webhookId: incoming.webhookId ?? null,
      duplicateOf,
      event: typeof event === 'string' ? event.slice(0, 200) : null,
      state,
      ...(state === 'rejected'
        ? { errorCode: 'secret_mismatch', lastError: auth.reason ?? 'secret does not match' }
        : {}),
      ...(state === 'ignored'
        ? {
            errorCode: 'duplicate',
            lastError: `X-Webhook-Id was already received within ${WEBHOOK_ID_WINDOW_DAYS} days.`,
            finishedAt: new Date(),
          }
        : {}),
      ...(state === 'queued' ? { queuedAt: new Date() } : {}),
      ...(state === 'rejected' ? { finishedAt: new Date() } : {}),
    });
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

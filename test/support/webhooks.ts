import { createHmac } from 'node:crypto';
import { type Selectable, sql } from 'kysely';
import type { Db } from '../../server/src/db/database.ts';
import type { WebhookDeliveryState } from '@pacer/contract';
import type { WebhookDeliveriesTable } from '../../server/src/db/tables.ts';
import type { TestServer } from './test-server.ts';
import { sleep } from './wait.ts';

export { sleep, waitFor } from './wait.ts';

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

export interface DeliverOptions {
  /** Sent as `X-Webhook-Secret`. */
  readonly secret?: string;
  /** Query parameters (e.g. `{ secret }` for `?secret=`). */
  readonly query?: Record<string, string>;
  /** Sign the exact bytes sent with this secret (`X-Webhook-Timestamp` + `X-Webhook-Signature`). */
  readonly signWith?: string;
  /** Unix seconds for the signature; now by default. */
  readonly timestamp?: number;
  /** Sent as `X-Webhook-Signature` verbatim (overrides `signWith`'s value). */
  readonly signature?: string;
  /** Sent as `X-Webhook-Id`. */
  readonly webhookId?: string;
  /** The bytes to send instead of `JSON.stringify(body)`. */
  readonly rawBody?: string;
  /** Default `application/json`. */
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
}

export interface DeliverResponse {
  readonly status: number;
  readonly body: Record<string, unknown>;
  /** `X-Webhook-Delivery-Id`, when the delivery was stored. */
  readonly deliveryId: string | null;
}

/** `v1=<hex HMAC-SHA256(secret, timestamp + "." + raw body)>`, computed here independently of the server. */
export function sign(secret: string, timestamp: number | string, rawBody: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest('hex')}`;
}

/** POST a body to `/api/webhooks/oauth/{clientId}` as an app would. */
export async function deliver(
  server: Pick<TestServer, 'url'>,
  clientId: string,
  body: unknown,
  options: DeliverOptions = {},
): Promise<DeliverResponse> {
  const raw = options.rawBody ?? JSON.stringify(body);
  const headers: Record<string, string> = {
    'content-type': options.contentType ?? 'application/json',
    ...options.headers,
  };
  if (options.secret !== undefined) headers['x-webhook-secret'] = options.secret;
  if (options.webhookId !== undefined) headers['x-webhook-id'] = options.webhookId;
  if (options.signWith !== undefined || options.signature !== undefined) {
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
    headers['x-webhook-timestamp'] = String(timestamp);
    headers['x-webhook-signature'] = options.signature ?? sign(options.signWith ?? '', timestamp, raw);
  }
  const search = options.query ? `?${new URLSearchParams(options.query).toString()}` : '';
  const response = await fetch(`${server.url}/api/webhooks/oauth/${encodeURIComponent(clientId)}${search}`, {
    method: 'POST',
    headers,
    body: raw,
  });
  const text = await response.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { text };
  }
  return { status: response.status, body: parsed, deliveryId: response.headers.get('x-webhook-delivery-id') };
}

/**
 * True once pg-boss holds nothing more to run for the delivery: it has jobs, and every one of them is
 * completed, failed or cancelled. From then on the delivery cannot change by itself.
 */
export async function deliveryJobsSettled(db: Db, deliveryId: string): Promise<boolean> {
  const { rows } = await sql<{ state: string }>`
    select state::text from pgboss.job where name = 'webhooks.deliver' and data->>'deliveryId' = ${deliveryId}`.execute(
    db,
  );
  return rows.length > 0 && rows.every((row) => ['completed', 'failed', 'cancelled'].includes(row.state));
}

export async function findDeliveryRow(db: Db, id: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhookDeliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function deliveryRows(db: Db, clientId: string): Promise<DeliveryRow[]> {
  return db
    .selectFrom('webhookDeliveries')
    .selectAll()
    .where('clientId', '=', clientId)
    .orderBy('receivedAt')
    .orderBy('id')
    .execute();
}

/** Poll `webhook_deliveries` until the delivery is in one of `states` (and `accept` holds); the row, else throws. */
export async function waitForState(
  db: Db,
  deliveryId: string,
  states: readonly WebhookDeliveryState[],
  timeoutMs = 10_000,
  accept: (row: DeliveryRow) => boolean = () => true,
): Promise<DeliveryRow> {
  const deadline = Date.now() + timeoutMs;
  let last: DeliveryRow | undefined;
  for (;;) {
    last = await findDeliveryRow(db, deliveryId);
    if (last && states.includes(last.state) && accept(last)) return last;
    if (Date.now() > deadline) {
      throw new Error(
        `delivery ${deliveryId} did not reach ${states.join('|')} within ${timeoutMs} ms (last: ${
          last ? `${last.state}, attempts ${last.attempts}, ${last.errorCode ?? '-'}` : 'no row'
        })`,
      );
    }
    await sleep(20);
  }
}

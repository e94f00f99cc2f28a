import { sql, type Insertable } from 'kysely';
import { preparedStatement, type DbOrTrx } from '../../db/database.ts';
import type { WebhookDeliveryState } from '@pacer/contract';
import type { WebhookDeliveriesTable, WebhookDeliveryRow } from '../../db/tables.ts';

/** What ingest needs of an app: looked up on every delivery, so rotation counts at once. */
export interface WebhookClient {
  readonly id: string;
  readonly clientId: string;
  readonly webhookSecretHash: string | null;
  readonly webhookSecretSealed: string | null;
}

export async function findWebhookClient(db: DbOrTrx, clientId: string): Promise<WebhookClient | undefined> {
  return db
    .selectFrom('oauthClients')
    .select(['id', 'clientId', 'webhookSecretHash', 'webhookSecretSealed'])
    .where('clientId', '=', clientId)
    .modifyEnd(preparedStatement('webhook_client'))
    .executeTakeFirst();
}

export async function insertDelivery(
  db: DbOrTrx,
  delivery: Insertable<WebhookDeliveriesTable>,
): Promise<Pick<WebhookDeliveryRow, 'id' | 'receivedAt'>> {
  // One statement text per ingest outcome (queued, rejected, ignored): a handful of prepared statements.
  return db
    .insertInto('webhookDeliveries')
    .values(delivery)
    .returning(['id', 'receivedAt'])
    .modifyEnd(preparedStatement('webhook_delivery_insert'))
    .executeTakeFirstOrThrow();
}

/**
 * Take `webhookId` for `deliveryId` unless a delivery of the same app took it
 * less than `windowDays` ago (an older claim is taken over). False when the
 * id is taken. Concurrent claims of one id serialize on the primary key:
 * exactly one wins.
 */
export async function claimWebhookId(
  db: DbOrTrx,
  claim: {
    readonly clientId: string;
    readonly webhookId: string;
    readonly deliveryId: string;
    readonly windowDays: number;
  },
): Promise<boolean> {
  const row = await db
    .insertInto('webhookIds')
    .values({
      clientId: claim.clientId,
      webhookId: claim.webhookId,
      deliveryId: claim.deliveryId,
      receivedAt: sql<Date>`now()`,
    })
    .onConflict((oc) =>
      oc
        .columns(['clientId', 'webhookId'])
        .doUpdateSet({ deliveryId: (eb) => eb.ref('excluded.deliveryId'), receivedAt: sql<Date>`now()` })
        .where('webhookIds.receivedAt', '<', sql<Date>`now() - make_interval(days => ${claim.windowDays})`),
    )
    .returning('deliveryId')
    .executeTakeFirst();
  return row !== undefined;
}

export async function findWebhookIdHolder(
  db: DbOrTrx,
  clientId: string,
  webhookId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhookIds')
    .select('deliveryId')
    .where('clientId', '=', clientId)
    .where('webhookId', '=', webhookId)
    .executeTakeFirst();
  return row?.deliveryId;
}

/**
 * Take a matched signature (its SHA-256) for `deliveryId` unless a delivery
 * of the same app took it less than `windowSecs` ago: `claimWebhookId` for
 * signed deliveries sent without an id. False when it is taken.
 */
export async function claimSignature(
  db: DbOrTrx,
  claim: {
    readonly clientId: string;
    readonly signatureSha256: string;
    readonly deliveryId: string;
    readonly windowSecs: number;
  },
): Promise<boolean> {
  const row = await db
    .insertInto('webhookSignatures')
    .values({ clientId: claim.clientId, signatureSha256: claim.signatureSha256, deliveryId: claim.deliveryId })
    .onConflict((oc) =>
      oc
        .columns(['clientId', 'signatureSha256'])
        .doUpdateSet({ deliveryId: (eb) => eb.ref('excluded.deliveryId'), receivedAt: sql<Date>`now()` })
        .where('webhookSignatures.receivedAt', '<', sql<Date>`now() - make_interval(secs => ${claim.windowSecs})`),
    )
    .returning('deliveryId')
    .executeTakeFirst();
  return row !== undefined;
}

export async function findSignatureHolder(
  db: DbOrTrx,
  clientId: string,
  signatureSha256: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhookSignatures')
    .select('deliveryId')
    .where('clientId', '=', clientId)
    .where('signatureSha256', '=', signatureSha256)
    .executeTakeFirst();
  return row?.deliveryId;
}

/**
 * Serialise the rejected deliveries of one app until the transaction ends, so
 * the cap below sees every earlier insert (a transaction-scoped advisory
 * lock: nothing to release, nothing else blocked).
 */
export async function lockRejectedDeliveries(db: DbOrTrx, clientId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`webhook-rejected:${clientId}`}, 0))`.execute(db);
}

/**
 * Keep an app's rejected deliveries within `capBytes`, newest first; the
 * older ones past it are deleted. A row counts what it occupies in the table
 * (`pg_column_size` of its body, headers and query: stored, possibly
 * compressed, sizes, read without detoasting). `keepId`, the one just
 * stored, stays whatever its size. Returns how many were deleted.
 */
export async function trimRejectedDeliveries(
  db: DbOrTrx,
  options: { readonly clientId: string; readonly capBytes: number; readonly keepId: string },
): Promise<number> {
  const { rows } = await sql<{ deleted: string }>`
    with kept as (
      select client_id, id, sum(pg_column_size(body) + pg_column_size(headers) + pg_column_size(query))
        over (order by received_at desc, id desc) as running
      from webhook_deliveries
      where client_id = ${options.clientId} and state = 'rejected'),
    gone as (
      delete from webhook_deliveries d using kept
      where d.client_id = kept.client_id and d.id = kept.id and kept.running > ${options.capBytes} and d.id <> ${options.keepId}
      returning 1)
    select count(*) as deleted from gone`.execute(db);
  return Number(rows[0]?.deleted ?? 0);
}

/**
 * Move a queued (or, after a crash mid-attempt, still processing) delivery
 * to `processing` and count the attempt; with it, the app's row id (the
 * grant check needs it), in the same round trip. `undefined`: the delivery
 * is gone or already settled, so there is nothing to do.
 */
export async function startAttempt(
  db: DbOrTrx,
  id: string,
): Promise<(WebhookDeliveryRow & { readonly clientRowId: string }) | undefined> {
  return db
    .updateTable('webhookDeliveries')
    .from('oauthClients')
    .set({
      state: 'processing',
      attempts: sql<number>`webhook_deliveries.attempts + 1`,
      startedAt: sql<Date>`now()`,
      updatedAt: sql<Date>`now()`,
    })
    .whereRef('oauthClients.clientId', '=', 'webhookDeliveries.clientId')
    .where('webhookDeliveries.id', '=', id)
    .where('webhookDeliveries.state', 'in', ['queued', 'processing'])
    .returningAll('webhookDeliveries')
    .returning('oauthClients.id as clientRowId')
    .modifyEnd(preparedStatement('webhook_start_attempt'))
    .executeTakeFirst();
}

export interface Settlement {
  readonly state: Extract<WebhookDeliveryState, 'processed' | 'failed' | 'ignored' | 'dead_letter' | 'queued'>;
  readonly errorCode?: string | null;
  readonly lastError?: string | null;
  readonly result?: unknown;
}

/** Settle an attempt that is still `processing`; false when it is not (another attempt settled it). */
export async function settleDelivery(db: DbOrTrx, id: string, settlement: Settlement): Promise<boolean> {
  const terminal = settlement.state !== 'queued';
  const result = await db
    .updateTable('webhookDeliveries')
    .set({
      state: settlement.state,
      errorCode: settlement.errorCode ?? null,
      lastError: settlement.lastError ?? null,
      ...(settlement.result === undefined ? {} : { result: JSON.stringify(settlement.result) }),
      ...(terminal ? { finishedAt: sql<Date>`now()` } : {}),
      updatedAt: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .where('state', '=', 'processing')
    .modifyEnd(preparedStatement('webhook_settle'))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** A job that pg-boss gave up on (retries spent, or expired too often): dead-letter unless already settled. */
export async function deadLetterDelivery(db: DbOrTrx, id: string, reason: string): Promise<boolean> {
  const result = await db
    .updateTable('webhookDeliveries')
    .set({
      state: 'dead_letter',
      errorCode: sql<string>`coalesce(error_code, 'retries_exhausted')`,
      lastError: sql<string>`coalesce(last_error, ${reason})`,
      finishedAt: sql<Date>`now()`,
      updatedAt: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .where('state', 'in', ['queued', 'processing'])
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** A stored delivery with the size and SHA-256 of the body as received. */
export type StoredDelivery = WebhookDeliveryRow & { readonly payloadBytes: number; readonly payloadSha256: string };

/**
 * Rows stored before the size and hash were recorded hold the whole body:
 * both are computed from it (`octet_length` reads the stored length, no detoasting).
 */
const payloadBytes = sql<number>`coalesce(webhook_deliveries.body_bytes, octet_length(webhook_deliveries.body))`;
const payloadSha256 = sql<string>`coalesce(webhook_deliveries.body_sha256,
  encode(sha256(convert_to(webhook_deliveries.body, 'UTF8')), 'hex'))`;

/** Re-queue a settled delivery (replay); false when it is not in a replayable state. */
export async function requeueDelivery(
  db: DbOrTrx,
  clientId: string,
  id: string,
  from: readonly WebhookDeliveryState[],
): Promise<StoredDelivery | undefined> {
  return db
    .updateTable('webhookDeliveries')
    .set({
      state: 'queued',
      replays: sql<number>`replays + 1`,
      errorCode: null,
      lastError: null,
      result: null,
      queuedAt: sql<Date>`now()`,
      startedAt: null,
      finishedAt: null,
      updatedAt: sql<Date>`now()`,
    })
    .where('clientId', '=', clientId)
    .where('id', '=', id)
    .where('state', 'in', [...from])
    .returningAll()
    .returning([payloadBytes.as('payloadBytes'), payloadSha256.as('payloadSha256')])
    .executeTakeFirst();
}

export async function findDelivery(db: DbOrTrx, clientId: string, id: string): Promise<StoredDelivery | undefined> {
  return db
    .selectFrom('webhookDeliveries')
    .selectAll()
    .select([payloadBytes.as('payloadBytes'), payloadSha256.as('payloadSha256')])
    .where('clientId', '=', clientId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export interface DeliveryPage {
  readonly state?: WebhookDeliveryState | undefined;
  /**
   * Keyset: deliveries strictly older than this (received at, id). `receivedAt` is
   * ISO text with the database's microseconds: a `Date` keeps only milliseconds, and
   * rows received later in the same millisecond as the page's last one would be skipped.
   */
  readonly before?: { readonly receivedAt: string; readonly id: string } | undefined;
  readonly limit: number;
}

/** A listed delivery with its exact (microsecond) received time, for the next page's cursor. */
export type ListedDelivery = StoredDelivery & { readonly receivedAtExact: string };

/** Newest first; `limit + 1` rows so the caller knows whether there is a next page. */
export async function listDeliveries(db: DbOrTrx, clientId: string, page: DeliveryPage): Promise<ListedDelivery[]> {
  let query = db
    .selectFrom('webhookDeliveries')
    .selectAll()
    .select([payloadBytes.as('payloadBytes'), payloadSha256.as('payloadSha256')])
    .select(sql<string>`to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('receivedAtExact'))
    .where('clientId', '=', clientId);
  if (page.state) query = query.where('state', '=', page.state);
  if (page.before) {
    const receivedAt = sql<Date>`${page.before.receivedAt}::timestamptz`;
    const { id } = page.before;
    query = query.where((eb) =>
      eb.or([eb('receivedAt', '<', receivedAt), eb.and([eb('receivedAt', '=', receivedAt), eb('id', '<', id)])]),
    );
  }
  return query
    .orderBy('receivedAt', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

export async function countDeliveriesByState(
  db: DbOrTrx,
  clientId: string,
): Promise<Partial<Record<WebhookDeliveryState, number>>> {
  const rows = await db
    .selectFrom('webhookDeliveries')
    .select(['state', (eb) => eb.fn.countAll<string>().as('count')])
    .where('clientId', '=', clientId)
    .groupBy('state')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.state, Number(row.count)]));
}

/** Retention: deliveries received before `before`, and X-Webhook-Id claims past their window. */
export async function deleteDeliveriesReceivedBefore(db: DbOrTrx, before: Date): Promise<number> {
  const result = await db.deleteFrom('webhookDeliveries').where('receivedAt', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteSignatureClaimsReceivedBefore(db: DbOrTrx, before: Date): Promise<number> {
  const result = await db.deleteFrom('webhookSignatures').where('receivedAt', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteWebhookIdsReceivedBefore(db: DbOrTrx, before: Date): Promise<number> {
  const result = await db.deleteFrom('webhookIds').where('receivedAt', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The user an event acts for, and what the app's grant lets it do. */
export interface EventGrantee {
  readonly userId: string;
  readonly timeZone: string;
  readonly scopes: string[];
}

/**
 * The user an event is for, when the app (`clientRowId`, the client's row id)
 * holds a live (not revoked) grant from that active user that carries `scope`.
 */
export async function findEventGrantee(
  db: DbOrTrx,
  clientRowId: string,
  userId: string,
  scope: string,
): Promise<EventGrantee | undefined> {
  return db
    .selectFrom('oauthGrants')
    .innerJoin('users', 'users.id', 'oauthGrants.userId')
    .select(['users.id as userId', 'users.timeZone', 'oauthGrants.scopes'])
    .where('oauthGrants.clientId', '=', clientRowId)
    .where('oauthGrants.userId', '=', userId)
    .where('oauthGrants.revokedAt', 'is', null)
    .where('users.active', '=', true)
    .where(sql<boolean>`${scope} = ANY(oauth_grants.scopes)`)
    .orderBy('oauthGrants.createdAt', 'desc')
    .limit(1)
    .modifyEnd(preparedStatement('webhook_event_grantee'))
    .executeTakeFirst();
}

/**
 * `sync_data`: the user's deliveries that failed or were dead-lettered,
 * received on the user's calendar days `from`..`to`, from apps that still hold
 * a live grant from the user. A delivery is the user's when its event (or one
 * of its events) names the user.
 */
export async function findUserRetryableDeliveries(
  db: DbOrTrx,
  options: {
    readonly userId: string;
    readonly timeZone: string;
    readonly from: string;
    readonly to: string;
    readonly limit: number;
  },
): Promise<{ id: string; clientId: string }[]> {
  const { rows } = await sql<{ id: string; clientId: string }>`
    select d.id, d.client_id
    from webhook_deliveries d
    where d.state in ('failed', 'dead_letter')
      and d.secret_matched
      and not d.body_truncated
      and (d.received_at at time zone ${options.timeZone})::date between ${options.from}::date and ${options.to}::date
      and exists (
        select 1 from oauth_clients c join oauth_grants g on g.client_id = c.id
        where c.client_id = d.client_id and g.user_id = ${options.userId} and g.revoked_at is null)
      and (d.body::jsonb @> jsonb_build_object('user', ${options.userId}::text)
        or d.body::jsonb @> jsonb_build_array(jsonb_build_object('user', ${options.userId}::text)))
    order by d.received_at, d.id
    limit ${options.limit}`.execute(db);
  return rows;
}

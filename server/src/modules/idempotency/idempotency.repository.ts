import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';
import type { IdempotencyKeysTable } from '../../db/tables.ts';

/** Whose key it is: keys of one app and user never meet another's. */
export interface IdempotencyScope {
  readonly userId: string;
  readonly clientId: string;
  readonly key: string;
}

export interface NewIdempotencyClaim extends IdempotencyScope {
  readonly claimId: string;
  readonly fingerprint: string;
  readonly method: string;
  readonly path: string;
  readonly requestContentLength: number | null;
  readonly leaseSecs: number;
  readonly ttlSecs: number;
}

export interface StoredIdempotencyKey {
  readonly fingerprint: string;
  readonly state: IdempotencyKeysTable['state'];
  readonly responseStatus: number | null;
  readonly responseContentType: string | null;
  readonly responseBody: Buffer | null;
}

export interface IdempotentResponse {
  readonly status: number;
  readonly contentType: string | null;
  readonly body: Buffer;
  readonly bodySha256: string | null;
}

const inScope = (scope: IdempotencyScope) =>
  ({ userId: scope.userId, clientId: scope.clientId, key: scope.key }) as const;

/**
 * Hold `scope` until the end of the current transaction, unless another
 * transaction holds it now: then its request is still running (false).
 * Requests with a key run in one transaction each (`runIdempotent`), so a
 * claim is never waited on: a concurrent retry is told at once.
 */
export async function tryLockIdempotencyKey(db: DbOrTrx, scope: IdempotencyScope): Promise<boolean> {
  const lockName = `idempotency:${scope.userId}:${scope.clientId}:${scope.key}`;
  const { rows } = await sql<{ held: boolean }>`
    select pg_try_advisory_xact_lock(hashtextextended(${lockName}, 0)) as held`.execute(db);
  return rows[0]?.held === true;
}

/**
 * Claim `key` in one statement: insert it, or take over a row that expired
 * or whose claim was abandoned (lease over: the process that held it died).
 * A concurrent claim of the same key waits on the primary key and then finds
 * a live row, so exactly one request wins. True when this call holds the claim.
 */
export async function claimIdempotencyKey(db: DbOrTrx, claim: NewIdempotencyClaim): Promise<boolean> {
  const lease = sql<Date>`now() + make_interval(secs => ${claim.leaseSecs})`;
  const expiry = sql<Date>`now() + make_interval(secs => ${claim.ttlSecs})`;
  const fresh = {
    claimId: claim.claimId,
    fingerprint: claim.fingerprint,
    method: claim.method,
    path: claim.path,
    requestContentLength: claim.requestContentLength,
    bodySha256: null,
    state: 'in_progress',
    responseStatus: null,
    responseContentType: null,
    responseBody: null,
    createdAt: sql<Date>`now()`,
    completedAt: null,
    leaseExpiresAt: lease,
    expiresAt: expiry,
  } as const;
  const row = await db
    .insertInto('idempotencyKeys')
    .values({ ...inScope(claim), ...fresh })
    .onConflict((oc) =>
      oc
        .columns(['userId', 'clientId', 'key'])
        .doUpdateSet(fresh)
        .where((eb) =>
          eb.or([
            eb('idempotencyKeys.expiresAt', '<=', sql<Date>`now()`),
            eb.and([
              eb('idempotencyKeys.state', '=', 'in_progress'),
              eb('idempotencyKeys.leaseExpiresAt', '<=', sql<Date>`now()`),
            ]),
          ]),
        ),
    )
    .returning('claimId')
    .executeTakeFirst();
  return row !== undefined;
}

/** The live (unexpired) row of `scope`, if any. */
export async function findIdempotencyKey(
  db: DbOrTrx,
  scope: IdempotencyScope,
): Promise<StoredIdempotencyKey | undefined> {
  return db
    .selectFrom('idempotencyKeys')
    .select(['fingerprint', 'state', 'responseStatus', 'responseContentType', 'responseBody'])
    .where('userId', '=', scope.userId)
    .where('clientId', '=', scope.clientId)
    .where('key', '=', scope.key)
    .where('expiresAt', '>', sql<Date>`now()`)
    .executeTakeFirst();
}

/** Store the response of the request holding claim `claimId`. False when the claim was lost. */
export async function completeIdempotencyKey(
  db: DbOrTrx,
  scope: IdempotencyScope,
  claimId: string,
  response: IdempotentResponse,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotencyKeys')
    .set({
      state: 'completed',
      responseStatus: response.status,
      responseContentType: response.contentType,
      responseBody: response.body,
      bodySha256: response.bodySha256,
      completedAt: sql<Date>`now()`,
    })
    .where('userId', '=', scope.userId)
    .where('clientId', '=', scope.clientId)
    .where('key', '=', scope.key)
    .where('claimId', '=', claimId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Give the key up so a retry runs the request again (only the claim's own holder can). */
export async function releaseIdempotencyKey(db: DbOrTrx, scope: IdempotencyScope, claimId: string): Promise<void> {
  await db
    .deleteFrom('idempotencyKeys')
    .where('userId', '=', scope.userId)
    .where('clientId', '=', scope.clientId)
    .where('key', '=', scope.key)
    .where('claimId', '=', claimId)
    .where('state', '=', 'in_progress')
    .execute();
}

/** Housekeeping: a row past `expiresAt` is never replayed and is taken over by its next claim anyway. */
export async function deleteIdempotencyKeysExpiredBefore(db: DbOrTrx, before: Date): Promise<number> {
  const result = await db.deleteFrom('idempotencyKeys').where('expiresAt', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

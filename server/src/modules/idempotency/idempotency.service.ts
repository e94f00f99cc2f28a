import { createHash, randomUUID } from 'node:crypto';
import { IdempotencyKeySchema } from '@pacer/contract';
import type { Db, DbOrTrx } from '../../db/database.ts';
import { inTransaction } from '../../db/transaction.ts';
import { AppError } from '../../errors.ts';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  findIdempotencyKey,
  type IdempotencyScope,
  type IdempotentResponse,
  releaseIdempotencyKey,
  tryLockIdempotencyKey,
} from './idempotency.repository.ts';

export type { IdempotencyScope, IdempotentResponse } from './idempotency.repository.ts';

/** A stored response is replayed for 24 hours after the first request (docs/design.md §3). */
export const IDEMPOTENCY_TTL_SECS = 86_400;
/**
 * How long an unfinished claim holds its key. A claim is made, used and
 * settled in one transaction (unit-of-work.ts), so no committed row is ever
 * `in_progress` and a dead process's claim vanishes with its transaction;
 * the lease only covers rows an older version of Pacer left behind.
 */
export const IDEMPOTENCY_LEASE_SECS = 600;
/** What a request still in flight tells the retrying client. */
const IN_PROGRESS_RETRY_AFTER_SECS = 1;

export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** The `Idempotency-Key` header's value, undefined when absent; a malformed key is a 400. */
export function parseIdempotencyKey(header: string | readonly string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  // 1-255 visible ASCII characters (no spaces or controls): a UUID, a ULID, any token of the client's.
  // A repeated header arrives joined with ", " and fails the format too.
  if (typeof header === 'string' && IdempotencyKeySchema.safeParse(header).success) return header;
  throw new AppError(
    'validation_failed',
    'The Idempotency-Key header must be 1 to 255 visible ASCII characters, sent once.',
    { errors: [{ path: 'Idempotency-Key', message: 'must be 1-255 visible ASCII characters' }] },
  );
}

/** JSON with object keys sorted at every level: equal values, equal text, whatever order the client wrote. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    const record = inner as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(record)
        .sort()
        .map((key) => [key, record[key]]),
    );
  });
}

export type RequestBodyFingerprint =
  /** A parsed JSON body (or `undefined` when the request had none). */
  | { readonly kind: 'json'; readonly body: unknown }
  /**
   * A body the route parses itself while streaming it (multipart uploads):
   * it is unread when the key is claimed, so only its declared length takes
   * part. Boundaries are fixed-length per client library, so an honest retry
   * has the same length while a different file almost always has another.
   */
  | { readonly kind: 'streamed'; readonly contentLength: number | null };

export interface FingerprintOptions {
  readonly method: string;
  /** Path and query string as sent. */
  readonly url: string;
  readonly body: RequestBodyFingerprint;
}

/** SHA-256 over method, URL and body: what "the same request" means for a key. */
export function fingerprintRequest(options: FingerprintOptions): string {
  const body =
    options.body.kind === 'json'
      ? ['json', options.body.body === undefined ? null : canonicalJson(options.body.body)]
      : ['streamed', options.body.contentLength];
  return createHash('sha256')
    .update(JSON.stringify([options.method.toUpperCase(), options.url, ...body]))
    .digest('hex');
}

export interface BeginIdempotentRequestOptions extends FingerprintOptions {
  readonly scope: IdempotencyScope;
  readonly path: string;
  readonly requestContentLength: number | null;
}

export type IdempotencyStart =
  /** This request holds the key: run it, then `finishIdempotentRequest`. */
  | { readonly outcome: 'claimed'; readonly claimId: string }
  /** The key's first request finished: answer its response again. */
  | { readonly outcome: 'replay'; readonly response: Omit<IdempotentResponse, 'bodySha256'> };

/** Claims are retried when the row vanished between two statements (released by a failed request, or purged). */
const CLAIM_ATTEMPTS = 3;

const inProgress = () =>
  new AppError(
    'idempotency_in_progress',
    'A request with this Idempotency-Key is still being processed; retry after it has finished.',
    { headers: { 'Retry-After': String(IN_PROGRESS_RETRY_AFTER_SECS) } },
  );

/**
 * docs/design.md §3: a retried write with the same key and body replays the first
 * response; the same key with another body is a 422; while the first request
 * with the key still runs, a retry gets 409 (it may come back shortly).
 *
 * Runs in the request's unit of work (unit-of-work.ts): the claim, the
 * request's writes and `finishIdempotentRequest` commit together, so a
 * stored response always describes writes that are stored, and writes are
 * never stored without their key.
 */
export async function beginIdempotentRequest(
  db: DbOrTrx,
  options: BeginIdempotentRequestOptions,
): Promise<IdempotencyStart> {
  if (!(await tryLockIdempotencyKey(db, options.scope))) throw inProgress();
  const fingerprint = fingerprintRequest(options);
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    const claimId = randomUUID();
    const claimed = await claimIdempotencyKey(db, {
      ...options.scope,
      claimId,
      fingerprint,
      method: options.method.toUpperCase(),
      path: options.path,
      requestContentLength: options.requestContentLength,
      leaseSecs: IDEMPOTENCY_LEASE_SECS,
      ttlSecs: IDEMPOTENCY_TTL_SECS,
    });
    if (claimed) return { outcome: 'claimed', claimId };
    const stored = await findIdempotencyKey(db, options.scope);
    if (!stored) continue;
    if (stored.fingerprint !== fingerprint) {
      throw new AppError(
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request (method, path or body). Use a new key for a new request.',
      );
    }
    if (stored.state === 'completed' && stored.responseStatus !== null) {
      return {
        outcome: 'replay',
        response: {
          status: stored.responseStatus,
          contentType: stored.responseContentType,
          body: stored.responseBody ?? Buffer.alloc(0),
        },
      };
    }
    break;
  }
  throw inProgress();
}

export interface FinishIdempotentRequestOptions {
  readonly scope: IdempotencyScope;
  readonly claimId: string;
  readonly response: IdempotentResponse;
  /**
   * False: give the key up instead of storing the response, so a retry runs
   * the request again (server errors, and requests whose body never fully arrived).
   */
  readonly keep: boolean;
}

/** Store the response for replay, or release the key (in the transaction that claimed it). */
export async function finishIdempotentRequest(db: DbOrTrx, options: FinishIdempotentRequestOptions): Promise<void> {
  if (options.keep) await completeIdempotencyKey(db, options.scope, options.claimId, options.response);
  else await releaseIdempotencyKey(db, options.scope, options.claimId);
}

/**
 * Keep the answer of a request whose work was rolled back (a 4xx, or a tool
 * error) for replay, in a transaction of its own: claim and store at once.
 * A request that took the key meanwhile wins; nothing is stored then.
 */
export async function recordIdempotentAnswer(
  db: Db,
  options: BeginIdempotentRequestOptions & { readonly response: IdempotentResponse },
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const start = await beginIdempotentRequest(trx, options).catch((error: unknown) => {
      if (error instanceof AppError) return undefined;
      throw error;
    });
    if (start?.outcome !== 'claimed') return;
    await completeIdempotencyKey(trx, options.scope, start.claimId, options.response);
  });
}

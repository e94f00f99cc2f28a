import { createHash, randomUUID } from 'node:crypto';
import { IdempotencyKeySchema } from '@pacer/contract';
import type { ControlledTransaction, Transaction } from 'kysely';
import type { Database, Db } from '../../db/database.ts';
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
 * settled in one transaction (`runIdempotent`), so no committed row is ever
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

type IdempotencyStart =
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
 * Runs in the transaction that will hold the request's writes and its stored
 * response (`runIdempotent`).
 */
async function beginIdempotentRequest(
  trx: Transaction<Database>,
  options: BeginIdempotentRequestOptions,
): Promise<IdempotencyStart> {
  if (!(await tryLockIdempotencyKey(trx, options.scope))) throw inProgress();
  const fingerprint = fingerprintRequest(options);
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    const claimId = randomUUID();
    const claimed = await claimIdempotencyKey(trx, {
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
    const stored = await findIdempotencyKey(trx, options.scope);
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

/** What the work of an idempotent request answered, and what becomes of it. */
export interface IdempotentAnswer {
  readonly response: IdempotentResponse;
  /**
   * A success: the work's writes and the stored response commit together.
   * Otherwise the writes are rolled back.
   */
  readonly commit: boolean;
  /**
   * Keep the response for replay. False leaves the key free, so a retry runs
   * the request again (server errors, rate limits, a body that never fully arrived).
   */
  readonly keep: boolean;
}

export type IdempotentOutcome<A extends IdempotentAnswer> =
  /** The key's first request finished before: its response, to answer again. */
  | { readonly outcome: 'replay'; readonly response: Omit<IdempotentResponse, 'bodySha256'> }
  | {
      readonly outcome: 'ran';
      readonly answer: A;
      /**
       * Set when a kept answer of rolled-back work could not be stored: the
       * answer still goes out, and a retry runs the request again.
       */
      readonly unstored?: unknown;
    };

/**
 * Run a request with an `Idempotency-Key` (REST) or an idempotency key (MCP)
 * once (docs/design.md §3): claim the key, run `work` in the transaction
 * that holds the claim, and settle:
 * - `commit`: the work's writes and its stored response commit together, so
 *   a stored response always describes writes that are stored, and writes
 *   are never stored without their key;
 * - otherwise the writes are rolled back, and a `keep` answer (a 4xx, a tool
 *   error) is stored on its own for replay;
 * - `work` throwing rolls everything back and leaves the key free.
 * A process that dies mid-request leaves neither the writes nor the key
 * behind: PostgreSQL rolls the transaction back and a retry runs once (with
 * separate transactions a write could commit while its key stayed
 * unfinished, and a retry after the lease would apply it twice).
 *
 * The transaction is Kysely's controlled one: the REST middleware's work
 * finishes only when the route has answered, after the middleware returned.
 */
export async function runIdempotent<A extends IdempotentAnswer>(
  db: Db,
  request: BeginIdempotentRequestOptions,
  work: (trx: Transaction<Database>) => Promise<A>,
): Promise<IdempotentOutcome<A>> {
  const trx = await db.startTransaction().execute();
  let answer: A;
  try {
    const start = await beginIdempotentRequest(trx, request);
    if (start.outcome === 'replay') {
      await trx.rollback().execute();
      return start;
    }
    answer = await work(trx);
    if (answer.commit) {
      await finishIdempotentRequest(trx, { scope: request.scope, claimId: start.claimId, ...answer });
      await trx.commit().execute();
      return { outcome: 'ran', answer };
    }
  } catch (error) {
    await rollBack(trx);
    throw error;
  }
  await rollBack(trx);
  if (!answer.keep) return { outcome: 'ran', answer };
  try {
    await recordIdempotentAnswer(db, { ...request, response: answer.response });
    return { outcome: 'ran', answer };
  } catch (error) {
    return { outcome: 'ran', answer, unstored: error };
  }
}

/** Undo what the transaction holds; a rollback that fails (a broken connection) has undone it as well. */
async function rollBack(trx: ControlledTransaction<Database>): Promise<void> {
  if (trx.isCommitted || trx.isRolledBack) return;
  await trx
    .rollback()
    .execute()
    .catch(() => undefined);
}

/** Store the response for replay, or release the key (in the transaction that claimed it). */
async function finishIdempotentRequest(
  trx: Transaction<Database>,
  options: { readonly scope: IdempotencyScope; readonly claimId: string } & IdempotentAnswer,
): Promise<void> {
  if (options.keep) await completeIdempotencyKey(trx, options.scope, options.claimId, options.response);
  else await releaseIdempotencyKey(trx, options.scope, options.claimId);
}

/**
 * Keep the answer of a request whose work was rolled back (a 4xx, or a tool
 * error) for replay, in a transaction of its own: claim and store at once.
 * A request that took the key meanwhile wins; nothing is stored then.
 */
async function recordIdempotentAnswer(
  db: Db,
  options: BeginIdempotentRequestOptions & { readonly response: IdempotentResponse },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const start = await beginIdempotentRequest(trx, options).catch((error: unknown) => {
      if (error instanceof AppError) return undefined;
      throw error;
    });
    if (start?.outcome !== 'claimed') return;
    await completeIdempotencyKey(trx, options.scope, start.claimId, options.response);
  });
}

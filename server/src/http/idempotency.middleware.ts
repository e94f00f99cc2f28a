import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Transaction } from 'kysely';
import type { Database, Db } from '../db/database.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import {
  type BeginIdempotentRequestOptions,
  IDEMPOTENCY_HEADER,
  type IdempotentAnswer,
  type IdempotentResponse,
  parseIdempotencyKey,
  runIdempotent,
} from '../modules/idempotency/idempotency.service.ts';
import { sendProblem } from './problem.ts';
import { replayHeadersMismatch } from './response-check.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's own augmentation point
  namespace Express {
    interface Locals {
      /** The transaction of a request with an `Idempotency-Key`: its writes go there (`writeDepsOf`). */
      idempotentTrx?: Transaction<Database>;
    }
  }
}

/**
 * The dependencies a write route passes to its service: with the transaction
 * that holds the request's `Idempotency-Key` as `db` when it has one, so the
 * writes commit with the stored response or not at all; else as they are.
 */
export function writeDepsOf<D extends { readonly db: Db }>(res: { locals: Express.Locals }, deps: D): D {
  const trx = res.locals.idempotentTrx;
  return trx ? { ...deps, db: trx } : deps;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Marks an answer that is a replay of a stored response (the header Stripe and others use). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

interface RouteInfo {
  readonly method: string;
  readonly contentType?: string;
}

function contentLengthOf(req: Request): number | null {
  const header = req.headers['content-length'];
  if (header === undefined || !/^\d{1,15}$/.test(header)) return null;
  return Number(header);
}

/**
 * A response is kept for replay unless a retry deserves a fresh run: server
 * errors (5xx), 408/429, and requests whose body never fully arrived (the
 * client gave up, or the route stopped reading at its size limit).
 */
function keepsResponse(req: Request, status: number): boolean {
  return status < 500 && status !== 408 && status !== 429 && req.complete;
}

function replay(
  req: Request,
  res: Response,
  response: { status: number; contentType: string | null; body: Buffer },
  deps: IdempotencyDeps,
): void {
  res.status(response.status);
  if (response.contentType) res.setHeader('Content-Type', response.contentType);
  res.setHeader(REPLAYED_HEADER, 'true');
  // Under test (PACER_CHECK_RESPONSES) a replay's headers are checked against openapi.json like any answer's.
  const mismatch = deps.config?.checkResponses
    ? replayHeadersMismatch(req, response.status, res.getHeaders())
    : undefined;
  if (mismatch) {
    deps.logger.error({ requestId: res.locals.requestId, mismatch }, 'answer disagrees with the contract');
    for (const name of ANSWER_HEADERS) res.removeHeader(name);
    res.removeHeader(REPLAYED_HEADER);
    sendProblem(res, new AppError('internal_error', `The answer disagrees with the contract: ${mismatch}`));
    return;
  }
  res.send(response.body);
}

type Chunk = string | Uint8Array;

function chunkOf(args: readonly unknown[]): Buffer | undefined {
  const [chunk, encoding] = args;
  if (typeof chunk === 'string')
    return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  if (chunk instanceof Uint8Array) return Buffer.from(chunk);
  return undefined;
}

/**
 * Hold the response back until `settle` has run: the key's response (with
 * the request's writes) must be committed before the client can see it, or
 * an immediate retry with the same key would find it still in progress
 * (409) instead of the replay. `settle` answers whether the captured answer
 * may go out; when not (its writes could not be committed), `fail` answers
 * instead, if the headers are still unsent, or the connection is cut.
 */
function captureResponse(
  res: Response,
  settle: (response: Omit<IdempotentResponse, 'bodySha256'>) => Promise<boolean>,
  fail: () => void,
) {
  const chunks: Buffer[] = [];
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  let ending = false;
  res.write = ((...args: [Chunk, ...unknown[]]) => {
    const chunk = chunkOf(args);
    if (chunk) chunks.push(chunk);
    return write(...args);
  }) as Response['write'];
  res.end = ((...args: unknown[]) => {
    if (ending) return end(...args);
    ending = true;
    const chunk = chunkOf(args);
    if (chunk) chunks.push(chunk);
    const contentType = res.getHeader('content-type');
    void settle({
      status: res.statusCode,
      contentType: typeof contentType === 'string' ? contentType : null,
      body: Buffer.concat(chunks),
    }).then((send) => {
      if (send) end(...args);
      else if (res.headersSent) res.destroy();
      else fail();
    });
    return res;
  }) as Response['end'];
}

/** Headers of an answer that must not survive its replacement by a 500. */
const ANSWER_HEADERS = ['content-type', 'content-length', 'etag', 'last-modified', 'location'];

function answerInternalError(res: Response): void {
  for (const name of ANSWER_HEADERS) res.removeHeader(name);
  sendProblem(res, new AppError('internal_error', 'The request could not be saved; nothing was stored. Retry it.'));
}

export interface IdempotencyDeps {
  readonly db: Db;
  readonly logger: Logger;
  readonly config?: { readonly checkResponses: boolean };
}

/**
 * `Idempotency-Key` on every REST write (docs/design.md §3). Runs after
 * authentication (keys are scoped to the token's app and user) and after
 * JSON parsing (the body takes part in the fingerprint). A multipart body is
 * still unread here: the route streams it, so its declared length stands in
 * for it (see `RequestBodyFingerprint`). The key, the fingerprint and the
 * response live in PostgreSQL, so every API process sees the same keys.
 *
 * The rules are `runIdempotent`'s, as for MCP tools: the route runs in the
 * transaction that holds the claim (handed to it as `res.locals`'s
 * `idempotentTrx`, see `writeDepsOf`), and its answer settles it. A success
 * (2xx/3xx) commits the writes with the stored response; any other answer
 * rolls them back, a 4xx is then kept for replay, a 5xx (or a body that
 * never fully arrived) leaves the key free for a retry.
 */
export function idempotency(deps: IdempotencyDeps): RequestHandler {
  return (req, res, next) => {
    const route = (req as { tsRestRoute?: RouteInfo }).tsRestRoute;
    if (!route || !WRITE_METHODS.has(route.method)) {
      next();
      return;
    }
    let key: string | undefined;
    try {
      key = parseIdempotencyKey(req.headers[IDEMPOTENCY_HEADER]);
    } catch (error) {
      next(error);
      return;
    }
    const principal = res.locals.principal;
    // Routes without authentication have no caller to scope keys to; none of them writes.
    if (key === undefined || !principal) {
      next();
      return;
    }
    const contentLength = contentLengthOf(req);
    const streamed = route.contentType === 'multipart/form-data';
    const request: BeginIdempotentRequestOptions = {
      scope: { userId: principal.userId, clientId: principal.clientId, key },
      method: req.method,
      url: req.originalUrl,
      path: req.path,
      requestContentLength: contentLength,
      body: streamed ? { kind: 'streamed', contentLength } : { kind: 'json', body: req.body as unknown },
    };
    void runRoute(deps, req, res, next, request);
  };
}

/** The route as `runIdempotent`'s work: it runs on from `next()` and ends when its answer is captured. */
async function runRoute(
  deps: IdempotencyDeps,
  req: Request,
  res: Response,
  next: NextFunction,
  request: BeginIdempotentRequestOptions,
): Promise<void> {
  // Settled when `runIdempotent` has committed or rolled back: whether the captured answer may go out.
  let settled!: (send: boolean) => void;
  const sendable = new Promise<boolean>((resolve) => (settled = resolve));
  let answered = false;
  const work = (trx: Transaction<Database>) =>
    new Promise<IdempotentAnswer>((resolve) => {
      res.locals.idempotentTrx = trx;
      // A client that goes away mid-request does not end the transaction early: the route runs to
      // its answer, which is settled as usual, so its writes and the key's response stay together.
      captureResponse(
        res,
        (response) => {
          // The upload route hashes the file while streaming it (workouts module).
          const answer = { ...response, bodySha256: res.locals.fitUpload?.sha256 ?? null };
          answered = true;
          resolve({
            response: answer,
            commit: response.status < 400,
            keep: keepsResponse(req, response.status),
          });
          return sendable;
        },
        () => answerInternalError(res),
      );
      next();
    });
  try {
    const outcome = await runIdempotent(deps.db, request, work);
    if (outcome.outcome === 'replay') {
      replay(req, res, outcome.response, deps);
      return;
    }
    if (outcome.unstored !== undefined) {
      // The answer still goes out; a retry runs the request again.
      deps.logger.error(
        { err: outcome.unstored, requestId: res.locals.requestId },
        'could not store an idempotent answer',
      );
    }
    settled(true);
  } catch (error) {
    if (!answered) {
      // Refused before the route ran (key in progress, reused, or the database unreachable).
      next(error);
      return;
    }
    deps.logger.error({ err: error, requestId: res.locals.requestId }, 'could not commit an idempotent request');
    settled(false);
  }
}

import type { Request, RequestHandler, Response } from 'express';
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import {
  beginIdempotentRequest,
  finishIdempotentRequest,
  IDEMPOTENCY_HEADER,
  type IdempotencyScope,
  type IdempotentResponse,
  parseIdempotencyKey,
} from '../modules/idempotency/idempotency.service.ts';

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

function replay(res: Response, response: { status: number; contentType: string | null; body: Buffer }): void {
  res.status(response.status);
  if (response.contentType) res.setHeader('Content-Type', response.contentType);
  res.setHeader(REPLAYED_HEADER, 'true');
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
 * Hold the response back until `store` has run: the stored response must be
 * committed before the client can see it, or an immediate retry with the same
 * key would find the key still in progress (409) instead of the replay.
 */
function captureResponse(res: Response, store: (response: Omit<IdempotentResponse, 'bodySha256'>) => Promise<void>) {
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
    void store({
      status: res.statusCode,
      contentType: typeof contentType === 'string' ? contentType : null,
      body: Buffer.concat(chunks),
    }).finally(() => end(...args));
    return res;
  }) as Response['end'];
}

export interface IdempotencyDeps {
  readonly db: Db;
  readonly logger: Logger;
}

/**
 * `Idempotency-Key` on every REST write (DESIGN.md §3). Runs after
 * authentication (keys are scoped to the token's app and user) and after
 * JSON parsing (the body takes part in the fingerprint). A multipart body is
 * still unread here: the route streams it, so its declared length stands in
 * for it (see `RequestBodyFingerprint`). The key, the fingerprint and the
 * response live in PostgreSQL, so every API process sees the same keys.
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
    const scope: IdempotencyScope = { userId: principal.userId, clientId: principal.clientId, key };
    const contentLength = contentLengthOf(req);
    const streamed = route.contentType === 'multipart/form-data';
    beginIdempotentRequest(deps.db, {
      scope,
      method: req.method,
      url: req.originalUrl,
      path: req.path,
      requestContentLength: contentLength,
      body: streamed ? { kind: 'streamed', contentLength } : { kind: 'json', body: req.body as unknown },
    }).then((start) => {
      if (start.outcome === 'replay') {
        replay(res, start.response);
        return;
      }
      captureResponse(res, async (response) => {
        try {
          await finishIdempotentRequest(deps.db, {
            scope,
            claimId: start.claimId,
            // The upload route hashes the file while streaming it (workouts module).
            response: { ...response, bodySha256: res.locals.fitUpload?.sha256 ?? null },
            keep: keepsResponse(req, response.status),
          });
        } catch (error) {
          // The answer still goes out; the key stays claimed until its lease ends.
          deps.logger.error(
            { err: error, requestId: res.locals.requestId },
            'could not store the response of an idempotent request',
          );
        }
      });
      next();
    }, next);
  };
}

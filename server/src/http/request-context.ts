import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { type Logger, requestLineLogger } from '../logger.ts';
import { clientIpOf } from './client-address.ts';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The caller's `X-Request-Id` when it is a sane token, otherwise a new UUID; echoed back. */
function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/**
 * A request id per request (`res.locals.requestId`, `X-Request-Id`) and, when
 * the level logs them, one line per request once its answer is sent (or the
 * connection closed): the line pino-http wrote, `req` (id, method, path
 * without the query string, which may carry secrets, and the client address
 * PACER_TRUST_PROXY yields, as for rate limits), `requestId`, `res`
 * (`statusCode`), `responseTime` (ms), at info, or at error with `err` for a
 * 5xx. Written by hand rather than by pino-http: its two child loggers per
 * request cost more than the line itself. Above `info` nothing per request
 * would be written, so no listener is added.
 */
export function requestContext(logger: Logger): RequestHandler {
  const logs = logger.isLevelEnabled('info');
  const lines = { logger, completed: requestLineLogger(logger) };
  return (req, res, next) => {
    const requestId = assignRequestId(req, res);
    res.locals.requestId = requestId;
    if (logs && req.url !== '/healthz' && req.url !== '/readyz') logWhenDone(lines, req, res, requestId);
    next();
  };
}

/** `logger` for lines that carry an error (redacted as every line), `completed` for the others (see requestLineLogger). */
interface RequestLines {
  readonly logger: Logger;
  readonly completed: Logger;
}

function logWhenDone(lines: RequestLines, req: Request, res: Response, requestId: string): void {
  const startedAt = Date.now();
  const url = req.originalUrl || req.url;
  const query = url.indexOf('?');
  const line = {
    req: { id: requestId, method: req.method, path: query < 0 ? url : url.slice(0, query), clientIp: clientIpOf(req) },
    requestId,
  };
  const done = (error?: unknown) => {
    res.removeListener('finish', done);
    res.removeListener('close', done);
    res.removeListener('error', done);
    const responseTime = Date.now() - startedAt;
    const statusCode = res.statusCode;
    if (error !== undefined || statusCode >= 500) {
      const err = error ?? new Error(`failed with status code ${statusCode}`);
      lines.logger.error({ ...line, res: { statusCode }, err, responseTime }, 'request errored');
      return;
    }
    const completed = !req.readableAborted && res.writableEnded;
    lines.completed.info(
      { ...line, res: { statusCode }, responseTime },
      completed ? 'request completed' : 'request aborted',
    );
  };
  res.on('finish', done);
  res.on('close', done);
  res.on('error', done);
}

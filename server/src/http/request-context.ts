import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger.ts';
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
 * the level logs them, one pino-http line per request. Above `info` nothing
 * per request would be written, so pino-http's per-request work (a child
 * logger and a finish listener per request) is skipped.
 */
export function requestContext(logger: Logger): RequestHandler {
  if (!logger.isLevelEnabled('info')) {
    return (req, res, next) => {
      res.locals.requestId = assignRequestId(req, res);
      next();
    };
  }
  const httpLogger = requestLogger(logger);
  return (req, res, next) => {
    httpLogger(req, res);
    // genReqId (below) always returns a string.
    res.locals.requestId = req.id as string;
    next();
  };
}

function requestLogger(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: assignRequestId,
    customProps(req) {
      return { requestId: req.id };
    },
    serializers: {
      req(req: { id: unknown; method: string; url: string; raw: Request }) {
        // Only what an operator needs; the query string may carry secrets.
        // The client address is the one PACER_TRUST_PROXY yields, as for rate limits.
        return { id: req.id, method: req.method, path: req.url.split('?')[0], clientIp: clientIpOf(req.raw) };
      },
      res(res: { statusCode: number }) {
        return { statusCode: res.statusCode };
      },
    },
    customLogLevel(_req, res, error) {
      if (error || res.statusCode >= 500) return 'error';
      return 'info';
    },
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
  });
}

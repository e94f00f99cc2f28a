import type { Server, ServerOptions } from 'node:http';
import { contract } from '@pacer/contract';
import type { RequestHandler } from 'express';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { sendProblem } from './problem.ts';

/**
 * A client has this long from its first byte to the end of its headers
 * (Node's default is 60 s). Real clients send headers in one packet; a
 * slow-loris trickling header lines holds a socket for no more than this.
 */
export const HEADERS_TIMEOUT_MS = 20_000;

/**
 * A kept-alive connection with no request is closed after this. Longer than
 * the 60 s idle timeout of the usual load balancers (AWS ALB, nginx
 * `keepalive_timeout` 60 s), so the proxy closes first and never writes a
 * request onto a connection we are closing (which it would answer 502).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * A socket on which nothing moves either way for this long is destroyed,
 * whatever state its request is in (Node's default is no limit). Longer than
 * any answer we compute without writing (a FIT decode waiting in its queue),
 * short enough that a stalled peer does not hold a socket for minutes.
 */
export const IDLE_SOCKET_TIMEOUT_MS = 120_000;

/** Past the request deadlines below, Node's own `requestTimeout` cuts whatever the app did not (a backstop). */
const BACKSTOP_MARGIN_MS = 5_000;

/** Node checks its `requestTimeout` on this interval (default 30 s), so the backstop is close to its setting. */
const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;

/** The upload routes, which get `PACER_UPLOAD_TIMEOUT_MS`. */
const UPLOAD_PATHS: ReadonlySet<string> = new Set([
  contract.workouts.uploadFit.path,
  contract.workouts.uploadActivity.path,
]);

/** `createServer` options: the headers and backstop request timeouts Node enforces itself. */
export function httpServerOptions(config: Config): ServerOptions {
  const requestTimeout = Math.max(config.requestTimeoutMs, config.uploadTimeoutMs) + BACKSTOP_MARGIN_MS;
  return {
    requestTimeout,
    // Node refuses a headers timeout longer than the request timeout.
    headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeout),
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
  };
}

/** The idle socket timeout, set on a created server (it has no `createServer` option). */
export function applyIdleTimeout(server: Server): void {
  // With no 'timeout' listener Node destroys the idle socket.
  server.setTimeout(IDLE_SOCKET_TIMEOUT_MS);
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0';
}

/**
 * Each request's body must arrive within a deadline counted from the moment
 * its headers were read: `PACER_REQUEST_TIMEOUT_MS` (30 s by default; a JSON
 * body is at most 1 MiB), or `PACER_UPLOAD_TIMEOUT_MS` for a FIT upload (up
 * to 25 MiB from a phone's uplink). Node's one `requestTimeout` cannot tell
 * the two apart, so the app keeps the deadline: a body still arriving when it
 * passes is answered 408 `request_timeout` and the connection closed, which
 * ends a slow-drip request long before Node's default 300 s. Requests with no
 * body are complete once their headers are, and get no timer.
 */
export function requestDeadline(config: Config): RequestHandler {
  return (req, res, next) => {
    if (!hasBody(req.headers)) {
      next();
      return;
    }
    const upload = req.method === 'POST' && UPLOAD_PATHS.has(req.path);
    const limitMs = upload ? config.uploadTimeoutMs : config.requestTimeoutMs;
    const timer = setTimeout(() => {
      if (req.complete) return;
      if (res.headersSent) {
        req.socket.destroy();
        return;
      }
      res.setHeader('Connection', 'close');
      const what = upload ? 'The upload' : 'The request body';
      sendProblem(res, new AppError('request_timeout', `${what} did not arrive within ${String(limitMs / 1000)} s.`));
    }, limitMs);
    const clear = () => clearTimeout(timer);
    res.once('finish', clear);
    res.once('close', clear);
    next();
  };
}

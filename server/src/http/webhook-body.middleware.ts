// Incoming webhooks (`POST /webhooks/{clientId}`): the request is counted against the
// rate limits before anything else, the body is read as bytes for the signature check,
// and the headers and query are stored with their secrets redacted.
import express, { type Request, type RequestHandler } from 'express';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import { rateLimitHeaders } from '../modules/rate-limit/rate-limit.service.ts';
import { admitWebhookRequest } from '../modules/webhooks/webhook-rate-limit.service.ts';
import { clientIpOf } from './client-address.ts';
import { isJson, notJson } from './json-body.ts';

const WEBHOOK_BODY_LIMIT_BYTES = 1024 * 1024;
const REDACTED = '[redacted]';
/** Headers never stored as sent. */
const SECRET_HEADERS = new Set(['x-webhook-secret', 'authorization', 'cookie', 'proxy-authorization']);

const readRaw = express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT_BYTES });
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * `PACER_WEBHOOK_RATE_LIMIT_*`: per address and per app, decided before the
 * body is read (a refused request costs one upsert, not 1 MiB read), with
 * the `RateLimit-*` headers of the tightest window on every answer.
 */
export function webhookRateLimit(deps: { readonly db: Db; readonly config: Config }): RequestHandler {
  return (req, res, next) => {
    admitWebhookRequest(deps, { clientId: String(req.params['clientId']), clientIp: clientIpOf(req) }).then(
      (result) => {
        if (result) res.set(rateLimitHeaders(result));
        next();
      },
      next,
    );
  };
}

/**
 * The webhook body as bytes (a signature covers the exact bytes), at most
 * 1 MiB (413), `application/json` (415), valid UTF-8 JSON (400) nesting at
 * most 64 levels (400 `json_too_deep`, measured before it is parsed). The
 * parsed value goes on for contract validation, the bytes into `res.locals.rawBody`.
 */
export const webhookBody: RequestHandler = (req, res, next) => {
  if (!isJson(req)) {
    next(notJson(req, 'the webhook body'));
    return;
  }
  readRaw(req, res, (error?: unknown) => {
    if (error) {
      next(error);
      return;
    }
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (jsonNestsDeeperThan(raw)) {
      next(
        new AppError('json_too_deep', `The body nests deeper than ${MAX_JSON_DEPTH} levels.`, {
          errors: [{ path: '', message: `nested deeper than ${MAX_JSON_DEPTH} levels` }],
        }),
      );
      return;
    }
    try {
      const text = utf8.decode(raw);
      req.body = JSON.parse(text) as unknown;
    } catch {
      next(
        new AppError('invalid_json', 'The body is not valid JSON (UTF-8).', {
          errors: [{ path: '', message: raw.length === 0 ? 'empty body' : 'invalid JSON' }],
        }),
      );
      return;
    }
    res.locals['rawBody'] = raw;
    next();
  });
};

export function redactedHeaders(req: Request): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[name] = SECRET_HEADERS.has(name) ? REDACTED : Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** The query string as sent (repeated names kept), with `secret` redacted. */
export function redactedQuery(params: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of params) {
    const shown = name === 'secret' ? REDACTED : value;
    const existing = query[name];
    query[name] = existing === undefined ? shown : Array.isArray(existing) ? [...existing, shown] : [existing, shown];
  }
  return query;
}

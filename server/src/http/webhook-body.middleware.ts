// Incoming webhooks (`POST /webhooks/{clientId}`): the body is read as bytes for the
// signature check, and the headers and query are stored with their secrets redacted.
import express, { type Request, type RequestHandler } from 'express';
import { AppError } from '../errors.ts';
import { isJson, notJson } from './json-body.ts';

const WEBHOOK_BODY_LIMIT_BYTES = 1024 * 1024;
const REDACTED = '[redacted]';
/** Headers never stored as sent. */
const SECRET_HEADERS = new Set(['x-webhook-secret', 'authorization', 'cookie', 'proxy-authorization']);

const readRaw = express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT_BYTES });
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The webhook body as bytes (a signature covers the exact bytes), at most
 * 1 MiB (413), `application/json` (415), valid UTF-8 JSON (400). The parsed
 * value goes on for contract validation, the bytes into `res.locals.rawBody`.
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

import express, { type Request, type RequestHandler } from 'express';
import { AppError } from '../errors.ts';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from '../lib/json-depth.ts';

export const JSON_BODY_LIMIT = '1mb';

/** The body-parser error `type` of a body refused by `refuseDeepJson`. */
export const JSON_TOO_DEEP = 'entity.too.deep';

/**
 * body-parser's `verify` hook: it sees the raw bytes before `JSON.parse`
 * builds them into objects, so a body nesting deeper than `MAX_JSON_DEPTH`
 * is refused unparsed. body-parser answers whatever `verify` throws as a 403
 * keeping the thrown `type`; each surface's error handler maps that `type`
 * to its own 400 (problem+json, RFC 6749, RFC 7591).
 */
export function refuseDeepJson(_req: unknown, _res: unknown, body: Buffer): void {
  if (jsonNestsDeeperThan(body)) {
    throw Object.assign(new Error(`The body nests deeper than ${MAX_JSON_DEPTH} levels.`), { type: JSON_TOO_DEEP });
  }
}

/** 400 `json_too_deep` for a body `refuseDeepJson` refused. */
export function jsonTooDeep(what: string): AppError {
  return new AppError('json_too_deep', `${what} nests deeper than ${MAX_JSON_DEPTH} levels.`, {
    errors: [{ path: '', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }],
  });
}

const parseJson = express.json({ limit: JSON_BODY_LIMIT, strict: true, type: () => true, verify: refuseDeepJson });

/** Whether the request says its body is JSON (`application/json` or a `+json` type). */
export function isJson(req: Request): boolean {
  return Boolean(req.is(['application/json', 'application/*+json']));
}

/** 415 for a body that is not JSON, naming what was sent (`what`: "the body", "the webhook body"). */
export function notJson(req: Request, what: string): AppError {
  return new AppError('unsupported_media_type', `Send ${what} as \`application/json\`.`, {
    errors: [{ path: '', message: `content type ${req.headers['content-type'] ?? '(none)'} is not application/json` }],
  });
}

/**
 * For contract routes with a JSON body: refuse other media types with 415,
 * then parse (1 MiB at most, else 413; deeper than `MAX_JSON_DEPTH`, 400). Runs after authentication so an
 * anonymous caller cannot make us read a large body.
 */
export const jsonBody: RequestHandler = (req, res, next) => {
  const route = (req as { tsRestRoute?: { method: string; contentType?: string } }).tsRestRoute;
  if (!route || route.method === 'GET' || route.method === 'DELETE' || route.contentType === 'multipart/form-data') {
    next();
    return;
  }
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  if (!hasBody) {
    // No body at all: let contract validation say which fields are missing.
    next();
    return;
  }
  if (!isJson(req)) {
    next(notJson(req, 'the body'));
    return;
  }
  parseJson(req, res, next);
};

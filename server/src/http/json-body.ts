import express, { type Request, type RequestHandler } from 'express';
import { AppError } from '../errors.ts';

export const JSON_BODY_LIMIT = '1mb';

const parseJson = express.json({ limit: JSON_BODY_LIMIT, strict: true, type: () => true });

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
 * then parse (1 MiB at most, else 413). Runs after authentication so an
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

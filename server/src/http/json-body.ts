import express, { type RequestHandler } from 'express';
import { AppError } from '../errors.ts';

export const JSON_BODY_LIMIT = '1mb';

const parseJson = express.json({ limit: JSON_BODY_LIMIT, strict: true, type: () => true });

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
  if (!req.is(['application/json', 'application/*+json'])) {
    next(
      new AppError('unsupported_media_type', 'Send the body as `application/json`.', {
        errors: [
          { path: '', message: `content type ${req.headers['content-type'] ?? '(none)'} is not application/json` },
        ],
      }),
    );
    return;
  }
  parseJson(req, res, next);
};

import express, { type RequestHandler } from 'express';
import { MAX_JSON_DEPTH } from '../../lib/json-depth.ts';
import { OAuthProtocolError } from '../../modules/oauth/oauth-errors.ts';
import { JSON_TOO_DEEP, refuseDeepJson } from '../json-body.ts';

const parseForm = express.urlencoded({ extended: false, limit: '16kb' });
const parseJson = express.json({ limit: '16kb', verify: refuseDeepJson });

/**
 * OAuth endpoints take `application/x-www-form-urlencoded` (RFC 6749 §3.2)
 * and, as the specification shows, `application/json`. Either way the body
 * must be flat string fields; `res.locals.oauthBody` holds them.
 */
export const oauthBody: RequestHandler = (req, res, next) => {
  const done = (error?: unknown) => {
    if ((error as { type?: unknown } | undefined)?.type === JSON_TOO_DEEP) {
      next(new OAuthProtocolError('invalid_request', `the body nests deeper than ${MAX_JSON_DEPTH} levels`));
      return;
    }
    if (error) {
      next(new OAuthProtocolError('invalid_request', 'the body could not be parsed'));
      return;
    }
    const body: unknown = req.body;
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      next(new OAuthProtocolError('invalid_request', 'the body must be form fields or a JSON object'));
      return;
    }
    const fields: Record<string, string> = {};
    for (const [name, value] of Object.entries(body)) {
      if (typeof value !== 'string') {
        next(new OAuthProtocolError('invalid_request', `${name} must be a single string`));
        return;
      }
      fields[name] = value;
    }
    res.locals.oauthBody = fields;
    next();
  };
  if (req.is('application/x-www-form-urlencoded')) parseForm(req, res, done);
  else if (req.is(['application/json', 'application/*+json'])) parseJson(req, res, done);
  else next(new OAuthProtocolError('invalid_request', 'send application/x-www-form-urlencoded or application/json'));
};

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's own augmentation point
  namespace Express {
    interface Locals {
      oauthBody?: Record<string, string>;
    }
  }
}

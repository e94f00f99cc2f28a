import { allowedMethods } from '@modelcontextprotocol/sdk/server/auth/middleware/allowedMethods.js';
import express, { type ErrorRequestHandler, type RequestHandler, type Router } from 'express';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import { rateLimitHeaders } from '../../modules/rate-limit/rate-limit.service.ts';
import { registerDynamicClient, RegistrationError } from '../../modules/oauth/registration.service.ts';
import { MAX_JSON_DEPTH } from '../../lib/json-depth.ts';
import { clientIpOf } from '../client-address.ts';
import { JSON_TOO_DEEP, refuseDeepJson } from '../json-body.ts';
import { REGISTRATION_PATH } from './discovery.router.ts';

export interface RegistrationRouterDeps {
  readonly config: Config;
  readonly db: Db;
  readonly logger: Logger;
}

/** Client metadata is a few hundred bytes; ten long redirect URIs stay far below this. */
const BODY_LIMIT = '64kb';

const parseJson = express.json({ limit: BODY_LIMIT, strict: true, type: () => true, verify: refuseDeepJson });

/**
 * Browser-based MCP clients register from another origin. The endpoint takes
 * no credentials (no cookies, no Authorization), so any origin may call it.
 */
const allowAnyOrigin: RequestHandler = (req, res, next) => {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset');
  if (req.method === 'OPTIONS') {
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type, MCP-Protocol-Version');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
    return;
  }
  next();
};

/** RFC 7591 §3.1: the client metadata is sent as `application/json`. */
const requireJson: RequestHandler = (req, _res, next) => {
  if (!req.is(['application/json', 'application/*+json'])) {
    next(new RegistrationError('invalid_client_metadata', 'Send the client metadata as application/json.'));
    return;
  }
  next();
};

/** Errors body-parser raises carry a `type`. */
function fromBodyParser(error: unknown): RegistrationError | undefined {
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') {
    return new RegistrationError('invalid_client_metadata', `The body is larger than ${BODY_LIMIT}.`, {
      appCode: 'payload_too_large',
    });
  }
  if (type === JSON_TOO_DEEP) {
    return new RegistrationError('invalid_client_metadata', `The body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  if (typeof type === 'string' && /^(entity\.parse\.failed|encoding\.unsupported|charset\.unsupported)$/.test(type)) {
    return new RegistrationError('invalid_client_metadata', 'The body is not valid JSON.');
  }
  return undefined;
}

/** RFC 7591 §3.2.2: errors are JSON `{error, error_description}`, never a problem document. */
const answerRegistrationError: ErrorRequestHandler = (error: unknown, _req, res, next) => {
  const refusal = error instanceof RegistrationError ? error : fromBodyParser(error);
  if (!refusal) {
    next(error);
    return;
  }
  res.status(refusal.status).set(refusal.headers).set('Cache-Control', 'no-store').json(refusal.toResponseObject());
};

/**
 * `POST /api/oauth/register`: RFC 7591 dynamic client registration for MCP
 * clients. Exists only while `PACER_MCP_DCR_ENABLED` is on (specification
 * §4.2, §5.4 rule 5); otherwise the path is an ordinary 404.
 */
export function registrationRouter(deps: RegistrationRouterDeps): Router {
  const router = express.Router();
  if (!deps.config.mcp.dcrEnabled) return router;

  router.options(REGISTRATION_PATH, allowAnyOrigin);
  router.post(REGISTRATION_PATH, allowAnyOrigin, requireJson, parseJson, async (req, res) => {
    const registration = await registerDynamicClient(deps.db, {
      config: deps.config,
      logger: deps.logger,
      metadata: req.body as unknown,
      clientIp: clientIpOf(req),
    });
    if (registration.rateLimit) res.set(rateLimitHeaders(registration.rateLimit));
    // RFC 7591 §3.2.1: 201 Created with the registered metadata.
    res.status(201).set('Cache-Control', 'no-store').json(registration.response);
  });
  router.all(REGISTRATION_PATH, allowedMethods(['POST', 'OPTIONS']));
  router.use(REGISTRATION_PATH, answerRegistrationError);
  return router;
}

import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import express, { type Request, type RequestHandler } from 'express';
import { AppError } from '../../errors.ts';
import { clientIpOf } from '../../http/client-address.ts';
import { CSRF_COOKIE, readCookie } from '../../http/pages/cookies.ts';
import { safeEqual } from '../../lib/crypto.ts';
import type { User } from '../../db/tables.ts';
import { ingestDelivery, type WebhookDeps } from './webhook-ingest.service.ts';
import { getAppDelivery, listAppDeliveries, replayAppDelivery } from './webhook-portal.service.ts';

const s = initServer();

export const WEBHOOK_BODY_LIMIT_BYTES = 1024 * 1024;
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
const webhookBody: RequestHandler = (req, res, next) => {
  if (!req.is(['application/json', 'application/*+json'])) {
    next(
      new AppError('unsupported_media_type', 'Send the webhook body as `application/json`.', {
        errors: [
          { path: '', message: `content type ${req.headers['content-type'] ?? '(none)'} is not application/json` },
        ],
      }),
    );
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

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function redactedHeaders(req: Request): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[name] = SECRET_HEADERS.has(name) ? REDACTED : Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** The query string as sent (repeated names kept), with `secret` redacted. */
function redactedQuery(params: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of params) {
    const shown = name === 'secret' ? REDACTED : value;
    const existing = query[name];
    query[name] = existing === undefined ? shown : Array.isArray(existing) ? [...existing, shown] : [existing, shown];
  }
  return query;
}

export function webhookRoutes(deps: WebhookDeps) {
  return s.router(contract.webhooks, {
    receiveWebhook: {
      middleware: [webhookBody],
      handler: async ({ params, headers, body, req, res }) => {
        const queryParams = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
        const result = await ingestDelivery(deps, {
          clientId: params.clientId,
          rawBody: res.locals['rawBody'] as Buffer,
          body,
          credentials: {
            headerSecret: headers['x-webhook-secret'],
            querySecret: queryParams.get('secret') ?? undefined,
            timestamp: headers['x-webhook-timestamp'],
            signature: headers['x-webhook-signature'],
          },
          webhookId: headers['x-webhook-id'],
          headers: redactedHeaders(req),
          query: redactedQuery(queryParams),
          sourceIp: clientIpOf(req),
        });
        res.setHeader('X-Webhook-Delivery-Id', result.deliveryId);
        return { status: 200, body: result.ack };
      },
    },
  });
}

/** The developer portal's JSON API: the signed-in session (loaded by `loadSession`) is the caller. */
export const requireSessionApi: RequestHandler = (_req, res, next) => {
  if (res.locals.sessionUser) {
    next();
    return;
  }
  next(new AppError('unauthorized', 'Sign in to the developer portal first: this API uses its session cookie.'));
};

function sessionUserOf(locals: Record<string, unknown>): User {
  const user = locals['sessionUser'] as User | undefined;
  if (!user) throw new AppError('unauthorized', 'Sign in to the developer portal first.');
  return user;
}

/** Double-submit CSRF for the JSON API's writes: `X-CSRF-Token` must equal the `pacer_csrf` cookie. */
const requireCsrfHeader: RequestHandler = (req, _res, next) => {
  const cookie = readCookie(req, CSRF_COOKIE);
  const header = headerValue(req.headers['x-csrf-token']);
  if (cookie && header && safeEqual(cookie, header)) {
    next();
    return;
  }
  next(new AppError('forbidden', 'Send the `pacer_csrf` cookie value in the `X-CSRF-Token` header.'));
};

export function developerWebhookRoutes(deps: WebhookDeps) {
  return s.router(contract.developer, {
    listWebhookDeliveries: async ({ params, query, res }) => {
      const user = sessionUserOf(res.locals);
      return { status: 200, body: await listAppDeliveries(deps, user.id, params.clientId, query) };
    },
    getWebhookDelivery: async ({ params, res }) => {
      const user = sessionUserOf(res.locals);
      return { status: 200, body: await getAppDelivery(deps, user.id, params.clientId, params.deliveryId) };
    },
    replayWebhookDelivery: {
      middleware: [requireCsrfHeader],
      handler: async ({ params, res }) => {
        const user = sessionUserOf(res.locals);
        return { status: 202, body: await replayAppDelivery(deps, user.id, params.clientId, params.deliveryId) };
      },
    },
  });
}

import type { AppRoute, AppRouter } from '@ts-rest/core';
import { isAppRoute } from '@ts-rest/core';
import cors from 'cors';
import type { RequestHandler } from 'express';
import type { Config } from '../config.ts';
import { REPLAYED_HEADER } from './idempotency.middleware.ts';

/** How long a browser may keep a preflight's answer before asking again (Chromium caps it at 7200 s). */
export const CORS_PREFLIGHT_MAX_AGE_SECS = 600;

/**
 * The OAuth endpoints a browser app (a public client using PKCE, as in the
 * IETF draft "OAuth 2.0 for Browser-Based Applications") calls from its own origin: the code and
 * refresh-token exchange, revocation at sign-out, and who the user is. Not
 * `/api/oauth/authorize` (a page the browser navigates to, signed in with the
 * portal's cookie), not `/api/oauth/introspect` (confidential clients only: an
 * app whose secret sits in a page has none). Registration and the discovery
 * documents answer any origin already (registration.router.ts, the SDK's
 * `metadataHandler`): they take no credentials at all.
 */
export const CORS_OAUTH_PATHS = ['/api/oauth/token', '/api/oauth/revoke', '/api/oauth/userinfo'] as const;

/** What the API reads from a request besides the CORS-safelisted headers (X-Pacer-Client: the SDK's name/version). */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id', 'X-Pacer-Client'];

/**
 * Response headers a page may read besides the safelisted ones (Content-Type,
 * Content-Length, Cache-Control, …): the request id to quote in a report, the
 * rate-limit window and when to retry, whether a write was a replay, the
 * bearer challenge of a 401, and the name and validator of a downloaded file.
 */
const EXPOSED_HEADERS = [
  'X-Request-Id',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  REPLAYED_HEADER,
  'WWW-Authenticate',
  'Content-Disposition',
  'ETag',
];

/**
 * The path prefixes of the bearer-token REST API, `/api/<first segment>` of
 * each route of `contract` (prefixes match whole segments in Express).
 */
export function restPathPrefixes(contract: AppRouter): string[] {
  const routes = (router: AppRouter): AppRoute[] =>
    Object.values(router).flatMap((entry) => (isAppRoute(entry) ? [entry] : routes(entry)));
  const prefixes = routes(contract).map((route) => /^\/api\/[^/]+/.exec(route.path)?.[0] ?? route.path);
  return [...new Set(prefixes)].sort();
}

/**
 * CORS for browser apps on the origins of `PACER_CORS_ORIGINS` (docs/design.md
 * §3 "REST conventions"), with the `cors` package; undefined when the list is empty (off).
 *
 * Mounted on the bearer-token API's paths before any route, so a preflight
 * (which carries no token) is answered here, 204 and cacheable for
 * `CORS_PREFLIGHT_MAX_AGE_SECS`, without reaching authentication or a rate
 * limit. An allowed origin gets `Access-Control-Allow-Origin` with itself and
 * the exposed headers on every answer, errors included. Any other origin, or
 * no `Origin`, gets no CORS header at all and the request goes on unchanged:
 * the browser withholds the answer from the page. Never
 * `Access-Control-Allow-Credentials`: the API authenticates with the bearer
 * token a page sends itself, not with cookies, so a page can't borrow the
 * portal's session. `Vary: Origin` on every answer of these paths, allowed or
 * not, so no cache hands one origin's answer to another.
 */
export function bearerApiCors(config: Pick<Config, 'corsOrigins'>): RequestHandler | undefined {
  if (config.corsOrigins.length === 0) return undefined;
  const allowed = new Set(config.corsOrigins);
  const handler = cors({
    origin: (origin, callback) => {
      callback(null, origin !== undefined && allowed.has(origin) ? origin : false);
    },
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: CORS_PREFLIGHT_MAX_AGE_SECS,
    preflightContinue: false,
    optionsSuccessStatus: 204,
  });
  return (req, res, next) => {
    res.vary('Origin');
    handler(req, res, next);
  };
}

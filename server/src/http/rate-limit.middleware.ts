import type { Request, RequestHandler } from 'express';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { clientIpOf } from './client-address.ts';
import { BEARER, type BearerAuthenticator, routeScopesOf, type TokenLookup } from './bearer-auth.ts';
import { checkAccessToken, checkAccessTokenCounting, type TokenCheck } from '../modules/oauth/token.service.ts';
import { sha256Hex } from '../lib/crypto.ts';
import {
  consumeRateLimits,
  type RateLimitOptions,
  rateLimitHeaders,
  type RateLimitResult,
} from '../modules/rate-limit/rate-limit.service.ts';

/** Limits are per minute (`PACER_RATE_LIMIT_*_PER_MINUTE`). */
export const RATE_LIMIT_WINDOW_SECS = 60;

/** The FIT upload route; any other multipart route (`POST /api/workouts/upload`) counts as an upload too. */
export const UPLOAD_ROUTE = { method: 'POST', path: '/api/workouts/upload-fit' } as const;

export type RateLimitBucket = 'requests' | 'uploads';

interface RouteInfo {
  readonly method: string;
  readonly path: string;
  readonly contentType?: string;
}

/** Uploads count against their own, smaller bucket instead of the token's request bucket. */
export function rateLimitBucketOf(route: RouteInfo): RateLimitBucket {
  if (route.contentType === 'multipart/form-data') return 'uploads';
  return route.method === UPLOAD_ROUTE.method && route.path === UPLOAD_ROUTE.path ? 'uploads' : 'requests';
}

/** Any token-like word: the token bucket counts whatever is presented, well-formed or not. */
const ANY_BEARER = /^Bearer +(\S+)$/i;

interface Bucket extends Omit<RateLimitOptions, 'windowSecs'> {
  /** Ends the 429's detail: "Too many requests {what}". */
  readonly what: string;
}

interface Presented {
  readonly token: string;
  /** Its SHA-256: the token bucket's key and the form tokens are stored in. */
  readonly hash: string;
}

/** The buckets a request counts against: its address, and the token it presents (if any). */
function bucketsOf(req: Request, route: RouteInfo, limits: Config['rateLimits'], presented: Presented | undefined) {
  const buckets: Bucket[] = [];
  if (limits.perIp > 0) {
    buckets.push({ key: `rest:ip:${clientIpOf(req)}`, limit: limits.perIp, what: 'from this address' });
  }
  if (presented !== undefined) {
    const bucket = rateLimitBucketOf(route);
    const limit = bucket === 'uploads' ? limits.uploads : limits.perToken;
    if (limit > 0) {
      // Keyed by the token's SHA-256: never the token itself.
      const key = `rest:${bucket}:token:${presented.hash}`;
      buckets.push({ key, limit, what: bucket === 'uploads' ? 'uploads with this token' : 'with this token' });
    }
  }
  return buckets;
}

/** The window to report: a refused one first (the address before the token), else the one with the fewest hits left. */
function tightestOf(results: readonly RateLimitResult[]): number {
  let chosen = 0;
  results.forEach((result, index) => {
    const current = results[chosen] as RateLimitResult;
    if (current.allowed && (!result.allowed || result.remaining < current.remaining)) chosen = index;
  });
  return chosen;
}

export interface RateLimitDeps {
  readonly config: Config;
  readonly db: Db;
}

type Counted = { readonly results: readonly RateLimitResult[] } | { readonly error: unknown };
type CountedWithCheck =
  { readonly results: readonly RateLimitResult[]; readonly check: TokenCheck } | { readonly error: unknown };

/**
 * REST rate limits (docs/design.md §3): per client address and per access token,
 * each a fixed one-minute window held in PostgreSQL, so every API process
 * counts against the same window. `RateLimit-*` headers on every answer (the
 * tightest window), 429 + `Retry-After` once a window is spent.
 *
 * Wraps the authentication step: on a route that takes a token, one
 * statement bumps both windows and looks the token up, so the limits add no
 * round trip to a request. The verdict comes first: an address or token over
 * its limit gets 429 whatever the token is worth, and requests without a
 * token are counted too, so floods of unauthenticated requests are refused.
 * The token's window is keyed by the token presented; an invalid token's
 * window is harmless, the address window bounds how many there are.
 */
export function withRestRateLimits(deps: RateLimitDeps, authenticate: BearerAuthenticator): RequestHandler {
  const limits = deps.config.rateLimits;
  const lookUp: TokenLookup = (token) => checkAccessToken(deps.db, token);
  return (req, res, next) => {
    const route = (req as { tsRestRoute?: RouteInfo }).tsRestRoute;
    const word = ANY_BEARER.exec(req.headers.authorization ?? '')?.[1];
    const presented = word === undefined ? undefined : { token: word, hash: sha256Hex(word) };
    const buckets = route ? bucketsOf(req, route, limits, presented) : [];
    if (buckets.length === 0) {
      authenticate(req, res, next, lookUp);
      return;
    }
    const windows = {
      windowSecs: RATE_LIMIT_WINDOW_SECS,
      buckets: buckets.map((bucket) => ({ key: bucket.key, limit: bucket.limit })),
    };
    // Settled at once into a value, so a database error is never an unhandled rejection while auth runs.
    let counted: Promise<Counted>;
    let lookup = lookUp;
    if (presented && routeScopesOf(req) && BEARER.test(req.headers.authorization ?? '')) {
      // The token authentication will look up is the one presented: count and look up in one statement.
      const both: Promise<CountedWithCheck> = checkAccessTokenCounting(deps.db, presented.hash, windows).then(
        ({ check, limits: results }) => ({ check, results }),
        (error: unknown) => ({ error }),
      );
      counted = both;
      lookup = () =>
        both.then((outcome) => ('error' in outcome ? Promise.reject(outcome.error as Error) : outcome.check));
    } else {
      counted = consumeRateLimits(deps.db, windows).then(
        (results) => ({ results }),
        (error: unknown) => ({ error }),
      );
    }
    authenticate(
      req,
      res,
      (authOutcome?: unknown) => {
        void counted.then((outcome) => {
          if ('error' in outcome) {
            next(outcome.error);
            return;
          }
          const index = tightestOf(outcome.results);
          const result = outcome.results[index] as RateLimitResult;
          const headers = rateLimitHeaders(result);
          if (!result.allowed) {
            const what = (buckets[index] as Bucket).what;
            next(
              new AppError(
                'rate_limited',
                `Too many requests ${what}: at most ${result.limit} per minute. Retry in ${result.resetSecs} s.`,
                { headers },
              ),
            );
            return;
          }
          res.set(headers);
          next(authOutcome);
        });
      },
      lookup,
    );
  };
}

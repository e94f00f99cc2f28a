import type { DbOrTrx } from '../../db/database.ts';
import { type CounterHit, findOpenCounter, incrementCounter, incrementCounters } from './rate-limit.repository.ts';

export interface RateLimitOptions {
  /** What is limited, e.g. `dcr:ip:203.0.113.7`. */
  readonly key: string;
  /** Hits allowed per window (at least 1; callers treat a configured 0 as "off" and skip the call). */
  readonly limit: number;
  readonly windowSecs: number;
}

export interface RateLimitResult {
  readonly allowed: boolean;
  /** Hits left in this window. */
  readonly remaining: number;
  /** Seconds until the window ends: the `Retry-After` of a refused hit. */
  readonly resetSecs: number;
  readonly limit: number;
}

/**
 * A fixed-window limiter held in PostgreSQL, so every API process behind a
 * load balancer counts against the same window (docs/design.md §2: nothing another
 * node needs is kept in memory). Every call counts, allowed or not.
 */
export async function consumeRateLimit(db: DbOrTrx, options: RateLimitOptions): Promise<RateLimitResult> {
  if (!Number.isInteger(options.limit) || options.limit < 1) throw new Error('rate limit must be at least 1');
  const hit = await incrementCounter(db, options.key, options.windowSecs);
  return resultOf(hit, options.limit);
}

/**
 * The verdict `key`'s open window holds after its last counted hit, counting
 * nothing (a limit on failures is looked at on every request and counted
 * only on a failure); undefined when no window is open.
 */
export async function peekRateLimit(
  db: DbOrTrx,
  options: Omit<RateLimitOptions, 'windowSecs'>,
): Promise<RateLimitResult | undefined> {
  const hit = await findOpenCounter(db, options.key);
  return hit ? resultOf(hit, options.limit) : undefined;
}

export interface RateLimitsOptions {
  readonly windowSecs: number;
  /** Distinct keys, each with its own limit (at least 1). */
  readonly buckets: readonly Omit<RateLimitOptions, 'windowSecs'>[];
}

/** `consumeRateLimit` for several windows of one length at once: one statement, results in the order of `buckets`. */
export async function consumeRateLimits(db: DbOrTrx, options: RateLimitsOptions): Promise<RateLimitResult[]> {
  checkLimits(options.buckets);
  const hits = await incrementCounters(
    db,
    options.buckets.map((bucket) => bucket.key),
    options.windowSecs,
  );
  return rateLimitResultsOf(hits, options.buckets);
}

function checkLimits(buckets: RateLimitsOptions['buckets']): void {
  if (buckets.some((bucket) => !Number.isInteger(bucket.limit) || bucket.limit < 1)) {
    throw new Error('rate limit must be at least 1');
  }
}

/** The verdicts on hits counted elsewhere (in the same order as `buckets`), e.g. along with a token lookup. */
export function rateLimitResultsOf(
  hits: readonly CounterHit[],
  buckets: RateLimitsOptions['buckets'],
): RateLimitResult[] {
  checkLimits(buckets);
  return hits.map((hit, index) => resultOf(hit, (buckets[index] as RateLimitsOptions['buckets'][number]).limit));
}

function resultOf(hit: { count: number; resetSecs: number }, limit: number): RateLimitResult {
  return {
    allowed: hit.count <= limit,
    remaining: Math.max(0, limit - hit.count),
    resetSecs: hit.resetSecs,
    limit,
  };
}

/** `RateLimit-*` response headers (draft-ietf-httpapi-ratelimit-headers), plus `Retry-After` when refused. */
export function rateLimitHeaders(result: RateLimitResult): Record<string, string> {
  return {
    'RateLimit-Limit': String(result.limit),
    'RateLimit-Remaining': String(result.remaining),
    'RateLimit-Reset': String(result.resetSecs),
    ...(result.allowed ? {} : { 'Retry-After': String(result.resetSecs) }),
  };
}

/** The window to report among several counted together: the first refused one, else the one with the fewest hits left. */
export function tightestResult(results: readonly RateLimitResult[]): RateLimitResult | undefined {
  return (
    results.find((result) => !result.allowed) ??
    results.reduce<RateLimitResult | undefined>(
      (tightest, result) => (tightest === undefined || result.remaining < tightest.remaining ? result : tightest),
      undefined,
    )
  );
}

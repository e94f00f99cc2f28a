import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import { AppError } from '../../errors.ts';
import { sha256HexOf } from './webhook-payload.ts';
import {
  consumeRateLimits,
  rateLimitHeaders,
  type RateLimitResult,
  tightestResult,
} from '../rate-limit/rate-limit.service.ts';

/** `PACER_WEBHOOK_RATE_LIMIT_*_PER_MINUTE`. */
const WINDOW_SECS = 60;
/** Our client ids are 27 characters; a longer one (no app has it) is keyed by its hash, so keys stay short. */
const MAX_KEYED_CLIENT_ID = 64;

export interface WebhookRequestOrigin {
  /** The client id in the path, as sent (it may name no app). */
  readonly clientId: string;
  readonly clientIp: string;
}

/**
 * Count a request to the webhook endpoint against its address's and its
 * app's windows (one statement, in PostgreSQL so every API process shares
 * them), before its body is read: a flood is refused for the price of one
 * upsert. Every request counts, matched or not (which it is cannot be known
 * before the body is read), so the app window is set well above what one
 * sender sends. Throws `rate_limited` (429 with `Retry-After`) when a window
 * is spent; otherwise the tightest window, for the `RateLimit-*` headers,
 * or `undefined` when both limits are off.
 */
export async function admitWebhookRequest(
  deps: { readonly db: Db; readonly config: Config },
  origin: WebhookRequestOrigin,
): Promise<RateLimitResult | undefined> {
  const { rateLimitPerIp, rateLimitPerApp } = deps.config.webhooks;
  const appKey =
    origin.clientId.length <= MAX_KEYED_CLIENT_ID ? origin.clientId : sha256HexOf(Buffer.from(origin.clientId));
  const buckets = [
    ...(rateLimitPerIp > 0
      ? [{ key: `webhook:ip:${origin.clientIp}`, limit: rateLimitPerIp, what: 'from this address' }]
      : []),
    ...(rateLimitPerApp > 0 ? [{ key: `webhook:app:${appKey}`, limit: rateLimitPerApp, what: 'to this app' }] : []),
  ];
  if (buckets.length === 0) return undefined;
  const results = await consumeRateLimits(deps.db, {
    windowSecs: WINDOW_SECS,
    buckets: buckets.map(({ key, limit }) => ({ key, limit })),
  });
  const result = tightestResult(results) as RateLimitResult;
  if (!result.allowed) {
    const what = buckets[results.indexOf(result)]?.what ?? '';
    throw new AppError(
      'rate_limited',
      `Too many webhook deliveries ${what}: at most ${result.limit} per minute. Retry in ${result.resetSecs} s.`,
      { headers: rateLimitHeaders(result) },
    );
  }
  return result;
}

import { createHmac } from 'node:crypto';
import { safeEqual, sha256Hex } from '../../lib/crypto.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import type { WebhookAuthMethod } from '@pacer/contract';
import type { WebhookClient } from './webhooks.repository.ts';

/** A signature's timestamp may differ from our clock by this much either way. */
export const SIGNATURE_TOLERANCE_SECS = 300;

export interface WebhookCredentials {
  /** `X-Webhook-Secret`. */
  readonly headerSecret: string | undefined;
  /** `?secret=`. */
  readonly querySecret: string | undefined;
  /** `X-Webhook-Timestamp`: Unix seconds. */
  readonly timestamp: string | undefined;
  /** `X-Webhook-Signature`: `v1=<hex>` (several, comma-separated, while a sender rotates). */
  readonly signature: string | undefined;
}

export interface WebhookAuthResult {
  readonly matched: boolean;
  /** How the sender proved it knows the secret; `null` when it did not. */
  readonly method: WebhookAuthMethod | null;
  /** Why a signature was refused, for the delivery log (never the expected value). */
  readonly reason?: string;
  /**
   * For a delivery that matched by signature: the SHA-256 (hex) of the
   * signature, which names this timestamp and body for de-duplication.
   */
  readonly signatureSha256?: string;
}

/** `v1=<hex HMAC-SHA256(secret, timestamp + "." + raw body)>`. */
export function webhookSignature(secret: string, timestamp: string, rawBody: Uint8Array): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')}`;
}

/**
 * Does the sender know the app's current webhook secret? A plain secret (header
 * first, then query) is compared in constant time with the stored SHA-256; a
 * signature is recomputed over the raw bytes with the sealed secret and
 * compared in constant time, within ±5 minutes of the timestamp. An app
 * without a secret (dynamic registration) never matches.
 */
export function authenticateWebhook(
  client: WebhookClient,
  credentials: WebhookCredentials,
  rawBody: Uint8Array,
  box: SecretBox,
  nowMs: number = Date.now(),
): WebhookAuthResult {
  const plain = credentials.headerSecret ?? credentials.querySecret;
  if (plain !== undefined) {
    const method: WebhookAuthMethod = credentials.headerSecret !== undefined ? 'header' : 'query';
    const matched = client.webhookSecretHash !== null && safeEqual(sha256Hex(plain), client.webhookSecretHash);
    if (matched) return { matched, method };
    if (credentials.signature === undefined) return { matched: false, method: null, reason: 'secret does not match' };
  }
  if (credentials.signature === undefined) return { matched: false, method: null, reason: 'no secret or signature' };
  if (credentials.timestamp === undefined || !/^\d{1,12}$/.test(credentials.timestamp)) {
    return { matched: false, method: null, reason: 'signature without a valid X-Webhook-Timestamp' };
  }
  const skewSecs = Math.abs(nowMs / 1000 - Number(credentials.timestamp));
  if (skewSecs > SIGNATURE_TOLERANCE_SECS) {
    return { matched: false, method: null, reason: 'signature timestamp outside the 5-minute window' };
  }
  const secret = client.webhookSecretSealed === null ? undefined : box.open(client.webhookSecretSealed);
  if (secret === undefined) return { matched: false, method: null, reason: 'signature cannot be checked for this app' };
  const expected = webhookSignature(secret, credentials.timestamp, rawBody);
  const offered = credentials.signature.split(',').map((part) => part.trim());
  // Compare every candidate (no early exit), each in constant time.
  let matched = false;
  for (const candidate of offered) matched = safeEqual(candidate, expected) || matched;
  return matched
    ? { matched, method: 'signature', signatureSha256: sha256Hex(expected) }
    : { matched: false, method: null, reason: 'signature does not match' };
}

/**
 * `Retry-After` (RFC 9110 §10.2.3) as the SDK reads it: delay-seconds or an
 * HTTP-date, relative to now; anything else is ignored (then the SDK's own
 * backoff applies).
 */
import { parseRetryAfter } from '@pacer/client-sdk';
import { describe, expect, it } from 'vitest';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-26T22:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('1', now)).toBe(1000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('0', now)).toBe(0);
  });

  it('reads an HTTP-date as the time until then, never negative', () => {
    expect(parseRetryAfter('Thu, 26 Nov 2026 22:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Thu, 26 Nov 2026 21:59:00 GMT', now)).toBe(0);
  });

  it('ignores a missing or unreadable value', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-3', now)).toBeUndefined();
  });
});

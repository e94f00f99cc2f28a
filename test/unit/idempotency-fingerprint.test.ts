import { describe, expect, it } from 'vitest';
import { AppError } from '../../server/src/errors.ts';
import {
  canonicalJson,
  fingerprintRequest,
  parseIdempotencyKey,
} from '../../server/src/modules/idempotency/idempotency.service.ts';

const json = (body: unknown) => ({ kind: 'json', body }) as const;

describe('Idempotency-Key fingerprint', () => {
  it('writes objects with sorted keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('is the same for the same method, URL and body in any key order', () => {
    const first = fingerprintRequest({ method: 'POST', url: '/api/wellness', body: json({ date: 'd', hrv: 1 }) });
    const second = fingerprintRequest({ method: 'post', url: '/api/wellness', body: json({ hrv: 1, date: 'd' }) });
    expect(second).toBe(first);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs when the method, the URL, a value or the body kind differs', () => {
    const base = { method: 'POST', url: '/api/wellness', body: json({ hrv: 1 }) } as const;
    const others = [
      { ...base, method: 'PATCH' },
      { ...base, url: '/api/nutrition' },
      { ...base, body: json({ hrv: 2 }) },
      { ...base, body: json(undefined) },
      { ...base, body: { kind: 'streamed', contentLength: 10 } as const },
    ];
    const fingerprints = new Set([base, ...others].map((options) => fingerprintRequest(options)));
    expect(fingerprints.size).toBe(others.length + 1);
  });

  it('tells streamed bodies apart by their declared length only', () => {
    const streamed = (contentLength: number | null) =>
      fingerprintRequest({ method: 'POST', url: '/u', body: { kind: 'streamed', contentLength } });
    expect(streamed(100)).toBe(streamed(100));
    expect(streamed(100)).not.toBe(streamed(101));
    expect(streamed(null)).not.toBe(streamed(100));
  });
});

describe('Idempotency-Key format', () => {
  it('accepts 1-255 visible ASCII characters and no header at all', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('a')).toBe('a');
    expect(parseIdempotencyKey('9f1c0a4e-2b7d-4e55-8c1e-3f0b6f5d2a11')).toBe('9f1c0a4e-2b7d-4e55-8c1e-3f0b6f5d2a11');
    expect(parseIdempotencyKey('!~'.repeat(127) + 'x')).toHaveLength(255);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space', 'a b'],
    ['a control character', 'a\tb'],
    ['a non-ASCII character', 'clé'],
  ])('refuses %s with validation_failed', (_case, key) => {
    expect(() => parseIdempotencyKey(key)).toThrow(AppError);
    try {
      parseIdempotencyKey(key);
    } catch (error) {
      expect((error as AppError).code).toBe('validation_failed');
    }
  });

  it('refuses a header sent twice', () => {
    expect(() => parseIdempotencyKey(['a', 'b'])).toThrow(AppError);
  });
});

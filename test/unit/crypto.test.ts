import { describe, expect, it } from 'vitest';
import { generateSecret, hashPassword, safeEqual, sha256Hex, verifyPassword } from '../../server/src/lib/crypto.ts';

describe('secrets', () => {
  it('hashes passwords with a fresh salt and verifies them', async () => {
    const first = await hashPassword('correct horse');
    const second = await hashPassword('correct horse');
    expect(first).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(first).not.toBe(second);
    expect(await verifyPassword('correct horse', first)).toBe(true);
    expect(await verifyPassword('correct horsE', first)).toBe(false);
    expect(await verifyPassword('anything', 'garbage')).toBe(false);
  });

  it('makes 256-bit prefixed secrets and hashes them with SHA-256', () => {
    const secret = generateSecret('pat_');
    expect(secret).toMatch(/^pat_[\w-]{43}$/);
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
});

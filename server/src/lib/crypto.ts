import { createHash, createHmac, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { availableParallelism } from 'node:os';
import pLimit from 'p-limit';

/**
 * scrypt parameters: N=2^15, r=8, p=1 (the interactive-login setting of
 * RFC 7914 §2 / OWASP's password storage cheat sheet), 64-byte key.
 */
const SCRYPT = { N: 32_768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KEY_LENGTH = 64;

/**
 * Which queue a password hash waits in. Each scrypt call takes a libuv pool
 * thread and a core for tens of milliseconds; unbounded, 50 concurrent
 * sign-ins fill the pool (4 threads) and every other hash, file read and DNS
 * lookup waits behind them. So hashes run in two bounded lanes of half the
 * cores each: `shared` for everyone, and `trusted` for sign-ins from a
 * browser (a device cookie) or an address that signed in to that account
 * before (see login.service.ts), which therefore never queue behind an attack
 * sent from elsewhere.
 */
export type HashLane = 'shared' | 'trusted';

const LANE_CONCURRENCY = Math.max(1, Math.floor(availableParallelism() / 2));
const lanes: Record<HashLane, ReturnType<typeof pLimit>> = {
  shared: pLimit(LANE_CONCURRENCY),
  trusted: pLimit(LANE_CONCURRENCY),
};

/** How many hashes of `lane` run now, how many wait, and the bound on the former. */
export function hashLaneLoad(lane: HashLane): { active: number; pending: number; concurrency: number } {
  const limit = lanes[lane];
  return { active: limit.activeCount, pending: limit.pendingCount, concurrency: limit.concurrency };
}

function scryptAsync(password: string, salt: Buffer, options: ScryptOptions, lane: HashLane): Promise<Buffer> {
  return lanes[lane](() => scryptNow(password, salt, options));
}

function scryptNow(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) => {
      if (error) reject(error);
      else resolve(key);
    });
  });
}

/** `scrypt$N$r$p$salt$hash` (base64url parts), self-describing so the cost can rise later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT, 'shared');
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string, lane: HashLane = 'shared'): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(
    password,
    Buffer.from(salt, 'base64url'),
    {
      N: Number(n),
      r: Number(r),
      p: Number(p),
      maxmem: SCRYPT.maxmem,
    },
    lane,
  );
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash to verify against when the user does not exist, so both paths cost the same. */
export const DUMMY_PASSWORD_HASH =
  'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** An opaque secret with a readable prefix (e.g. `pat_`), 256 bits of randomness. */
export function generateSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/**
 * SHA-256 (hex) of a high-entropy secret. Tokens and session ids are looked up
 * by this hash: an equality lookup on the hash of a 256-bit random value leaks
 * nothing useful through timing, and the database never holds the secret.
 */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** HMAC-SHA256 of `message` under `key`, base64url: a value only the holder of the key can make. */
export function hmacSha256(key: Buffer, message: string): string {
  return createHmac('sha256', key).update(message).digest('base64url');
}

/** Constant-time comparison of two strings (false when lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

import { randomBytes } from 'node:crypto';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { User } from '../../db/tables.ts';
import { DUMMY_PASSWORD_HASH, hmacSha256, safeEqual, sha256Hex, verifyPassword } from '../../lib/crypto.ts';
import {
  deleteThrottle,
  giveBackAttempt,
  isKnownAddress,
  lockThrottleRows,
  recordThrottle,
  rememberKnownAddress,
  type ThrottleRow,
} from './login-throttle.repository.ts';
import { findUserByEmail } from './user.repository.ts';

/**
 * Password sign-in with throttling (NIST SP 800-63B §5.2.2 "Rate Limiting
 * (Throttling)"; OWASP Authentication Cheat Sheet, "Account lockout").
 *
 * Attempts are counted per account and per client address in PostgreSQL
 * (`login_throttles`), so every API process agrees. Each key has some free
 * attempts; the attempt that uses the last one locks the key for
 * `lockoutSecs`, and every attempt counted after a lockout doubles it, up to
 * `maxLockoutSecs`. An attempt is counted BEFORE its password is hashed, and a
 * locked key is refused without hashing, so a flood costs us a row update,
 * not an scrypt. A refusal looks the same whatever the password: during a
 * lockout the right password learns nothing.
 *
 * A success clears the account's count and gives the address its attempt
 * back (an office behind one address signs in all day). The counts go stale
 * after a day without attempts.
 *
 * The trade-off of a per-account lockout is that a stranger can keep a real
 * user out by guessing wrong on purpose. Two things bound it: a lockout never
 * lasts longer than `maxLockoutSecs` (15 min by default), and a browser that
 * has signed in to the account before carries a device cookie (an HMAC of the
 * user id and a nonce, keyed by the server's secret: OWASP's "device cookies")
 * whose attempts are counted under their own key, not the account's, and
 * hashed in their own lane (lib/crypto.ts), so the real user on a known
 * browser is neither locked out nor queued behind the attack. A sign-in from
 * an address the account signed in from before (`KNOWN_ADDRESS_DAYS`) is
 * hashed in that lane too, though it still counts against the account.
 */
export interface SignInDeps {
  readonly db: Db;
  readonly config: Pick<Config, 'login'>;
  /** The key of device cookies (`SecretBox.macKey('device')`). */
  readonly deviceKey: Buffer;
}

export interface SignInAttempt {
  readonly email: string;
  readonly password: string;
  /** The client address (http/client-address.ts). */
  readonly address: string;
  /** The device cookie the browser sent, if any. */
  readonly deviceToken?: string | undefined;
}

export type SignInResult =
  | { readonly outcome: 'signed-in'; readonly user: User; readonly deviceToken: string }
  | { readonly outcome: 'refused' }
  | { readonly outcome: 'locked'; readonly retryAfterSecs: number };

/** Counts go stale after a day without attempts. */
const STALE_AFTER_SECS = 24 * 60 * 60;

interface ThrottleKey {
  readonly key: string;
  readonly freeAttempts: number;
}

export async function signInWithPassword(deps: SignInDeps, attempt: SignInAttempt): Promise<SignInResult> {
  const user = await findUserByEmail(deps.db, attempt.email);
  const device = user ? trustedDevice(deps.deviceKey, user.id, attempt.deviceToken) : undefined;
  const keys = throttleKeys(deps.config.login, attempt, device);
  const addressKey = user ? knownAddressKey(user.id, attempt.address) : undefined;
  const [retryAfterSecs, knownAddress] = await Promise.all([
    takeAttempt(deps, keys),
    addressKey === undefined || device !== undefined
      ? false
      : isKnownAddress(deps.db, addressKey, new Date(Date.now() - KNOWN_ADDRESS_DAYS * 86_400_000)),
  ]);
  if (retryAfterSecs > 0) return { outcome: 'locked', retryAfterSecs };
  const hash = user?.passwordHash ?? DUMMY_PASSWORD_HASH;
  const valid = await (device !== undefined || knownAddress
    ? verifyPassword(attempt.password, hash, 'trusted')
    : inAddressLine(attempt.address, () => verifyPassword(attempt.password, hash, 'shared')));
  if (!user || !valid || !user.active) return { outcome: 'refused' };
  await Promise.all([
    ...keys.map((key) =>
      key.key.startsWith('address:')
        ? giveBackAttempt(deps.db, key.key, key.freeAttempts)
        : deleteThrottle(deps.db, key.key),
    ),
    rememberKnownAddress(deps.db, addressKey as string, user.id),
  ]);
  return { outcome: 'signed-in', user, deviceToken: device ?? deviceTokenFor(deps.deviceKey, user.id) };
}

/**
 * An address the account signed in from within this many days counts as the
 * user's own network: a sign-in from it is hashed in the known browsers' lane
 * even from a browser without the device cookie (cookies cleared, a second
 * browser at home). An attacker cannot send from the user's address (the
 * address is the TCP peer, or what a trusted proxy says), so a flood from
 * elsewhere never reaches that lane, and from the attacker's addresses every
 * account, existing or not, is hashed in the same shared lane.
 */
export const KNOWN_ADDRESS_DAYS = 90;

/** The row key of `userId` signing in from `address`: the address is not kept as such. */
function knownAddressKey(userId: string, address: string): string {
  return sha256Hex(`${userId}:${address}`);
}

interface AddressLine {
  readonly limit: LimitFunction;
  /** Sign-ins from the address that are in the line (waiting or hashing). */
  waiting: number;
}

/** Lines of the addresses that have a sign-in waiting for its hash in this process. */
const addressLines = new Map<string, AddressLine>();

/**
 * One hash at a time per client address, in this process. A flood of wrong
 * sign-ins from one address waits in its own line and takes one place at a
 * time in the shared lane (lib/crypto.ts), so sign-ins from other addresses
 * wait behind at most one of its hashes instead of all of them: fair queuing
 * by address. The line is as long as the address's free attempts (each is
 * counted before it queues), and is dropped when it empties. Per process, like
 * the lane it feeds: it shares out this process's CPU, which is all it guards.
 */
async function inAddressLine<T>(address: string, task: () => Promise<T>): Promise<T> {
  let line = addressLines.get(address);
  if (!line) {
    line = { limit: pLimit(1), waiting: 0 };
    addressLines.set(address, line);
  }
  line.waiting += 1;
  try {
    return await line.limit(task);
  } finally {
    line.waiting -= 1;
    if (line.waiting === 0) addressLines.delete(address);
  }
}

function throttleKeys(login: SignInDeps['config']['login'], attempt: SignInAttempt, device: string | undefined) {
  const keys: ThrottleKey[] = [];
  if (login.addressFreeAttempts > 0) {
    keys.push({ key: `address:${attempt.address}`, freeAttempts: login.addressFreeAttempts });
  }
  if (login.accountFreeAttempts > 0) {
    // A known browser's attempts count under its own key: the account's lockout does not shut it out.
    const account = device ? `device:${device.split('.')[0] ?? ''}` : `account:${attempt.email.trim().toLowerCase()}`;
    keys.push({ key: account, freeAttempts: login.accountFreeAttempts });
  }
  return keys;
}

/**
 * Count one attempt against every key, unless one of them is locked: then
 * nothing is counted and the answer is the seconds until the longest lock ends.
 */
async function takeAttempt(deps: SignInDeps, keys: readonly ThrottleKey[]): Promise<number> {
  if (keys.length === 0) return 0;
  return deps.db.transaction().execute(async (trx) => {
    const rows = await lockThrottleRows(
      trx,
      keys.map((key) => key.key),
      STALE_AFTER_SECS,
    );
    const locked = Math.max(0, ...rows.map((row) => row.lockedForSecs));
    if (locked > 0) return locked;
    for (const key of keys) {
      const row = rows.find((candidate) => candidate.key === key.key);
      const attempts = attemptsAfter(row) + 1;
      await recordThrottle(trx, key.key, attempts, lockoutSecs(deps.config.login, key.freeAttempts, attempts));
    }
    return 0;
  });
}

function attemptsAfter(row: ThrottleRow | undefined): number {
  return !row || row.stale ? 0 : row.attempts;
}

/** 0 while attempts are free; then `lockoutSecs`, doubling per attempt, capped. */
export function lockoutSecs(login: SignInDeps['config']['login'], freeAttempts: number, attempts: number): number {
  if (attempts < freeAttempts) return 0;
  const doublings = Math.min(attempts - freeAttempts, 30);
  return Math.min(login.maxLockoutSecs, login.lockoutSecs * 2 ** doublings);
}

/** `nonce.mac`: the browser signed in to `userId` before. */
function deviceTokenFor(key: Buffer, userId: string): string {
  const nonce = randomBytes(16).toString('base64url');
  return `${nonce}.${hmacSha256(key, `device:${userId}:${nonce}`)}`;
}

/** The token itself when it is a device cookie made for `userId`. */
function trustedDevice(key: Buffer, userId: string, token: string | undefined): string | undefined {
  const [nonce, mac, ...rest] = token?.split('.') ?? [];
  if (!nonce || !mac || rest.length > 0) return undefined;
  return safeEqual(mac, hmacSha256(key, `device:${userId}:${nonce}`)) ? token : undefined;
}

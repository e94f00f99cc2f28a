import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';

/** One throttled key as the database sees it now. */
export interface ThrottleRow {
  readonly key: string;
  readonly attempts: number;
  /** Whole seconds the key stays locked (0: not locked). */
  readonly lockedForSecs: number;
  /** The count went stale: the last attempt was longer ago than the caller's staleness window. */
  readonly stale: boolean;
}

/**
 * Lock the rows of `keys` (creating missing ones with no attempts) for the
 * caller's transaction, in key order so concurrent callers cannot deadlock.
 * Times are the database's, so processes with skewed clocks agree.
 */
export async function lockThrottleRows(
  trx: DbOrTrx,
  keys: readonly string[],
  staleAfterSecs: number,
): Promise<ThrottleRow[]> {
  const sorted = [...keys].sort();
  await sql`insert into login_throttles (key, attempts)
    select key, 0 from unnest(${sorted}::text[]) as key order by key
    on conflict (key) do nothing`.execute(trx);
  const { rows } = await sql<ThrottleRow>`
    select key, attempts,
      greatest(0, ceil(extract(epoch from coalesce(locked_until, now()) - now())))::int as "lockedForSecs",
      (last_attempt_at < now() - make_interval(secs => ${staleAfterSecs})) as stale
    from login_throttles where key = any(${sorted}::text[]) order by key for update`.execute(trx);
  return rows;
}

/** Record the attempt count of `key`, locked for `lockSecs` from now (0: not locked). */
export async function recordThrottle(trx: DbOrTrx, key: string, attempts: number, lockSecs: number): Promise<void> {
  await sql`update login_throttles set attempts = ${attempts}, last_attempt_at = now(),
      locked_until = case when ${lockSecs}::int > 0 then now() + make_interval(secs => ${lockSecs}) end
    where key = ${key}`.execute(trx);
}

/**
 * A success on an address: the attempt counted for it is given back, and a
 * lock ends when fewer than `freeAttempts` attempts remain counted.
 */
export async function giveBackAttempt(db: DbOrTrx, key: string, freeAttempts: number): Promise<void> {
  await sql`update login_throttles set attempts = greatest(attempts - 1, 0),
      locked_until = case when attempts - 1 < ${freeAttempts} then null else locked_until end
    where key = ${key}`.execute(db);
}

export async function deleteThrottle(db: DbOrTrx, key: string): Promise<void> {
  await db.deleteFrom('loginThrottles').where('key', '=', key).execute();
}

/** Housekeeping: keys with no attempt since `before` and no running lock. */
export async function deleteThrottlesIdleSince(db: DbOrTrx, before: Date): Promise<number> {
  const result = await db
    .deleteFrom('loginThrottles')
    .where('lastAttemptAt', '<', before)
    .where((eb) => eb.or([eb('lockedUntil', 'is', null), eb('lockedUntil', '<', before)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Whether `key` (login.service.ts `knownAddressKey`) had a successful sign-in since `since`. */
export async function isKnownAddress(db: DbOrTrx, key: string, since: Date): Promise<boolean> {
  const row = await db
    .selectFrom('loginKnownAddresses')
    .select('key')
    .where('key', '=', key)
    .where('lastSignedInAt', '>=', since)
    .executeTakeFirst();
  return row !== undefined;
}

/** Note a successful sign-in of `userId` from the address behind `key`. */
export async function rememberKnownAddress(db: DbOrTrx, key: string, userId: string): Promise<void> {
  await db
    .insertInto('loginKnownAddresses')
    .values({ key, userId })
    .onConflict((oc) => oc.column('key').doUpdateSet({ lastSignedInAt: sql`now()` }))
    .execute();
}

/** Housekeeping: addresses with no successful sign-in since `before`. */
export async function deleteKnownAddressesUnusedSince(db: DbOrTrx, before: Date): Promise<number> {
  const result = await db.deleteFrom('loginKnownAddresses').where('lastSignedInAt', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

import { type RawBuilder, sql } from 'kysely';
import { type DbOrTrx, preparedStatement } from '../../db/database.ts';

export interface CounterHit {
  /** Hits in the current window, this one included. */
  readonly count: number;
  /** Whole seconds until the window ends (at least 1). */
  readonly resetSecs: number;
}

/**
 * Count one hit against `key` in one atomic statement, so concurrent callers
 * in any process see distinct counts. The window starts at the key's first
 * hit and lasts `windowSecs`; the first hit after it ends opens a new window
 * (count back to 1). Times are the database's, so processes with skewed
 * clocks still agree.
 */
export async function incrementCounter(db: DbOrTrx, key: string, windowSecs: number): Promise<CounterHit> {
  const [hit] = await incrementCounters(db, [key], windowSecs);
  if (!hit) throw new Error('rate-limit upsert returned no row');
  return hit;
}

/**
 * The counting statement of `incrementCounters`, for a caller that runs it as
 * a data-modifying CTE of a larger statement (the REST bearer check counts
 * the request's windows while it looks the token up, one round trip for
 * both). It returns `key, count, reset_secs` per key. Rows are locked in key
 * order, so concurrent statements sharing keys cannot deadlock.
 */
export function counterHits(
  keys: readonly string[],
  windowSecs: number,
  /** Count only while this holds (e.g. on what an earlier CTE of the statement found). */
  when: RawBuilder<boolean> = sql<boolean>`true`,
): RawBuilder<CounterHit & { key: string }> {
  return sql<CounterHit & { key: string }>`
    insert into rate_limit_counters (key, count, window_started_at, expires_at)
    select key, 1, now(), now() + make_interval(secs => ${windowSecs})
    from unnest(${keys}::text[]) as key where ${when} order by key
    on conflict (key) do update set
      count = case when rate_limit_counters.expires_at > now() then rate_limit_counters.count + 1 else 1 end,
      window_started_at = case
        when rate_limit_counters.expires_at > now() then rate_limit_counters.window_started_at else now() end,
      expires_at = case
        when rate_limit_counters.expires_at > now() then rate_limit_counters.expires_at else excluded.expires_at end
    returning key, count, greatest(1, ceil(extract(epoch from expires_at - now())))::int as reset_secs`;
}

/** The hits of `rows` (one per key, any order) in the order of `keys`. */
export function hitsInOrder(keys: readonly string[], rows: readonly (CounterHit & { key: string })[]): CounterHit[] {
  return keys.map((key) => {
    const row = rows.find((candidate) => candidate.key === key);
    if (!row) throw new Error(`rate-limit upsert returned no row for ${key}`);
    return { count: row.count, resetSecs: row.resetSecs };
  });
}

/**
 * `incrementCounter` for several keys (distinct) in one statement; the hits
 * come back in the order of `keys`. Every REST request bumps two windows
 * (address and token), so this is constant SQL text run as a named prepared
 * statement: the query-builder form cost 2-3x the Node CPU per call and was
 * planned on every call, and one statement instead of one per window saves a
 * round trip.
 */
export async function incrementCounters(
  db: DbOrTrx,
  keys: readonly string[],
  windowSecs: number,
): Promise<CounterHit[]> {
  const { rows } = await sql<CounterHit & { key: string }>`${counterHits(keys, windowSecs)}
    ${preparedStatement('rate_limit_increment')}`.execute(db);
  return hitsInOrder(keys, rows);
}

/** The hits counted against `key` in its open window, counting none; undefined when no window is open. */
export async function findOpenCounter(db: DbOrTrx, key: string): Promise<CounterHit | undefined> {
  return db
    .selectFrom('rateLimitCounters')
    .select(['count', sql<number>`greatest(1, ceil(extract(epoch from expires_at - now())))::int`.as('resetSecs')])
    .where('key', '=', key)
    .where('expiresAt', '>', sql<Date>`now()`)
    .executeTakeFirst();
}

/** Drop counters whose window ended before `before` (housekeeping; a stale row is reset on its next hit anyway). */
export async function deleteCountersExpiredBefore(db: DbOrTrx, before: Date): Promise<number> {
  const result = await db.deleteFrom('rateLimitCounters').where('expiresAt', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

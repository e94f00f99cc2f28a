import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';

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
  const windowEnd = sql<Date>`now() + make_interval(secs => ${windowSecs})`;
  const row = await db
    .insertInto('rateLimitCounters')
    .values({ key, count: 1, windowStartedAt: sql<Date>`now()`, expiresAt: windowEnd })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet((eb) => {
        const open = eb('rateLimitCounters.expiresAt', '>', sql<Date>`now()`);
        return {
          count: eb
            .case()
            .when(open)
            .then(eb('rateLimitCounters.count', '+', 1))
            .else(1)
            .end(),
          windowStartedAt: eb
            .case()
            .when(open)
            .then(eb.ref('rateLimitCounters.windowStartedAt'))
            .else(sql<Date>`now()`)
            .end(),
          expiresAt: eb.case().when(open).then(eb.ref('rateLimitCounters.expiresAt')).else(windowEnd).end(),
        };
      }),
    )
    .returning(['count', sql<number>`greatest(1, ceil(extract(epoch from expires_at - now())))::int`.as('resetSecs')])
    .executeTakeFirstOrThrow();
  return { count: row.count, resetSecs: row.resetSecs };
}

/** Drop counters whose window ended before `before` (housekeeping; a stale row is reset on its next hit anyway). */
export async function deleteCountersExpiredBefore(db: DbOrTrx, before: Date): Promise<number> {
  const result = await db.deleteFrom('rateLimitCounters').where('expiresAt', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

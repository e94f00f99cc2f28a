import { type Expression, type RawBuilder, sql } from 'kysely';
import { type DbOrTrx, precompiled, preparedStatement } from '../../db/database.ts';
import type { DerivedChangeKind } from '../../db/tables.ts';

export type { DerivedChangeKind } from '../../db/tables.ts';

/**
 * What an input write changed, for the derived data (training load, recovery,
 * fuel, recommendations): whose data, what kind, and the earliest date whose
 * derived numbers it can change. Input modules append one in the transaction
 * of their write; the derived module drains them (docs/design.md §3 "Derived data").
 */
export interface ChangeRecord {
  readonly userId: string;
  readonly kind: DerivedChangeKind;
  readonly fromDate: string;
}

/**
 * What a service that writes an input of the derived data needs: the handle
 * its write and change record run on, the pool or the caller's transaction
 * (passed down, so the caller's transaction holds both).
 */
export interface InputWriteDeps {
  readonly db: DbOrTrx;
}

/** The earliest date there can be: "recompute everything" (a profile change touches every day). */
export const FROM_THE_BEGINNING = '0001-01-01';

/** Append a change record in the caller's transaction: it commits with the write or not at all. */
export async function recordChange(trx: DbOrTrx, change: ChangeRecord): Promise<void> {
  await trx
    .insertInto('derivedChanges')
    .values({ userId: change.userId, kind: change.kind, fromDate: change.fromDate })
    .execute();
}

/**
 * `recordChange` as a common table expression of the statement that wrote
 * the input (`with` takes it as it is, parenthesised): one change record per
 * row of `rows`, a select of `user_id` and `from_date` over the rows another
 * CTE of that statement wrote (e.g. only the row an upsert created, not one
 * it relabelled). `kind` is a literal, or an expression of the statement's
 * own when the write decides it (e.g. its `$n` parameters). One round trip,
 * atomic as any single statement.
 */
export function changeRecordsOf(
  kind: DerivedChangeKind | RawBuilder<DerivedChangeKind>,
  rows: Expression<{ userId: string; fromDate: string }>,
): RawBuilder<Record<string, never>> {
  const kindValue = typeof kind === 'string' ? sql.lit(kind) : kind;
  // It returns no rows: nothing reads the CTE.
  return sql`(insert into derived_changes (user_id, kind, from_date)
    select changed.user_id, ${kindValue}, changed.from_date from (${rows}) as changed)`;
}

/** When a user's change records are ripe for a run (see `listUsersWithChanges`). */
export interface SettleWindow {
  /** Serve once the newest record is this old: a burst of writes has paused. */
  readonly quietMs: number;
  /** …or once the oldest is this old, however busy the writes: what bounds the lag of a steady stream. */
  readonly maxWaitMs: number;
}

/**
 * The drainer's poll, several times a second in every worker: one text,
 * compiled once and run as a named prepared statement (the settle window and
 * the excluded users are parameters). One pass over the records through the
 * `(user_id, id)` key, grouped by user.
 */
const usersWithChangesQuery = precompiled(
  4,
  (db: DbOrTrx, quietSecs: number, maxWaitSecs: number, excluded: readonly string[], limit: number) =>
    sql<{ userId: string }>`select user_id as "userId" from derived_changes
      where not (user_id = any(${excluded}::uuid[]))
      group by user_id
      having max(created_at) <= now() - make_interval(secs => ${quietSecs}::float8)
        or min(created_at) <= now() - make_interval(secs => ${maxWaitSecs}::float8)
      order by min(id)
      limit ${limit}::int ${preparedStatement('list_users_with_changes')}`.compile(db),
);

/**
 * Users whose change records have settled (`settle`), but those `excluded`,
 * the longest-waiting first (their oldest record), at most `limit`.
 */
export async function listUsersWithChanges(
  db: DbOrTrx,
  limit: number,
  settle: SettleWindow,
  excluded: readonly string[] = [],
): Promise<string[]> {
  const query = usersWithChangesQuery(db, settle.quietMs / 1000, settle.maxWaitMs / 1000, excluded, limit);
  const { rows } = await db.executeQuery(query);
  return rows.map((row) => row.userId);
}

/** What a run takes over: how many records, and the earliest date each kind of change asked for. */
export interface TakenChanges {
  readonly count: number;
  readonly fromDateByKind: Partial<Readonly<Record<DerivedChangeKind, string>>>;
}

/**
 * Take the user's change records: delete every one committed so far and
 * answer what they asked for, in the caller's transaction. The caller writes
 * the derived rows in that same transaction, so the records go exactly when
 * the numbers they asked for are stored; a rollback (a worker that dies)
 * leaves them for the next run. A write that commits after this statement
 * keeps its record for the next run, and its data is read by that run.
 */
export async function takeChanges(trx: DbOrTrx, userId: string): Promise<TakenChanges | undefined> {
  const { rows } = await sql<{ kind: DerivedChangeKind; count: number; fromDate: string }>`
    with taken as (delete from derived_changes where user_id = ${userId} returning kind, from_date)
    select kind, count(*)::int as count, min(from_date)::text as from_date from taken group by kind`.execute(trx);
  if (rows.length === 0) return undefined;
  return {
    count: rows.reduce((sum, row) => sum + row.count, 0),
    fromDateByKind: Object.fromEntries(rows.map((row) => [row.kind, row.fromDate])),
  };
}

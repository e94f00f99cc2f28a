import { type SelectQueryBuilder, sql } from 'kysely';
import type { DatePage } from '../lib/date-range.ts';
import type { Database } from './tables.ts';

/** The tables whose rows belong to a user and a calendar date (`user_id`, `date`). */
type DatedTable = {
  [T in keyof Database]: Database[T] extends { userId: unknown; date: unknown } ? T : never;
}[keyof Database];

/**
 * One user's rows of a dated table in a date page, oldest first: `from`..`to`
 * inclusive, after the cursor's date, and `limit + 1` rows so the caller
 * knows whether another page exists (`keysetPage`).
 */
export function inDatePage<T extends DatedTable, O>(
  query: SelectQueryBuilder<Database, T, O>,
  userId: string,
  window: DatePage,
): SelectQueryBuilder<Database, T, O> {
  // The columns by reference: every dated table has them, which Kysely cannot see through the type parameter.
  const date = sql.ref<string>('date');
  let page = query
    .where(sql.ref<string>('userId'), '=', userId)
    .where(date, '>=', window.from)
    .where(date, '<=', window.to);
  if (window.after !== undefined) page = page.where(date, '>', window.after);
  return page.orderBy(date).limit(window.limit + 1);
}

import { sql } from 'kysely';
import type { WellnessField } from '@pacer/contract';
import type { DbOrTrx } from '../../db/database.ts';
import type { WellnessRow } from '../../db/tables.ts';

export type WellnessValues = { [K in WellnessField]?: WellnessRow[K] };

export interface WellnessUpsertRow {
  readonly userId: string;
  readonly date: string;
  /** Only the fields the caller sent; `null` clears. */
  readonly values: WellnessValues;
  /** Client id of the sending app, the key of its raw JSON. */
  readonly source: string;
  readonly rawJson: Record<string, unknown> | undefined;
}

/**
 * One statement, so concurrent writers never lose each other's fields:
 * `ON CONFLICT DO UPDATE` sets only the columns this caller sent, on the row
 * as it is when the update takes its lock. `xmax = 0` is true only for the
 * row version this statement inserted.
 */
export async function upsertWellness(
  db: DbOrTrx,
  row: WellnessUpsertRow,
): Promise<{ row: WellnessRow; created: boolean }> {
  const rawJson = row.rawJson === undefined ? undefined : JSON.stringify({ [row.source]: row.rawJson });
  const result = await db
    .insertInto('wellness')
    .values({ userId: row.userId, date: row.date, ...row.values, ...(rawJson === undefined ? {} : { rawJson }) })
    .onConflict((oc) =>
      oc.columns(['userId', 'date']).doUpdateSet((eb) => {
        const update: Record<string, unknown> = { updatedAt: sql`now()` };
        for (const field of Object.keys(row.values) as WellnessField[]) {
          update[field] = eb.ref(`excluded.${field}`);
        }
        if (rawJson !== undefined) update['rawJson'] = sql`wellness.raw_json || excluded.raw_json`;
        return update;
      }),
    )
    .returningAll()
    .returning(sql<boolean>`(xmax = 0)`.as('created'))
    .executeTakeFirstOrThrow();
  const { created, ...stored } = result;
  return { row: stored, created };
}

export interface DateWindow {
  readonly from: string;
  readonly to: string;
  readonly after: string | undefined;
  readonly limit: number;
}

/** Rows in the window, oldest first; one more than `limit` tells the caller another page exists. */
export async function listWellness(db: DbOrTrx, userId: string, window: DateWindow): Promise<WellnessRow[]> {
  let query = db
    .selectFrom('wellness')
    .selectAll()
    .where('userId', '=', userId)
    .where('date', '>=', window.from)
    .where('date', '<=', window.to);
  if (window.after !== undefined) query = query.where('date', '>', window.after);
  return query
    .orderBy('date')
    .limit(window.limit + 1)
    .execute();
}

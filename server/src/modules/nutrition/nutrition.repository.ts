import { inDatePage } from '../../db/date-page.ts';
import { sql, type Insertable } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';
import { UPSERT_INSERTED, UPSERT_UPDATED_AT } from '../../db/upsert.ts';
import type { NutritionItemRow, NutritionItemsTable, NutritionLogRow } from '../../db/tables.ts';
import type { DatePage } from '../../lib/date-range.ts';

export interface NutritionLogUpsert {
  readonly userId: string;
  readonly date: string;
  readonly source: string;
  /** `undefined` keeps what the app sent before. */
  readonly rawJson: Record<string, unknown> | undefined;
}

/**
 * Insert or touch the (user, date, source) log. The row lock this statement
 * takes on conflict is held until the caller's transaction ends, so two
 * concurrent replaces of one app's day run one after the other.
 */
export async function upsertNutritionLog(
  db: DbOrTrx,
  log: NutritionLogUpsert,
): Promise<{ log: NutritionLogRow; created: boolean }> {
  const rawJson = log.rawJson === undefined ? null : JSON.stringify(log.rawJson);
  const result = await db
    .insertInto('nutritionLogs')
    .values({ userId: log.userId, date: log.date, source: log.source, rawJson })
    .onConflict((oc) =>
      oc.columns(['userId', 'date', 'source']).doUpdateSet({
        rawJson: sql`coalesce(excluded.raw_json, nutrition_logs.raw_json)`,
        updatedAt: UPSERT_UPDATED_AT,
      }),
    )
    .returningAll()
    .returning(UPSERT_INSERTED.as('created'))
    .executeTakeFirstOrThrow();
  const { created, ...stored } = result;
  return { log: stored, created };
}

/** The log's items become `items`: they take the log's user and id. */
export async function replaceNutritionItems(
  db: DbOrTrx,
  log: Pick<NutritionLogRow, 'userId' | 'id'>,
  items: readonly Omit<Insertable<NutritionItemsTable>, 'logId' | 'userId'>[],
): Promise<NutritionItemRow[]> {
  await db.deleteFrom('nutritionItems').where('userId', '=', log.userId).where('logId', '=', log.id).execute();
  if (items.length === 0) return [];
  return db
    .insertInto('nutritionItems')
    .values(items.map((item) => ({ ...item, userId: log.userId, logId: log.id })))
    .returningAll()
    .execute();
}

/** The dates in the window that have any log, oldest first, `limit + 1` at most. */
export async function listNutritionDates(db: DbOrTrx, userId: string, window: DatePage): Promise<string[]> {
  const rows = await inDatePage(db.selectFrom('nutritionLogs').select('date').distinct(), userId, window).execute();
  return rows.map((row) => row.date);
}

export async function findNutritionLogs(
  db: DbOrTrx,
  userId: string,
  dates: readonly string[],
): Promise<{ logs: NutritionLogRow[]; items: NutritionItemRow[] }> {
  if (dates.length === 0) return { logs: [], items: [] };
  const logs = await db
    .selectFrom('nutritionLogs')
    .selectAll()
    .where('userId', '=', userId)
    .where('date', 'in', dates)
    .orderBy('date')
    .orderBy('source')
    .execute();
  if (logs.length === 0) return { logs, items: [] };
  const items = await db
    .selectFrom('nutritionItems')
    .selectAll()
    .where('userId', '=', userId)
    .where(
      'logId',
      'in',
      logs.map((log) => log.id),
    )
    .orderBy('loggedAt')
    .orderBy('position')
    .execute();
  return { logs, items };
}

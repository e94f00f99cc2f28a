import { keysetPage, type KeysetPage } from '../../lib/cursor.ts';
import {
  MAX_ITEMS_PER_DAY,
  type DateRangeQuery,
  type NutritionDay,
  type NutritionItem,
  type NutritionLog,
  type NutritionUpsert,
} from '@pacer/contract';
import type { Db } from '../../db/database.ts';
import { type InputWriteDeps, recordChange } from '../changes/changes.repository.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { NutritionItemRow, NutritionLogRow } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import { encodeDateCursor, resolveDatePage } from '../../lib/date-range.ts';
import { addDays, formatWithOffset, offsetMinutesOf, resolveLocalDate } from '../../lib/dates.ts';
import type { Actor } from '../../lib/actor.ts';
import {
  findNutritionLogs,
  listNutritionDates,
  replaceNutritionItems,
  upsertNutritionLog,
} from './nutrition.repository.ts';

export interface NutritionUpsertResult {
  readonly log: NutritionLog;
  readonly created: boolean;
}

/**
 * Replace the calling app's items for one date (docs/design.md §3): the upsert key
 * is (user, date, source app), so other apps' items for the date stay. An
 * absent `rawJson` keeps what the app sent before.
 */
export async function upsertNutritionDay(
  deps: InputWriteDeps,
  actor: Actor,
  input: NutritionUpsert,
): Promise<NutritionUpsertResult> {
  const date = resolveLocalDate(input.date, actor.timeZone);
  return inTransaction(deps.db, async (trx) => {
    // An item may be eaten on another calendar day than the log's date: recompute from the earliest.
    const earliest = [date, ...input.items.map((item) => item.logged_at.slice(0, 10))].sort()[0] ?? date;
    await recordChange(trx, { userId: actor.userId, kind: 'nutrition', fromDate: addDays(earliest, -1) });
    const { log, created } = await upsertNutritionLog(trx, {
      userId: actor.userId,
      date,
      source: actor.source,
      rawJson: input.rawJson,
    });
    const items = await replaceNutritionItems(
      trx,
      log,
      input.items.map((item, position) => ({
        position,
        name: item.name,
        carbs: item.carbs ?? null,
        protein: item.protein ?? null,
        fat: item.fat ?? null,
        fiber: item.fiber ?? null,
        sugar: item.sugar ?? null,
        calories: item.calories ?? null,
        waterMl: item.waterMl ?? null,
        quantity: item.quantity ?? null,
        meal: item.meal ?? null,
        loggedAt: new Date(item.logged_at),
        loggedAtOffsetMinutes: offsetMinutesOf(item.logged_at),
        absorptionType: item.absorptionType,
        planned: item.planned ?? false,
      })),
    );
    const outputItems = items.map((row) => toNutritionItem(row, log.source));
    return {
      created,
      log: {
        date: log.date,
        source: log.source,
        items: outputItems,
        totals: totalsOf(outputItems),
        rawJson: log.rawJson,
        createdAt: log.createdAt.toISOString(),
        updatedAt: log.updatedAt.toISOString(),
      },
    };
  });
}

/**
 * Add items to the calling app's log of one date, keeping what the app
 * logged there before. `upsertNutritionDay` replaces the app's items of the
 * date (the REST contract), so this takes the log's row lock first, reads the
 * app's items under it and sends them back with the new ones: two concurrent
 * additions both land. Other apps' items are untouched, as always. At most
 * `MAX_ITEMS_PER_DAY` items in all (else `unprocessable`).
 */
export async function appendNutritionItems(
  deps: InputWriteDeps,
  actor: Actor,
  date: string,
  items: NutritionUpsert['items'],
): Promise<NutritionUpsertResult> {
  return inTransaction(deps.db, async (trx) => {
    const { log } = await upsertNutritionLog(trx, {
      userId: actor.userId,
      date,
      source: actor.source,
      rawJson: undefined,
    });
    const { items: stored } = await findNutritionLogs(trx, actor.userId, [date]);
    const kept = stored.filter((item) => item.logId === log.id).map(toItemInput);
    if (kept.length + items.length > MAX_ITEMS_PER_DAY) {
      throw new AppError(
        'unprocessable',
        `The log of ${date} would hold ${String(kept.length + items.length)} items; at most ${String(MAX_ITEMS_PER_DAY)} a day.`,
      );
    }
    return upsertNutritionDay({ ...deps, db: trx }, actor, { date, items: [...kept, ...items] });
  });
}

/** A stored item as it was sent: fields stored empty are left out. */
function toItemInput(row: NutritionItemRow): NutritionUpsert['items'][number] {
  const item: NutritionUpsert['items'][number] = {
    name: row.name,
    logged_at: formatWithOffset(row.loggedAt, row.loggedAtOffsetMinutes),
    absorptionType: row.absorptionType,
    planned: row.planned,
  };
  if (row.carbs !== null) item.carbs = row.carbs;
  if (row.protein !== null) item.protein = row.protein;
  if (row.fat !== null) item.fat = row.fat;
  if (row.fiber !== null) item.fiber = row.fiber;
  if (row.sugar !== null) item.sugar = row.sugar;
  if (row.calories !== null) item.calories = row.calories;
  if (row.waterMl !== null) item.waterMl = row.waterMl;
  if (row.quantity !== null) item.quantity = row.quantity;
  if (row.meal !== null) item.meal = row.meal;
  return item;
}

export async function listNutritionDays(
  db: Db,
  actor: Actor,
  query: DateRangeQuery,
): Promise<KeysetPage<NutritionDay>> {
  const page = resolveDatePage(query, actor.timeZone);
  const dates = await listNutritionDates(db, actor.userId, page);
  const shown = keysetPage(dates, page.limit, (date) => date, encodeDateCursor);
  const { logs, items } = await findNutritionLogs(db, actor.userId, shown.items);
  return { items: shown.items.map((date) => mergeDay(date, logs, items)), nextCursor: shown.nextCursor };
}

function mergeDay(date: string, logs: readonly NutritionLogRow[], items: readonly NutritionItemRow[]): NutritionDay {
  const dayLogs = logs.filter((log) => log.date === date);
  const sourceOf = new Map(dayLogs.map((log) => [log.id, log.source]));
  const dayItems = items
    .filter((item) => sourceOf.has(item.logId))
    .map((item) => toNutritionItem(item, sourceOf.get(item.logId) as string));
  return {
    date,
    items: dayItems,
    totals: totalsOf(dayItems),
    sources: dayLogs.map((log) => ({
      source: log.source,
      rawJson: log.rawJson,
      updatedAt: log.updatedAt.toISOString(),
    })),
  };
}

function toNutritionItem(row: NutritionItemRow, source: string): NutritionItem {
  return {
    name: row.name,
    carbs: row.carbs,
    protein: row.protein,
    fat: row.fat,
    fiber: row.fiber,
    sugar: row.sugar,
    calories: row.calories,
    waterMl: row.waterMl,
    quantity: row.quantity,
    meal: row.meal,
    logged_at: formatWithOffset(row.loggedAt, row.loggedAtOffsetMinutes),
    absorptionType: row.absorptionType,
    planned: row.planned,
    source,
  };
}

/**
 * Sums over the eaten items, rounded to 0.01 so float noise (0.1 + 0.2) never
 * reaches clients. Planned items are not eaten yet: they are left out
 * (docs/science.md §3).
 */
function totalsOf(items: readonly NutritionItem[]): NutritionDay['totals'] {
  const eaten = items.filter((item) => !item.planned);
  const sum = (pick: (item: NutritionItem) => number | null) =>
    Math.round(eaten.reduce((total, item) => total + (pick(item) ?? 0), 0) * 100) / 100;
  return {
    calories: sum((item) => item.calories),
    carbs: sum((item) => item.carbs),
    protein: sum((item) => item.protein),
    fat: sum((item) => item.fat),
    waterMl: sum((item) => item.waterMl),
  };
}

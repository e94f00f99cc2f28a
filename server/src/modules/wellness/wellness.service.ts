import { WELLNESS_FIELDS, type DateRangeQuery, type WellnessRecord, type WellnessUpsert } from '@pacer/contract';
import type { Db } from '../../db/database.ts';
import { inTransaction } from '../../db/transaction.ts';
import { type AnalyticsInputDeps, requestRecompute } from '../analytics/recompute-request.ts';
import type { WellnessRow } from '../../db/tables.ts';
import { encodeDateCursor, resolveDatePage } from '../../lib/date-range.ts';
import { resolveLocalDate } from '../../lib/dates.ts';
import type { TokenPrincipal } from '../oauth/token.service.ts';
import { listWellness, upsertWellness, type WellnessValues } from './wellness.repository.ts';

export interface WellnessUpsertResult {
  readonly record: WellnessRecord;
  readonly created: boolean;
}

/**
 * Upsert one day (DESIGN.md §3 "Sync resources"): fields present overwrite,
 * `null` clears, absent fields keep their value; `rawJson` is kept per source
 * app. The date is the user's calendar date (see `resolveLocalDate`).
 */
export async function upsertWellnessDay(
  deps: AnalyticsInputDeps,
  principal: TokenPrincipal,
  input: WellnessUpsert,
): Promise<WellnessUpsertResult> {
  const date = resolveLocalDate(input.date, principal.timeZone);
  const values: WellnessValues = {};
  for (const field of WELLNESS_FIELDS) {
    const value = input[field];
    if (value !== undefined) (values as Record<string, unknown>)[field] = value;
  }
  return inTransaction(deps.db, async (trx) => {
    const { row, created } = await upsertWellness(trx, {
      userId: principal.userId,
      date,
      values,
      source: principal.clientId,
      rawJson: input.rawJson,
    });
    await requestRecompute(deps, trx, principal.userId, date);
    return { record: toWellnessRecord(row), created };
  });
}

export async function listWellnessDays(
  db: Db,
  principal: TokenPrincipal,
  query: DateRangeQuery,
): Promise<{ items: WellnessRecord[]; nextCursor: string | null }> {
  const page = resolveDatePage(query, principal.timeZone);
  const rows = await listWellness(db, principal.userId, page);
  const items = rows.slice(0, page.limit).map(toWellnessRecord);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > page.limit && last ? encodeDateCursor(last.date) : null };
}

export function toWellnessRecord(row: WellnessRow): WellnessRecord {
  const record: Record<string, unknown> = { date: row.date };
  for (const field of WELLNESS_FIELDS) record[field] = row[field];
  record['rawJsonBySource'] = row.rawJson;
  record['createdAt'] = row.createdAt.toISOString();
  record['updatedAt'] = row.updatedAt.toISOString();
  return record as WellnessRecord;
}

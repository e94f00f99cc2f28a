import { WELLNESS_FIELDS, type DateRangeQuery, type WellnessRecord, type WellnessUpsert } from '@pacer/contract';
import { keysetPage, type KeysetPage } from '../../lib/cursor.ts';
import type { Db } from '../../db/database.ts';
import type { InputWriteDeps } from '../changes/changes.repository.ts';
import type { WellnessRow } from '../../db/tables.ts';
import { encodeDateCursor, resolveDatePage } from '../../lib/date-range.ts';
import { resolveLocalDate } from '../../lib/dates.ts';
import type { Actor } from '../../lib/actor.ts';
import { listWellnessRecords, upsertWellness, type WellnessValues } from './wellness.repository.ts';

export interface WellnessUpsertResult {
  readonly record: WellnessRecord;
  readonly created: boolean;
}

/**
 * Upsert one day (docs/design.md §3 "Sync resources"): fields present overwrite,
 * `null` clears, absent fields keep their value; `rawJson` is kept per source
 * app. The date is the user's calendar date (see `resolveLocalDate`).
 */
export async function upsertWellnessDay(
  deps: InputWriteDeps,
  actor: Actor,
  input: WellnessUpsert,
): Promise<WellnessUpsertResult> {
  const date = resolveLocalDate(input.date, actor.timeZone);
  const values: WellnessValues = {};
  for (const field of WELLNESS_FIELDS) {
    const value = input[field];
    if (value !== undefined) (values as Record<string, unknown>)[field] = value;
  }
  // One statement writes the day and its change record (wellness.repository.ts).
  const { row, created } = await upsertWellness(deps.db, {
    userId: actor.userId,
    date,
    values,
    source: actor.source,
    rawJson: input.rawJson,
  });
  return { record: toWellnessRecord(row), created };
}

export async function listWellnessDays(
  db: Db,
  actor: Actor,
  query: DateRangeQuery,
): Promise<KeysetPage<WellnessRecord>> {
  const page = resolveDatePage(query, actor.timeZone);
  // The repository reads the days as records already (see listWellnessRecords).
  const rows: WellnessRecord[] = await listWellnessRecords(db, actor.userId, page);
  return keysetPage(
    rows,
    page.limit,
    (row) => row,
    (last) => encodeDateCursor(last.date),
  );
}

/** Every key of a record, in its order: records built from it share one object shape. */
const RECORD_TEMPLATE: Readonly<Record<string, unknown>> = Object.fromEntries(
  ['date', ...WELLNESS_FIELDS, 'rawJsonBySource', 'createdAt', 'updatedAt'].map((key) => [key, null]),
);

export function toWellnessRecord(row: WellnessRow): WellnessRecord {
  const record = { ...RECORD_TEMPLATE };
  record['date'] = row.date;
  for (const field of WELLNESS_FIELDS) record[field] = row[field];
  record['rawJsonBySource'] = row.rawJson;
  record['createdAt'] = row.createdAt.toISOString();
  record['updatedAt'] = row.updatedAt.toISOString();
  return record as WellnessRecord;
}

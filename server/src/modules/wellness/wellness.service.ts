import { WELLNESS_FIELDS, type DateRangeQuery, type WellnessRecord, type WellnessUpsert } from '@pacer/contract';
import { keysetPage, type KeysetPage } from '../../lib/cursor.ts';
import type { Db } from '../../db/database.ts';
import type { InputWriteDeps } from '../changes/changes.repository.ts';
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
  // One statement writes the day and its change record, and returns the day as the API's record (wellness.repository.ts).
  return upsertWellness(deps.db, {
    userId: actor.userId,
    date,
    values,
    source: actor.source,
    rawJson: input.rawJson,
  });
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

import { WELLNESS_FIELDS, type DateRangeQuery, type WellnessRecord, type WellnessUpsert } from '@pacer/contract';
import { keysetPage, type KeysetPage } from '../../lib/cursor.ts';
import type { Db } from '../../db/database.ts';
import { runAtomically } from '../../db/statement-batch.ts';
import { type AnalyticsInputDeps, recomputeJobStatement } from '../derived/recompute-request.ts';
import type { WellnessRow } from '../../db/tables.ts';
import { encodeDateCursor, resolveDatePage } from '../../lib/date-range.ts';
import { resolveLocalDate } from '../../lib/dates.ts';
import type { TokenPrincipal } from '../oauth/token.service.ts';
import { listWellnessRecords, type WellnessValues, wellnessUpsert, writtenWellnessOf } from './wellness.repository.ts';

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
  // The day, the request row and the recompute job commit together (requestRecompute's rule),
  // in one round trip: one statement for the day and the request row, then the job's insert.
  // That is requestRecompute's lock order too (request row, then job): concurrent writes of one
  // athlete queue on the request row instead of deadlocking on it and the job's singleton key.
  const [written] = await runAtomically(deps.db, [
    wellnessUpsert(
      deps.db,
      { userId: principal.userId, date, values, source: principal.clientId, rawJson: input.rawJson },
      { requestRecompute: true },
    ),
    await recomputeJobStatement(deps, principal.userId),
  ]);
  const { row, created } = writtenWellnessOf(written?.rows ?? []);
  return { record: toWellnessRecord(row), created };
}

export async function listWellnessDays(
  db: Db,
  principal: TokenPrincipal,
  query: DateRangeQuery,
): Promise<KeysetPage<WellnessRecord>> {
  const page = resolveDatePage(query, principal.timeZone);
  // The repository reads the days as records already (see listWellnessRecords).
  const rows: WellnessRecord[] = await listWellnessRecords(db, principal.userId, page);
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

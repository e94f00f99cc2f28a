import { sql } from 'kysely';
import type { ReportType } from '@pacer/contract';
import type { DbOrTrx } from '../../db/database.ts';
import type { ReportRow } from '../../db/tables.ts';

export interface ReportInsert {
  /** The `report` job's id. */
  readonly id: string;
  readonly userId: string;
  readonly type: ReportType;
  readonly title: string;
  readonly periodFrom: string;
  readonly periodTo: string;
  readonly markdown: string;
  readonly data: Record<string, unknown>;
}

/**
 * A job writes its report once. Should a second worker finish the same job
 * (a redelivered pg-boss job), its identical report is not written again.
 */
export async function insertReport(db: DbOrTrx, report: ReportInsert): Promise<void> {
  await db
    .insertInto('reports')
    .values({ ...report, data: JSON.stringify(report.data) })
    .onConflict((oc) => oc.columns(['userId', 'id']).doNothing())
    .execute();
}

/** Scoped to the owner: another user's id finds nothing, exactly like an unknown id. */
export async function findUserReport(db: DbOrTrx, userId: string, id: string): Promise<ReportRow | undefined> {
  return db.selectFrom('reports').selectAll().where('userId', '=', userId).where('id', '=', id).executeTakeFirst();
}

/**
 * A report without its body, and its creation time to the microsecond as
 * text: a JavaScript `Date` keeps only milliseconds, and a keyset position
 * rounded down would skip rows created within the same millisecond.
 */
export type ReportSummaryRow = Omit<ReportRow, 'markdown' | 'data'> & { readonly createdAtKey: string };

export interface ReportWindow {
  readonly type: ReportType | undefined;
  /** Keyset: only rows strictly before this (createdAt, id), newest first. */
  readonly before: { readonly createdAtKey: string; readonly id: string } | undefined;
  readonly limit: number;
}

/** Newest first; one more than `limit` tells the caller another page exists. */
export async function listUserReports(db: DbOrTrx, userId: string, window: ReportWindow): Promise<ReportSummaryRow[]> {
  let query = db
    .selectFrom('reports')
    .select(['id', 'userId', 'type', 'title', 'periodFrom', 'periodTo', 'createdAt'])
    .select(sql<string>`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('createdAtKey'))
    .where('userId', '=', userId);
  if (window.type !== undefined) query = query.where('type', '=', window.type);
  if (window.before !== undefined) {
    const { createdAtKey, id } = window.before;
    query = query.where(sql<boolean>`(created_at, id) < (${createdAtKey}::timestamptz, ${id}::uuid)`);
  }
  return query
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .limit(window.limit + 1)
    .execute();
}

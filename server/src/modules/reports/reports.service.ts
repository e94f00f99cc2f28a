import type { Report, ReportListQuery, ReportPage, ReportSummary } from '@pacer/contract';
import type { Db } from '../../db/database.ts';
import type { ReportRow } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import { decodeCursor, encodeCursor, UUID_PATTERN, keysetPage } from '../../lib/cursor.ts';
import type { Actor } from '../../lib/actor.ts';
import { findUserReport, listUserReports, type ReportSummaryRow } from './reports.repository.ts';

/** `created_at` as the repository spells it for the keyset: UTC, microseconds. */
const CREATED_AT_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

interface ReportPosition {
  readonly createdAtKey: string;
  readonly id: string;
}

function encodeReportCursor(position: ReportPosition): string {
  return encodeCursor({ t: position.createdAtKey, i: position.id });
}

function decodeReportCursor(cursor: string): ReportPosition {
  return decodeCursor(cursor, ({ t, i }) =>
    t !== undefined && CREATED_AT_KEY.test(t) && i !== undefined && UUID_PATTERN.test(i)
      ? { createdAtKey: t, id: i }
      : undefined,
  );
}

/** Finished reports, newest first, optionally of one type. */
export async function listReportPage(db: Db, actor: Actor, query: ReportListQuery): Promise<ReportPage> {
  const rows = await listUserReports(db, actor.userId, {
    type: query.type,
    before: query.cursor === undefined ? undefined : decodeReportCursor(query.cursor),
    limit: query.limit,
  });
  return keysetPage(rows, query.limit, toReportSummary, encodeReportCursor);
}

/**
 * One report. An unknown id and another user's id are the same `not_found`;
 * so is a report whose job has not finished (the row is written when it does).
 */
export async function getReport(db: Db, actor: Actor, id: string): Promise<Report> {
  const row = UUID_PATTERN.test(id) ? await findUserReport(db, actor.userId, id) : undefined;
  if (!row) throw new AppError('not_found', `No report ${id}.`);
  return toReport(row);
}

export function toReportSummary(row: Omit<ReportSummaryRow, 'createdAtKey'>): ReportSummary {
  return {
    id: row.id,
    type: row.type,
    title: row.title,
    periodFrom: row.periodFrom,
    periodTo: row.periodTo,
    createdAt: new Date(row.createdAt).toISOString(),
  };
}

export function toReport(row: ReportRow): Report {
  return { ...toReportSummary(row), markdown: row.markdown, data: row.data };
}

import { inDatePage } from '../../db/date-page.ts';
import { CompiledQuery, type RawBuilder, sql } from 'kysely';
import { WELLNESS_FIELDS, type WellnessField } from '@pacer/contract';
import { precompiled, preparedStatement, type DbOrTrx } from '../../db/database.ts';
import { UPSERT_INSERTED, UPSERT_UPDATED_AT } from '../../db/upsert.ts';
import { changeRecordsOf, type DerivedChangeKind } from '../changes/changes.repository.ts';
import type { WellnessRow } from '../../db/tables.ts';
import type { DatePage } from '../../lib/date-range.ts';

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

/** Parameters of the upsert: $1 user, $2 date, one per field, the fields sent, the raw JSON (or null). */
const FIELD_PARAMS_FROM = 3;
const SENT_PARAM = FIELD_PARAMS_FROM + WELLNESS_FIELDS.length;
const RAW_JSON_PARAM = SENT_PARAM + 1;
const param = (n: number) => sql.raw(`$${n}`);

/** A stored day in the shape of the API's record: what the upsert returns and `listWellnessRecords` reads. */
export type WellnessRecordRow = Omit<WellnessRow, 'userId' | 'rawJson' | 'createdAt' | 'updatedAt'> & {
  readonly rawJsonBySource: WellnessRow['rawJson'];
  /** `toISOString()` of the instant, formatted by PostgreSQL (milliseconds, truncated like a JS Date). */
  readonly createdAt: string;
  readonly updatedAt: string;
};

const isoInstant = (column: string) =>
  sql`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** What the upsert returns: the day as the API's record, and whether this statement inserted it. */
export interface WrittenWellnessRecord {
  readonly record: WellnessRecordRow;
  readonly created: boolean;
}

/**
 * The API record's keys, in the record's order, each with the expression of
 * the stored day that gives it (timestamps as ISO text): the one list both the
 * upsert's JSON record and the page query's columns are built from.
 */
const RECORD_COLUMNS: readonly (readonly [key: string, value: RawBuilder<unknown>])[] = [
  ['date', sql.ref('date')],
  ...WELLNESS_FIELDS.map((field) => [field, sql.ref(field)] as const),
  ['rawJsonBySource', sql.ref('rawJson')],
  ['createdAt', isoInstant('createdAt')],
  ['updatedAt', isoInstant('updatedAt')],
];

/**
 * The written day as the API's record, built by PostgreSQL as one JSON value
 * (`RECORD_COLUMNS`, like the page query's rows): the driver parses one
 * column instead of setting up and running a parser per column, and nothing
 * renames, converts or copies the row on its way to the response.
 */
const RECORD_JSON = sql<WellnessRecordRow>`json_build_object(${sql.join(
  RECORD_COLUMNS.map(([key, value]) => sql`${sql.lit(key)}, ${value}`),
)})`;

/**
 * One statement, so concurrent writers never lose each other's fields:
 * `ON CONFLICT DO UPDATE` sets only the columns this caller sent (the
 * `sent` parameter names them), on the row as it is when the update takes
 * its lock; db/upsert.ts tells whether it inserted the row. The same
 * statement appends the day's change record (a CTE), so the day and its
 * record commit together in one round trip, in the caller's
 * transaction or on their own. Its text is the same whatever was sent, so it
 * is compiled once and runs as a named prepared statement.
 */
function upsertText(db: DbOrTrx): string {
  const insert = sql`insert into wellness (user_id, date, ${sql.join(WELLNESS_FIELDS.map((field) => sql.ref(field)))}, raw_json)
    values ($1, $2, ${sql.join(WELLNESS_FIELDS.map((_, index) => param(FIELD_PARAMS_FROM + index)))},
      coalesce(${param(RAW_JSON_PARAM)}::jsonb, '{}'::jsonb))
    on conflict (user_id, date) do update set
      updated_at = ${UPSERT_UPDATED_AT},
      ${sql.join(
        WELLNESS_FIELDS.map(
          (field) =>
            sql`${sql.ref(field)} = case when ${sql.lit(field)} = any(${param(SENT_PARAM)}::text[])
              then ${sql.ref(`excluded.${field}`)} else ${sql.ref(`wellness.${field}`)} end`,
        ),
      )},
      raw_json = case when ${param(RAW_JSON_PARAM)}::jsonb is null then wellness.raw_json
        else wellness.raw_json || excluded.raw_json end
    returning user_id, date, ${RECORD_JSON} as record, ${UPSERT_INSERTED} as created`;
  // A day that sent a weight (or cleared one) changed the body mass the fuel model reads, too.
  const kind = sql<DerivedChangeKind>`case when 'weight' = any(${param(SENT_PARAM)}::text[]) then 'body_mass' else 'wellness' end`;
  const day = sql<{ userId: string; fromDate: string }>`select user_id, date as from_date from written`;
  return sql`with written as (${insert}), changed as ${changeRecordsOf(kind, day)}
    select record, created from written ${preparedStatement('upsert_wellness')}`.compile(db).sql;
}

let upsertTextOnce: string | undefined;

/** The upsert of one day and its change record, as one statement. */
function wellnessUpsert(db: DbOrTrx, row: WellnessUpsertRow): CompiledQuery<WrittenWellnessRecord> {
  upsertTextOnce ??= upsertText(db);
  const sent: WellnessField[] = [];
  const parameters: unknown[] = [row.userId, row.date];
  for (const field of WELLNESS_FIELDS) {
    const value = row.values[field];
    if (value !== undefined) sent.push(field);
    parameters.push(value ?? null);
  }
  parameters.push(sent, row.rawJson === undefined ? null : JSON.stringify({ [row.source]: row.rawJson }));
  return CompiledQuery.raw(upsertTextOnce, parameters);
}

/** Upsert one day (see `upsertText`): the day as stored, as the API's record, and whether this call created it. */
export async function upsertWellness(db: DbOrTrx, row: WellnessUpsertRow): Promise<WrittenWellnessRecord> {
  const { rows } = await db.executeQuery(wellnessUpsert(db, row));
  const written = rows[0];
  if (!written) throw new Error('wellness upsert returned no row');
  return written;
}

/** Rows in the window, oldest first; one more than `limit` tells the caller another page exists. */
export async function listWellness(db: DbOrTrx, userId: string, window: DatePage): Promise<WellnessRow[]> {
  return inDatePage(db.selectFrom('wellness').selectAll(), userId, window).execute();
}

/**
 * The page query of every `GET /api/wellness`: one text, compiled once, run
 * as a named prepared statement straight on a pool connection. Its rows
 * already are API records (keys in the record's order, timestamps as ISO
 * text), so nothing renames or copies them on the way out.
 */
const listRecordsQuery = precompiled(
  5,
  (db: DbOrTrx, userId: string, from: string, to: string, after: string | null, rows: number) =>
    sql<WellnessRecordRow>`select ${sql.join(RECORD_COLUMNS.map(([key, value]) => sql`${value} as ${sql.raw(`"${key}"`)}`))}
      from wellness
      where user_id = ${userId} and date >= ${from}::date and date <= ${to}::date
        and date > coalesce(${after}::date, '-infinity'::date)
      order by date
      limit ${rows} ${preparedStatement('list_wellness_records')}`.compile(db),
);

/** Records in the window, oldest first; one more than `limit` tells the caller another page exists. */
export async function listWellnessRecords(db: DbOrTrx, userId: string, window: DatePage): Promise<WellnessRecordRow[]> {
  return (
    await db.executeQuery(listRecordsQuery(db, userId, window.from, window.to, window.after ?? null, window.limit + 1))
  ).rows;
}

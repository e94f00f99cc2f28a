import { sql } from 'kysely';

/*
 * Whether an `INSERT … ON CONFLICT DO UPDATE` inserted its row or updated an
 * existing one. The usual test, `xmax = 0`, reads a system column, which
 * PostgreSQL cannot return from a partitioned table ("cannot retrieve a
 * system column in this context": the partitioned tables of PACER_PARTITIONS).
 * Instead the row's own times tell: an insert stores `created_at = updated_at
 * = now()`, and the conflict's update sets `updated_at` to the wall clock,
 * which is past the transaction's start even for a row inserted earlier in
 * the same transaction, so the two differ exactly when the row was updated.
 */

/** `updated_at` in an upsert's `DO UPDATE SET`. */
export const UPSERT_UPDATED_AT = sql<Date>`clock_timestamp()`;

/** In the upsert's `RETURNING`: true when this statement inserted the row. */
export const UPSERT_INSERTED = sql<boolean>`(created_at = updated_at)`;

import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

/**
 * TOAST compresses a large value before storing it; PostgreSQL's default,
 * pglz, spends about 40 ms on a 1 MB FIT file and then stores it
 * uncompressed (it saves less than the 25% pglz asks for). lz4 takes a few
 * ms and saves about a fifth. Set on the column once, instead of a
 * `set_config` round trip in every upload's transaction; only where
 * PostgreSQL was built with lz4 (14+, `--with-lz4`), elsewhere pglz stays.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    DO $$
    BEGIN
      IF EXISTS (
        SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)
      ) THEN
        ALTER TABLE workout_files ALTER COLUMN bytes SET COMPRESSION lz4;
      END IF;
    END
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    DO $$
    BEGIN
      IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression') THEN
        ALTER TABLE workout_files ALTER COLUMN bytes SET COMPRESSION default;
      END IF;
    END
    $$`.execute(db);
}

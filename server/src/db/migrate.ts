import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Migrator, type MigrationResultSet } from 'kysely/migration';
import { sql, type Kysely } from 'kysely';
import type { Database } from './tables.ts';
import type { Logger } from '../logger.ts';
import { RUNS_FROM_SOURCE } from '../lib/runs-from-source.ts';

/** The migrations as this process runs them: their sources, or their build beside them (runs-from-source.ts). */
export const MIGRATIONS_DIR = fileURLToPath(
  new URL(RUNS_FROM_SOURCE ? '../../../migrations' : '../../../migrations/dist', import.meta.url),
);

export interface MigrateOptions {
  /**
   * PACER_PARTITIONS: hash partitions for the large user tables, read by the
   * migration that creates them (20261128T0101_user_partitions.ts) through the
   * transaction-local setting `pacer.partitions`; 0 leaves them plain.
   */
  readonly partitions?: number;
}

function migratorOf(db: Kysely<Database>): Migrator {
  return new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
    // The migrations' own files decide their names; only .ts ones are migrations.
    nameComparator: (a, b) => a.localeCompare(b),
  });
}

/**
 * Bring the schema up to date, in one transaction. Several processes starting
 * at once migrate exactly once: each waits on a transaction-scoped advisory
 * lock, held until its transaction has committed, so the next one sees the
 * migrations done. (Kysely's own lock, taken inside the transaction it is
 * given, would be released before that transaction commits.)
 */
export async function migrateToLatest(
  db: Kysely<Database>,
  logger: Logger,
  options: MigrateOptions = {},
): Promise<void> {
  // Kysely's Migrator given a transaction runs in it and reports a failed step instead of throwing: throwing it
  // here rolls back every step before it, as the Migrator's own transaction would.
  let result: MigrationResultSet = {};
  try {
    await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended('pacer:migrate', 0))`.execute(trx);
      await sql`select set_config('pacer.partitions', ${String(options.partitions ?? 0)}, true)`.execute(trx);
      result = await migratorOf(trx).migrateToLatest();
      if (result.error !== undefined) throw new Error('Database migration failed', { cause: result.error });
    });
  } finally {
    for (const step of result.results ?? []) {
      if (step.status === 'Success') logger.info({ migration: step.migrationName }, 'migration applied');
      else logger.error({ migration: step.migrationName, status: step.status }, 'migration not applied');
    }
  }
  await warnOfIgnoredPartitions(db, logger, options.partitions ?? 0);
}

/**
 * PACER_PARTITIONS counts only when the partitioning migration runs: set
 * later, or changed, it does nothing, and the operator is told so.
 */
async function warnOfIgnoredPartitions(db: Kysely<Database>, logger: Logger, requested: number): Promise<void> {
  if (requested === 0) return;
  const { rows } = await sql<{ partitions: number }>`
    select count(*)::int as partitions from pg_inherits where inhparent = to_regclass('workouts')`.execute(db);
  const actual = rows[0]?.partitions ?? 0;
  if (actual !== requested) {
    logger.warn(
      { requested, actual },
      'PACER_PARTITIONS is ignored: the tables were made when the database was migrated first, with another count',
    );
  }
}

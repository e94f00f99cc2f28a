import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Migrator, type MigrationResultSet } from 'kysely/migration';
import { Kysely, PostgresAdapter, PostgresDialect, sql, type DialectAdapter, type PostgresPool } from 'kysely';
import type { Database } from './tables.ts';
import type { Logger } from '../logger.ts';
import { RUNS_FROM_SOURCE } from '../lib/runs-from-source.ts';
import { StartupError } from '../startup-error.ts';

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

/** The advisory lock key of Pacer's migrations (any constant: `hashtext('pacer.migrations')` would do as well). */
const MIGRATION_LOCK_KEY = 7_240_311_903_118_612_481n;

/**
 * Kysely's PostgreSQL adapter takes the migration lock with `pg_advisory_lock`,
 * a session lock, on a connection it then runs the migration transaction on
 * and unlocks. Through a transaction-mode pooler (PgBouncer
 * `pool_mode=transaction`) the lock, the transaction and the unlock may each
 * land on a different server connection: the lock would then stay held by a
 * pooled connection nobody owns, and block the next migration for an hour
 * (Kysely's `lock_timeout`). Here the whole migration is one transaction that
 * takes a transaction-scoped lock (`pg_advisory_xact_lock`) first, which
 * PostgreSQL releases at commit or rollback, on whatever connection the
 * transaction ran: safe through a pooler and direct alike. The migrator is
 * handed that transaction, so its own lock calls have nothing left to do.
 */
class TransactionLockAdapter extends PostgresAdapter {
  override async acquireMigrationLock(): Promise<void> {
    // Held already: migrateToLatest took it as the transaction's first statement.
  }
  override async releaseMigrationLock(): Promise<void> {
    // Released by PostgreSQL when the transaction ends.
  }
}

class TransactionLockDialect extends PostgresDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionLockAdapter();
  }
}

function migratorFor(db: Kysely<unknown>): Migrator {
  return new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
    // The migrations' own files decide their names; only .ts ones are migrations.
    nameComparator: (a, b) => a.localeCompare(b),
  });
}

/**
 * Bring the schema up to date over `pool`, in one transaction under a
 * transaction-scoped advisory lock (see TransactionLockAdapter), so several
 * processes starting at once migrate exactly once. When the schema is up to
 * date this reads and writes nothing else: a process on a read-only role can
 * run it. `options.partitions`: see MigrateOptions.
 */
export async function migrateToLatest(pool: PostgresPool, logger: Logger, options: MigrateOptions = {}): Promise<void> {
  // A Kysely of its own over the caller's pool (not destroyed here: that would end the pool).
  const db = new Kysely<unknown>({ dialect: new TransactionLockDialect({ pool }) });
  let result: MigrationResultSet;
  try {
    result = await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(trx);
      // Read by the partitioning migration (20261128T0101_user_partitions.ts); local to this transaction.
      await sql`select set_config('pacer.partitions', ${String(options.partitions ?? 0)}, true)`.execute(trx);
      const outcome = await migratorFor(trx).migrateToLatest();
      // The migrator reports a failed step instead of throwing: throw, so that no step of this run is committed.
      if (outcome.error) throw new FailedMigration(outcome);
      return outcome;
    });
  } catch (error) {
    if (!(error instanceof FailedMigration)) throw new Error('Database migration failed', { cause: error });
    result = error.result;
  }
  for (const step of result.results ?? []) {
    if (step.status === 'Success') logger.info({ migration: step.migrationName }, 'migration applied');
    else logger.error({ migration: step.migrationName, status: step.status }, 'migration not applied');
  }
  if (result.error) throw new Error('Database migration failed', { cause: result.error });
  await warnOfIgnoredPartitions(db, logger, options.partitions ?? 0);
}

/**
 * PACER_PARTITIONS counts only when the partitioning migration runs: set
 * later, or changed, it does nothing, and the operator is told so.
 */
async function warnOfIgnoredPartitions(db: Kysely<unknown>, logger: Logger, requested: number): Promise<void> {
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

class FailedMigration extends Error {
  readonly result: MigrationResultSet;
  constructor(result: MigrationResultSet) {
    super('migration failed');
    this.result = result;
  }
}

/**
 * For a process that does not migrate (`PACER_MIGRATE_ON_START=false`): fail
 * at start, naming the fix, when the database lacks a migration this version
 * needs, rather than at the first request that touches it. Reads only.
 */
export async function checkSchemaIsCurrent(db: Kysely<Database>): Promise<void> {
  const migrations = await migratorFor(db as unknown as Kysely<unknown>).getMigrations();
  const pending = migrations.filter((migration) => migration.executedAt === undefined);
  if (pending.length === 0) return;
  throw new StartupError(
    'database_not_migrated',
    `the database schema lacks ${pending.length} of this version's ${migrations.length} migrations (first missing: ${pending[0]?.name ?? ''}) and PACER_MIGRATE_ON_START is false`,
    'Run `npm run pacer -- migrate` against this database, then start again',
  );
}

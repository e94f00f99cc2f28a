import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Migrator, type MigrationResultSet } from 'kysely/migration';
import type { Kysely } from 'kysely';
import type { Database } from './tables.ts';
import type { Logger } from '../logger.ts';
import { RUNS_FROM_SOURCE } from '../lib/runs-from-source.ts';

/** The migrations as this process runs them: their sources, or their build beside them (runs-from-source.ts). */
export const MIGRATIONS_DIR = fileURLToPath(
  new URL(RUNS_FROM_SOURCE ? '../../../migrations' : '../../../migrations/dist', import.meta.url),
);

/**
 * Bring the schema up to date. Kysely takes an advisory lock, so several
 * processes starting at once migrate exactly once.
 */
export async function migrateToLatest(db: Kysely<Database>, logger: Logger): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
    // The migrations' own files decide their names; only .ts ones are migrations.
    nameComparator: (a, b) => a.localeCompare(b),
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  for (const step of result.results ?? []) {
    if (step.status === 'Success') logger.info({ migration: step.migrationName }, 'migration applied');
    else logger.error({ migration: step.migrationName, status: step.status }, 'migration not applied');
  }
  if (result.error) throw new Error('Database migration failed', { cause: result.error });
}

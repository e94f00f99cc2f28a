import type pg from 'pg';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { createDb, createPool, type Db } from './database.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './embedded.ts';
import { migrateToLatest } from './migrate.ts';

/** The database layer every command needs: connection, pool, Kysely, migrated schema. */
export interface DatabaseRuntime {
  readonly url: string;
  readonly pool: pg.Pool;
  readonly db: Db;
  close(): Promise<void>;
}

export async function openDatabase(config: Config, logger: Logger): Promise<DatabaseRuntime> {
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedDatabase({ dataDir: config.dataDir, logger });
    url = embedded.url;
  }
  const pool = createPool({ connectionString: url, maxConnections: config.dbPoolSize });
  pool.on('error', (error) => logger.error({ err: error }, 'idle database connection failed'));
  const db = createDb(pool);
  try {
    await migrateToLatest(db, logger);
  } catch (error) {
    await db.destroy();
    await embedded?.stop();
    throw error;
  }
  return {
    url,
    pool,
    db,
    async close() {
      await db.destroy();
      await embedded?.stop();
    },
  };
}

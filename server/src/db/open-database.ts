import pg from 'pg';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { StartupError } from '../startup-error.ts';
import { createDb, createPool, type Db } from './database.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './embedded.ts';
import { checkSchemaIsCurrent, migrateToLatest } from './migrate.ts';

/** The database layer every command needs: connection, pool, Kysely, migrated schema. */
export interface DatabaseRuntime {
  /** Where the pool connects (DATABASE_URL, or the embedded database's). */
  readonly url: string;
  /** Where connections that need a server session of their own go (PACER_DATABASE_SESSION_URL, else `url`). */
  readonly sessionUrl: string;
  readonly pool: pg.Pool;
  readonly db: Db;
  /** Where the embedded PostgreSQL keeps its cluster and programs; undefined with DATABASE_URL. */
  readonly embedded: { readonly clusterDir: string; readonly binDir: string } | undefined;
  close(): Promise<void>;
}

/** pg waits for the OS (minutes) on a host that drops packets; an operator wants an answer sooner. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Connect once before anything else does, so that a wrong DATABASE_URL is
 * reported as what it is instead of as the first query's stack trace.
 * Codes: PostgreSQL's SQLSTATE (Appendix A of its manual) or Node's errno.
 */
async function checkConnection(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    throw connectionFailure(error, client);
  }
  await client.end();
}

function connectionFailure(error: unknown, client: pg.Client): StartupError {
  const { code = '', message = String(error) } = error as { code?: string; message?: string };
  const host = client.host.startsWith('/') ? `${client.host}/.s.PGSQL.${client.port}` : `${client.host}:${client.port}`;
  const at = `PostgreSQL at ${host}`;
  const fixUrl = 'Start PostgreSQL or fix DATABASE_URL';
  const unreachable = (why: string, fix = fixUrl) =>
    new StartupError('database_unreachable', `cannot reach ${at} (${why})`, fix, { cause: error });
  const rejected = (why: string, fix: string) =>
    new StartupError('database_rejected_login', `${at} refused the login (${why})`, fix, { cause: error });
  switch (code) {
    case 'ECONNREFUSED':
      return unreachable('connection refused');
    case 'ENOENT':
      return unreachable('no server socket there');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return unreachable(`host ${client.host} not found`, 'Fix the host in DATABASE_URL');
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return unreachable(
        `${code}`,
        'Check that PostgreSQL runs and the network lets the connection through, or fix DATABASE_URL',
      );
    case '28P01':
      return rejected(message, 'Fix the user name or password in DATABASE_URL');
    case '28000':
      return rejected(
        message,
        'Fix the user in DATABASE_URL, create that role, or allow the connection in pg_hba.conf',
      );
    case '3D000':
      return new StartupError(
        'database_missing',
        `${at} has no database "${client.database ?? ''}"`,
        `Create it (createdb ${client.database ?? ''}) or fix the database name in DATABASE_URL`,
        { cause: error },
      );
    case '57P03':
      return unreachable(message, 'Wait until PostgreSQL has started, then start Pacer again');
    case '53300':
      return unreachable(message, 'Stop other clients or raise max_connections');
  }
  if (/timeout/i.test(message)) {
    return unreachable(
      `no answer within ${CONNECT_TIMEOUT_MS / 1000} s`,
      'Check that PostgreSQL runs and the network lets the connection through, or fix DATABASE_URL',
    );
  }
  if (/SASL|password must be a string/.test(message)) {
    return rejected('it asks for a password and DATABASE_URL has none', 'Add the password to DATABASE_URL');
  }
  if (/does not support SSL/.test(message)) {
    return rejected('it does not accept SSL connections', 'Remove ssl/sslmode from DATABASE_URL');
  }
  return unreachable(message, 'Check DATABASE_URL and that PostgreSQL runs');
}

export interface OpenDatabaseOptions {
  /**
   * Bring the schema up to date (over the session URL) before returning;
   * false only checks that it is, and throws a StartupError if not.
   */
  readonly migrate: boolean;
}

export async function openDatabase(
  config: Config,
  logger: Logger,
  options: OpenDatabaseOptions = { migrate: true },
): Promise<DatabaseRuntime> {
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (url) {
    await checkConnection(url);
    if (config.databaseSessionUrl !== undefined && config.databaseSessionUrl !== url) {
      await checkConnection(config.databaseSessionUrl);
    }
  } else {
    embedded = await startEmbeddedDatabase({ dataDir: config.dataDir, logger });
    url = embedded.url;
  }
  const sessionUrl = config.databaseSessionUrl ?? url;
  const pool = createPool({ connectionString: url, maxConnections: config.dbPoolSize });
  pool.on('error', (error) => logger.error({ err: error }, 'idle database connection failed'));
  const db = createDb(pool, { preparedStatements: config.dbPreparedStatements });
  try {
    if (options.migrate) await migrateOver(sessionUrl, logger, config.partitions);
    else await checkSchemaIsCurrent(db);
  } catch (error) {
    await db.destroy();
    await embedded?.stop();
    throw error;
  }
  return {
    url,
    sessionUrl,
    pool,
    db,
    embedded: embedded && { clusterDir: embedded.clusterDir, binDir: embedded.binDir },
    async close() {
      await db.destroy();
      await embedded?.stop();
    },
  };
}

/**
 * Migrate on a connection of its own to `url`: the session URL, so that a
 * long migration holds no pooled server connection and no pooler timeout
 * cuts it (the lock itself is safe either way, db/migrate.ts).
 */
async function migrateOver(url: string, logger: Logger, partitions: number): Promise<void> {
  const pool = createPool({ connectionString: url, maxConnections: 1, applicationName: 'pacer-migrate' });
  pool.on('error', (error) => logger.error({ err: error }, 'idle database connection failed'));
  try {
    await migrateToLatest(pool, logger, { partitions });
  } finally {
    await pool.end();
  }
}

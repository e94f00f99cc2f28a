import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DestinationStream } from 'pino';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../server/src/config.ts';
import type { Db } from '../../server/src/db/database.ts';
import { createLogger } from '../../server/src/logger.ts';
import { startRuntime, type Runtime } from '../../server/src/runtime.ts';
import { SecretBox } from '../../server/src/lib/secret-box.ts';
import { freePort } from './free-port.ts';
import { waitFor } from './wait.ts';

export { freePort };

export interface TestServer {
  /** Base URL of the running server, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  readonly config: Config;
  readonly db: Db;
  readonly runtime: Runtime;
  /** Connection URL of this server's own database. */
  readonly databaseUrl: string;
  /** Name of this server's database. */
  readonly database: string;
  stop(): Promise<void>;
}

export function databaseUrlFor(database: string): string {
  const url = new URL(inject('adminDatabaseUrl'));
  url.pathname = `/${database}`;
  return url.toString();
}

/** A fresh database cloned from the migrated template: isolation by database, not by rollback. */
export async function cloneTemplateDatabase(): Promise<string> {
  return createTestDatabase(inject('templateDatabase'));
}

/**
 * A database of this run (the run's teardown drops what a test left): a copy
 * of `template`, or without one an empty database that nothing has migrated.
 */
export async function createTestDatabase(template?: string): Promise<string> {
  const name = `pacer_t_${inject('runId')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"${template === undefined ? '' : ` TEMPLATE "${template}"`}`);
  } finally {
    await admin.end();
  }
  return name;
}

/** A new database with no schema at all (named like the clones, so the run's teardown drops it too). */
export async function createEmptyDatabase(): Promise<string> {
  const name = `pacer_t_${inject('runId')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  return name;
}

/**
 * Drop a test database. Connections a pool has just ended may still be open
 * for a moment (node-postgres ends its clients without waiting for them to
 * close): terminating one then makes its client emit an error no one listens
 * to any more, an uncaught exception in whatever test runs next. So the drop
 * waits, briefly, until the database has no sessions left, and only then
 * forces out whatever remains (a process that was killed, say).
 */
export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
  try {
    await waitFor(
      async () => {
        const { rows } = await admin.query<{ sessions: number }>(
          'select count(*)::int as sessions from pg_stat_activity where datname = $1',
          [name],
        );
        return rows[0]?.sessions === 0;
      },
      `the sessions of ${name} to end`,
      2_000,
    ).catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/**
 * Start the real service (HTTP + pg-boss workers) in this test process on its
 * own cloned database and a free port. `env` overrides PACER_* variables.
 */
export interface TestServerOptions {
  /** Run on this existing database (e.g. a second process's) instead of a fresh clone. */
  readonly database?: string;
  /** Where log lines go (default: none, or stdout when PACER_TEST_LOG_LEVEL is set). */
  readonly logDestination?: DestinationStream;
}

/**
 * `PACER_TEST_READ_ONLY_READS=1`: each test server reads (GET routes, MCP read
 * tools) through a second, read-only connection to its own database, given as
 * `PACER_DATABASE_READ_URL`, so running any integration file this way shows
 * that nothing routed to a replica tries to write (PostgreSQL refuses with 25006).
 * The read-your-writes window is 0 then (the "replica" is never behind), so
 * every such read goes there, a test's read right after its write included.
 */
function readOnlyReadsFor(databaseUrl: string): Record<string, string> {
  if (process.env['PACER_TEST_READ_ONLY_READS'] !== '1') return {};
  const url = new URL(databaseUrl);
  url.searchParams.set('options', '-c default_transaction_read_only=on');
  return { PACER_DATABASE_READ_URL: url.toString(), PACER_READ_YOUR_WRITES_MS: '0' };
}

/** Every test server seals webhook secrets with this key, so factories can create apps directly. */
export const TEST_SECRET_KEY = 'pacer-test-secret-key-0123456789abcdef';
export const testSecretBox = SecretBox.fromKeyMaterial(TEST_SECRET_KEY);

export async function startTestServer(
  env: Record<string, string> = {},
  options: TestServerOptions = {},
): Promise<TestServer> {
  const ownsDatabase = options.database === undefined;
  const database = options.database ?? (await cloneTemplateDatabase());
  const databaseUrl = databaseUrlFor(database);
  const configFor = (port: number): Config =>
    loadConfig({
      DATABASE_URL: databaseUrl,
      PACER_PORT: String(port),
      PACER_HOST: '127.0.0.1',
      PACER_BASE_URL: `http://127.0.0.1:${port}`,
      PACER_LOG_LEVEL: process.env['PACER_TEST_LOG_LEVEL'] ?? 'silent',
      PACER_SHUTDOWN_TIMEOUT_MS: '2000',
      PACER_SECRET_KEY: TEST_SECRET_KEY,
      // Every answer a test receives from a contract route has been checked against the contract.
      PACER_CHECK_RESPONSES: 'true',
      ...readOnlyReadsFor(databaseUrl),
      // `PACER_RECORD_TRAFFIC=<file.jsonl> npx vitest run ...` records the run's REST traffic (test/tools/prism-traffic.ts).
      ...(process.env['PACER_RECORD_TRAFFIC'] ? { PACER_RECORD_TRAFFIC: process.env['PACER_RECORD_TRAFFIC'] } : {}),
      ...env,
    });
  // The base URL names the port, so it is chosen before the server listens; another process
  // may take it in between (seen once in a full run): then start again on another free port.
  let config = configFor(await freePort());
  let runtime: Runtime | undefined;
  for (let attempt = 1; runtime === undefined; attempt += 1) {
    try {
      runtime = await startRuntime(config, createLogger(config.logLevel, options.logDestination));
    } catch (error) {
      const cause = error instanceof Error ? (error.cause as NodeJS.ErrnoException | undefined) : undefined;
      if (cause?.code !== 'EADDRINUSE' || env['PACER_PORT'] !== undefined || attempt === 5) throw error;
      config = configFor(await freePort());
    }
  }
  return {
    url: runtime.url ?? config.baseUrl,
    config,
    db: runtime.database.db,
    runtime,
    databaseUrl,
    database,
    async stop() {
      await runtime.stop();
      if (ownsDatabase) await dropDatabase(database);
    },
  };
}

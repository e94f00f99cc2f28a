import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../server/src/config.ts';
import { createPool } from '../../server/src/db/database.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../server/src/db/embedded.ts';
import { migrateToLatest } from '../../server/src/db/migrate.ts';
import { createLogger } from '../../server/src/logger.ts';
import { migrateQueues } from '../../server/src/queue/boss.ts';
import { ROOT } from './process.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection URL of the maintenance database (template clones are made through it). */
    adminDatabaseUrl: string;
    /** A database migrated once (ours + pg-boss); each test file clones it. */
    templateDatabase: string;
    /** Prefix of this run's clone names, so concurrent runs never touch each other's databases. */
    runId: string;
  }
}

/** Same server, another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

let embedded: EmbeddedDatabase | undefined;
let embeddedDir: string | undefined;
let adminUrl: string;
let template: string;
let runId: string;

export async function setup(project: TestProject): Promise<void> {
  // The tests start the server as `npm start` does, from its build: bring the build up to date first.
  await promisify(execFile)('npm', ['run', 'build', '--silent'], { cwd: ROOT });
  const logger = createLogger('warn');
  const config = loadConfig();
  if (config.databaseUrl) {
    adminUrl = config.databaseUrl;
  } else {
    // A cluster of this run's own, so concurrent runs cannot stop each other's.
    embeddedDir = await mkdtemp(path.join(os.tmpdir(), 'pacer-test-'));
    embedded = await startEmbeddedDatabase({ dataDir: embeddedDir, logger });
    adminUrl = embedded.url;
  }
  runId = randomBytes(4).toString('hex');
  template = `pacer_tpl_${runId}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${template}"`);
  await admin.end();

  const templateUrl = withDatabase(adminUrl, template);
  const pool = createPool({ connectionString: templateUrl, maxConnections: 2 });
  // PACER_PARTITIONS=8 npx vitest …: every test file's database has the large user tables partitioned.
  await migrateToLatest(pool, logger, { partitions: config.partitions });
  await pool.end();
  await migrateQueues({ connectionString: templateUrl, logger });

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);
  project.provide('runId', runId);
}

export async function teardown(): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const databases = await admin.query<{ datname: string }>(
    'SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2',
    [template, `pacer_t_${runId}_%`],
  );
  for (const row of databases.rows) {
    await admin.query(`DROP DATABASE IF EXISTS "${row.datname}" WITH (FORCE)`).catch(() => undefined);
  }
  await admin.end();
  await embedded?.stop();
  if (embeddedDir) await rm(embeddedDir, { recursive: true, force: true });
}

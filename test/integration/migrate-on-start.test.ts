/**
 * Who migrates (issue 23): `PACER_MIGRATE_ON_START=false` makes `start` check
 * the schema instead of migrating it, and fail at once, naming the fix, on a
 * database that lacks migrations; `npm run pacer -- migrate` migrates. An API
 * process writes nothing at start-up (the queues are created by migration), so
 * it starts on a role whose every transaction is read-only.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { runPacer } from '../support/process.ts';
import {
  cloneTemplateDatabase,
  createEmptyDatabase,
  databaseUrlFor,
  dropDatabase,
  freePort,
  TEST_SECRET_KEY,
} from '../support/test-server.ts';
import { startPacerProcess, type PacerProcess } from '../support/webhooks-cluster.ts';

const databases: string[] = [];
const roles: string[] = [];
const processes: PacerProcess[] = [];

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  for (const child of processes) await child.stop();
  for (const database of databases) await dropDatabase(database);
  await admin(async (client) => {
    for (const role of roles) await client.query(`DROP ROLE IF EXISTS "${role}"`);
  });
}, 60_000);

async function startEnv(databaseUrl: string, extra: Record<string, string>): Promise<NodeJS.ProcessEnv> {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PACER_PORT: String(await freePort()),
    PACER_SECRET_KEY: TEST_SECRET_KEY,
    PACER_LOG_LEVEL: 'warn',
    ...extra,
  };
}

describe('PACER_MIGRATE_ON_START=false', () => {
  it('fails at start, in one line naming the fix, on a database without the schema', async () => {
    const database = await createEmptyDatabase();
    databases.push(database);
    for (const role of ['api', 'worker', 'all']) {
      const started = await runPacer(
        ['start'],
        await startEnv(databaseUrlFor(database), { PACER_MIGRATE_ON_START: 'false', PACER_ROLE: role }),
      );
      expect(started.code, started.stderr).toBe(1);
      const lines = started.stderr.split('\n').filter((line) => line.trim() !== '');
      expect(lines, started.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(/^Pacer did not start: the database schema lacks \d+ of this version's \d+ migrations/);
      expect(lines[0]).toContain('npm run pacer -- migrate');
    }
    // Nothing was created: the check only read.
    const tables = new pg.Client({ connectionString: databaseUrlFor(database) });
    await tables.connect();
    try {
      const { rows } = await tables.query<{ count: number }>(
        "select count(*)::int as count from pg_tables where schemaname not in ('pg_catalog', 'information_schema')",
      );
      expect(rows[0]?.count).toBe(0);
    } finally {
      await tables.end();
    }
  });

  it('starts every role once `migrate` has run (run twice: the second finds nothing to do)', async () => {
    const database = await createEmptyDatabase();
    databases.push(database);
    const url = databaseUrlFor(database);
    const migrated = await runPacer(['migrate'], await startEnv(url, { PACER_MIGRATE_ON_START: 'false' }));
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    const again = await runPacer(['migrate'], await startEnv(url, { PACER_MIGRATE_ON_START: 'false' }));
    expect(again.code, again.stderr).toBe(0);
    const env = { PACER_MIGRATE_ON_START: 'false' };
    processes.push(await startPacerProcess('worker', url, env));
    const api = await startPacerProcess('api', url, env);
    processes.push(api);
    const ready = await fetch(`${api.url ?? ''}/readyz`);
    expect(ready.status).toBe(200);
  });
});

describe('an API process on a read-only role', () => {
  it('starts and answers /readyz: it writes nothing at start-up, migration on or off', async () => {
    const database = await cloneTemplateDatabase();
    databases.push(database);
    const role = `pacer_ro_${randomBytes(4).toString('hex')}`;
    roles.push(role);
    // A superuser, so that privileges play no part: only read-only transactions stop it writing.
    await admin(async (client) => {
      await client.query(`CREATE ROLE "${role}" LOGIN SUPERUSER`);
      await client.query(`ALTER ROLE "${role}" IN DATABASE "${database}" SET default_transaction_read_only = on`);
    });
    const url = new URL(databaseUrlFor(database));
    url.username = role;
    url.password = '';
    const readOnlyUrl = url.toString();

    // The role really cannot write there.
    const probe = new pg.Client({ connectionString: readOnlyUrl });
    await probe.connect();
    try {
      await expect(probe.query('create table written_at_start (id int)')).rejects.toThrow(/read-only transaction/);
    } finally {
      await probe.end();
    }

    for (const migrateOnStart of ['true', 'false']) {
      const api = await startPacerProcess('api', readOnlyUrl, { PACER_MIGRATE_ON_START: migrateOnStart });
      try {
        const ready = await fetch(`${api.url ?? ''}/readyz`);
        expect(ready.status).toBe(200);
        expect(api.output()).not.toMatch(/"level":(50|60)/);
      } finally {
        await api.stop();
      }
    }
  });
});

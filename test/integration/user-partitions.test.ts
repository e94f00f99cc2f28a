import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql, type PostgresPool, type RawBuilder } from 'kysely';
import { FileMigrationProvider, Migrator } from 'kysely/migration';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb, createPool, type Db } from '../../server/src/db/database.ts';
import { MIGRATIONS_DIR, migrateToLatest } from '../../server/src/db/migrate.ts';
import { createLogger } from '../../server/src/logger.ts';
import {
  deleteWorkout,
  findWorkoutFile,
  upsertWorkoutWithFile,
} from '../../server/src/modules/workouts/workouts.repository.ts';
import { makeUser, makeWebhookApp } from '../support/factories.ts';
import { uploadedWorkoutRow } from '../support/training-data.ts';
import { createTestDatabase, databaseUrlFor, dropDatabase } from '../support/test-server.ts';

/**
 * Issue 23, "keys ready for distribution": the migration that re-keys the
 * users' tables by user keeps every row, id and link; PACER_PARTITIONS
 * hash-partitions the large ones, and a query for one user reads one
 * partition. The REST and MCP suites on a partitioned schema run in CI
 * (`.ci/run`, PACER_PARTITIONS=8).
 */

/** The last migration before the user keys. */
const BEFORE_USER_KEYS = '20261127T2301_fuel_muscle_synthesis_recompute';

const PARTITIONED: Record<string, 'user_id' | 'client_id'> = {
  wellness: 'user_id',
  nutrition_logs: 'user_id',
  nutrition_items: 'user_id',
  workouts: 'user_id',
  workout_files: 'user_id',
  workout_streams: 'user_id',
  planned_workouts: 'user_id',
  webhook_deliveries: 'client_id',
};

/** Every table of a user's data, with the columns that order its rows. */
const USER_TABLES: Record<string, string> = {
  wellness: 'user_id, date',
  nutrition_logs: 'id',
  nutrition_items: 'id',
  workouts: 'id',
  workout_files: 'workout_id',
  workout_streams: 'workout_id',
  planned_workouts: 'id',
  recommendations: 'id',
  async_jobs: 'id',
  reports: 'id',
  memories: 'id',
  derived_changes: 'id',
  mcp_executions: 'id',
  webhook_deliveries: 'id',
};

const logger = createLogger('silent');
const opened: { db: Db; database: string }[] = [];

afterAll(async () => {
  for (const { db, database } of opened) {
    await db.destroy();
    await dropDatabase(database);
  }
});

/** The pool under each database handle, which migrateToLatest takes. */
const pools = new WeakMap<Db, PostgresPool>();

async function emptyDatabase(): Promise<Db> {
  const database = await createTestDatabase();
  const pool = createPool({ connectionString: databaseUrlFor(database), maxConnections: 2 });
  const db = createDb(pool);
  pools.set(db, pool);
  opened.push({ db, database });
  return db;
}

function poolOf(db: Db): PostgresPool {
  const pool = pools.get(db);
  if (!pool) throw new Error('not a database of emptyDatabase()');
  return pool;
}

async function migrateTo(db: Db, name: string): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
    nameComparator: (a, b) => a.localeCompare(b),
  });
  const { error } = await migrator.migrateTo(name);
  if (error !== undefined) throw new Error(`migration to ${name} failed`, { cause: error });
}

const hex64 = () => randomBytes(32).toString('hex');

/** One user's data in every table, written as the schema before the user keys had it. */
async function seedUser(db: Db, clientId: string): Promise<{ userId: string; workoutId: string; plannedId: string }> {
  const user = await makeUser(db);
  const one = async <T>(query: RawBuilder<T>) => (await query.execute(db)).rows[0] as T;
  const { id: workoutId } = await one<{ id: string }>(sql`
    insert into workouts (user_id, file_sha256, file_size, name, source, sport, start_time, local_date, device_serial)
    values (${user.id}, ${hex64()}, 3, 'Ride', 'app', 'ride', '2026-11-01T07:00:00Z', '2026-11-01', '42')
    returning id`);
  await sql`insert into workout_files (workout_id, user_id, bytes) values (${workoutId}, ${user.id}, '\\x010203')`.execute(
    db,
  );
  await sql`insert into workout_streams (workout_id, user_id, streams) values (${workoutId}, ${user.id}, '{"hr":[1]}')`.execute(
    db,
  );
  const { id: plannedId } = await one<{ id: string }>(sql`
    insert into planned_workouts (user_id, date, sport, title, source)
    values (${user.id}, '2026-11-03', 'run', 'Tempo', 'app') returning id`);
  await sql`
    insert into recommendations (user_id, kind, status, planned_workout_id, title, body, evidence, action, dedupe_key)
    values (${user.id}, 'easier_workout', 'open', ${plannedId}, 'Easier', 'Tired', '{}', '{}', ${`d-${plannedId}`})`.execute(
    db,
  );
  const { id: logId } = await one<{ id: string }>(sql`
    insert into nutrition_logs (user_id, date, source) values (${user.id}, '2026-11-01', 'app') returning id`);
  await sql`
    insert into nutrition_items (log_id, user_id, position, name, carbs, logged_at, logged_at_offset_minutes, absorption_type)
    values (${logId}, ${user.id}, 0, 'Oats', 60, '2026-11-01T06:00:00Z', 60, 'slow'),
           (${logId}, ${user.id}, 1, 'Gel', 25, '2026-11-01T08:00:00Z', 60, 'fast')`.execute(db);
  await sql`insert into wellness (user_id, date, hrv) values (${user.id}, '2026-11-01', 55)`.execute(db);
  const { id: jobId } = await one<{ id: string }>(sql`
    insert into async_jobs (user_id, client_id, type, status, input)
    values (${user.id}, ${clientId}, 'report', 'completed', '{}') returning id`);
  await sql`
    insert into reports (id, user_id, type, title, period_from, period_to, markdown, data)
    values (${jobId}, ${user.id}, 'weekly', 'Week', '2026-10-26', '2026-11-01', '# Week', '{}')`.execute(db);
  await sql`insert into memories (user_id, content, category, source) values (${user.id}, 'Likes hills', 'preference', 'app')`.execute(
    db,
  );
  await sql`insert into derived_changes (user_id, kind, from_date) values (${user.id}, 'workouts', '2026-11-01')`.execute(
    db,
  );
  await sql`
    insert into mcp_executions (tool, client_id, user_id, started_at, duration_ms, status, args_sha256)
    values ('list_workouts', ${clientId}, ${user.id}, now(), 3.5, 'ok', ${hex64()})`.execute(db);
  await sql`
    insert into webhook_deliveries (client_id, body, headers, query, secret_matched, state)
    values (${clientId}, ${JSON.stringify({ user: user.id })}, '{}', '{}', true, 'failed')`.execute(db);
  return { userId: user.id, workoutId, plannedId };
}

/** Every row of every user table, as JSON, in a stable order. */
async function snapshot(db: Db): Promise<Record<string, unknown[]>> {
  const tables: Record<string, unknown[]> = {};
  for (const [table, order] of Object.entries(USER_TABLES)) {
    const { rows } = await sql<{ row: unknown }>`
      select to_jsonb(t) as row from ${sql.table(table)} t order by ${sql.raw(order)}`.execute(db);
    tables[table] = rows.map((row) => row.row);
  }
  return tables;
}

/** `after`'s rows with only the columns `before`'s rows of the same table have. */
function onlyColumnsOf(before: Record<string, unknown[]>, after: Record<string, unknown[]>): Record<string, unknown[]> {
  return Object.fromEntries(
    Object.entries(after).map(([table, rows]) => {
      const columns = Object.keys(before[table]?.[0] ?? {});
      return [
        table,
        rows.map((row) =>
          Object.fromEntries(columns.map((column) => [column, (row as Record<string, unknown>)[column]])),
        ),
      ];
    }),
  );
}

/** `table (a, b)` for each primary key, and `table (a, b) -> parent (c, d)` for each foreign key between tables. */
async function keysOf(db: Db): Promise<{ primary: Record<string, string>; foreign: string[] }> {
  const { rows } = await sql<{ table: string; type: string; definition: string }>`
    select conrelid::regclass::text as table, contype as type, pg_get_constraintdef(oid) as definition
    from pg_constraint
    where contype in ('p', 'f') and conrelid::regclass::text = any(${Object.keys(USER_TABLES)})
      and conparentid = 0`.execute(db);
  const primary = Object.fromEntries(
    rows.filter((row) => row.type === 'p').map((row) => [row.table, row.definition.replace('PRIMARY KEY ', '')]),
  );
  const foreign = rows
    .filter((row) => row.type === 'f' && !row.definition.includes('REFERENCES users(id)'))
    .filter((row) => !row.definition.includes('REFERENCES oauth_clients'))
    .map((row) => `${row.table} ${row.definition.replace(/ ON DELETE CASCADE$/, '')}`)
    .sort();
  return { primary, foreign };
}

describe.each([0, 4])('the user-key migration on a database with data (PACER_PARTITIONS=%i)', (partitions) => {
  it('keeps every row and id, and keys every table of a user by user (webhook deliveries by app)', async () => {
    const db = await emptyDatabase();
    await migrateTo(db, BEFORE_USER_KEYS);
    const owner = await makeUser(db);
    const { client } = await makeWebhookApp(db, owner);
    await seedUser(db, client.clientId);
    await seedUser(db, client.clientId);
    const before = await snapshot(db);

    await migrateToLatest(poolOf(db), logger, { partitions });

    // Later migrations may add columns (with defaults); every column the rows had keeps its value.
    expect(onlyColumnsOf(before, await snapshot(db))).toEqual(before);
    expect(Object.values(before).every((rows) => rows.length > 0)).toBe(true);
    const { primary, foreign } = await keysOf(db);
    expect(primary).toEqual({
      wellness: '(user_id, date)',
      nutrition_logs: '(user_id, id)',
      nutrition_items: '(user_id, id)',
      workouts: '(user_id, id)',
      workout_files: '(user_id, workout_id)',
      workout_streams: '(user_id, workout_id)',
      planned_workouts: '(user_id, id)',
      recommendations: '(user_id, id)',
      async_jobs: '(user_id, id)',
      reports: '(user_id, id)',
      memories: '(user_id, id)',
      derived_changes: '(user_id, id)',
      mcp_executions: '(user_id, id)',
      webhook_deliveries: '(client_id, id)',
    });
    expect(foreign).toEqual([
      'nutrition_items FOREIGN KEY (user_id, log_id) REFERENCES nutrition_logs(user_id, id)',
      'recommendations FOREIGN KEY (user_id, planned_workout_id) REFERENCES planned_workouts(user_id, id)',
      'reports FOREIGN KEY (user_id, id) REFERENCES async_jobs(user_id, id)',
      'workout_files FOREIGN KEY (user_id, workout_id) REFERENCES workouts(user_id, id)',
      'workout_streams FOREIGN KEY (user_id, workout_id) REFERENCES workouts(user_id, id)',
    ]);
  });

  it("keeps the links: a workout's file and streams, a planned workout's recommendation go with it, and no row can point at another user's", async () => {
    const db = await emptyDatabase();
    await migrateTo(db, BEFORE_USER_KEYS);
    const owner = await makeUser(db);
    const { client } = await makeWebhookApp(db, owner);
    const alice = await seedUser(db, client.clientId);
    const bob = await seedUser(db, client.clientId);

    await migrateToLatest(poolOf(db), logger, { partitions });

    await expect(
      sql`insert into workout_streams (workout_id, user_id, streams) values (${alice.workoutId}, ${bob.userId}, '{}')`.execute(
        db,
      ),
    ).rejects.toMatchObject({ code: '23503' });
    await sql`delete from workouts where user_id = ${alice.userId} and id = ${alice.workoutId}`.execute(db);
    await sql`delete from planned_workouts where user_id = ${alice.userId} and id = ${alice.plannedId}`.execute(db);
    const count = async (table: string, userId: string) =>
      (
        await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where user_id = ${userId}`.execute(
          db,
        )
      ).rows[0]?.n;
    for (const table of ['workout_files', 'workout_streams', 'recommendations']) {
      expect({ table, alice: await count(table, alice.userId), bob: await count(table, bob.userId) }).toEqual({
        table,
        alice: 0,
        bob: 1,
      });
    }
  });
});

describe('PACER_PARTITIONS on a new database', () => {
  let db: Db;

  it('makes the large user tables hash-partitioned by user (webhook deliveries by app), with as many partitions as asked', async () => {
    db = await emptyDatabase();
    await migrateToLatest(poolOf(db), logger, { partitions: 4 });
    const { rows } = await sql<{ table: string; strategy: string; key: string; partitions: number }>`
      select p.partrelid::regclass::text as table, p.partstrat as strategy, a.attname as key,
             (select count(*)::int from pg_inherits i where i.inhparent = p.partrelid) as partitions
      from pg_partitioned_table p
      join pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0]
      join pg_class c on c.oid = p.partrelid
      where c.relnamespace = 'public'::regnamespace`.execute(db);
    expect(Object.fromEntries(rows.map((row) => [row.table, row]))).toEqual(
      Object.fromEntries(
        Object.entries(PARTITIONED).map(([table, key]) => [table, { table, strategy: 'h', key, partitions: 4 }]),
      ),
    );
  });

  it("reads one partition for one user's workouts, and stores, finds and deletes them as on plain tables", async () => {
    const user = await makeUser(db);
    const other = await makeUser(db);
    const stored = [];
    for (const owner of [user, other]) {
      const row = uploadedWorkoutRow({
        userId: owner.id,
        fileSha256: hex64(),
        fileSize: 3,
        name: 'Ride',
        source: 'app',
        sport: 'ride',
        startTime: new Date('2026-11-01T07:00:00Z'),
        localDate: '2026-11-01',
      });
      const first = await upsertWorkoutWithFile(db, row, {}, Buffer.from([1, 2, 3]));
      const again = await upsertWorkoutWithFile(db, row, { name: 'Renamed' }, Buffer.from([1, 2, 3]));
      expect({ created: first.created, again: again.created, same: again.workout.id === first.workout.id }).toEqual({
        created: true,
        again: false,
        same: true,
      });
      stored.push(first.workout);
    }
    const [mine] = stored;
    if (!mine) throw new Error('no workout');

    const { rows: home } = await sql<{ partition: string }>`
      select tableoid::regclass::text as partition from workouts where user_id = ${user.id}`.execute(db);
    // Without the camel-case plugin: the plan's own keys are spaced words ("Relation Name").
    const { rows: plan } = await sql<{ 'QUERY PLAN': unknown }>`
      explain (format json) select * from workouts
      where user_id = ${user.id} and local_date between '2026-10-01' and '2026-11-30'
      order by start_time desc, id desc limit 20`.execute(db.withoutPlugins());
    expect(relationsOf(plan[0]?.['QUERY PLAN'])).toEqual([home[0]?.partition]);

    expect((await findWorkoutFile(db, user.id, mine.id))?.bytes).toEqual(Buffer.from([1, 2, 3]));
    expect(await findWorkoutFile(db, other.id, mine.id)).toBeUndefined();
    expect(await deleteWorkout(db, user.id, mine.id)).toBe('2026-11-01');
    const { rows: files } = await sql<{ userId: string }>`select user_id from workout_files`.execute(db);
    expect(files).toEqual([{ userId: other.id }]);
  });
});

describe('migrating one new database from several processes at once', () => {
  it('migrates it exactly once: the others wait, then find nothing to do', async () => {
    const database = await createTestDatabase();
    const pools = Array.from({ length: 3 }, () =>
      createPool({ connectionString: databaseUrlFor(database), maxConnections: 2 }),
    );
    const applied: string[] = [];
    const destination = {
      write: (line: string) => {
        const entry = JSON.parse(line) as { msg: string; migration?: string };
        if (entry.msg === 'migration applied' && entry.migration) applied.push(entry.migration);
      },
    };
    try {
      await Promise.all(
        pools.map((pool) => migrateToLatest(pool, createLogger('info', destination), { partitions: 4 })),
      );
    } finally {
      for (const pool of pools) await pool.end();
      await dropDatabase(database);
    }
    const files = (await fs.readdir(MIGRATIONS_DIR)).filter((file) => /^\d{8}T\d{4}_.*\.ts$/.test(file));
    expect(applied.sort()).toEqual(files.map((file) => file.replace(/\.ts$/, '')).sort());
  });
});

describe('PACER_PARTITIONS on a database migrated without it', () => {
  it('leaves the tables as they are and says the setting is ignored', async () => {
    const db = await emptyDatabase();
    await migrateToLatest(poolOf(db), logger);
    const lines: { msg: string; requested: number; actual: number }[] = [];
    const destination = { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) };
    await migrateToLatest(poolOf(db), createLogger('warn', destination), { partitions: 8 });
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_partitioned_table p join pg_class c on c.oid = p.partrelid
      where c.relnamespace = 'public'::regnamespace`.execute(db);
    expect(rows[0]?.n).toBe(0);
    expect(lines).toEqual([
      expect.objectContaining({ msg: expect.stringMatching(/PACER_PARTITIONS is ignored/), requested: 8, actual: 0 }),
    ]);
  });
});

/** The tables (partitions) a plan reads. */
function relationsOf(plan: unknown): string[] {
  const names = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node !== null && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      if (typeof record['Relation Name'] === 'string') names.add(record['Relation Name']);
      Object.values(record).forEach(visit);
    }
  };
  visit(plan);
  return [...names];
}

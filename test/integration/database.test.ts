import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUserByEmail } from '../../server/src/modules/accounts/user.repository.ts';
import { findAccessTokenByHash, findAccessTokenCountingHits } from '../../server/src/modules/oauth/token.repository.ts';
import { incrementCounters } from '../../server/src/modules/rate-limit/rate-limit.repository.ts';
import { enqueue } from '../../server/src/queue/boss.ts';
import { purgeExpiredQueue } from '../../server/src/queue/queues.ts';
import { runAtomically } from '../../server/src/db/statement-batch.ts';
import { upsertWellness } from '../../server/src/modules/wellness/wellness.repository.ts';
import { makeUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

describe('prepared statements for hot queries', () => {
  it('runs the bearer-token lookup and the wellness upsert (one text whatever fields are sent) as named statements, and other queries unprepared', async () => {
    const user = await makeUser(server.db);
    const names = await server.db.connection().execute(async (connection) => {
      await findAccessTokenByHash(connection, 'a'.repeat(64));
      await findAccessTokenByHash(connection, 'b'.repeat(64));
      await upsertWellness(connection, {
        userId: user.id,
        date: '2026-01-01',
        values: { hrv: 50 },
        source: 'x',
        rawJson: undefined,
      });
      await upsertWellness(connection, {
        userId: user.id,
        date: '2026-01-01',
        values: { restingHr: 45, mood: 3 },
        source: 'x',
        rawJson: { a: 1 },
      });
      await findUserByEmail(connection, user.email);
      const rows = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements ORDER BY name`.execute(
        connection,
      );
      return rows.rows.map((row) => row.name.replace(/_[0-9a-f]{12}$/, ''));
    });
    expect(names).toEqual(['find_access_token', 'upsert_wellness']);
    const stored = await server.db
      .selectFrom('wellness')
      .selectAll()
      .where('userId', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ hrv: 50, restingHr: 45, mood: 3, rawJson: { x: { a: 1 } } });
  });
});

describe('PACER_DB_PREPARED_STATEMENTS', () => {
  /**
   * A request's hot statements (the token lookup, alone and counting rate-limit
   * hits, the windows, pg-boss's job insert) on one connection, then the named
   * statements that connection holds: pg_prepared_statements is per session, and
   * a statement prepared by a pooler-shared connection would show up here.
   */
  const preparedOnOneConnection = (target: TestServer) =>
    target.db.connection().execute(async (connection) => {
      await findAccessTokenByHash(connection, 'c'.repeat(64));
      await findAccessTokenCountingHits(connection, 'c'.repeat(64), { keys: ['test:prepared'], windowSecs: 60 });
      await incrementCounters(connection, ['test:prepared'], 60);
      await enqueue(target.runtime.boss, connection, purgeExpiredQueue, { graceDays: 1 });
      const rows = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements ORDER BY name`.execute(
        connection,
      );
      return rows.rows.map((row) => row.name.replace(/_[0-9a-f]{12}$/, ''));
    });

  it('prepares the hot statements by default, and none at all when set to false (a transaction-mode pooler)', async () => {
    const unprepared = await startTestServer({ PACER_DB_PREPARED_STATEMENTS: 'false' }, { database: server.database });
    try {
      // The default server's connection may hold others too, from the tests before.
      expect(await preparedOnOneConnection(server)).toEqual(
        expect.arrayContaining([
          'find_access_token',
          'find_access_token_counting',
          'pgboss_send',
          'rate_limit_increment',
        ]),
      );
      expect(await preparedOnOneConnection(unprepared)).toEqual([]);
    } finally {
      await unprepared.stop();
    }
  });
});

describe('statements run atomically in one round trip', () => {
  const insert = (value: string) => ({
    sql: `insert into rate_limit_counters (key, count, window_started_at, expires_at)
      values ($1, 1, now(), now() + interval '1 minute') returning key as "counterKey" /* prepared:test_batch_insert */`,
    parameters: [value],
  });
  const stored = (key: string) =>
    server.db.selectFrom('rateLimitCounters').select('key').where('key', '=', key).execute();

  it("returns each statement's rows in order, and commits them together", async () => {
    const [first, second] = await runAtomically(server.db, [insert('batch:a'), insert('batch:b')]);
    expect(first?.rows).toEqual([{ counterKey: 'batch:a' }]);
    expect(second?.rows).toEqual([{ counterKey: 'batch:b' }]);
    expect(await stored('batch:a')).toHaveLength(1);
    // Named statements parsed by a train are reused by the next one on the same connection.
    const [third] = await runAtomically(server.db, [insert('batch:c')]);
    expect(third?.rows).toEqual([{ counterKey: 'batch:c' }]);
  });

  it('rolls every statement back when a later one fails, and the pool keeps serving', async () => {
    await expect(runAtomically(server.db, [insert('batch:d'), insert('batch:d')])).rejects.toThrow(/duplicate key/);
    expect(await stored('batch:d')).toHaveLength(0);
    for (let i = 0; i < 25; i++) await runAtomically(server.db, [insert(`batch:e${i}`)]);
    expect(await stored('batch:e24')).toHaveLength(1);
  });

  it('inside a transaction, runs on it and rolls back with it', async () => {
    await expect(
      server.db.transaction().execute(async (trx) => {
        const [result] = await runAtomically(trx, [insert('batch:f')]);
        expect(result?.rows).toEqual([{ counterKey: 'batch:f' }]);
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await stored('batch:f')).toHaveLength(0);
  });
});

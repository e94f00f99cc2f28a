import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUserByEmail } from '../../server/src/modules/accounts/user.repository.ts';
import { findAccessTokenByHash, findAccessTokenCountingHits } from '../../server/src/modules/oauth/token.repository.ts';
import { incrementCounters } from '../../server/src/modules/rate-limit/rate-limit.repository.ts';
import { enqueue } from '../../server/src/queue/boss.ts';
import { purgeExpiredQueue } from '../../server/src/queue/queues.ts';
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
    const prepared = async (connection: typeof server.db) =>
      (await sql<{ name: string }>`SELECT name FROM pg_prepared_statements ORDER BY name`.execute(connection)).rows.map(
        (row) => row.name.replace(/_[0-9a-f]{12}$/, ''),
      );
    const names = await server.db.connection().execute(async (connection) => {
      // The server's own background loops (the derived drainer's poll) may have used this pool connection
      // already: only what this test's calls prepared counts.
      const before = await prepared(connection);
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
      return (await prepared(connection)).filter((name) => !before.includes(name));
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

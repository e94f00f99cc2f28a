import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUserByEmail } from '../../server/src/modules/accounts/user.repository.ts';
import { findAccessTokenByHash } from '../../server/src/modules/oauth/token.repository.ts';
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
  it('runs the bearer-token lookup as a named statement, and other queries unprepared', async () => {
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
    expect(names).toEqual(['find_access_token']);
    const stored = await server.db
      .selectFrom('wellness')
      .selectAll()
      .where('userId', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ hrv: 50, restingHr: 45, mood: 3, rawJson: { x: { a: 1 } } });
  });
});

/**
 * PACER_DB_POOL_SIZE and PACER_QUEUE_POOL_SIZE bound the connections one
 * process opens, so an operator can budget processes × pools against
 * PostgreSQL's `max_connections` (README "Operating at scale").
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeUser, mintToken } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    PACER_DB_POOL_SIZE: '3',
    PACER_QUEUE_POOL_SIZE: '2',
    PACER_RATE_LIMIT_PER_MINUTE: '0',
    PACER_RATE_LIMIT_IP_PER_MINUTE: '0',
  });
});
afterAll(async () => {
  await server.stop();
});

describe('connections per process', () => {
  it('never opens more than the configured pools under concurrent load', async () => {
    const user = await makeUser(server.db);
    const { token } = await mintToken(server.db, user, { scopes: ['health:read', 'health:write'] });
    const writes = Array.from({ length: 40 }, (_, i) =>
      call(server.url, 'POST', '/api/wellness', {
        token,
        body: { date: `2026-02-${String((i % 28) + 1).padStart(2, '0')}`, hrv: 40 + i },
      }),
    );
    const answers = await Promise.all(writes);
    expect(answers.every((answer) => answer.status === 200 || answer.status === 201)).toBe(true);

    const rows = await sql<{ application: string; connections: number }>`
      select application_name as application, count(*)::int as connections
      from pg_stat_activity where datname = ${server.database} group by application_name`.execute(server.db);
    const byApplication = Object.fromEntries(rows.rows.map((row) => [row.application, row.connections]));
    expect(server.runtime.database.pool.options.max).toBe(3);
    expect(byApplication['pacer']).toBeGreaterThanOrEqual(1);
    expect(byApplication['pacer']).toBeLessThanOrEqual(3);
    // pg-boss's pool of two, plus the one LISTEN connection of a process that runs workers.
    expect(byApplication['pacer-queue']).toBeLessThanOrEqual(3);
  });
});

import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeUser, mintToken, TEST_PASSWORD } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait.ts';

/** Every log line the server writes, parsed. */
const lines: Record<string, unknown>[] = [];
let raw = '';
const capture = new Writable({
  write(chunk: Buffer, _encoding, done) {
    raw += chunk.toString();
    for (const line of chunk.toString().split('\n').filter(Boolean))
      lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ PACER_LOG_LEVEL: 'info' }, { logDestination: capture });
});
afterAll(async () => {
  await server.stop();
});

describe('request logging', () => {
  it('logs each request with its request id and never a token, password or cookie', async () => {
    const user = await makeUser(server.db);
    const { token } = await mintToken(server.db, user, { scopes: ['health:write'] });
    await call(server.url, 'POST', '/api/wellness?secret=query-secret', {
      token,
      body: { date: '2026-01-01', hrv: 40 },
      headers: { 'x-request-id': 'trace-me-1', cookie: 'pacer_session=cookie-secret' },
    });
    const form = await fetch(`${server.url}/login`);
    const csrf = /pacer_csrf=([^;]+)/.exec(form.headers.get('set-cookie') ?? '')?.[1] ?? '';
    await fetch(`${server.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `pacer_csrf=${csrf}` },
      body: new URLSearchParams({ _csrf: csrf, email: user.email, password: TEST_PASSWORD }),
      redirect: 'manual',
    });
    // A request's line is written when its response has finished, which may be after the client has it.
    const loggedLogin = (line: Record<string, unknown>) => {
      const req = line['req'] as { method?: unknown; path?: unknown } | undefined;
      return req?.method === 'POST' && req.path === '/login';
    };
    await waitFor(
      () => Promise.resolve(lines.some((line) => line['requestId'] === 'trace-me-1') && lines.some(loggedLogin)),
      'the log lines of both requests',
    );

    const traced = lines.find((line) => line['requestId'] === 'trace-me-1');
    expect(traced).toMatchObject({ msg: 'request completed', res: { statusCode: 201 } });
    expect(raw).not.toContain(token);
    expect(raw).not.toContain(TEST_PASSWORD);
    expect(raw).not.toContain('cookie-secret');
    expect(raw).not.toContain('query-secret');
    expect(raw).not.toContain(csrf);
  });

  it('logs an unexpected failure with its request id and stack, and answers without them', async () => {
    const user = await makeUser(server.db);
    const { token } = await mintToken(server.db, user, { scopes: ['health:write'] });
    await sql`ALTER TABLE wellness RENAME TO wellness_moved`.execute(server.db);
    try {
      const res = await call(server.url, 'POST', '/api/wellness', {
        token,
        body: { date: '2026-01-02', hrv: 41 },
        headers: { 'x-request-id': 'broken-1' },
      });
      expect(res.status).toBe(500);
    } finally {
      await sql`ALTER TABLE wellness_moved RENAME TO wellness`.execute(server.db);
    }
    const logged = lines.find((line) => line['msg'] === 'unhandled error' && line['requestId'] === 'broken-1');
    expect(logged?.['level']).toBe(50);
    expect(JSON.stringify(logged?.['err'])).toContain('wellness');
  });
});

/**
 * REST rate limits (docs/design.md §3 "REST conventions", §4 `PACER_RATE_LIMIT_*`):
 * per access token and per client IP, per minute, held in PostgreSQL so every
 * API process counts against the same window; `RateLimit-*` headers on every
 * answer, 429 problem + `Retry-After` once a window is spent; uploads count
 * against their own bucket.
 */
import { contract, type Problem } from '@pacer/contract';
import { afterAll, describe, expect, it } from 'vitest';
import { rateLimitBucketOf } from '../../server/src/http/rate-limit.middleware.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { call, type JsonResponse } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const started: TestServer[] = [];
afterAll(async () => {
  // Processes sharing a database first, the owner of the database last.
  for (const server of started.reverse()) await server.stop();
});

async function serverWith(env: Record<string, string>, database?: string): Promise<TestServer> {
  const server = await startTestServer(env, database === undefined ? {} : { database });
  started.push(server);
  return server;
}

async function tokenFor(server: TestServer): Promise<string> {
  const user = await makeUser(server.db);
  return (await mintToken(server.db, user, { scopes: ['health:read', 'health:write'] })).token;
}

const listWellness = (server: TestServer, token?: string) =>
  call<Problem>(server.url, 'GET', '/api/wellness', token === undefined ? {} : { token });

function limitHeaders(answer: JsonResponse) {
  return {
    limit: Number(answer.headers.get('ratelimit-limit')),
    remaining: Number(answer.headers.get('ratelimit-remaining')),
    reset: Number(answer.headers.get('ratelimit-reset')),
  };
}

describe('per access token', () => {
  it('sends RateLimit-Limit, -Remaining and -Reset on every answer, Remaining going down by one per request', async () => {
    const server = await serverWith({ PACER_RATE_LIMIT_PER_MINUTE: '5', PACER_RATE_LIMIT_IP_PER_MINUTE: '1000' });
    const token = await tokenFor(server);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await listWellness(server, token));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(answers.map((answer) => limitHeaders(answer).limit)).toEqual([5, 5, 5]);
    expect(answers.map((answer) => limitHeaders(answer).remaining)).toEqual([4, 3, 2]);
    for (const answer of answers) {
      expect(limitHeaders(answer).reset).toBeGreaterThanOrEqual(1);
      expect(limitHeaders(answer).reset).toBeLessThanOrEqual(60);
    }
    // Writes and problem answers carry them too.
    const write = await call(server.url, 'POST', '/api/wellness', { token, body: { date: 'not a date' } });
    expect(write.status).toBe(400);
    expect(limitHeaders(write).remaining).toBe(1);
  });

  it('refuses a spent window with 429 rate_limited and Retry-After, then serves again after the window', async () => {
    const server = await serverWith({ PACER_RATE_LIMIT_PER_MINUTE: '2', PACER_RATE_LIMIT_IP_PER_MINUTE: '1000' });
    const token = await tokenFor(server);
    expect((await listWellness(server, token)).status).toBe(200);
    expect((await listWellness(server, token)).status).toBe(200);
    const refused = await listWellness(server, token);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.body.code).toBe('rate_limited');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limitHeaders(refused)).toMatchObject({ limit: 2, remaining: 0, reset: retryAfter });

    // Another token has its own window.
    expect((await listWellness(server, await tokenFor(server))).status).toBe(200);

    // End the window early (the counters are rows with an expiry), as a minute passing would.
    await server.db
      .updateTable('rateLimitCounters')
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .execute();
    const again = await listWellness(server, token);
    expect(again.status).toBe(200);
    expect(limitHeaders(again).remaining).toBe(1);
  });

  it('shares one window between two server processes on the same database', async () => {
    const env = { PACER_RATE_LIMIT_PER_MINUTE: '4', PACER_RATE_LIMIT_IP_PER_MINUTE: '1000' };
    const first = await serverWith(env);
    const second = await serverWith(env, first.database);
    const token = await tokenFor(first);
    const statuses = [];
    const remaining = [];
    for (const server of [first, second, first, second, first, second]) {
      const answer = await listWellness(server, token);
      statuses.push(answer.status);
      remaining.push(limitHeaders(answer).remaining);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    expect(remaining).toEqual([3, 2, 1, 0, 0, 0]);
  });

  it('counts concurrent requests exactly: of 12 at once with a limit of 5, 5 pass', async () => {
    const server = await serverWith({ PACER_RATE_LIMIT_PER_MINUTE: '5', PACER_RATE_LIMIT_IP_PER_MINUTE: '1000' });
    const token = await tokenFor(server);
    const answers = await Promise.all(Array.from({ length: 12 }, () => listWellness(server, token)));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(5);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(7);
  });
});

describe('per IP', () => {
  it('limits unauthenticated requests: after the window is spent, 429 instead of 401', async () => {
    const server = await serverWith({ PACER_RATE_LIMIT_PER_MINUTE: '1000', PACER_RATE_LIMIT_IP_PER_MINUTE: '3' });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await listWellness(server));
    expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401, 429]);
    expect(answers.map((answer) => limitHeaders(answer).remaining)).toEqual([2, 1, 0, 0]);
    expect(answers[3]?.body.code).toBe('rate_limited');
    expect(Number(answers[3]?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The address is spent for valid tokens too.
    expect((await listWellness(server, await tokenFor(server))).status).toBe(429);
  });

  it('reports the tighter of the token and address windows in the headers', async () => {
    const server = await serverWith({ PACER_RATE_LIMIT_PER_MINUTE: '10', PACER_RATE_LIMIT_IP_PER_MINUTE: '4' });
    const token = await tokenFor(server);
    const answer = await listWellness(server, token);
    expect(limitHeaders(answer)).toMatchObject({ limit: 4, remaining: 3 });
  });
});

describe('uploads bucket', () => {
  it('counts the FIT upload route against its own bucket and every other route against the request bucket', () => {
    expect(rateLimitBucketOf(contract.workouts.uploadFit)).toBe('uploads');
    expect(rateLimitBucketOf({ method: 'POST', path: '/api/workouts/upload-fit' })).toBe('uploads');
    expect(rateLimitBucketOf(contract.workouts.deleteWorkout)).toBe('requests');
    expect(rateLimitBucketOf(contract.wellness.upsertWellness)).toBe('requests');
    expect(rateLimitBucketOf(contract.wellness.listWellness)).toBe('requests');
  });

  it('refuses uploads past PACER_RATE_LIMIT_UPLOADS_PER_MINUTE while other requests of the token still pass', async () => {
    const server = await serverWith({
      PACER_RATE_LIMIT_PER_MINUTE: '100',
      PACER_RATE_LIMIT_IP_PER_MINUTE: '1000',
      PACER_RATE_LIMIT_UPLOADS_PER_MINUTE: '1',
    });
    const user = await makeUser(server.db);
    const { token } = await mintToken(server.db, user, { scopes: ['workout:write', 'health:read'] });
    const upload = () => {
      const form = new FormData();
      form.set('file', new Blob([new Uint8Array([1, 2, 3])]), 'not-a-fit-file.fit');
      return fetch(`${server.url}/api/workouts/upload-fit`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: form,
      });
    };
    const first = await upload();
    await first.text();
    expect(first.status).not.toBe(429);
    expect(first.headers.get('ratelimit-limit')).toBe('1');
    expect(first.headers.get('ratelimit-remaining')).toBe('0');
    const second = await upload();
    expect(second.status).toBe(429);
    expect(((await second.json()) as Problem).code).toBe('rate_limited');
    const read = await listWellness(server, token);
    expect(read.status).toBe(200);
    expect(limitHeaders(read)).toMatchObject({ limit: 100, remaining: 99 });
  });
});

describe('configuration', () => {
  it('0 turns a limit off: no counting and no RateLimit headers', async () => {
    const server = await serverWith({ PACER_RATE_LIMIT_PER_MINUTE: '0', PACER_RATE_LIMIT_IP_PER_MINUTE: '0' });
    const token = await tokenFor(server);
    const answer = await listWellness(server, token);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('ratelimit-limit')).toBeNull();
    const counters = await server.db.selectFrom('rateLimitCounters').select('key').execute();
    expect(counters.filter((counter) => counter.key.startsWith('rest:'))).toEqual([]);
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeUser, mintToken } from '../support/factories.ts';
import { asProblem, call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  const user = await makeUser(server.db);
  token = (await mintToken(server.db, user, { scopes: ['health:read', 'health:write'] })).token;
});
afterAll(async () => {
  await server.stop();
});

describe('errors and request ids', () => {
  it('answers unknown routes with a 404 problem', async () => {
    const res = await call(server.url, 'GET', '/api/nope');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(asProblem(res.body)).toMatchObject({ status: 404, code: 'not_found', type: 'urn:pacer:problem:not_found' });
  });

  it('echoes a sane X-Request-Id and puts it in problems; replaces an unsafe one', async () => {
    const echoed = await call(server.url, 'GET', '/api/nope', { headers: { 'x-request-id': 'client-req-42' } });
    expect(echoed.headers.get('x-request-id')).toBe('client-req-42');
    expect(asProblem(echoed.body).requestId).toBe('client-req-42');
    const unsafe = await call(server.url, 'GET', '/api/nope', { headers: { 'x-request-id': 'bad id <script>' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('turns a failure inside a request into a 500 problem without internals, and keeps serving', async () => {
    // Break the service's own database under it: the wellness table goes away.
    await sql`ALTER TABLE wellness RENAME TO wellness_gone`.execute(server.db);
    try {
      const res = await call(server.url, 'POST', '/api/wellness', { token, body: { date: '2026-01-01', hrv: 50 } });
      expect(res.status).toBe(500);
      const problem = asProblem(res.body);
      expect(problem.code).toBe('internal_error');
      expect(problem.requestId).toBe(res.headers.get('x-request-id'));
      expect(JSON.stringify(problem)).not.toMatch(/wellness_gone|relation|stack|at .*\.ts/);
    } finally {
      await sql`ALTER TABLE wellness_gone RENAME TO wellness`.execute(server.db);
    }
    const after = await call(server.url, 'POST', '/api/wellness', { token, body: { date: '2026-01-01', hrv: 50 } });
    expect(after.status).toBe(201);
  });

  it('serves health, readiness, the OpenAPI document and Swagger UI', async () => {
    expect((await call(server.url, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
    expect((await call(server.url, 'GET', '/readyz')).body).toEqual({
      status: 'ok',
      database: 'ok',
      queue: 'ok',
      replica: 'off',
      replicaLagMs: null,
    });
    const openapi = await call<{ openapi: string; servers: { url: string }[] }>(server.url, 'GET', '/openapi.json');
    expect(openapi.body.openapi).toMatch(/^3\./);
    expect(openapi.body.servers[0]?.url).toBe(server.config.baseUrl);
    const docs = await fetch(`${server.url}/docs/`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger-ui');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { asProblem, call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/**
 * Bearer tokens on the REST API: RFC 6750 (§2.1 header, §3 challenges and
 * error codes), RFC 8707 audience (a token bound to `/mcp` is not a REST
 * token) and RFC 9728 §5.1 `resource_metadata` in every challenge.
 */
let server: TestServer;
let athlete: User;
let metadataUrl: string;

beforeAll(async () => {
  server = await startTestServer();
  athlete = await makeUser(server.db);
  metadataUrl = `${server.config.baseUrl}/.well-known/oauth-protected-resource`;
});
afterAll(async () => {
  await server.stop();
});

const upsert = (token?: string, headers?: Record<string, string>) =>
  call(server.url, 'POST', '/api/wellness', {
    ...(token ? { token } : {}),
    ...(headers ? { headers } : {}),
    body: { date: '2026-05-01', hrv: 50 },
  });

describe('bearer authentication on REST routes', () => {
  it('without a token: 401 with a challenge naming the metadata URL and scope, and no error code', async () => {
    const res = await upsert();
    expect(res.status).toBe(401);
    expect(asProblem(res.body).code).toBe('unauthorized');
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toBe(`Bearer resource_metadata="${metadataUrl}", scope="health:write"`);
  });

  it('with a malformed Authorization header: 400 invalid_request', async () => {
    const res = await upsert(undefined, { authorization: 'Basic dXNlcjpwYXNz' });
    expect(res.status).toBe(400);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_request"');
  });

  it('with an unknown token: 401 invalid_token', async () => {
    const res = await upsert('pat_doesnotexist');
    expect(res.status).toBe(401);
    expect(asProblem(res.body).code).toBe('invalid_token');
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${metadataUrl}"`);
  });

  it('with an expired token: 401 invalid_token', async () => {
    const { token } = await mintToken(server.db, athlete, { scopes: ['health:write'], expiresInSecs: -5 });
    const res = await upsert(token);
    expect(res.status).toBe(401);
    expect(asProblem(res.body).detail).toMatch(/expired/);
  });

  it('after its grant is revoked: 401 on the next request', async () => {
    const { token, grantId } = await mintToken(server.db, athlete, { scopes: ['health:write'] });
    expect((await upsert(token)).status).toBe(201);
    await server.db.updateTable('oauthGrants').set({ revokedAt: new Date() }).where('id', '=', grantId).execute();
    const res = await upsert(token);
    expect(res.status).toBe(401);
    expect(asProblem(res.body).detail).toMatch(/revoked/);
  });

  it('for a deactivated user: 401', async () => {
    const user = await makeUser(server.db);
    const { token } = await mintToken(server.db, user, { scopes: ['health:write'] });
    await server.db.updateTable('users').set({ active: false }).where('id', '=', user.id).execute();
    const res = await upsert(token);
    expect(res.status).toBe(401);
    expect(asProblem(res.body).detail).toMatch(/deactivated/);
  });

  it('a token bound to the MCP resource is refused on REST', async () => {
    const { token } = await mintToken(server.db, athlete, {
      scopes: ['health:write'],
      resource: server.config.mcpResource,
    });
    const res = await upsert(token);
    expect(res.status).toBe(401);
    expect(asProblem(res.body).detail).toContain('/mcp');
  });

  it('records when a grant was last used', async () => {
    const { token, grantId } = await mintToken(server.db, athlete, { scopes: ['health:write'] });
    expect((await upsert(token)).status).toBeLessThan(300);
    let grant = await server.db
      .selectFrom('oauthGrants')
      .select('lastUsedAt')
      .where('id', '=', grantId)
      .executeTakeFirstOrThrow();
    for (let attempt = 0; attempt < 50 && !grant.lastUsedAt; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      grant = await server.db
        .selectFrom('oauthGrants')
        .select('lastUsedAt')
        .where('id', '=', grantId)
        .executeTakeFirstOrThrow();
    }
    expect(grant.lastUsedAt).toBeInstanceOf(Date);
  });

  it('a token bound to the REST resource itself is accepted', async () => {
    const { token } = await mintToken(server.db, athlete, {
      scopes: ['health:write'],
      resource: server.config.baseUrl,
    });
    expect([200, 201]).toContain((await upsert(token)).status);
  });

  it('a token without the route scope: 403 insufficient_scope with the needed scope in the challenge', async () => {
    const { token } = await mintToken(server.db, athlete, { scopes: ['health:read', 'nutrition:write'] });
    const res = await upsert(token);
    expect(res.status).toBe(403);
    expect(asProblem(res.body).code).toBe('insufficient_scope');
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="health:write"');
    expect((await call(server.url, 'GET', '/api/wellness', { token })).status).toBe(200);
  });

  it('authenticates before reading the body: no token and a bad body is still 401', async () => {
    const res = await call(server.url, 'POST', '/api/wellness', { rawBody: '{broken' });
    expect(res.status).toBe(401);
  });
});

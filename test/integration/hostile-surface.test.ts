/**
 * Issue 18, as an attacker on the internet tries it, against the real server:
 * - JSON nested thousands of levels deep on REST, `/mcp` and the OAuth
 *   endpoints is refused unparsed with 400 in each surface's error shape
 *   (problem+json `json_too_deep`, RFC 6749 `invalid_request`, RFC 7591
 *   `invalid_client_metadata`, JSON-RPC 2.0 §5.1 parse error -32700), while
 *   64 levels still work where a route takes free-form JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../server/src/lib/json-depth.ts';
import type { User } from '../../server/src/db/tables.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { asProblem, call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
let athlete: User;

beforeAll(async () => {
  server = await startTestServer();
  athlete = await makeUser(server.db);
});
afterAll(async () => {
  await server?.stop();
});

/** `levels` arrays inside one another around `inner`, as text: `[[[…0…]]]`. */
function nested(levels: number, inner = '0'): string {
  return `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;
}

/** The ~5,000 levels that answered 500 before (a stack overflow walking the parsed value). */
const ATTACK_DEPTH = 5_000;

function postMcp(body: string, token?: string): Promise<Response> {
  return fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body,
  });
}

describe('JSON nested deeper than 64 levels is refused before it is parsed', () => {
  it('REST: a wellness upsert whose rawJson nests 5,000 levels gets 400 json_too_deep, not 500', async () => {
    const { token } = await mintToken(server.db, athlete, { scopes: ['health:write'] });
    const res = await call(server.url, 'POST', '/api/wellness', {
      token,
      rawBody: `{"date":"2026-10-04","rawJson":{"a":${nested(ATTACK_DEPTH)}}}`,
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = asProblem(res.body);
    expect(problem.code).toBe('json_too_deep');
    expect(problem.detail).toBe(`The body nests deeper than ${MAX_JSON_DEPTH} levels.`);
    expect(problem.errors).toEqual([{ path: '', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }]);
  });

  it('REST: one level past the limit is refused, exactly 64 levels (rawJson inside the body) are stored', async () => {
    const { token } = await mintToken(server.db, athlete, { scopes: ['health:write', 'health:read'] });
    // The body object is level 1, rawJson level 2: 62 arrays inside `{"a": …}` make 64 in all.
    const rawJson = (arrays: number) => `{"a":${nested(arrays)}}`;
    const tooDeep = await call(server.url, 'POST', '/api/wellness', {
      token,
      rawBody: `{"date":"2026-10-05","rawJson":${rawJson(MAX_JSON_DEPTH - 1)}}`,
    });
    expect(tooDeep.status).toBe(400);
    expect(asProblem(tooDeep.body).code).toBe('json_too_deep');

    const deepest = await call<{ rawJsonBySource: Record<string, unknown> }>(server.url, 'POST', '/api/wellness', {
      token,
      rawBody: `{"date":"2026-10-05","rawJson":${rawJson(MAX_JSON_DEPTH - 2)}}`,
    });
    expect(deepest.status).toBe(201);
    expect(Object.values(deepest.body.rawJsonBySource)).toEqual([JSON.parse(rawJson(MAX_JSON_DEPTH - 2))]);
  });

  it('/mcp: a 5,000-level body gets HTTP 400 with JSON-RPC parse error -32700 and id null, before any auth', async () => {
    const res = await postMcp(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":${nested(ATTACK_DEPTH)}}}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: `Parse error: the body nests deeper than ${MAX_JSON_DEPTH} levels.` },
      id: null,
    });
  });

  it('/mcp: a tools/call whose arguments nest 64 levels in all is still answered', async () => {
    const token = (
      await mintToken(server.db, athlete, { scopes: ['profile:read'], resource: server.config.mcpResource })
    ).token;
    // Levels 1-3: the message, params, arguments; 61 arrays inside make 64.
    const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_current_time","arguments":{"x":${nested(MAX_JSON_DEPTH - 4)}}}}`;
    const res = await postMcp(body, token);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { id: number; result?: unknown; error?: unknown };
    expect(answer.id).toBe(7);
    expect(answer.error).toBeUndefined();
  });

  it('OAuth token endpoint: a 5,000-level JSON body gets 400 invalid_request (RFC 6749 §5.2)', async () => {
    const res = await call(server.url, 'POST', '/api/oauth/token', {
      rawBody: `{"grant_type":${nested(ATTACK_DEPTH, '"x"')}}`,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_request',
      error_description: `the body nests deeper than ${MAX_JSON_DEPTH} levels`,
    });
  });

  it('DCR: a 5,000-level client metadata body gets 400 invalid_client_metadata (RFC 7591 §3.2.2)', async () => {
    const res = await call(server.url, 'POST', '/api/oauth/register', {
      rawBody: `{"redirect_uris":["http://127.0.0.1/cb"],"client_name":"x","extra":${nested(ATTACK_DEPTH)}}`,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_client_metadata',
      error_description: `The body nests deeper than ${MAX_JSON_DEPTH} levels.`,
    });
  });
});

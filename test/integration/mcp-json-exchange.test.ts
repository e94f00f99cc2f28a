/**
 * A `tools/call` or `tools/list` whose client prefers JSON is answered
 * through a `JsonExchange` (server/src/mcp/json-exchange.ts) rather than the
 * SDK's Streamable HTTP transport; every other request still goes through
 * the transport. The same requests, sent once preferring JSON (the exchange)
 * and once preferring SSE (the transport, which writes each message as
 * `data: JSON.stringify(message)`), get byte for byte the same JSON-RPC
 * answers: results, tool errors and the SDK's JSON-RPC errors alike.
 */
import { MCP_SCOPES } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeUser, mintToken } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  const athlete = await makeUser(server.db);
  ({ token } = await mintToken(server.db, athlete, { scopes: [...MCP_SCOPES], resource: server.config.mcpResource }));
});
afterAll(async () => {
  await server?.stop();
});

interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly contentLength: string | null;
  readonly text: string;
}

async function post(body: unknown, accept: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'mcp-protocol-version': '2025-11-25',
      accept,
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    contentLength: response.headers.get('content-length'),
    text: await response.text(),
  };
}

/** The JSON-RPC message of an SSE answer: the transport's one `data:` line. */
function sseMessage(text: string): string {
  const data = text.split('\n').filter((line) => line.startsWith('data: '));
  expect(data).toHaveLength(1);
  return (data[0] as string).slice('data: '.length);
}

const call = (id: string | number, params: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params });

const SAME_ANSWERS: readonly { readonly name: string; readonly body: unknown }[] = [
  { name: 'tools/list', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
  { name: 'tools/list with a cursor', body: { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { cursor: 'x' } } },
  { name: 'get_profile, string id', body: call('call-1', { name: 'get_profile', arguments: {} }) },
  { name: 'get_profile, id 0, no arguments', body: call(0, { name: 'get_profile' }) },
  {
    name: 'get_profile with a progress token',
    body: call(7, { name: 'get_profile', arguments: {}, _meta: { progressToken: 'p1' } }),
  },
  {
    name: 'a read tool with arguments',
    body: call(3, { name: 'list_workouts', arguments: { from: '2026-01-01', to: '2026-01-31' } }),
  },
  { name: 'an unknown tool (tool error)', body: call(4, { name: 'no_such_tool', arguments: {} }) },
  {
    name: 'invalid arguments (tool error)',
    body: call(5, { name: 'list_workouts', arguments: { from: 'yesterday' } }),
  },
  { name: 'no params (SDK error)', body: { jsonrpc: '2.0', id: 6, method: 'tools/call' } },
  { name: 'a name that is no string (SDK error)', body: call(8, { name: 42, arguments: {} }) },
  { name: 'arguments that are no object (SDK error)', body: call(9, { name: 'get_profile', arguments: [1] }) },
  { name: 'a task requested (SDK error)', body: call(10, { name: 'get_profile', arguments: {}, task: { ttl: 1000 } }) },
];

describe('a tools/call or tools/list preferring JSON', () => {
  it.each(SAME_ANSWERS)('$name: the same JSON-RPC answer as through the SDK transport', async ({ body }) => {
    const [json, sse] = await Promise.all([post(body, 'application/json'), post(body, 'text/event-stream')]);
    expect(sse.status).toBe(200);
    expect(sse.contentType).toBe('text/event-stream');
    expect(json.status).toBe(200);
    expect(json.contentType).toBe('application/json');
    expect(Number(json.contentLength)).toBe(Buffer.byteLength(json.text));
    expect(json.text).toBe(sseMessage(sse.text));
  });

  it('answers a tool call with its result', async () => {
    const answer = await post(call(11, { name: 'get_profile', arguments: {} }), 'application/json, text/event-stream');
    const message = JSON.parse(answer.text) as { id: number; result: { isError?: boolean; structuredContent: object } };
    expect(message.id).toBe(11);
    expect(message.result.isError).toBeUndefined();
    expect(message.result.structuredContent).toHaveProperty('timeZone');
  });
});

describe('what the SDK transport still answers when JSON is preferred', () => {
  it('an unsupported Mcp-Protocol-Version: 400 from the transport', async () => {
    const answer = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, 'application/json', {
      'mcp-protocol-version': '1999-01-01',
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({
      error: { code: -32000, message: expect.stringContaining('Unsupported protocol version: 1999-01-01') },
      id: null,
    });
  });

  it('a message that is no JSON-RPC request (an unknown member): the transport parse error', async () => {
    const answer = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', extra: true }, 'application/json');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error: Invalid JSON-RPC message' },
      id: null,
    });
  });

  it('ping and unknown methods', async () => {
    const ping = await post({ jsonrpc: '2.0', id: 'p', method: 'ping' }, 'application/json');
    expect(JSON.parse(ping.text)).toEqual({ result: {}, jsonrpc: '2.0', id: 'p' });
    const unknown = await post({ jsonrpc: '2.0', id: 'u', method: 'resources/list' }, 'application/json');
    expect(JSON.parse(unknown.text)).toEqual({
      jsonrpc: '2.0',
      id: 'u',
      error: { code: -32601, message: 'Method not found' },
    });
  });

  it('a notification: 202 and no body', async () => {
    const answer = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, 'application/json');
    expect(answer.status).toBe(202);
    expect(answer.text).toBe('');
  });
});

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { exchangedRequest, JsonExchange } from '../../server/src/mcp/json-exchange.ts';

const CALL = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_profile', arguments: {} } };

describe('exchangedRequest', () => {
  it('takes a single tools/call or tools/list preferring JSON', () => {
    expect(exchangedRequest(CALL, 'json', undefined)).toEqual(CALL);
    expect(exchangedRequest(CALL, 'json', '2025-06-18')).toEqual(CALL);
    expect(exchangedRequest({ jsonrpc: '2.0', id: 'a', method: 'tools/list' }, 'json', '2025-11-25')).toBeDefined();
  });

  it('leaves everything else to the SDK transport', () => {
    expect(exchangedRequest(CALL, 'sse', undefined)).toBeUndefined();
    // The transport answers an unsupported version with its own 400.
    expect(exchangedRequest(CALL, 'json', '1999-01-01')).toBeUndefined();
    expect(exchangedRequest(CALL, 'json', ['2025-11-25', '2025-06-18'])).toBeUndefined();
    for (const method of ['initialize', 'ping', 'resources/list', 'notifications/initialized']) {
      expect(exchangedRequest({ ...CALL, method }, 'json', undefined)).toBeUndefined();
    }
    // A notification, a batch, and what the SDK's JSONRPCRequestSchema refuses.
    const { id: _id, ...notification } = CALL;
    expect(exchangedRequest(notification, 'json', undefined)).toBeUndefined();
    expect(exchangedRequest([CALL], 'json', undefined)).toBeUndefined();
    expect(exchangedRequest({ ...CALL, extra: 1 }, 'json', undefined)).toBeUndefined();
    expect(exchangedRequest({ ...CALL, jsonrpc: '1.0' }, 'json', undefined)).toBeUndefined();
    expect(exchangedRequest({ ...CALL, id: 1.5 }, 'json', undefined)).toBeUndefined();
    expect(exchangedRequest(null, 'json', undefined)).toBeUndefined();
  });
});

describe('JsonExchange', () => {
  function server(): Server {
    const sdk = new Server({ name: 'test', version: '1.0.0' }, { capabilities: { tools: {} } });
    sdk.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
    sdk.setRequestHandler(CallToolRequestSchema, (request) =>
      Promise.resolve({ content: [{ type: 'text' as const, text: request.params.name }] }),
    );
    return sdk;
  }

  it("resolves to the SDK Server's answer to the request", async () => {
    const exchange = new JsonExchange({ jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'echo' } });
    await server().connect(exchange);
    expect(await exchange.exchange()).toEqual({
      result: { content: [{ type: 'text', text: 'echo' }] },
      jsonrpc: '2.0',
      id: 'x',
    });
  });

  it("resolves to the SDK Server's JSON-RPC error", async () => {
    const exchange = new JsonExchange({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: {} });
    await server().connect(exchange);
    const answer = await exchange.exchange();
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: 2, error: { code: expect.any(Number) as number } });
  });
});

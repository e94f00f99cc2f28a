/**
 * What `tools/list` costs a host (docs/design.md §3 "MCP / Tools", "Tool list
 * size"): hosts send the whole list to the model on every turn, so its size
 * is bounded. Measured on the wire, as the MCP SDK `Client` receives it, with
 * a token holding every MCP scope (the largest list) and with the scopes the
 * `/mcp` 401 challenge asks a first connection to request. Tokens are
 * estimated as bytes / 4.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_SCOPES, SCOPES, type Scope } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeUser, mintToken } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/** The bound on the `tools/list` response body (60 KB, ~15,000 tokens), whatever the scopes. */
const MAX_TOOL_LIST_BYTES = 60_000;

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

interface MeasuredList {
  readonly bytes: number;
  readonly tools: number;
}

/** Lists tools through the SDK client, counting the bytes of the `tools/list` response body. */
async function measureToolList(scopes: readonly Scope[]): Promise<MeasuredList> {
  const user = await makeUser(server.db);
  const { token } = await mintToken(server.db, user, { scopes, resource: server.config.mcpResource });
  let bytes = 0;
  const countingFetch = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const response = await fetch(input, init);
    const body = typeof init?.body === 'string' ? init.body : '';
    if (body.includes('"tools/list"')) bytes = (await response.clone().arrayBuffer()).byteLength;
    return response;
  };
  const client = new Client({ name: 'tool-list-size', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.config.mcpResource), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
      fetch: countingFetch,
    }),
  );
  try {
    const { tools } = await client.listTools();
    return { bytes, tools: tools.length };
  } finally {
    await client.close();
  }
}

/** The scopes of the `WWW-Authenticate` challenge an unauthenticated `POST /mcp` gets. */
async function challengeScopes(): Promise<Scope[]> {
  const response = await fetch(server.config.mcpResource, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(response.status).toBe(401);
  const scope = /scope="([^"]*)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1] ?? '';
  return scope.split(' ').filter((entry): entry is Scope => (SCOPES as readonly string[]).includes(entry));
}

const report = (label: string, measured: MeasuredList) =>
  `tools/list with ${label}: ${String(measured.tools)} tools, ${String(measured.bytes)} bytes (~${String(Math.round(measured.bytes / 4))} tokens)`;

describe('tools/list size', () => {
  it(`stays within ${String(MAX_TOOL_LIST_BYTES)} bytes with every MCP scope`, async () => {
    const measured = await measureToolList(MCP_SCOPES);
    console.info(report('every MCP scope', measured));

    expect(measured.tools).toBe(31);
    expect(measured.bytes).toBeGreaterThan(0);
    expect(measured.bytes).toBeLessThanOrEqual(MAX_TOOL_LIST_BYTES);
  });

  it('stays within the bound with the scopes the /mcp challenge asks a first connection for', async () => {
    const scopes = await challengeScopes();
    const measured = await measureToolList(scopes);
    console.info(report(`the challenge's scopes (${scopes.join(' ')})`, measured));

    expect(scopes.length).toBeGreaterThan(0);
    expect(measured.bytes).toBeLessThanOrEqual(MAX_TOOL_LIST_BYTES);
  });
});

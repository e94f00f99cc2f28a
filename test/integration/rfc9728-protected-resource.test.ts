import { discoverOAuthServerInfo, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { mcpResourceMetadataUrl } from '../../server/src/http/oauth/discovery.router.ts';
import { OAuthProtectedResourceMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { MCP_SCOPES, SCOPES } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, corsPreflight } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/**
 * RFC 9728 protected resource metadata:
 * - §2 metadata fields (`resource`, `authorization_servers`,
 *   `scopes_supported`, `bearer_methods_supported`);
 * - §3 the well-known URI, and §3.1 the resource's path appended to it
 *   (`/.well-known/oauth-protected-resource/mcp` for `{base}/mcp`);
 * - §3.3 `resource` identical to the resource identifier (the REST API is
 *   `{base}`, the MCP endpoint exactly `{base}/mcp`, specification §5.4);
 * - §5.1 the `resource_metadata` URL of a `WWW-Authenticate` challenge points
 *   at a document that exists and describes that resource.
 * Also: CORS for browser-based clients, and discovery by the MCP SDK client.
 */
const REST_PATH = '/.well-known/oauth-protected-resource';
const MCP_PATH = '/.well-known/oauth-protected-resource/mcp';

let server: TestServer;
let base: string;

beforeAll(async () => {
  server = await startTestServer();
  base = server.config.baseUrl;
});
afterAll(async () => {
  await server.stop();
});

const documentAt = async (path: string) => {
  const res = await call<Record<string, unknown>>(server.url, 'GET', path);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(() => OAuthProtectedResourceMetadataSchema.parse(res.body)).not.toThrow();
  return res.body;
};

describe('RFC 9728 metadata of the REST resource', () => {
  it('§3.3: describes resource {base}, exactly, with no trailing slash', async () => {
    const body = await documentAt(REST_PATH);
    expect(body['resource']).toBe(base);
  });

  it('§2: names this server as authorization server, every scope, and header bearer tokens only', async () => {
    const body = await documentAt(REST_PATH);
    expect(body['authorization_servers']).toEqual([base]);
    expect(body['scopes_supported']).toEqual([...SCOPES]);
    expect(body['bearer_methods_supported']).toEqual(['header']);
  });

  it('§2: its authorization server is one whose RFC 8414 issuer is the same URL', async () => {
    const body = await documentAt(REST_PATH);
    const [issuer] = body['authorization_servers'] as string[];
    const res = await call<Record<string, unknown>>(server.url, 'GET', '/.well-known/oauth-authorization-server');
    expect(res.body['issuer']).toBe(issuer);
  });

  it('§5.1: a REST 401 challenge names a metadata URL that serves this document', async () => {
    const res = await fetch(`${server.url}/api/wellness`, { method: 'GET' });
    expect(res.status).toBe(401);
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(res);
    expect(resourceMetadataUrl?.href).toBe(`${base}${REST_PATH}`);
    const document = await fetch(resourceMetadataUrl as URL);
    expect(document.status).toBe(200);
    expect(((await document.json()) as Record<string, unknown>)['resource']).toBe(base);
  });
});

describe('RFC 9728 metadata of the MCP resource', () => {
  it('§3.1: is served with the resource path /mcp appended to the well-known URI', async () => {
    expect(getOAuthProtectedResourceMetadataUrl(new URL(server.config.mcpResource))).toBe(`${base}${MCP_PATH}`);
    // What our challenges name (built without the SDK's auth router) is the same URL.
    expect(mcpResourceMetadataUrl(server.config)).toBe(`${base}${MCP_PATH}`);
    await documentAt(MCP_PATH);
  });

  it('§3.3: describes resource exactly {base}/mcp', async () => {
    const body = await documentAt(MCP_PATH);
    expect(body['resource']).toBe(`${base}/mcp`);
    expect(body['resource']).toBe(server.config.mcpResource);
  });

  it('§2: offers every MCP scope but offline_access (every grant gets a refresh token), with this server as authorization server', async () => {
    const body = await documentAt(MCP_PATH);
    expect(body['scopes_supported']).toEqual(MCP_SCOPES.filter((scope) => scope !== 'offline_access'));
    expect(body['authorization_servers']).toEqual([base]);
    expect(body['bearer_methods_supported']).toEqual(['header']);
  });

  it('lets the MCP SDK client go from the /mcp URL to this server, the resource and the authorization server metadata', async () => {
    const info = await discoverOAuthServerInfo(server.config.mcpResource);
    expect(info.resourceMetadata?.resource).toBe(server.config.mcpResource);
    expect(info.authorizationServerUrl).toBe(base);
    expect(info.authorizationServerMetadata?.issuer).toBe(base);
    expect(info.authorizationServerMetadata?.registration_endpoint).toBe(`${base}/api/oauth/register`);
  });
});

describe('RFC 9728 documents for browser clients', () => {
  it.each([REST_PATH, MCP_PATH])('%s can be read from any origin, preflight included', async (path) => {
    const res = await call(server.url, 'GET', path, { headers: { origin: 'https://inspector.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const preflight = await corsPreflight(`${server.url}${path}`, {
      origin: 'https://inspector.example',
      method: 'GET',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
  });

  it.each([REST_PATH, MCP_PATH])('%s refuses methods other than GET with 405', async (path) => {
    const res = await call(server.url, 'POST', path, { body: {} });
    expect(res.status).toBe(405);
  });
});

describe('RFC 9728 with the MCP endpoint disabled', () => {
  it('has no MCP resource document, and still the REST one', async () => {
    const off = await startTestServer({ PACER_MCP_ENABLED: 'false' });
    try {
      expect((await call(off.url, 'GET', MCP_PATH)).status).toBe(404);
      expect((await call<Record<string, unknown>>(off.url, 'GET', REST_PATH)).body['resource']).toBe(
        off.config.baseUrl,
      );
    } finally {
      await off.stop();
    }
  });
});

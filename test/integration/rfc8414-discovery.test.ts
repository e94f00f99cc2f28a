import { discoverAuthorizationServerMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { SCOPES } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, corsPreflight } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/**
 * RFC 8414 authorization server metadata:
 * - §2 metadata fields (endpoints, scopes, response/grant types, client
 *   authentication methods per endpoint, PKCE methods from RFC 7636 §4.3);
 * - §3 the well-known URI, answered 200 with `application/json`;
 * - §3.3 the issuer is identical to the issuer the client started from
 *   (no trailing slash, docs/design.md §3);
 * - RFC 9207 §3 `authorization_response_iss_parameter_supported`.
 * The registration endpoint's absence when DCR is off is covered in
 * rfc7591-registration.test.ts. Also: CORS for browser-based clients, and
 * discovery by the MCP SDK's own client.
 */
const PATH = '/.well-known/oauth-authorization-server';

let server: TestServer;
let base: string;

beforeAll(async () => {
  server = await startTestServer();
  base = server.config.baseUrl;
});
afterAll(async () => {
  await server.stop();
});

const metadata = async () => {
  const res = await call<Record<string, unknown>>(server.url, 'GET', PATH);
  expect(res.status).toBe(200);
  return res;
};

describe('RFC 8414 authorization server metadata', () => {
  it('§3: is served as JSON at the well-known URI', async () => {
    const res = await metadata();
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(() => OAuthMetadataSchema.parse(res.body)).not.toThrow();
  });

  it('§3.3: names the base URL as issuer, exactly and without a trailing slash', async () => {
    const { body } = await metadata();
    expect(body['issuer']).toBe(base);
    expect(body['issuer']).not.toMatch(/\/$/);
  });

  it('§2: advertises every endpoint under the issuer, registration included while DCR is on', async () => {
    const { body } = await metadata();
    expect(body).toMatchObject({
      authorization_endpoint: `${base}/api/oauth/authorize`,
      token_endpoint: `${base}/api/oauth/token`,
      revocation_endpoint: `${base}/api/oauth/revoke`,
      introspection_endpoint: `${base}/api/oauth/introspect`,
      userinfo_endpoint: `${base}/api/oauth/userinfo`,
      registration_endpoint: `${base}/api/oauth/register`,
    });
  });

  it('§2: advertises the code flow with refresh tokens, query responses and PKCE S256 only', async () => {
    const { body } = await metadata();
    expect(body['response_types_supported']).toEqual(['code']);
    expect(body['response_modes_supported']).toEqual(['query']);
    expect(body['grant_types_supported']).toEqual(['authorization_code', 'refresh_token']);
    expect(body['code_challenge_methods_supported']).toEqual(['S256']);
  });

  it('§2: advertises every known scope', async () => {
    const { body } = await metadata();
    expect(body['scopes_supported']).toEqual([...SCOPES]);
  });

  it('§2: advertises client authentication per endpoint: public clients at token and revocation, not introspection', async () => {
    const { body } = await metadata();
    expect(body['token_endpoint_auth_methods_supported']).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'none',
    ]);
    expect(body['revocation_endpoint_auth_methods_supported']).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'none',
    ]);
    expect(body['introspection_endpoint_auth_methods_supported']).toEqual([
      'client_secret_basic',
      'client_secret_post',
    ]);
  });

  it('RFC 9207 §3: says authorization responses carry iss', async () => {
    const { body } = await metadata();
    expect(body['authorization_response_iss_parameter_supported']).toBe(true);
  });

  it('is found and accepted by the MCP SDK client starting from the issuer', async () => {
    const discovered = await discoverAuthorizationServerMetadata(base);
    expect(discovered?.issuer).toBe(base);
    expect(discovered?.token_endpoint).toBe(`${base}/api/oauth/token`);
  });

  it('can be read by browser clients of any origin, preflight included', async () => {
    const res = await call(server.url, 'GET', PATH, { headers: { origin: 'https://inspector.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const preflight = await corsPreflight(`${server.url}${PATH}`, {
      origin: 'https://inspector.example',
      method: 'GET',
      headers: 'mcp-protocol-version',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
  });

  it('may be cached for a short time', async () => {
    const { headers } = await metadata();
    expect(headers.get('cache-control')).toMatch(/max-age=\d+/);
  });

  it('refuses methods other than GET with 405', async () => {
    const res = await call(server.url, 'POST', PATH, { body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('GET');
  });
});

describe('RFC 8414 issuer behind a proxy', () => {
  it('§3.3: names the configured public base URL, trailing slash removed, not the address it listens on', async () => {
    const proxied = await startTestServer({ PACER_BASE_URL: 'https://pacer.example.com/' });
    try {
      const res = await call<Record<string, unknown>>(proxied.url, 'GET', PATH);
      expect(res.body['issuer']).toBe('https://pacer.example.com');
      expect(res.body['token_endpoint']).toBe('https://pacer.example.com/api/oauth/token');
    } finally {
      await proxied.stop();
    }
  });
});

/**
 * End to end with the MCP TypeScript SDK's own OAuth client (`auth()` from
 * @modelcontextprotocol/sdk/client/auth.js), as an AI assistant would connect:
 * protected-resource discovery for `{base}/mcp` (RFC 9728), authorization-server
 * metadata (RFC 8414), dynamic client registration (RFC 7591), PKCE (RFC 7636)
 * and `resource` (RFC 8707), up to tokens bound to `{base}/mcp` and a
 * rotating refresh token without `offline_access`, as real hosts ask.
 */
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../server/src/lib/crypto.ts';
import { call } from '../support/http.ts';
import { startSignedIn } from '../support/oauth-fixture.ts';
import { authorizeAs, refreshTokens, type CookieJar } from '../support/oauth-flow.ts';
import { MemoryOAuthProvider } from '../support/mcp-client.ts';
import type { TestServer } from '../support/test-server.ts';

let server: TestServer;
/** The session of the admin, who owns the clients the assistants register. */
let jar: CookieJar;

beforeAll(async () => {
  ({ server, jar } = await startSignedIn({ user: { admin: true } }));
});
afterAll(async () => {
  await server.stop();
});

/** What an MCP client keeps between the redirect and the callback. */
const newProvider = () => new MemoryOAuthProvider('http://127.0.0.1:47011/callback', 'health:read workout:read');

describe('MCP SDK client auth()', () => {
  it('discovers, registers, authorizes with PKCE and resource, and gets tokens bound to {base}/mcp with a refresh token', async () => {
    const provider = newProvider();
    const serverUrl = server.config.mcpResource;

    expect(await auth(provider, { serverUrl, scope: 'health:read workout:read' })).toBe('REDIRECT');
    expect(provider.client?.client_id).toBeTruthy();
    const authorizationUrl = provider.authorizationUrl;
    if (!authorizationUrl) throw new Error('auth() did not redirect');
    expect(authorizationUrl.searchParams.get('resource')).toBe(server.config.mcpResource);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');

    const approved = await authorizeAs(jar, authorizationUrl.toString());
    const code = approved.location?.searchParams.get('code');
    expect(approved.location?.searchParams.get('iss')).toBe(server.config.baseUrl);
    if (!code) throw new Error(`no code: ${approved.status} ${approved.body.slice(0, 200)}`);

    expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED');
    const tokens = provider.saved;
    expect(tokens?.access_token).toMatch(/^pat_/);
    expect(tokens?.refresh_token).toMatch(/^prt_/);
    expect(tokens?.scope).toBe('health:read workout:read');

    const stored = await server.db
      .selectFrom('oauthAccessTokens')
      .select('resource')
      .where('tokenHash', '=', sha256Hex(tokens?.access_token ?? ''))
      .executeTakeFirstOrThrow();
    expect(stored.resource).toBe(server.config.mcpResource);
    expect((await call(server.url, 'GET', '/api/wellness', { token: tokens?.access_token ?? '' })).status).toBe(401);

    // The refresh the SDK would do later: rotation, same resource.
    const refreshed = await refreshTokens(
      server.url,
      { clientId: String(provider.client?.client_id) },
      tokens?.refresh_token ?? '',
      { resource: server.config.mcpResource },
    );
    expect(refreshed.status).toBe(200);
    expect(refreshed.body['refresh_token']).not.toBe(tokens?.refresh_token);
  });

  it('a second assistant with the same redirect URI reuses the shared registered client', async () => {
    const first = newProvider();
    const second = newProvider();
    await auth(first, { serverUrl: server.config.mcpResource });
    await auth(second, { serverUrl: server.config.mcpResource });
    expect(second.client?.client_id).toBe(first.client?.client_id);
  });
});

/**
 * RFC 8252 (OAuth 2.0 for native apps) redirects at the authorization and
 * token endpoints, for clients registered through RFC 7591 as MCP hosts do:
 * - §7.1 private-use URI schemes: Cursor's `cursor://anysphere.cursor-mcp/…`
 *   (a known MCP host scheme with an authority) and the reverse-domain form
 *   `com.example.app:/callback` (no authority) get the code, `state` and
 *   `iss` (RFC 9207) on exactly the registered URI, and errors too;
 * - §7.3 loopback: the same shared client's loopback URI on another port;
 * - §8.1: the consent page names the scheme the user returns to, and a
 *   private-use URI that was not registered is never redirected to.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.ts';
import { startSignedIn } from '../support/oauth-fixture.ts';
import {
  authorizationRequest,
  authorizeAs,
  exchangeCode,
  pkcePair,
  type AuthorizeResult,
  type CookieJar,
} from '../support/oauth-flow.ts';
import type { TestServer } from '../support/test-server.ts';

const CURSOR_APP = 'cursor://anysphere.cursor-mcp/oauth/callback';
const CURSOR_REDIRECT_URIS = [
  CURSOR_APP,
  'https://www.cursor.com/agents/mcp/oauth/callback',
  'http://127.0.0.1:33418/callback',
];

let server: TestServer;
let jar: CookieJar;

beforeAll(async () => {
  ({ server, jar } = await startSignedIn({ env: { PACER_DCR_RATE_LIMIT_PER_HOUR: '0' }, user: { admin: true } }));
});
afterAll(async () => {
  await server.stop();
});

/** Register through `POST /api/oauth/register`, as the host does; answers the client id. */
async function registerDynamically(redirectUris: readonly string[], clientName = 'Cursor'): Promise<string> {
  const res = await call<{ client_id: string }>(server.url, 'POST', '/api/oauth/register', {
    body: { client_name: clientName, redirect_uris: redirectUris, token_endpoint_auth_method: 'none' },
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.client_id;
}

interface NativeAuthorization {
  readonly result: AuthorizeResult;
  readonly verifier: string;
}

async function authorizeNative(
  clientId: string,
  redirectUri: string,
  decision: 'approve' | 'deny' | 'stop' = 'approve',
): Promise<NativeAuthorization> {
  const { verifier, challenge } = pkcePair();
  const result = await authorizeAs(
    jar,
    authorizationRequest(
      server.url,
      { clientId, redirectUri },
      { state: 'native-state', code_challenge: challenge, resource: server.config.mcpResource, prompt: 'consent' },
    ),
    decision,
  );
  return { result, verifier };
}

describe('a private-use scheme with an authority (Cursor, RFC 8252 §7.1)', () => {
  let clientId: string;

  beforeAll(async () => {
    clientId = await registerDynamically(CURSOR_REDIRECT_URIS);
  });

  it('the consent page renders and names the app scheme the user returns to', async () => {
    const { result } = await authorizeNative(clientId, CURSOR_APP, 'stop');
    expect(result.status).toBe(200);
    expect(result.body).toContain('cursor://anysphere.cursor-mcp');
    expect(result.body).toContain('name="redirect_uri" value="cursor://anysphere.cursor-mcp/oauth/callback"');
  });

  it('approval redirects to exactly the registered cursor:// URI with code, state and iss; the code exchanges for tokens', async () => {
    const { result, verifier } = await authorizeNative(clientId, CURSOR_APP);
    expect(result.status).toBe(303);
    const location = result.location?.toString() ?? '';
    expect(location.startsWith(`${CURSOR_APP}?code=`)).toBe(true);
    expect(result.location?.searchParams.get('state')).toBe('native-state');
    expect(result.location?.searchParams.get('iss')).toBe(server.config.baseUrl);

    const tokens = await exchangeCode(
      server.url,
      { clientId, redirectUri: CURSOR_APP },
      { code: result.location?.searchParams.get('code') ?? '', verifier },
      { resource: server.config.mcpResource },
    );
    expect(tokens.status).toBe(200);
    expect(tokens.body['access_token']).toMatch(/^pat_/);
    expect(tokens.body['refresh_token']).toMatch(/^prt_/);
  });

  it('a denial goes back to the cursor:// URI as access_denied with state and iss', async () => {
    const { result } = await authorizeNative(clientId, CURSOR_APP, 'deny');
    expect(result.status).toBe(303);
    expect(result.location?.toString().startsWith(`${CURSOR_APP}?error=access_denied`)).toBe(true);
    expect(result.location?.searchParams.get('state')).toBe('native-state');
    expect(result.location?.searchParams.get('iss')).toBe(server.config.baseUrl);
  });

  it("the same client's https callback and its loopback URI on another port (§7.3) work as well", async () => {
    const https = await authorizeNative(clientId, 'https://www.cursor.com/agents/mcp/oauth/callback');
    expect(https.result.location?.toString()).toMatch(
      /^https:\/\/www\.cursor\.com\/agents\/mcp\/oauth\/callback\?code=/,
    );
    const loopback = await authorizeNative(clientId, 'http://127.0.0.1:50999/callback');
    expect(loopback.result.location?.toString()).toMatch(/^http:\/\/127\.0\.0\.1:50999\/callback\?code=/);
  });

  it.each([
    ['another path', 'cursor://anysphere.cursor-mcp/oauth/other'],
    ['another authority', 'cursor://evil.example/oauth/callback'],
    ['a trailing slash', `${CURSOR_APP}/`],
  ])('an unregistered cursor:// URI (%s) gets the error page, never a redirect', async (_case, redirectUri) => {
    const { result } = await authorizeNative(clientId, redirectUri, 'stop');
    expect(result.status).toBe(400);
    expect(result.location).toBeUndefined();
  });
});

describe('a reverse-domain private-use scheme without an authority (RFC 8252 §7.1)', () => {
  const redirectUri = `com.example.app:/oauth2redirect/${randomBytes(4).toString('hex')}`;
  let clientId: string;

  beforeAll(async () => {
    clientId = await registerDynamically([redirectUri], 'Native app');
  });

  it('shows the scheme on the consent page and redirects to the URI with code, state and iss', async () => {
    const page = await authorizeNative(clientId, redirectUri, 'stop');
    expect(page.result.status).toBe(200);
    expect(page.result.body).toContain('<strong>com.example.app:</strong>');

    const { result } = await authorizeNative(clientId, redirectUri);
    expect(result.status).toBe(303);
    expect(result.location?.toString().startsWith(`${redirectUri}?code=`)).toBe(true);
    expect(result.location?.searchParams.get('state')).toBe('native-state');
    expect(result.location?.searchParams.get('iss')).toBe(server.config.baseUrl);
  });
});

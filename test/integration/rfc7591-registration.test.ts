import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { discoverAuthorizationServerMetadata, registerClient } from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthClientInformationFullSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { MCP_SCOPES } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../server/src/db/database.ts';
import type { OauthClient, User } from '../../server/src/db/tables.ts';
import { insertDcrClientIfMissing } from '../../server/src/modules/oauth/client.repository.ts';
import { DCR_AUTH_METHODS, registrationKeyOf } from '../../server/src/modules/oauth/registration.service.ts';
import { consumeRateLimit } from '../../server/src/modules/rate-limit/rate-limit.service.ts';
import { makeUser } from '../support/factories.ts';
import { asProblem, call, corsPreflight, type JsonResponse } from '../support/http.ts';
import {
  authorizationRequest,
  authorizeAs,
  clientRequest,
  type ClientAuth,
  type CookieJar,
  exchangeCode,
  pkcePair,
  registerClient as registerOperatorApp,
  type RequestingClient,
  signIn,
} from '../support/oauth-flow.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/**
 * RFC 7591 dynamic client registration at `POST /api/oauth/register`:
 * - §2 client metadata: `redirect_uris`, `client_name` (optional: a name is
 *   derived from the redirect URIs), `token_endpoint_auth_method` (`none`,
 *   the default here, or `client_secret_post` / `client_secret_basic`, which
 *   get a secret of their own that then authenticates at the token,
 *   revocation and introspection endpoints; others refused),
 *   `grant_types` / `response_types` and their §2.1 consistency, `scope`
 *   (known scopes of the MCP allowlist, specification §5.3); metadata the
 *   server does not understand is ignored;
 * - §3.1 the JSON request;
 * - §3.2.1 the 201 response with the registered metadata;
 * - §3.2.2 the error response (`invalid_redirect_uri`,
 *   `invalid_client_metadata`).
 * Redirect URIs (RFC 8252 §7): https, http on loopback, and private-use
 * schemes in reverse-domain form (§7.1, §8.4) or of a known MCP host, so the
 * registrations Cursor, Claude and ChatGPT send are accepted as they are.
 * Pacer's rules (specification §4.2, §5.4): one shared public client per client name
 * and normalized redirect-URI set (loopback ports ignored, RFC 8252 §7.3), never
 * a shared confidential one, no remembered consent for a confidential DCR client
 * sent to a loopback redirect (RFC 6749 §10.2, RFC 8252 §8.6),
 * also under concurrent registrations (other names: hostile-consent.test.ts); owner order (owner user id, owner e-mail, first
 * admin) and 503 `temporarily_unavailable` without one; DCR disabled -> 404
 * and no `registration_endpoint` in RFC 8414 metadata; a per-IP rate limit
 * held in PostgreSQL, shared by two server processes.
 */
const REGISTER = '/api/oauth/register';

interface Registration {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: string;
  scope: string;
  client_secret?: string;
  client_secret_expires_at?: number;
}
interface RegistrationFailure {
  error: string;
  error_description: string;
}

const register = <T = Registration>(baseUrl: string, body: unknown): Promise<JsonResponse<T>> =>
  call<T>(baseUrl, 'POST', REGISTER, { body });

/** A redirect URI no other test uses, so each registration starts a new shared client. */
const uniqueUri = (path = '/callback') => `https://app-${randomBytes(4).toString('hex')}.example${path}`;

const dcrClients = (db: Db): Promise<OauthClient[]> =>
  db.selectFrom('oauthClients').selectAll().where('kind', '=', 'dcr').execute();

const clientById = (db: Db, clientId: string): Promise<OauthClient> =>
  db.selectFrom('oauthClients').selectAll().where('clientId', '=', clientId).executeTakeFirstOrThrow();

let server: TestServer;
let admin: User;

beforeAll(async () => {
  // The rate limit has its own tests below; here every request comes from 127.0.0.1.
  server = await startTestServer({ PACER_DCR_RATE_LIMIT_PER_HOUR: '0' });
  admin = await makeUser(server.db, { admin: true });
});
afterAll(async () => {
  await server.stop();
});

describe('RFC 7591 registration of a public MCP client', () => {
  it('§3.2.1: answers 201 with the registered metadata and stores a public DCR client with the MCP allowlist', async () => {
    const redirectUri = uniqueUri();
    const before = Math.floor(Date.now() / 1000);
    const res = await register(server.url, { client_name: 'Claude', redirect_uris: [redirectUri] });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      client_id: expect.any(String),
      client_id_issued_at: expect.any(Number),
      client_name: 'Claude',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: MCP_SCOPES.join(' '),
    });
    expect(res.body.client_id_issued_at).toBeGreaterThanOrEqual(before - 5);
    expect(() => OAuthClientInformationFullSchema.parse(res.body)).not.toThrow();

    const stored = await clientById(server.db, res.body.client_id);
    expect(stored).toMatchObject({
      kind: 'dcr',
      isPublic: true,
      clientSecretHash: null,
      name: 'Claude',
      redirectUris: [redirectUri],
      scopes: [...MCP_SCOPES],
      ownerUserId: admin.id,
    });
  });

  it('accepts the registration the MCP SDK client sends after discovery', async () => {
    const metadata = await discoverAuthorizationServerMetadata(server.config.baseUrl);
    const information = await registerClient(server.config.baseUrl, {
      metadata,
      clientMetadata: {
        client_name: 'SDK client',
        redirect_uris: ['http://localhost:33418/oauth/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      scope: 'profile:read workout:read offline_access',
    });
    expect(information.client_id).toMatch(/^pc_/);
    expect(information.client_secret).toBeUndefined();
  });

  it('§2: ignores metadata it does not understand', async () => {
    const res = await register(server.url, {
      client_name: 'Fancy client',
      redirect_uris: [uniqueUri()],
      logo_uri: 'https://fancy.example/logo.png',
      software_id: 'fancy',
      contacts: ['ops@fancy.example'],
    });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('logo_uri');
  });

  it('§2: registers an omitted token_endpoint_auth_method as "none"', async () => {
    const res = await register(server.url, { client_name: 'Quiet client', redirect_uris: [uniqueUri()] });
    expect(res.status).toBe(201);
    expect(res.body.token_endpoint_auth_method).toBe('none');
  });

  it.each(['http://127.0.0.1:8080/cb', 'http://[::1]:8080/cb', 'http://localhost/cb'])(
    'accepts the http loopback redirect URI %s (RFC 8252 §7.3)',
    async (redirectUri) => {
      const res = await register(server.url, {
        client_name: 'Native app',
        redirect_uris: [redirectUri, uniqueUri()],
      });
      expect(res.status).toBe(201);
    },
  );

  it("accepts Cursor's registration: its app scheme, its https callback and a loopback URI in one request", async () => {
    const redirectUris = [
      'cursor://anysphere.cursor-mcp/oauth/callback',
      'https://www.cursor.com/agents/mcp/oauth/callback',
      'http://127.0.0.1:33418/callback',
    ];
    const res = await register(server.url, {
      client_name: 'Cursor',
      redirect_uris: redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(res.status).toBe(201);
    expect(res.body.redirect_uris).toEqual(redirectUris);
    expect(() => OAuthClientInformationFullSchema.parse(res.body)).not.toThrow();
    const stored = await clientById(server.db, res.body.client_id);
    expect(stored.redirectUris).toEqual(expect.arrayContaining(redirectUris));
  });

  it.each([
    ['Claude', 'https://claude.ai/api/mcp/auth_callback'],
    ['ChatGPT', 'https://chatgpt.com/connector_platform_oauth_redirect'],
  ])('accepts the https callback of %s', async (clientName, redirectUri) => {
    const res = await register(server.url, {
      client_name: clientName,
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
    });
    expect(res.status).toBe(201);
    expect(res.body.redirect_uris).toEqual([redirectUri]);
  });

  it.each([
    'com.example.app:/callback',
    'com.example.app://oauth/callback',
    'vscode://vscode.github-authentication/did-authenticate',
    'vscode-insiders://vscode.github-authentication/did-authenticate',
    'windsurf://codeium.windsurf/mcp-oauth',
    'zed://oauth/callback',
    'claude://claude.ai/oauth/callback',
  ])('accepts the private-use scheme redirect URI %s (RFC 8252 §7.1)', async (redirectUri) => {
    const res = await register(server.url, { client_name: 'Desktop app', redirect_uris: [redirectUri] });
    expect(res.status).toBe(201);
    expect(res.body.redirect_uris).toEqual([redirectUri]);
  });

  it('answers a browser preflight so web-based clients can register', async () => {
    const res = await corsPreflight(`${server.url}${REGISTER}`, {
      origin: 'https://inspector.example',
      method: 'POST',
      headers: 'content-type',
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
  });

  it('refuses methods other than POST with 405', async () => {
    const res = await call(server.url, 'GET', REGISTER);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('POST');
  });
});

describe('RFC 7591 §3.2.2 refusals', () => {
  const valid = () => ({ client_name: 'Refused client', redirect_uris: [uniqueUri()] });

  const expectRefused = async (body: unknown, error: string) => {
    const before = (await dcrClients(server.db)).length;
    const res = await register<RegistrationFailure>(server.url, body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.error).toBe(error);
    expect(res.body.error_description).toEqual(expect.any(String));
    expect((await dcrClients(server.db)).length).toBe(before);
  };

  it.each<[string, unknown]>([
    ['no redirect_uris', undefined],
    ['an empty redirect_uris', []],
    ['redirect_uris that is not an array', 'https://app.example/cb'],
    ['more than 10 redirect URIs', Array.from({ length: 11 }, (_, i) => `https://app.example/cb${i}`)],
    ['a relative redirect URI', ['/callback']],
    ['a redirect URI that is not a string', [42]],
    ['a non-loopback http redirect URI', ['http://app.example/cb']],
    ['a redirect URI with a fragment', ['https://app.example/cb#frag']],
    ['a redirect URI with surrounding whitespace', [' https://app.example/cb']],
    ['a javascript: redirect URI', ['javascript:alert(1)']],
    ['a data: redirect URI', ['data:text/html,<script>alert(1)</script>']],
    ['a file: redirect URI', ['file:///x']],
    ['a vbscript: redirect URI', ['vbscript:msgbox(1)']],
    ['an http redirect URI to another host', ['http://evil.example/cb']],
    ['a private-use scheme without a period that is not a known MCP host (RFC 8252 §8.4)', ['foo://x']],
    ['a private-use scheme with an empty label', ['com..example:/cb']],
    ['a private-use redirect URI with a fragment', ['com.example.app:/cb#x']],
    ['one refused URI among accepted ones', ['cursor://anysphere.cursor-mcp/oauth/callback', 'javascript:alert(1)']],
  ])('%s: invalid_redirect_uri', async (_case, redirectUris) => {
    await expectRefused({ client_name: 'Refused client', redirect_uris: redirectUris }, 'invalid_redirect_uri');
  });

  it.each<[string, Record<string, unknown>]>([
    ['an empty client_name', { client_name: '  ' }],
    ['a client_name over 200 characters', { client_name: 'x'.repeat(201) }],
    ['a client_name that is not a string', { client_name: 7 }],
    ['token_endpoint_auth_method private_key_jwt', { token_endpoint_auth_method: 'private_key_jwt' }],
    ['token_endpoint_auth_method client_secret_jwt', { token_endpoint_auth_method: 'client_secret_jwt' }],
    ['token_endpoint_auth_method tls_client_auth', { token_endpoint_auth_method: 'tls_client_auth' }],
    ['a token_endpoint_auth_method that is not a string', { token_endpoint_auth_method: ['client_secret_post'] }],
    ['a token_endpoint_auth_method in another case', { token_endpoint_auth_method: 'Client_Secret_Post' }],
    ['grant type client_credentials', { grant_types: ['authorization_code', 'client_credentials'] }],
    ['grant type implicit', { grant_types: ['implicit'] }],
    ['grant types without authorization_code for response type code (§2.1)', { grant_types: ['refresh_token'] }],
    ['an empty grant_types', { grant_types: [] }],
    ['response type token', { response_types: ['token'] }],
    ['an unknown scope', { scope: 'profile:read admin:everything' }],
    ['a scope that is not a string', { scope: ['profile:read'] }],
  ])('%s: invalid_client_metadata', async (_case, override) => {
    await expectRefused({ ...valid(), ...override }, 'invalid_client_metadata');
  });

  it('a body that is not a JSON object: invalid_client_metadata', async () => {
    await expectRefused([valid()], 'invalid_client_metadata');
    const broken = await call<RegistrationFailure>(server.url, 'POST', REGISTER, { rawBody: '{"client_name":' });
    expect(broken.status).toBe(400);
    expect(broken.body.error).toBe('invalid_client_metadata');
  });

  it('§3.1: a body that is not application/json: invalid_client_metadata', async () => {
    const res = await call<RegistrationFailure>(server.url, 'POST', REGISTER, {
      rawBody: 'client_name=x',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
  });
});

describe('shared clients per client name and redirect-URI set (specification §4.2)', () => {
  it('a second registration with the same name and redirect URIs gets the same client', async () => {
    const redirectUris = [uniqueUri()];
    const first = await register(server.url, { client_name: 'Repeat host', redirect_uris: redirectUris });
    const second = await register(server.url, { client_name: 'Repeat host', redirect_uris: redirectUris });
    expect(second.status).toBe(201);
    expect(second.body.client_id).toBe(first.body.client_id);
    expect(second.body.client_id_issued_at).toBe(first.body.client_id_issued_at);
  });

  it('the same redirect URIs under another name (or another letter case) get a client of their own, with that name', async () => {
    const redirectUris = [uniqueUri()];
    const first = await register(server.url, { client_name: 'First name', redirect_uris: redirectUris });
    const second = await register(server.url, { client_name: 'Second name', redirect_uris: redirectUris });
    const otherCase = await register(server.url, { client_name: 'first name', redirect_uris: redirectUris });
    expect(new Set([first.body.client_id, second.body.client_id, otherCase.body.client_id]).size).toBe(3);
    expect(second.body.client_name).toBe('Second name');
    expect((await clientById(server.db, second.body.client_id)).name).toBe('Second name');
    expect((await clientById(server.db, first.body.client_id)).name).toBe('First name');
  });

  it('loopback redirect URIs that differ only in port share the client, and the port is not stored again', async () => {
    const path = `/cb-${randomBytes(4).toString('hex')}`;
    const first = await register(server.url, { client_name: 'CLI', redirect_uris: [`http://127.0.0.1:1234${path}`] });
    const second = await register(server.url, { client_name: 'CLI', redirect_uris: [`http://127.0.0.1:5678${path}`] });
    expect(second.body.client_id).toBe(first.body.client_id);
    expect(second.body.redirect_uris).toEqual([`http://127.0.0.1:5678${path}`]);
    expect((await clientById(server.db, first.body.client_id)).redirectUris).toEqual([`http://127.0.0.1:1234${path}`]);
  });

  it('the same set in another order, with duplicates and another host case, shares the client and registers that spelling', async () => {
    const a = uniqueUri('/a');
    const b = uniqueUri('/b');
    const upperB = b.replace('https://app-', 'https://APP-');
    const first = await register(server.url, { client_name: 'Set', redirect_uris: [a, b] });
    const second = await register(server.url, { client_name: 'Set', redirect_uris: [upperB, a, a] });
    expect(second.body.client_id).toBe(first.body.client_id);
    expect(second.body.redirect_uris).toEqual([upperB, a]);
    // The authorize endpoint compares exact strings, so the new spelling is added.
    expect((await clientById(server.db, first.body.client_id)).redirectUris).toEqual([a, b, upperB]);
  });

  it('private-use redirect URIs differing only in scheme or host case share the client; another path does not', async () => {
    const path = `/oauth/callback-${randomBytes(4).toString('hex')}`;
    const withAuthority = await register(server.url, {
      client_name: 'App scheme',
      redirect_uris: [`cursor://anysphere.cursor-mcp${path}`],
    });
    const otherCase = await register(server.url, {
      client_name: 'App scheme',
      redirect_uris: [`Cursor://AnySphere.cursor-mcp${path}`],
    });
    expect(otherCase.body.client_id).toBe(withAuthority.body.client_id);

    const withoutAuthority = await register(server.url, {
      client_name: 'Reverse-domain scheme',
      redirect_uris: [`com.example.app:${path}`],
    });
    const upperScheme = await register(server.url, {
      client_name: 'Reverse-domain scheme',
      redirect_uris: [`COM.Example.App:${path}`],
    });
    expect(upperScheme.body.client_id).toBe(withoutAuthority.body.client_id);
    expect(withoutAuthority.body.client_id).not.toBe(withAuthority.body.client_id);

    const otherPath = await register(server.url, {
      client_name: 'Reverse-domain scheme',
      redirect_uris: [`com.example.app:${path.toUpperCase()}`],
    });
    expect(otherPath.body.client_id).not.toBe(withoutAuthority.body.client_id);
  });

  it('a different set (a subset, another path) gets its own client', async () => {
    const a = uniqueUri();
    const b = uniqueUri();
    const pair = await register(server.url, { client_name: 'Pair', redirect_uris: [a, b] });
    const single = await register(server.url, { client_name: 'Single', redirect_uris: [a] });
    const otherPath = await register(server.url, { client_name: 'Other', redirect_uris: [a.toUpperCase()] });
    expect(new Set([pair.body.client_id, single.body.client_id, otherPath.body.client_id]).size).toBe(3);
  });

  it('concurrent identical registrations create exactly one client', async () => {
    const redirectUris = [uniqueUri(), 'http://127.0.0.1:9000/callback'];
    const before = (await dcrClients(server.db)).length;
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => register(server.url, { client_name: 'Racer', redirect_uris: redirectUris })),
    );
    expect(responses.map((res) => res.status)).toEqual(Array.from({ length: 20 }, () => 201));
    expect(new Set(responses.map((res) => res.body.client_id)).size).toBe(1);
    expect((await dcrClients(server.db)).length).toBe(before + 1);
  });

  it('a registration that loses the race to the unique index gets the winner (the insert yields, never duplicates)', async () => {
    const redirectUris = [uniqueUri()];
    const registrationKey = registrationKeyOf({ redirectUris, clientName: 'Late' });
    // The winner's row lands between the loser's lookup and its insert.
    const winner = await insertDcrClientIfMissing(server.db, {
      clientId: `pc_race_${randomBytes(4).toString('hex')}`,
      name: 'Late',
      ownerUserId: admin.id,
      kind: 'dcr',
      isPublic: true,
      redirectUris,
      scopes: [...MCP_SCOPES],
      registrationKey,
    });
    const loser = await insertDcrClientIfMissing(server.db, {
      clientId: `pc_race_${randomBytes(4).toString('hex')}`,
      name: 'Late',
      ownerUserId: admin.id,
      kind: 'dcr',
      isPublic: true,
      redirectUris,
      scopes: [...MCP_SCOPES],
      registrationKey,
    });
    expect(winner).toBeDefined();
    expect(loser).toBeUndefined();
    const res = await register(server.url, { client_name: 'Late', redirect_uris: redirectUris });
    expect(res.body.client_id).toBe(winner?.clientId);
  });
});

describe('owner of registered clients (specification §4.2)', () => {
  let owners: TestServer;
  let firstAdmin: User;
  let ownerById: User;
  let ownerByEmail: User;

  beforeAll(async () => {
    owners = await startTestServer({ PACER_DCR_RATE_LIMIT_PER_HOUR: '0' });
    firstAdmin = await makeUser(owners.db, { admin: true });
    await makeUser(owners.db, { admin: true }); // a later admin never wins
    ownerById = await makeUser(owners.db);
    ownerByEmail = await makeUser(owners.db);
  });
  afterAll(async () => {
    await owners.stop();
  });

  /** Register through a second server on the same database, started with these owner settings. */
  const ownerWith = async (env: Record<string, string>): Promise<string | null> => {
    const configured = await startTestServer(
      { PACER_DCR_RATE_LIMIT_PER_HOUR: '0', ...env },
      { database: owners.database },
    );
    try {
      const res = await register(configured.url, { client_name: 'Owned', redirect_uris: [uniqueUri()] });
      expect(res.status).toBe(201);
      return (await clientById(owners.db, res.body.client_id)).ownerUserId;
    } finally {
      await configured.stop();
    }
  };

  it('is the first admin when no owner is configured', async () => {
    const res = await register(owners.url, { client_name: 'Owned', redirect_uris: [uniqueUri()] });
    expect((await clientById(owners.db, res.body.client_id)).ownerUserId).toBe(firstAdmin.id);
  });

  it('is the PACER_MCP_DCR_OWNER_USER_ID user, before the e-mail setting and the admin', async () => {
    expect(
      await ownerWith({
        PACER_MCP_DCR_OWNER_USER_ID: ownerById.id,
        PACER_MCP_DCR_OWNER_EMAIL: ownerByEmail.email,
      }),
    ).toBe(ownerById.id);
  });

  it('is the PACER_MCP_DCR_OWNER_EMAIL user (any letter case), before the admin', async () => {
    expect(await ownerWith({ PACER_MCP_DCR_OWNER_EMAIL: ownerByEmail.email.toUpperCase() })).toBe(ownerByEmail.id);
  });

  it('skips an owner user id that names no user and takes the e-mail setting', async () => {
    expect(
      await ownerWith({ PACER_MCP_DCR_OWNER_USER_ID: randomUUID(), PACER_MCP_DCR_OWNER_EMAIL: ownerByEmail.email }),
    ).toBe(ownerByEmail.id);
  });

  it('falls back to the first admin when both settings name nobody', async () => {
    expect(
      await ownerWith({
        PACER_MCP_DCR_OWNER_USER_ID: randomUUID(),
        PACER_MCP_DCR_OWNER_EMAIL: 'nobody@example.test',
      }),
    ).toBe(firstAdmin.id);
  });

  it('answers 503 temporarily_unavailable, storing nothing, when there is no active admin and no owner setting resolves', async () => {
    const lonely = await startTestServer({
      PACER_DCR_RATE_LIMIT_PER_HOUR: '0',
      PACER_MCP_DCR_OWNER_EMAIL: 'nobody@example.test',
    });
    try {
      // An admin, deactivated, owns nothing.
      const former = await makeUser(lonely.db, { admin: true });
      await lonely.db.updateTable('users').set({ active: false }).where('id', '=', former.id).execute();
      const res = await register<RegistrationFailure>(lonely.url, {
        client_name: 'Orphan',
        redirect_uris: [uniqueUri()],
      });
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('temporarily_unavailable');
      expect(res.body.error_description).toMatch(/admin/);
      expect(await dcrClients(lonely.db)).toEqual([]);
    } finally {
      await lonely.stop();
    }
  });
});

describe('with dynamic client registration disabled', () => {
  it('the registration endpoint does not exist and RFC 8414 metadata has no registration_endpoint', async () => {
    const off = await startTestServer({ PACER_MCP_DCR_ENABLED: 'false' });
    try {
      await makeUser(off.db, { admin: true });
      const res = await register(off.url, { client_name: 'Nope', redirect_uris: [uniqueUri()] });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(asProblem(res.body).code).toBe('not_found');
      const metadata = await call<Record<string, unknown>>(off.url, 'GET', '/.well-known/oauth-authorization-server');
      expect(metadata.status).toBe(200);
      expect(metadata.body).not.toHaveProperty('registration_endpoint');
      expect(await dcrClients(off.db)).toEqual([]);
    } finally {
      await off.stop();
    }
  });
});

describe('rate limit per IP (PACER_DCR_RATE_LIMIT_PER_HOUR)', () => {
  it('is shared by two server processes on one database: the fourth registration of three allowed gets 429 with Retry-After', async () => {
    const first = await startTestServer({ PACER_DCR_RATE_LIMIT_PER_HOUR: '3' });
    const second = await startTestServer({ PACER_DCR_RATE_LIMIT_PER_HOUR: '3' }, { database: first.database });
    try {
      await makeUser(first.db, { admin: true });
      const attempt = (target: TestServer) =>
        register<Registration & RegistrationFailure>(target.url, {
          client_name: 'Busy',
          redirect_uris: [uniqueUri()],
        });

      const allowed = [await attempt(first), await attempt(second), await attempt(first)];
      expect(allowed.map((res) => res.status)).toEqual([201, 201, 201]);
      expect(allowed.map((res) => res.headers.get('ratelimit-remaining'))).toEqual(['2', '1', '0']);
      expect(allowed[0]?.headers.get('ratelimit-limit')).toBe('3');

      for (const target of [second, first]) {
        const refused = await attempt(target);
        expect(refused.status).toBe(429);
        expect(refused.body.error).toBe('too_many_requests');
        const retryAfter = Number(refused.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThan(0);
        expect(retryAfter).toBeLessThanOrEqual(3600);
      }
      expect(await dcrClients(first.db)).toHaveLength(3);
    } finally {
      await second.stop();
      await first.stop();
    }
  });

  it('counts refused registrations too', async () => {
    const limited = await startTestServer({ PACER_DCR_RATE_LIMIT_PER_HOUR: '2' });
    try {
      await makeUser(limited.db, { admin: true });
      expect(
        (await register(limited.url, { client_name: 'Bad', redirect_uris: ['http://bad.example/cb'] })).status,
      ).toBe(400);
      expect((await register(limited.url, { client_name: 'Ok', redirect_uris: [uniqueUri()] })).status).toBe(201);
      expect((await register(limited.url, { client_name: 'Ok', redirect_uris: [uniqueUri()] })).status).toBe(429);
    } finally {
      await limited.stop();
    }
  });

  it('opens a new window once the old one has ended', async () => {
    const limited = await startTestServer({ PACER_DCR_RATE_LIMIT_PER_HOUR: '1' });
    try {
      await makeUser(limited.db, { admin: true });
      const attempt = () => register(limited.url, { client_name: 'Hourly', redirect_uris: [uniqueUri()] });
      expect((await attempt()).status).toBe(201);
      expect((await attempt()).status).toBe(429);
      // An hour passes (for this counter).
      await limited.db
        .updateTable('rateLimitCounters')
        .set({ expiresAt: new Date(Date.now() - 1000), windowStartedAt: new Date(Date.now() - 3_601_000) })
        .execute();
      const next = await attempt();
      expect(next.status).toBe(201);
      expect(next.headers.get('ratelimit-remaining')).toBe('0');
    } finally {
      await limited.stop();
    }
  });

  it('counts concurrent hits atomically: each caller sees its own count', async () => {
    const key = `test:${randomBytes(4).toString('hex')}`;
    const results = await Promise.all(
      Array.from({ length: 15 }, () => consumeRateLimit(server.db, { key, limit: 10, windowSecs: 60 })),
    );
    expect(results.filter((result) => result.allowed)).toHaveLength(10);
    expect(results.map((result) => result.remaining).sort((x, y) => x - y)).toEqual([
      0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
  });

  it('0 turns it off: no limit and no RateLimit headers', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 25; i += 1) {
      const res = await register(server.url, { client_name: 'Unlimited', redirect_uris: [uniqueUri()] });
      statuses.push(res.status);
      expect(res.headers.get('ratelimit-limit')).toBeNull();
    }
    expect(new Set(statuses)).toEqual(new Set([201]));
  });
});

describe('RFC 7591 registration of a confidential client (client_secret_post, client_secret_basic)', () => {
  let jar: CookieJar;
  beforeAll(async () => {
    jar = await signIn(server.url, admin.email);
  });

  const registerConfidential = async (method: string, redirectUri: string, clientName = 'Secret client') => {
    const res = await register(server.url, {
      client_name: clientName,
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: method,
    });
    expect(res.status).toBe(201);
    return res.body;
  };
  const asClient = (registration: Registration): RequestingClient => ({
    clientId: registration.client_id,
    clientSecret: registration.client_secret,
  });
  /** The signed-in admin opens the MCP authorization request of `clientId`; `decision` on a consent page. */
  const authorize = (
    clientId: string,
    redirectUri: string,
    decision: 'approve' | 'stop',
    extra: Record<string, string> = {},
  ) =>
    authorizeAs(
      jar,
      authorizationRequest(
        server.url,
        { clientId, redirectUri },
        { scope: 'health:read', resource: server.config.mcpResource, ...extra },
      ),
      decision,
    );
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

  it.each(['client_secret_post', 'client_secret_basic'])(
    '§3.2.1: %s gets a secret, answered once with client_secret_expires_at 0 and stored only as its SHA-256 hash',
    async (method) => {
      const redirectUri = uniqueUri();
      const res = await register(server.url, {
        client_name: 'Simple OAuth MCP Client',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: method,
      });
      expect(res.status).toBe(201);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.body).toEqual({
        client_id: expect.stringMatching(/^pc_/),
        client_id_issued_at: expect.any(Number),
        client_name: 'Simple OAuth MCP Client',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: method,
        scope: MCP_SCOPES.join(' '),
        client_secret: expect.stringMatching(/^pcs_.{32,}/),
        client_secret_expires_at: 0,
      });
      expect(() => OAuthClientInformationFullSchema.parse(res.body)).not.toThrow();

      const stored = await clientById(server.db, res.body.client_id);
      expect(stored).toMatchObject({ kind: 'dcr', isPublic: false, scopes: [...MCP_SCOPES], ownerUserId: admin.id });
      expect(stored.clientSecretHash).toBe(sha256(res.body.client_secret ?? ''));
      expect(JSON.stringify(stored)).not.toContain(res.body.client_secret);
    },
  );

  it.each<[string, ClientAuth]>([
    ['client_secret_post', 'post'],
    ['client_secret_basic', 'basic'],
  ])(
    'a client registered with %s exchanges its code, refreshes, introspects and revokes with its secret; a wrong or missing secret is 401 invalid_client',
    async (method, clientAuth) => {
      const redirectUri = uniqueUri();
      const registration = await registerConfidential(method, redirectUri);
      const client = { ...asClient(registration), redirectUri };
      const { verifier, challenge } = pkcePair();
      const approved = await authorize(client.clientId, redirectUri, 'approve', { code_challenge: challenge });
      const code = approved.location?.searchParams.get('code');
      if (!code) throw new Error(`no code: ${approved.status} ${approved.body.slice(0, 300)}`);
      const grant = { code, verifier };
      const resource = { resource: server.config.mcpResource };

      const wrong = await exchangeCode(server.url, { ...client, clientSecret: 'pcs_wrong' }, grant, resource, {
        clientAuth,
      });
      expect(wrong.status).toBe(401);
      expect(wrong.body['error']).toBe('invalid_client');
      const missing = await exchangeCode(server.url, client, grant, resource, { clientAuth: 'none' });
      expect(missing.status).toBe(401);
      expect(missing.body['error']).toBe('invalid_client');

      const tokens = await exchangeCode(server.url, client, grant, resource, { clientAuth });
      expect(tokens.status).toBe(200);
      const accessToken = String(tokens.body['access_token']);
      const refreshed = await clientRequest(
        server.url,
        client,
        { grant_type: 'refresh_token', refresh_token: String(tokens.body['refresh_token']) },
        { clientAuth },
      );
      expect(refreshed.status).toBe(200);
      const newAccess = String(refreshed.body['access_token']);

      const introspect = (token: string) =>
        clientRequest(server.url, client, { token }, { clientAuth, form: true, path: '/api/oauth/introspect' });
      expect((await introspect(newAccess)).body).toMatchObject({ active: true, client_id: client.clientId });
      const revoked = await clientRequest(
        server.url,
        client,
        { token: newAccess },
        { clientAuth, form: true, path: '/api/oauth/revoke' },
      );
      expect(revoked.status).toBe(200);
      expect((await introspect(newAccess)).body).toEqual({ active: false });
      expect((await introspect(accessToken)).body).toEqual({ active: false });
      const strangerIntrospects = await clientRequest(
        server.url,
        { ...client, clientSecret: 'pcs_wrong' },
        { token: newAccess },
        { clientAuth, form: true, path: '/api/oauth/introspect' },
      );
      expect(strangerIntrospects.status).toBe(401);
    },
  );

  it('is never shared: an exact repeat gets another client and secret, and public registrations of the same name and URIs get neither', async () => {
    const redirectUri = `http://127.0.0.1:8090/callback-${randomBytes(4).toString('hex')}`;
    const first = await registerConfidential('client_secret_post', redirectUri, 'Twin client');
    const second = await registerConfidential('client_secret_post', redirectUri, 'Twin client');
    const basic = await registerConfidential('client_secret_basic', redirectUri, 'Twin client');
    const ids = [first.client_id, second.client_id, basic.client_id];
    expect(new Set(ids).size).toBe(3);
    expect(new Set([first.client_secret, second.client_secret, basic.client_secret]).size).toBe(3);

    // One registration's secret does not authenticate another's client.
    const crossed = await clientRequest(
      server.url,
      { clientId: second.client_id, clientSecret: first.client_secret },
      { token: 'pat_unknown' },
      { form: true, path: '/api/oauth/introspect' },
    );
    expect(crossed.status).toBe(401);

    const publicOne = await register(server.url, { client_name: 'Twin client', redirect_uris: [redirectUri] });
    const publicTwo = await register(server.url, { client_name: 'Twin client', redirect_uris: [redirectUri] });
    expect(ids).not.toContain(publicOne.body.client_id);
    expect(publicTwo.body.client_id).toBe(publicOne.body.client_id);
    expect(publicOne.body.client_secret).toBeUndefined();
    expect((await clientById(server.db, publicOne.body.client_id)).isPublic).toBe(true);
    const third = await registerConfidential('client_secret_post', redirectUri, 'Twin client');
    expect([...ids, publicOne.body.client_id]).not.toContain(third.client_id);
  });

  it('a confidential DCR client sent back to a loopback redirect is asked every time (its self-issued secret proves no identity); one sent to https keeps remembered consent', async () => {
    const loopback = `http://127.0.0.1:8090/callback-${randomBytes(4).toString('hex')}`;
    const local = await registerConfidential('client_secret_post', loopback);
    expect((await authorize(local.client_id, loopback, 'approve')).location?.searchParams.get('code')).toBeTruthy();
    const again = await authorize(local.client_id, loopback, 'stop');
    expect(again.status).toBe(200);
    expect(again.body).toContain('Pacer asks each time this app connects');
    const silent = await authorize(local.client_id, loopback, 'stop', { prompt: 'none' });
    expect(silent.location?.searchParams.get('error')).toBe('consent_required');
    expect(silent.location?.searchParams.get('code')).toBeNull();

    const https = uniqueUri();
    const web = await registerConfidential('client_secret_post', https);
    expect((await authorize(web.client_id, https, 'approve')).location?.searchParams.get('code')).toBeTruthy();
    const remembered = await authorize(web.client_id, https, 'stop');
    expect(remembered.location?.searchParams.get('code')).toBeTruthy();

    // An operator-registered confidential app at the same kind of address keeps it: the operator vouched for it.
    const operatorApp = await registerOperatorApp(server.db, admin, { redirectUri: loopback, name: 'Operator app' });
    const { clientId, redirectUri } = operatorApp;
    expect((await authorize(clientId, redirectUri, 'approve')).location?.searchParams.get('code')).toBeTruthy();
    expect((await authorize(clientId, redirectUri, 'stop')).location?.searchParams.get('code')).toBeTruthy();
  });

  it('RFC 8414 metadata advertises every token endpoint auth method registration accepts', async () => {
    const res = await call<{ token_endpoint_auth_methods_supported: string[] }>(
      server.url,
      'GET',
      '/.well-known/oauth-authorization-server',
    );
    expect(res.body.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining([...DCR_AUTH_METHODS]));
  });
});

describe('registration without client_name (optional, RFC 7591 §2)', () => {
  it.each<[string, string, string]>([
    ['a localhost callback', 'http://localhost:33418/oauth/callback', 'App at localhost'],
    ['a 127.0.0.1 callback', 'http://127.0.0.1:5555/cb', 'App at 127.0.0.1'],
    ['an https callback', 'https://Claude.ai/api/mcp/auth_callback', 'App at claude.ai'],
    ['an https callback on a port', 'https://tools.example:8443/cb', 'App at tools.example:8443'],
    ['a reverse-domain app scheme', 'com.example.app:/callback', 'App (com.example.app)'],
    ['a known host scheme', 'cursor://anysphere.cursor-mcp/oauth/callback', 'App (cursor)'],
    ['a host a name could not claim', 'https://pacer-login.example/cb', 'Unnamed app'],
  ])('%s is registered under a name derived from it', async (_case, redirectUri, expected) => {
    const res = await register(server.url, { redirect_uris: [redirectUri] });
    expect(res.status).toBe(201);
    expect(res.body.client_name).toBe(expected);
    expect((await clientById(server.db, res.body.client_id)).name).toBe(expected);
  });

  it('the derived name does not depend on URI order or loopback port, so nameless repeats share one client', async () => {
    const path = `/cb-${randomBytes(4).toString('hex')}`;
    const first = await register(server.url, {
      redirect_uris: [`https://app-${path.slice(4)}.example${path}`, `http://localhost:40001${path}`],
    });
    const second = await register(server.url, {
      redirect_uris: [`http://localhost:40002${path}`, `https://app-${path.slice(4)}.example${path}`],
    });
    expect(second.body.client_id).toBe(first.body.client_id);
    expect(second.body.client_name).toBe(first.body.client_name);
  });

  it('a confidential registration without client_name gets a derived name too', async () => {
    const res = await register(server.url, {
      redirect_uris: ['http://localhost:8090/callback'],
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(res.status).toBe(201);
    expect(res.body.client_name).toBe('App at localhost');
    expect(res.body.client_secret).toEqual(expect.any(String));
  });

  it('the consent page shows the derived name marked as unverified, with the host the answer goes to', async () => {
    const jar = await signIn(server.url, admin.email);
    const redirectUri = `http://localhost:5555/cb-${randomBytes(4).toString('hex')}`;
    const res = await register(server.url, { redirect_uris: [redirectUri] });
    const page = await authorizeAs(
      jar,
      authorizationRequest(
        server.url,
        { clientId: res.body.client_id, redirectUri },
        { resource: server.config.mcpResource },
      ),
      'stop',
    );
    expect(page.status).toBe(200);
    expect(page.body).toContain('<strong>Unverified app:</strong> <q>App at localhost</q>');
    expect(page.body).toContain('<strong>localhost:5555</strong>');
  });
});

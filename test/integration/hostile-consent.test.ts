/**
 * Attacks on consent through dynamic client registration (issue 18, item 6),
 * each tried with real requests against the real server:
 * - RFC 8252 §7.3 / §8.6: a second app registers an MCP host's loopback
 *   callback on another port and is handed the host's client, its name and
 *   the user's remembered consent;
 * - RFC 6749 §10.2 / RFC 8252 §8.6: a request for a public client whose
 *   answer goes to a loopback or private-use redirect is approved silently
 *   because the user approved that client id before;
 * - RFC 7591 §2: a squatter registers first under a name that passes it off
 *   as Pacer or as verified, or under a host's name, so that later hosts'
 *   consent pages show the squatter's name.
 */
import { randomBytes } from 'node:crypto';
import { MCP_SCOPES } from '@pacer/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as registrationKeyMigration from '../../migrations/20261126T0104_dcr_registration_key.ts';
import type { OauthClient, User } from '../../server/src/db/tables.ts';
import { redirectSetKeyOf } from '../../server/src/modules/oauth/registration.service.ts';
import { makeUser } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { startSignedIn } from '../support/oauth-fixture.ts';
import {
  authorizationRequest,
  authorizeAs,
  exchangeCode,
  pkcePair,
  registerClient,
  type AuthorizeQuery,
  type CookieJar,
} from '../support/oauth-flow.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

interface Registration {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
}
interface RegistrationFailure {
  error: string;
  error_description: string;
}

let server: TestServer;
let user: User;
let jar: CookieJar;

beforeAll(async () => {
  ({ server, user, jar } = await startSignedIn({
    env: { PACER_DCR_RATE_LIMIT_PER_HOUR: '0' },
    user: { admin: true },
  }));
});
afterAll(async () => {
  await server.stop();
});

/** A callback path no other test registers. */
const uniquePath = () => `/oauth/callback-${randomBytes(4).toString('hex')}`;

async function register(
  clientName: string,
  redirectUris: readonly string[],
  target: TestServer = server,
): Promise<Registration> {
  const res = await call<Registration>(target.url, 'POST', '/api/oauth/register', {
    body: { client_name: clientName, redirect_uris: redirectUris, token_endpoint_auth_method: 'none' },
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const clientRow = (clientId: string): Promise<OauthClient> =>
  server.db.selectFrom('oauthClients').selectAll().where('clientId', '=', clientId).executeTakeFirstOrThrow();

const dcrClientCount = async (): Promise<number> =>
  (await server.db.selectFrom('oauthClients').select('id').where('kind', '=', 'dcr').execute()).length;

/** The user's browser opens the MCP authorization request; `decision` is what it does on a consent page. */
function authorize(
  clientId: string,
  redirectUri: string,
  decision: 'approve' | 'stop' = 'stop',
  extra: AuthorizeQuery = {},
) {
  return authorizeAs(
    jar,
    authorizationRequest(
      server.url,
      { clientId, redirectUri },
      { scope: 'health:read', state: 'st', resource: server.config.mcpResource, ...extra },
    ),
    decision,
  );
}

describe('a second app registers an MCP host’s localhost callback on another port', () => {
  const path = uniquePath();
  const hostRedirect = `http://localhost:33418${path}`;
  const squatterRedirect = `http://localhost:5555${path}`;
  let host: Registration;

  beforeAll(async () => {
    host = await register('Claude Code', [hostRedirect]);
    // The user connected the host and approved it once.
    const approved = await authorize(host.client_id, hostRedirect, 'approve');
    expect(approved.location?.searchParams.get('code')).toBeTruthy();
  });

  it('gets a client of its own under its own name; the host’s client, name and redirect URIs are untouched', async () => {
    const squatter = await register('Sneaky Notes', [squatterRedirect]);
    expect(squatter.client_id).not.toBe(host.client_id);
    expect(squatter.client_name).toBe('Sneaky Notes');
    expect(await clientRow(host.client_id)).toMatchObject({ name: 'Claude Code', redirectUris: [hostRedirect] });
  });

  it('its authorization request shows the consent page with its own name, not the host’s, and issues no code', async () => {
    const squatter = await register('Sneaky Notes', [squatterRedirect]);
    const page = await authorize(squatter.client_id, squatterRedirect);
    expect(page.status).toBe(200);
    expect(page.location).toBeUndefined();
    expect(page.body).toContain('Allow Sneaky Notes to use your Pacer data?');
    expect(page.body).not.toContain('Claude Code');
  });

  it('copying the host’s name and callback exactly gets the shared client, but never the host’s approval: the page is shown again', async () => {
    const copy = await register('Claude Code', [squatterRedirect]);
    expect(copy.client_id).toBe(host.client_id);
    const again = await authorize(copy.client_id, squatterRedirect);
    expect(again.status).toBe(200);
    expect(again.location).toBeUndefined();
    expect(again.body).toContain('name="decision" value="approve"');
  });

  it('prompt=none cannot approve it silently either: consent_required on the redirect, no code', async () => {
    const silent = await authorize(host.client_id, squatterRedirect, 'stop', { prompt: 'none' });
    expect(silent.status).toBe(303);
    expect(silent.location?.searchParams.get('error')).toBe('consent_required');
    expect(silent.location?.searchParams.get('code')).toBeNull();
  });
});

describe('repeated authorization is never approved silently for a public client on a claimable redirect', () => {
  it('a loopback redirect: the consent page every time (one click), and each approval still yields working tokens', async () => {
    const redirectUri = `http://127.0.0.1:47011${uniquePath()}`;
    const host = await register('Inspector', [redirectUri]);
    for (let round = 0; round < 2; round += 1) {
      const shown = await authorize(host.client_id, redirectUri);
      expect(shown.status).toBe(200);
      expect(shown.body).toContain('Pacer asks each time this app connects');
      const { verifier, challenge } = pkcePair();
      const approved = await authorize(host.client_id, redirectUri, 'approve', { code_challenge: challenge });
      const code = approved.location?.searchParams.get('code') ?? '';
      const tokens = await exchangeCode(
        server.url,
        { clientId: host.client_id, redirectUri },
        { code, verifier },
        { resource: server.config.mcpResource },
      );
      expect(tokens.status).toBe(200);
    }
  });

  it('a private-use scheme redirect (cursor://): the consent page again after an approval', async () => {
    const redirectUri = `cursor://anysphere.cursor-mcp${uniquePath()}`;
    const host = await register('Cursor', [redirectUri]);
    expect((await authorize(host.client_id, redirectUri, 'approve')).location?.searchParams.get('code')).toBeTruthy();
    expect((await authorize(host.client_id, redirectUri)).status).toBe(200);
  });

  it('a public app made by a developer (not DCR) on a loopback redirect: the consent page again', async () => {
    const phone = await registerClient(server.db, user, { isPublic: true, redirectUri: 'http://127.0.0.1/phone-cb' });
    const request = (decision: 'approve' | 'stop') =>
      authorizeAs(jar, authorizationRequest(server.url, phone, { scope: 'health:read' }), decision);
    expect((await request('approve')).location?.searchParams.get('code')).toBeTruthy();
    expect((await request('stop')).status).toBe(200);
  });

  it('a public client’s https redirect keeps remembered consent: the code can only reach that host (RFC 8252 §8.6)', async () => {
    const redirectUri = `https://claude.example${uniquePath()}`;
    const host = await register('Claude', [redirectUri]);
    await authorize(host.client_id, redirectUri, 'approve');
    const again = await authorize(host.client_id, redirectUri);
    expect(again.status).toBe(303);
    expect(again.location?.searchParams.get('code')).toBeTruthy();
  });

  it('a confidential client keeps remembered consent, on a loopback redirect too: a code is useless without its secret', async () => {
    const app = await registerClient(server.db, user, { redirectUri: 'http://127.0.0.1/confidential-cb' });
    await authorizeAs(jar, authorizationRequest(server.url, app), 'approve');
    const again = await authorizeAs(jar, authorizationRequest(server.url, app), 'stop');
    expect(again.status).toBe(303);
    expect(again.location?.searchParams.get('code')).toBeTruthy();
  });
});

describe('a squatter registers first under a look-alike name', () => {
  it.each([
    'Pacer Official Assistant (verified)',
    'Pacer',
    'PACER sync',
    'PacerBot',
    'Official MCP host',
    'Verified Claude',
    'Ｐａｃｅｒ', // full-width letters: NFKC folds them to "Pacer"
    'Pa\u200Bcer', // a zero-width space hides the word
    'Claude \u202Etxt.exe', // a right-to-left override makes the name display as other text
  ])('%j is refused with 400 invalid_client_metadata and nothing is stored', async (clientName) => {
    const before = await dcrClientCount();
    const res = await call<RegistrationFailure>(server.url, 'POST', '/api/oauth/register', {
      body: { client_name: clientName, redirect_uris: [`http://127.0.0.1${uniquePath()}`] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
    expect(res.body.error_description).toMatch(/client_name/);
    expect(await dcrClientCount()).toBe(before);
  });

  it.each(['Pace Runner', 'Spacer', 'Claude Desktop', 'Unverified notes'])(
    '%j, which only contains those letters, is accepted',
    async (clientName) => {
      const registration = await register(clientName, [`http://127.0.0.1${uniquePath()}`]);
      expect(registration.client_name).toBe(clientName);
    },
  );

  it('a squatter under a host’s callback cannot put its name on the host’s consent page', async () => {
    const path = uniquePath();
    const squatter = await register('Claude Helper', [`http://localhost:6000${path}`]);
    const hostRedirect = `http://localhost:41000${path}`;
    const host = await register('Claude Desktop', [hostRedirect]);
    expect(host.client_id).not.toBe(squatter.client_id);
    expect(host.client_name).toBe('Claude Desktop');
    const page = await authorize(host.client_id, hostRedirect);
    expect(page.body).toContain('Allow Claude Desktop to use your Pacer data?');
    expect(page.body).not.toContain('Claude Helper');
  });

  it('the consent page marks a dynamically registered name as unverified and names where the answer goes', async () => {
    const redirectUri = `http://localhost:5555${uniquePath()}`;
    const app = await register('Claude Desktop', [redirectUri]);
    const page = await authorize(app.client_id, redirectUri);
    expect(page.body).toContain('<strong>Unverified app:</strong> <q>Claude Desktop</q>');
    expect(page.body).toContain('<strong>localhost:5555</strong>');

    const operatorApp = await registerClient(server.db, user, { name: 'Operator app' });
    const operatorPage = await authorizeAs(
      jar,
      authorizationRequest(server.url, operatorApp, { prompt: 'consent' }),
      'stop',
    );
    expect(operatorPage.status).toBe(200);
    expect(operatorPage.body).not.toContain('Unverified app');
  });
});

describe('clients registered before names were part of the sharing key', () => {
  it('an exact repeat still gets its client after the migration; the same callback under another name does not', async () => {
    const upgraded = await startTestServer({ PACER_DCR_RATE_LIMIT_PER_HOUR: '0' });
    try {
      await makeUser(upgraded.db, { admin: true });
      const redirectUris = [`http://127.0.0.1:33418${uniquePath()}`];
      const clientId = `pc_old_${randomBytes(4).toString('hex')}`;
      // The schema and row as the previous release left them: keyed by the redirect set alone.
      await registrationKeyMigration.down(upgraded.db);
      await sql`INSERT INTO oauth_clients (client_id, name, kind, is_public, redirect_uris, scopes, redirect_set_key)
        VALUES (${clientId}, 'Claude Code', 'dcr', true, ${redirectUris}, ${[...MCP_SCOPES]},
          ${redirectSetKeyOf(redirectUris)})`.execute(upgraded.db);
      await registrationKeyMigration.up(upgraded.db);

      expect((await register('Claude Code', redirectUris, upgraded)).client_id).toBe(clientId);
      expect((await register('Sneaky Notes', redirectUris, upgraded)).client_id).not.toBe(clientId);
    } finally {
      await upgraded.stop();
    }
  });
});

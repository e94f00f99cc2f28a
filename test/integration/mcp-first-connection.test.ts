/**
 * A host's first connection to `/mcp` reaches everything the user allows
 * (docs/design.md §3 "OAuth 2.0 authorization server", "Scopes", "MCP /
 * Transport and access"), with the MCP SDK's own client and a person in Chromium:
 * - MCP 2025-11-25 "Scope Selection Strategy": the 401 challenge's `scope`
 *   and the resource metadata's `scopes_supported` (RFC 9728 §2) name every
 *   MCP scope, without `offline_access`;
 * - the consent page: one checkbox per requested scope, labelled in plain
 *   words and ticked at first; the code, the token response's `scope`
 *   (RFC 6749 §5.1) and `tools/list` hold what stayed ticked; nothing ticked
 *   is refused on the page;
 * - "Scope Challenge Handling": a grant the person narrowed still steps up
 *   with 403 `insufficient_scope`;
 * - one grant per user, client and resource: a new authorization takes the
 *   grant over (one card in /settings) with the scopes approved now, and the
 *   tokens issued before keep working within them.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { MCP_SCOPES, SCOPE_DESCRIPTIONS, type Scope } from '@pacer/contract';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { ALL_TOOLS } from '../../server/src/mcp/registry.ts';
import { cardHeaded, usePortalBrowser } from '../support/browser.ts';
import { listenForCallbacks, type CallbackListener } from '../support/callbacks.ts';
import { makeUser, mintToken, TEST_PASSWORD } from '../support/factories.ts';
import { MemoryOAuthProvider, stepUpAwareFetch, toolResult } from '../support/mcp-client.ts';
import {
  authorizationRequest,
  authorizeAs,
  exchangeCode,
  pkcePair,
  refreshTokens,
  registerClient,
  signIn,
  type CookieJar,
  type TestClient,
} from '../support/oauth-flow.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/** What a first connection should ask for: every MCP scope but `offline_access`. */
const EVERY_MCP_SCOPE = MCP_SCOPES.filter((scope) => scope !== 'offline_access');
const WRITE_SCOPES = EVERY_MCP_SCOPE.filter((scope) => scope.endsWith(':write'));
const READ_SCOPES = EVERY_MCP_SCOPE.filter((scope) => !scope.endsWith(':write'));

let server: TestServer;
let person: BrowserContext;
let callbacks: CallbackListener;
let athlete: User;
let signedIn = false;

const chromium = usePortalBrowser(() => server.url);
beforeAll(async () => {
  server = await startTestServer();
  await makeUser(server.db, { admin: true }); // owner of dynamically registered clients
  athlete = await makeUser(server.db);
  person = await chromium.browser.newContext();
  callbacks = await listenForCallbacks();
});
afterAll(async () => {
  await person?.close();
  await callbacks?.close();
  await server?.stop();
});

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

/** A host of its own: dynamic registration shares a client only with the same name and redirect URIs. */
class NamedHost extends MemoryOAuthProvider {
  private readonly name: string;

  constructor(name: string) {
    // The fallback scope of the SDK's selection: never used while the 401 names one.
    super(callbacks.redirectUri, 'profile:read');
    this.name = name;
  }

  override get clientMetadata(): OAuthClientMetadata {
    return { ...super.clientMetadata, client_name: this.name };
  }
}

function transportOf(host: MemoryOAuthProvider): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(server.config.mcpResource), {
    authProvider: host,
    fetch: stepUpAwareFetch(host),
  });
}

async function connect(host: MemoryOAuthProvider): Promise<Client> {
  const client = new Client({ name: 'first-connection-test', version: '1.0.0' });
  await client.connect(transportOf(host));
  open.push(client);
  return client;
}

/** The checkbox of `scope` on the consent page, found by its plain-language label. */
const checkboxOf = (page: Page, scope: Scope) =>
  page.getByRole('checkbox', { name: SCOPE_DESCRIPTIONS[scope], exact: true });

/** Open the consent page of `url` as the person (signing in the first time). */
async function openConsent(url: URL | undefined): Promise<Page> {
  if (!url) throw new Error('the host never asked for authorization');
  const page = await person.newPage();
  await page.goto(url.href);
  if (!signedIn) {
    await page.waitForURL((current) => current.pathname === '/login');
    await page.getByLabel('Email').fill(athlete.email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    signedIn = true;
  }
  await page.waitForURL((current) => current.pathname === '/api/oauth/authorize');
  return page;
}

/** Click Approve on an open consent page; the code the browser brought to the redirect URI. */
async function approveOn(page: Page): Promise<string> {
  const before = callbacks.received.length;
  try {
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL((current) => current.href.startsWith(callbacks.redirectUri));
  } finally {
    await page.close();
  }
  const code = callbacks.received.slice(before).at(-1)?.searchParams.get('code');
  if (!code) throw new Error('no code on the callback');
  return code;
}

/** The person approves `url`, first unticking `untick`. */
async function approve(url: URL | undefined, untick: readonly Scope[] = []): Promise<string> {
  const page = await openConsent(url);
  for (const scope of untick) await checkboxOf(page, scope).uncheck();
  return approveOn(page);
}

/** The tools `tools/list` must show for `scopes`: each tool whose scopes are all among them. */
function toolsAllowedBy(scopes: readonly string[]): string[] {
  return ALL_TOOLS.filter((tool) => tool.scopes.every((scope) => scopes.includes(scope)))
    .map((tool) => tool.name)
    .sort();
}

async function listedNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((tool) => tool.name).sort();
}

interface McpAnswer {
  readonly status: number;
  readonly challenge: Record<string, string>;
}

/** One `tools/call` on `/mcp` with a bearer token, as raw HTTP. */
async function callToolRaw(token: string, name: string, args: Record<string, unknown>): Promise<McpAnswer> {
  const res = await fetch(server.config.mcpResource, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  await res.text();
  return { status: res.status, challenge: challengeOf(res.headers.get('www-authenticate') ?? '') };
}

/** The auth-params of a `Bearer` challenge (RFC 6750 §3). */
function challengeOf(header: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const match of header.matchAll(/(\w+)="([^"]*)"/g)) params[match[1] as string] = match[2] as string;
  return params;
}

const sorted = (values: readonly string[]) => [...values].sort();
const scopesOf = (value: string | null | undefined) => sorted((value ?? '').split(' ').filter(Boolean));

async function unrevokedGrantsOf(clientId: string) {
  return server.db
    .selectFrom('oauthGrants as g')
    .innerJoin('oauthClients as c', 'c.id', 'g.clientId')
    .select(['g.id', 'g.scopes', 'g.revokedAt', 'g.revokedReason'])
    .where('c.clientId', '=', clientId)
    .where('g.userId', '=', athlete.id)
    .where('g.revokedAt', 'is', null)
    .execute();
}

describe('what a first connection is told to ask for (MCP 2025-11-25 "Scope Selection Strategy")', () => {
  it('the 401 on /mcp names every MCP scope, writes included, and the resource metadata offers the same list, neither with offline_access', async () => {
    const unauthorized = await fetch(server.config.mcpResource, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unauthorized.status).toBe(401);
    const challenged = scopesOf(challengeOf(unauthorized.headers.get('www-authenticate') ?? '')['scope']);
    expect(challenged).toEqual(sorted(EVERY_MCP_SCOPE));
    expect(challenged).toEqual(expect.arrayContaining(['planning:write', 'recommendations:read', 'health:write']));
    expect(challenged).not.toContain('offline_access');

    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata['scopes_supported']).toEqual([...EVERY_MCP_SCOPE]);
  });
});

describe('an MCP SDK host connecting for the first time', () => {
  it('asks for every MCP scope; approved as the page offers it, it lists every tool and runs a write tool at once', async () => {
    const host = new NamedHost('Everything assistant');
    await expect(connect(host)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(scopesOf(host.authorizationUrl?.searchParams.get('scope'))).toEqual(sorted(EVERY_MCP_SCOPE));
    // Without offline_access the SDK adds no prompt=consent.
    expect(host.authorizationUrl?.searchParams.get('prompt')).toBeNull();

    await transportOf(host).finishAuth(await approve(host.authorizationUrl));
    expect(scopesOf(host.saved?.scope)).toEqual(sorted(EVERY_MCP_SCOPE));

    const client = await connect(host);
    const names = await listedNames(client);
    expect(names).toEqual(toolsAllowedBy(EVERY_MCP_SCOPE));
    expect(names).toEqual(expect.arrayContaining(['log_wellness', 'accept_recommendation', 'list_recommendations']));
    const day = toolResult<{ date: string; hrv: number }>(
      await client.callTool({ name: 'log_wellness', arguments: { date: '2026-11-20', hrv: 61 } }),
    );
    expect(day).toMatchObject({ date: '2026-11-20', hrv: 61 });
  });

  describe('a person who unticks scopes, then a step-up', () => {
    const host = () => narrowed;
    let narrowed: NamedHost;
    let before: { access: string; refresh: string };

    it('offers one ticked, plainly labelled checkbox per scope; the token response and tools/list hold only what stayed ticked; a write outside them steps up with 403', async () => {
      narrowed = new NamedHost('Careful assistant');
      await expect(connect(host())).rejects.toBeInstanceOf(UnauthorizedError);

      const page = await openConsent(host().authorizationUrl);
      expect(await page.getByRole('checkbox').count()).toBe(EVERY_MCP_SCOPE.length);
      for (const scope of EVERY_MCP_SCOPE) expect(await checkboxOf(page, scope).isChecked(), scope).toBe(true);
      for (const scope of WRITE_SCOPES) await checkboxOf(page, scope).uncheck();
      await transportOf(host()).finishAuth(await approveOn(page));

      // RFC 6749 §5.1: the response says what was granted, which is not what was asked.
      expect(scopesOf(host().saved?.scope)).toEqual(sorted(READ_SCOPES));
      const client = await connect(host());
      expect(await listedNames(client)).toEqual(toolsAllowedBy(READ_SCOPES));
      expect(await listedNames(client)).not.toContain('log_wellness');

      before = { access: host().saved?.access_token ?? '', refresh: host().saved?.refresh_token ?? '' };
      const refused = await callToolRaw(before.access, 'log_wellness', { date: '2026-11-21', hrv: 50 });
      expect(refused.status).toBe(403);
      expect(refused.challenge['error']).toBe('insufficient_scope');
      expect(scopesOf(refused.challenge['scope'])).toEqual(sorted([...READ_SCOPES, 'health:write']));
    });

    it('a step-up takes the grant over: one card in /settings with the scopes approved now, and the tokens the host held before keep working within their own scopes', async () => {
      const client = await connect(host());
      await expect(
        client.callTool({ name: 'log_wellness', arguments: { date: '2026-11-21', hrv: 50 } }),
      ).rejects.toBeInstanceOf(UnauthorizedError);
      expect(scopesOf(host().authorizationUrl?.searchParams.get('scope'))).toEqual(
        sorted([...READ_SCOPES, 'health:write']),
      );
      await transportOf(host()).finishAuth(await approve(host().authorizationUrl));
      expect(scopesOf(host().saved?.scope)).toEqual(sorted([...READ_SCOPES, 'health:write']));

      const grants = await unrevokedGrantsOf(String(host().client?.client_id));
      expect(grants).toHaveLength(1);
      expect(sorted(grants[0]?.scopes ?? [])).toEqual(sorted([...READ_SCOPES, 'health:write']));
      const { page } = await chromium.signedInPage(athlete, '/settings');
      const card = cardHeaded(page, 'Careful assistant');
      expect(await card.count()).toBe(1);
      expect(await card.getByText(SCOPE_DESCRIPTIONS['health:write'], { exact: true }).count()).toBe(1);

      const stepped = await connect(host());
      const day = toolResult<{ hrv: number }>(
        await stepped.callTool({ name: 'log_wellness', arguments: { date: '2026-11-21', hrv: 50 } }),
      );
      expect(day.hrv).toBe(50);

      // The tokens from before the step-up: same grant, their own (narrower) scopes.
      expect((await callToolRaw(before.access, 'get_profile', {})).status).toBe(200);
      expect((await callToolRaw(before.access, 'log_wellness', { date: '2026-11-22', hrv: 52 })).status).toBe(403);
      const refreshed = await refreshTokens(
        server.url,
        { clientId: String(host().client?.client_id) },
        before.refresh,
        {
          resource: server.config.mcpResource,
        },
      );
      expect(refreshed.status).toBe(200);
      expect(scopesOf(refreshed.body['scope'] as string)).toEqual(sorted(READ_SCOPES));
      expect(await unrevokedGrantsOf(String(host().client?.client_id))).toHaveLength(1);
    });
  });

  it('approving with every box unticked shows the page again saying why, with no code; ticking one then approves just that', async () => {
    const host = new NamedHost('Hesitant assistant');
    await expect(connect(host)).rejects.toBeInstanceOf(UnauthorizedError);
    const page = await openConsent(host.authorizationUrl);
    for (const scope of EVERY_MCP_SCOPE) await checkboxOf(page, scope).uncheck();
    const callbacksBefore = callbacks.received.length;
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('Tick at least one permission');
    expect(callbacks.received.length).toBe(callbacksBefore);
    expect(await page.getByRole('checkbox', { checked: true }).count()).toBe(0);

    await checkboxOf(page, 'profile:read').check();
    await transportOf(host).finishAuth(await approveOn(page));
    expect(host.saved?.scope).toBe('profile:read');
    const client = await connect(host);
    expect(await listedNames(client)).toEqual(toolsAllowedBy(['profile:read']));
  });
});

describe('one grant per user, client and resource (an app that may be remembered)', () => {
  let jar: CookieJar;
  let app: TestClient;

  beforeAll(async () => {
    jar = await signIn(server.url, athlete.email);
    // Confidential, https redirect: its consent may be remembered (RFC 6749 §10.2).
    app = await registerClient(server.db, athlete, { name: 'Remembered assistant' });
  });

  async function authorizeAndExchange(options: { granted?: readonly string[]; prompt?: string }) {
    const { verifier, challenge } = pkcePair();
    const result = await authorizeAs(
      jar,
      authorizationRequest(server.url, app, {
        scope: 'health:read health:write',
        resource: server.config.mcpResource,
        code_challenge: challenge,
        prompt: options.prompt,
      }),
      'approve',
      options.granted ? { granted: options.granted } : {},
    );
    const code = result.location?.searchParams.get('code');
    if (!code) throw new Error(`no code: ${result.status}`);
    return exchangeCode(server.url, app, { code, verifier }, { resource: server.config.mcpResource });
  }

  it('a narrower re-approval narrows the tokens issued before it at once, and the unticked scope is asked for again rather than approved from memory', async () => {
    const first = await authorizeAndExchange({});
    expect(first.body['scope']).toBe('health:read health:write');
    const firstToken = String(first.body['access_token']);
    expect((await callToolRaw(firstToken, 'log_wellness', { date: '2026-11-23', hrv: 58 })).status).toBe(200);

    const second = await authorizeAndExchange({ prompt: 'consent', granted: ['health:read'] });
    expect(second.body['scope']).toBe('health:read');
    expect((await callToolRaw(firstToken, 'log_wellness', { date: '2026-11-24', hrv: 58 })).status).toBe(403);
    expect((await callToolRaw(firstToken, 'get_wellness', {})).status).toBe(200);
    expect(await unrevokedGrantsOf(app.clientId)).toHaveLength(1);

    // The remembered consent is the latest decision: health:write shows the page, health:read alone does not.
    const both = await authorizeAs(
      jar,
      authorizationRequest(server.url, app, { scope: 'health:read health:write', resource: server.config.mcpResource }),
      'stop',
    );
    expect(both.status).toBe(200);
    expect(both.body).toContain('name="granted_scope"');
    const readOnly = await authorizeAs(
      jar,
      authorizationRequest(server.url, app, { scope: 'health:read', resource: server.config.mcpResource }),
      'stop',
    );
    expect(readOnly.status).toBe(303);
    expect(readOnly.location?.searchParams.get('code')).toMatch(/^pac_/);
  });

  it('a refresh never issues more than the grant holds now (a takeover that narrowed it while the refresh ran)', async () => {
    app = await registerClient(server.db, athlete, { name: 'Refreshing assistant' });
    const issued = await authorizeAndExchange({});
    const [grant] = await unrevokedGrantsOf(app.clientId);
    // What a narrowing takeover committed after this refresh read its token.
    await server.db
      .updateTable('oauthGrants')
      .set({ scopes: ['health:read'] })
      .where('id', '=', grant?.id ?? '')
      .execute();

    const refreshed = await refreshTokens(server.url, app, String(issued.body['refresh_token']), {
      resource: server.config.mcpResource,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body['scope']).toBe('health:read');
    const access = String(refreshed.body['access_token']);
    expect((await callToolRaw(access, 'log_wellness', { date: '2026-11-25', hrv: 57 })).status).toBe(403);
  });

  it('earlier duplicate grants of the app (from before one grant per app) are revoked as replaced at its next authorization', async () => {
    const other = await registerClient(server.db, athlete, { name: 'Twice connected assistant' });
    const resource = server.config.mcpResource;
    const older = await mintToken(server.db, athlete, { scopes: ['health:read'], resource, client: other.client });
    const newer = await mintToken(server.db, athlete, { scopes: ['health:read'], resource, client: other.client });
    expect(await unrevokedGrantsOf(other.clientId)).toHaveLength(2);

    app = other;
    const tokens = await authorizeAndExchange({});
    expect(tokens.status).toBe(200);

    const live = await unrevokedGrantsOf(other.clientId);
    expect(live.map((grant) => grant.id)).toEqual([newer.grantId]);
    const replaced = await server.db
      .selectFrom('oauthGrants')
      .select(['revokedAt', 'revokedReason'])
      .where('id', '=', older.grantId)
      .executeTakeFirstOrThrow();
    expect(replaced).toMatchObject({ revokedAt: expect.any(Date), revokedReason: 'replaced' });
    expect((await callToolRaw(older.token, 'get_wellness', {})).status).toBe(401);
    expect((await callToolRaw(newer.token, 'get_wellness', {})).status).toBe(200);
  });
});

/**
 * The Vercel AI SDK's MCP client (`@ai-sdk/mcp`, what `ai` apps use to hand
 * a remote server's tools to a model) as a real host. Its OAuth is its own
 * implementation, not the MCP SDK's: protected-resource discovery from the
 * 401 (RFC 9728), authorization-server metadata (RFC 8414), dynamic client
 * registration (RFC 7591), PKCE (RFC 7636), `resource` (RFC 8707), `state`
 * and the `iss` check (RFC 9207). The host application supplies an
 * `OAuthClientProvider`: where it keeps tokens, and `redirectToAuthorization`,
 * the hook where a real app opens the browser; here the person signs in and
 * approves in Chromium and the code comes back to a loopback listener, as in
 * the AI SDK's own examples. It has no scope step-up: what the first
 * connection is granted is all it ever has.
 */
import {
  auth,
  createMCPClient,
  UnauthorizedError,
  type MCPClient,
  type OAuthAuthorizationServerInformation,
  type OAuthClientInformation,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthTokens,
} from '@ai-sdk/mcp';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { sha256Hex } from '../../server/src/lib/crypto.ts';
import { ALL_TOOLS } from '../../server/src/mcp/registry.ts';
import { usePortalBrowser } from '../support/browser.ts';
import { listenForCallbacks, type CallbackListener } from '../support/callbacks.ts';
import { makeUser } from '../support/factories.ts';
import { approveInChromium } from '../support/host-consent.ts';
import { toolResult } from '../support/mcp-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/** What the host application keeps for one server, in memory: the AI SDK asks for each piece. */
class HostOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformation | undefined;
  saved: OAuthTokens | undefined;
  authorizationUrl: URL | undefined;
  private verifier = '';
  private pendingState: string | undefined;
  private server: OAuthAuthorizationServerInformation | undefined;

  readonly redirectUrl: string;

  constructor(redirectUrl: string) {
    this.redirectUrl = redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    // No `scope`: the library picks it (the 401 challenge's, else the resource's scopes_supported).
    return {
      client_name: 'AI SDK host under test',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(information: OAuthClientInformation): void {
    this.client = information;
  }
  isClientInformationDynamicallyRegistered(): boolean {
    return this.client !== undefined;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  authorizationServerInformation() {
    return this.server;
  }
  saveAuthorizationServerInformation(information: OAuthAuthorizationServerInformation): void {
    this.server = information;
  }
  state(): string {
    return crypto.randomUUID();
  }
  saveState(state: string): void {
    this.pendingState = state;
  }
  storedState() {
    return this.pendingState;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
}

/** Discovery, registration, and the person's sign-in and approval, on a busy machine. */
const SIGN_IN_TIMEOUT_MS = 90_000;

let server: TestServer;
let athlete: User;
let person: BrowserContext;
let callbacks: CallbackListener;
const opened: MCPClient[] = [];

const chromium = usePortalBrowser(() => server.url);
beforeAll(async () => {
  server = await startTestServer();
  await makeUser(server.db, { admin: true }); // the owner of dynamically registered clients
  athlete = await makeUser(server.db, { timeZone: 'Europe/Berlin' });
  person = await chromium.browser.newContext();
  callbacks = await listenForCallbacks();
});
afterAll(async () => {
  for (const client of opened) await client.close().catch(() => undefined);
  await person?.close();
  await callbacks?.close();
  await server?.stop();
});

async function connect(provider: HostOAuthProvider): Promise<MCPClient> {
  const client = await createMCPClient({
    transport: { type: 'http', url: server.config.mcpResource, authProvider: provider },
    clientName: 'ai-sdk-host-under-test',
  });
  opened.push(client);
  return client;
}

describe('the Vercel AI SDK MCP client as a host', () => {
  const provider = () => host;
  let host: HostOAuthProvider;
  let client: MCPClient;

  it(
    'discovers, registers, authorizes with PKCE while the person approves in Chromium, and connects',
    async () => {
      host = new HostOAuthProvider(callbacks.redirectUri);
      await expect(connect(provider())).rejects.toBeInstanceOf(UnauthorizedError);
      const url = provider().authorizationUrl;
      if (!url) throw new Error('the AI SDK never asked for authorization');
      expect(url.origin + url.pathname).toBe(`${server.url}/api/oauth/authorize`);
      expect(url.searchParams.get('resource')).toBe(server.config.mcpResource);
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(url.searchParams.get('redirect_uri')).toBe(callbacks.redirectUri);
      const registered = await server.db
        .selectFrom('oauthClients')
        .select(['name', 'kind', 'isPublic'])
        .where('clientId', '=', provider().client?.client_id ?? '')
        .executeTakeFirstOrThrow();
      expect(registered).toEqual({ name: 'AI SDK host under test', kind: 'dcr', isPublic: true });

      const callback = await approveInChromium(person, url.href, athlete, (current) =>
        current.href.startsWith(callbacks.redirectUri),
      );
      const code = callback.searchParams.get('code');
      if (!code) throw new Error(`no code on the callback: ${callback.href}`);
      expect(
        await auth(provider(), {
          serverUrl: server.config.mcpResource,
          authorizationCode: code,
          callbackState: callback.searchParams.get('state') ?? undefined,
          callbackIssuer: callback.searchParams.get('iss') ?? undefined,
        }),
      ).toBe('AUTHORIZED');
      expect(provider().saved?.access_token).toMatch(/^pat_/);
      expect(provider().saved?.refresh_token).toMatch(/^prt_/);

      client = await connect(provider());
      expect(client.serverInfo.name).toBeTruthy();
    },
    SIGN_IN_TIMEOUT_MS,
  );

  it('lists every tool on the first connection and turns each into a tool a model can call', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name).sort();
    console.info(`AI SDK first connection: tools/list lists ${names.length} tools`);
    expect(names).toEqual(ALL_TOOLS.map((tool) => tool.name).sort());
    // What an `ai` app passes to generateText/streamText: every listed tool, its schemas accepted.
    const toolSet = client.toolsFromDefinitions({ tools });
    expect(Object.keys(toolSet).sort()).toEqual(names);
  });

  it('calls a read tool, directly and as the model would through the tool set', async () => {
    const profile = toolResult<{ id: string }>(await client.callTool({ name: 'get_profile', arguments: {} }));
    expect(profile.id).toBe(athlete.id);

    const toolSet = await client.tools();
    const getProfile = toolSet['get_profile'];
    if (!getProfile?.execute) throw new Error('get_profile is not an executable tool');
    const executed = await getProfile.execute({}, { toolCallId: 'call-1', messages: [], context: {} });
    expect(toolResult<{ id: string }>(executed).id).toBe(athlete.id);
  });

  it('writes on the first connection, although it has no scope step-up', async () => {
    const logged = toolResult<{ date: string; hrv: number }>(
      await client.callTool({ name: 'log_wellness', arguments: { date: '2026-11-20', hrv: 64, restingHr: 48 } }),
    );
    expect(logged).toMatchObject({ date: '2026-11-20', hrv: 64 });
  });

  it('refreshes an access token that expired and carries on, without the person', async () => {
    const before = provider().saved;
    if (!before) throw new Error('no tokens');
    await server.db
      .updateTable('oauthAccessTokens')
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where('tokenHash', '=', sha256Hex(before.access_token))
      .execute();
    const launchedBefore = provider().authorizationUrl;

    const profile = toolResult<{ id: string }>(await client.callTool({ name: 'get_profile', arguments: {} }));
    expect(profile.id).toBe(athlete.id);
    expect(provider().saved?.access_token).not.toBe(before.access_token);
    expect(provider().saved?.refresh_token).not.toBe(before.refresh_token);
    expect(provider().authorizationUrl).toBe(launchedBefore); // no new trip through the browser
  });
});

/**
 * `mcp-remote` (the stdio proxy Claude Desktop, Cursor and Windsurf users run
 * for remote MCP servers) against the real server, as a user runs it: its own
 * discovery (the 401 challenge, RFC 9728 and RFC 8414 metadata), dynamic
 * registration (RFC 7591), PKCE and `resource`; its browser launch caught
 * through `$BROWSER` (its `open` runs xdg-open, which honours it), and the
 * person signing in and approving in Chromium. The test then speaks MCP to
 * mcp-remote over stdio, as the desktop host would: the first connection must
 * reach every tool, read and write; an access token that expired is
 * refreshed without the person; a restart reuses the stored tokens.
 *
 * Everything mcp-remote keeps (client registration, tokens) lives in a
 * temporary MCP_REMOTE_CONFIG_DIR; its HOME is temporary too.
 */
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { sha256Hex } from '../../server/src/lib/crypto.ts';
import { ALL_TOOLS } from '../../server/src/mcp/registry.ts';
import { usePortalBrowser } from '../support/browser.ts';
import { makeUser } from '../support/factories.ts';
import { approveInChromium } from '../support/host-consent.ts';
import { toolResult } from '../support/mcp-client.ts';
import { ROOT } from '../support/process.ts';
import { freePort, startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait.ts';

const MCP_REMOTE = path.join(ROOT, 'node_modules/mcp-remote/dist/proxy.js');
/** The tool calls of a connection: bounded, so a host stuck waiting for a second sign-in fails the test. */
const CALL_TIMEOUT_MS = 20_000;
/** A test of a few tool calls. */
const CALLS_TEST_TIMEOUT_MS = 3 * CALL_TIMEOUT_MS;
/** Starting mcp-remote, its discovery and registration, and the person's sign-in and approval. */
const SIGN_IN_TIMEOUT_MS = 90_000;

let server: TestServer;
let athlete: User;
let person: BrowserContext;
/** mcp-remote's HOME, MCP_REMOTE_CONFIG_DIR and the `$BROWSER` script with its log. */
let scratch: string;
let configDir: string;
let browserLog: string;
let browserScript: string;
/** The OAuth callback port, pinned (as a user's config would) so the restart keeps its redirect URI. */
let callbackPort: number;
const started: StdioClientTransport[] = [];
let stderr = '';

const chromium = usePortalBrowser(() => server.url);
beforeAll(async () => {
  server = await startTestServer();
  await makeUser(server.db, { admin: true }); // the owner of dynamically registered clients
  athlete = await makeUser(server.db, { timeZone: 'Europe/Berlin' });
  person = await chromium.browser.newContext();
  scratch = await mkdtemp(path.join(os.tmpdir(), 'pacer-mcp-remote-'));
  configDir = path.join(scratch, 'mcp-auth');
  browserLog = path.join(scratch, 'browser-launches.log');
  browserScript = path.join(scratch, 'browser.sh');
  // What xdg-open runs for `$BROWSER`: record the URL instead of opening a window.
  await writeFile(browserScript, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${browserLog}'\n`);
  await chmod(browserScript, 0o755);
  callbackPort = await freePort();
});
afterAll(async () => {
  for (const transport of started) await transport.close().catch(() => undefined);
  await person?.close();
  await server?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** Every URL mcp-remote asked the browser to open, in order. */
async function browserLaunches(): Promise<string[]> {
  const text = await readFile(browserLog, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line.length > 0);
}

/** The environment a desktop host gives mcp-remote, with nothing of this machine's desktop or home. */
function mcpRemoteEnv(): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: scratch,
    MCP_REMOTE_CONFIG_DIR: configDir,
    BROWSER: browserScript,
    NO_PROXY: '127.0.0.1,localhost',
  };
}

/**
 * Start mcp-remote for `{base}/mcp` and the MCP SDK client on its stdio;
 * `connected` resolves once `initialize` is answered, at most `timeoutMs` later.
 */
function startMcpRemote(timeoutMs: number): { client: Client; connected: Promise<void> } {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_REMOTE, server.config.mcpResource, String(callbackPort), '--auth-timeout', '90'],
    env: mcpRemoteEnv(),
    stderr: 'pipe',
  });
  started.push(transport);
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'claude-desktop-under-test', version: '1.0.0' });
  const connected = client.connect(transport, { timeout: timeoutMs });
  return { client, connected };
}

/** mcp-remote's stored tokens (`<server hash>_tokens.json` in its config store). */
async function storedTokens(): Promise<{ access_token: string; refresh_token?: string; scope?: string }> {
  const store = path.join(configDir, 'mcp-remote-v1');
  const file = (await readdir(store)).find((name) => name.endsWith('_tokens.json'));
  if (!file) throw new Error(`mcp-remote stored no tokens in ${store}`);
  return JSON.parse(await readFile(path.join(store, file), 'utf8')) as {
    access_token: string;
    refresh_token?: string;
    scope?: string;
  };
}

/** A failure message that shows what mcp-remote said. */
const withLog = (what: string) => `${what}\n--- mcp-remote stderr ---\n${stderr.slice(-4000)}`;

describe('mcp-remote (the stdio proxy of Claude Desktop) as a host', () => {
  let client: Client;
  let toolNames: string[] = [];

  it(
    'discovers, registers, signs the person in through the browser it launches, and connects',
    async () => {
      const first = startMcpRemote(SIGN_IN_TIMEOUT_MS);
      client = first.client;
      const [launched] = await waitFor(
        async () => {
          const urls = await browserLaunches();
          return urls.length > 0 && urls;
        },
        withLog('mcp-remote to launch the browser'),
        SIGN_IN_TIMEOUT_MS,
      );
      const authorization = new URL(launched ?? '');
      expect(authorization.origin + authorization.pathname).toBe(`${server.url}/api/oauth/authorize`);
      expect(authorization.searchParams.get('resource')).toBe(server.config.mcpResource);
      expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
      const redirectUri = `http://localhost:${callbackPort}/oauth/callback`;
      expect(authorization.searchParams.get('redirect_uri')).toBe(redirectUri);

      // The client it registered (RFC 7591): a public client on its loopback callback.
      const registered = await server.db
        .selectFrom('oauthClients')
        .select(['name', 'kind', 'isPublic', 'redirectUris'])
        .where('clientId', '=', authorization.searchParams.get('client_id') ?? '')
        .executeTakeFirstOrThrow();
      expect(registered).toEqual({ name: 'MCP CLI Proxy', kind: 'dcr', isPublic: true, redirectUris: [redirectUri] });

      const callback = await approveInChromium(
        person,
        authorization.href,
        athlete,
        (url) => url.port === String(callbackPort) && url.pathname === '/oauth/callback',
      );
      expect(callback.searchParams.get('code')).toBeTruthy();
      await first.connected.catch((error: unknown) => {
        throw new Error(withLog(`mcp-remote did not connect: ${String(error)}`));
      });
      expect((await storedTokens()).refresh_token).toMatch(/^prt_/);
    },
    SIGN_IN_TIMEOUT_MS * 2,
  );

  it(
    'lists every tool on the first connection, write tools included',
    async () => {
      const { tools } = await client.listTools(undefined, { timeout: CALL_TIMEOUT_MS });
      toolNames = tools.map((tool) => tool.name).sort();
      // The figure for the closing note: how many tools a first connection of mcp-remote sees.
      console.info(`mcp-remote first connection: tools/list lists ${toolNames.length} tools`);
      expect(toolNames).toEqual(ALL_TOOLS.map((tool) => tool.name).sort());
    },
    CALLS_TEST_TIMEOUT_MS,
  );

  it(
    'calls a read tool and a write tool on the first connection, with no second sign-in',
    async () => {
      const profile = toolResult<{ id: string }>(
        await client.callTool({ name: 'get_profile', arguments: {} }, undefined, { timeout: CALL_TIMEOUT_MS }),
      );
      expect(profile.id).toBe(athlete.id);

      const logged = toolResult<{ date: string; hrv: number }>(
        await client.callTool(
          { name: 'log_wellness', arguments: { date: '2026-11-20', hrv: 64, restingHr: 48 } },
          undefined,
          { timeout: CALL_TIMEOUT_MS },
        ),
      );
      expect(logged).toMatchObject({ date: '2026-11-20', hrv: 64 });
      expect(await browserLaunches()).toHaveLength(1);
    },
    CALLS_TEST_TIMEOUT_MS,
  );

  it(
    'refreshes an access token that expired, without the person',
    async () => {
      const before = await storedTokens();
      const launchesBefore = (await browserLaunches()).length;
      // The access token's lifetime ends on the server; mcp-remote still believes it valid (an hour by its clock).
      const expired = await server.db
        .updateTable('oauthAccessTokens')
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where('tokenHash', '=', sha256Hex(before.access_token))
        .executeTakeFirst();
      expect(expired.numUpdatedRows).toBe(1n);

      const profile = toolResult<{ id: string }>(
        await client.callTool({ name: 'get_profile', arguments: {} }, undefined, { timeout: CALL_TIMEOUT_MS }),
      );
      expect(profile.id).toBe(athlete.id);

      // The server refused the expired token first (401 invalid_token), and mcp-remote refreshed on that answer.
      // (The refusal is recorded after the answer: wait for the row.)
      await waitFor(async () => {
        const refusals = await server.db
          .selectFrom('mcpAuthFailures')
          .select('count')
          .where('reason', '=', 'expired')
          .executeTakeFirst();
        return (refusals?.count ?? 0) > 0;
      }, 'the refusal of the expired token to be recorded');
      const after = await storedTokens();
      expect(after.access_token).not.toBe(before.access_token);
      expect(after.refresh_token).toMatch(/^prt_/);
      expect(after.refresh_token).not.toBe(before.refresh_token); // rotated (RFC 9700 §4.14.2)
      expect((await browserLaunches()).length).toBe(launchesBefore);
      const refreshed = await server.db
        .selectFrom('oauthAccessTokens')
        .select(['resource', 'scopes'])
        .where('tokenHash', '=', sha256Hex(after.access_token))
        .executeTakeFirstOrThrow();
      expect(refreshed.resource).toBe(server.config.mcpResource);
      expect([...refreshed.scopes].sort()).toEqual(before.scope?.split(' ').sort()); // nothing lost on refresh
    },
    CALLS_TEST_TIMEOUT_MS,
  );

  it(
    'restarts on the stored tokens: no browser, no new registration, and it still works',
    async () => {
      const before = await storedTokens();
      const launchesBefore = (await browserLaunches()).length;
      const clientsBefore = await server.db
        .selectFrom('oauthClients')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .executeTakeFirstOrThrow();
      await client.close();

      // Nothing to sign in: the connection is as bounded as a tool call.
      const second = startMcpRemote(CALL_TIMEOUT_MS);
      client = second.client;
      await second.connected.catch((error: unknown) => {
        throw new Error(withLog(`mcp-remote did not reconnect: ${String(error)}`));
      });
      const { tools } = await client.listTools(undefined, { timeout: CALL_TIMEOUT_MS });
      expect(tools.map((tool) => tool.name).sort()).toEqual(toolNames);
      const profile = toolResult<{ id: string }>(
        await client.callTool({ name: 'get_profile', arguments: {} }, undefined, { timeout: CALL_TIMEOUT_MS }),
      );
      expect(profile.id).toBe(athlete.id);

      expect((await browserLaunches()).length).toBe(launchesBefore);
      expect((await storedTokens()).access_token).toBe(before.access_token);
      const clientsAfter = await server.db
        .selectFrom('oauthClients')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .executeTakeFirstOrThrow();
      expect(clientsAfter.count).toBe(clientsBefore.count);
      await client.close();
    },
    CALLS_TEST_TIMEOUT_MS,
  );
});

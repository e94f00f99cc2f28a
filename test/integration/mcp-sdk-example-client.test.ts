/**
 * The MCP TypeScript SDK's own example OAuth client (`simpleOAuthClient`,
 * shipped in @modelcontextprotocol/sdk under dist/esm/examples/client/), run
 * unchanged as a child process against the real server's `/mcp`, as a user
 * following the SDK's README would run it. It discovers the server, registers
 * with `token_endpoint_auth_method: "client_secret_post"` (RFC 7591) and
 * prints the authorization URL for the user to open (its "browser" step: it
 * opens nothing, it prints `Please open this URL in your browser to
 * authorize:` and the URL on the next line). Then it listens for the callback
 * on its fixed port 8090 (`http://localhost:8090/callback`), exchanges the
 * code with its client secret in the body, reconnects and reads commands
 * from stdin (`list`, `quit`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSignedIn } from '../support/oauth-fixture.ts';
import { authorizeAs, type CookieJar } from '../support/oauth-flow.ts';
import { exited } from '../support/process.ts';
import type { TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait.ts';

/** The example's `CALLBACK_PORT`: a constant in its source, not configurable. */
const CALLBACK_PORT = 8090;
const EXAMPLE = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/sdk/client/index.js')),
  '../examples/client/simpleOAuthClient.js',
);
const OPEN_URL_LINE = /Please open this URL in your browser to authorize:\s*\n\s*(\S+)/;

let server: TestServer;
let jar: CookieJar;
let example: ChildProcess | undefined;
let output = '';
/** Set before the example starts: whether another process already holds its callback port. */
let callbackPortTaken = false;

/** Whether something else already listens on the example's callback port (it cannot be moved). */
function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(true));
    probe.listen(port, () => probe.close(() => resolve(false)));
  });
}

beforeAll(async () => {
  // The admin owns the clients the example registers, and approves its request.
  ({ server, jar } = await startSignedIn({ user: { admin: true } }));
  callbackPortTaken = await portTaken(CALLBACK_PORT);
});
afterAll(async () => {
  if (example && example.exitCode === null && example.signalCode === null) {
    example.kill();
    await exited(example);
  }
  await server.stop();
});

function startExample(): ChildProcess {
  const child = spawn(process.execPath, [EXAMPLE, server.config.mcpResource], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '' },
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return child;
}

/** What the example printed so far matching `pattern`; throws once it has exited without printing it. */
function printedSoFar(pattern: RegExp, what: string): RegExpExecArray | undefined {
  const match = pattern.exec(output) ?? undefined;
  if (!match && example && example.exitCode !== null) {
    throw new Error(`the example exited (${example.exitCode}) before printing ${what}`);
  }
  return match;
}

/** Wait until the example prints `pattern`; a failure shows everything it printed. */
const printed = (pattern: RegExp, what: string, timeoutMs = 15_000): Promise<RegExpExecArray> =>
  waitFor(() => Promise.resolve(printedSoFar(pattern, what)), `the example to print ${what}`, timeoutMs).catch(
    (error: unknown) => {
      throw new Error(`${(error as Error).message}\n--- example output ---\n${output}`);
    },
  );

describe("the MCP SDK's example OAuth client (simpleOAuthClient, client_secret_post)", () => {
  let authorizationUrl: URL;
  let clientId: string;

  it('registers a confidential client with the method it asked for and prints an authorization URL that /api/oauth/authorize answers with the sign-in and consent pages', async () => {
    example = startExample();
    authorizationUrl = new URL((await printed(OPEN_URL_LINE, 'the authorization URL'))[1] ?? '');

    expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(`${server.url}/api/oauth/authorize`);
    expect(authorizationUrl.searchParams.get('response_type')).toBe('code');
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(`http://localhost:${CALLBACK_PORT}/callback`);
    expect(authorizationUrl.searchParams.get('resource')).toBe(server.config.mcpResource);
    clientId = authorizationUrl.searchParams.get('client_id') ?? '';

    const client = await server.db
      .selectFrom('oauthClients')
      .selectAll()
      .where('clientId', '=', clientId)
      .executeTakeFirstOrThrow();
    expect(client).toMatchObject({
      kind: 'dcr',
      name: 'Simple OAuth MCP Client',
      isPublic: false,
      redirectUris: [`http://localhost:${CALLBACK_PORT}/callback`],
    });
    expect(client.clientSecretHash).toMatch(/^[0-9a-f]{64}$/);

    // A browser that is not signed in is sent to the sign-in page, which comes back here afterwards.
    const anonymous = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    const login = new URL(anonymous.headers.get('location') ?? '', server.url);
    expect(login.pathname).toBe('/login');
    expect(login.searchParams.get('next')).toMatch(/^\/api\/oauth\/authorize\?/);
    const loginPage = await fetch(login);
    expect(loginPage.status).toBe(200);
    expect(await loginPage.text()).toContain('Sign in');

    // The signed-in user sees the consent page for the app, its name marked as self-registered.
    const consent = await authorizeAs(jar, authorizationUrl.toString(), 'stop');
    expect(consent.status).toBe(200);
    expect(consent.body).toContain('<strong>Unverified app:</strong> <q>Simple OAuth MCP Client</q>');
    expect(consent.body).toContain('<strong>localhost:8090</strong>');
    expect(consent.body).toContain('value="approve"');
  });

  it('after approval it takes the code on its callback port, exchanges it with its client secret and lists the tools', async (context) => {
    if (!clientId) context.skip('the registration step above failed');
    if (callbackPortTaken) {
      // The port is a constant of the example; a process that is not ours holds it, and we end only our own.
      context.skip(`port ${CALLBACK_PORT}, the example's fixed callback port, is held by another process`);
    }
    await printed(new RegExp(`OAuth callback server started on http://localhost:${CALLBACK_PORT}`), 'its callback');

    const approved = await authorizeAs(jar, authorizationUrl.toString(), 'approve');
    const callback = approved.location;
    expect(callback?.origin).toBe(`http://localhost:${CALLBACK_PORT}`);
    expect(callback?.searchParams.get('code')).toBeTruthy();
    // The browser following the redirect: the example's own callback server.
    const landed = await fetch(callback ?? '');
    expect(landed.status).toBe(200);
    expect(await landed.text()).toContain('Authorization Successful');

    await printed(/Connected successfully/, 'that it connected with its tokens');
    await printed(/mcp> /, 'its prompt');
    example?.stdin?.write('list\n');
    await printed(/Available tools:\s*\n\s*1\. [a-z_]+/, 'the tool list');

    const tokens = await server.db
      .selectFrom('oauthAccessTokens')
      .innerJoin('oauthGrants', 'oauthGrants.id', 'oauthAccessTokens.grantId')
      .innerJoin('oauthClients', 'oauthClients.id', 'oauthGrants.clientId')
      .select('oauthAccessTokens.resource')
      .where('oauthClients.clientId', '=', clientId)
      .execute();
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.every((token) => token.resource === server.config.mcpResource)).toBe(true);

    example?.stdin?.write('quit\n');
    expect((await exited(example as ChildProcess)).code).toBe(0);
  });
});

/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance`, its
 * `server` command) run as a child process against `POST /mcp`, one scenario
 * per test. The suite sends no token, so it talks to a loopback proxy that
 * adds one (test/support/mcp-token-proxy.ts). The server's base URL is the
 * proxy's, as in a deployment behind a reverse proxy, so the Host and Origin
 * the suite sends through the proxy are checked against it unchanged.
 *
 * A stateless server issues no session id: the suite reports that as a
 * WARNING, never a FAILURE, and each test asserts only the absence of
 * FAILURE checks (plus the checks the scenario is expected to produce).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MCP_SCOPES } from '@pacer/contract';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { COMMAND_TIMEOUT_MS, killBoundedCommands, runBoundedCommand } from '../support/bounded-command.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { startMcpTokenProxy, type McpTokenProxy } from '../support/mcp-token-proxy.ts';
import { ROOT } from '../support/process.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const CONFORMANCE_CLI = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';

interface ConformanceCheck {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly status: CheckStatus;
  readonly errorMessage?: string;
  readonly details?: unknown;
}

interface ConformanceRun {
  readonly code: number | null;
  readonly checks: readonly ConformanceCheck[];
  readonly output: string;
}

let proxy: McpTokenProxy;
let server: TestServer;
let outputRoot: string;

beforeAll(async () => {
  // The proxy's port must be known before the server starts: it is the server's base URL.
  proxy = await startMcpTokenProxy();
  server = await startTestServer({ PACER_BASE_URL: proxy.url });
  const athlete = await makeUser(server.db);
  const { token } = await mintToken(server.db, athlete, {
    scopes: [...MCP_SCOPES],
    resource: server.config.mcpResource,
  });
  proxy.forward({ target: server.url, token });
  outputRoot = await mkdtemp(path.join(os.tmpdir(), 'pacer-conformance-'));
});

afterAll(async () => {
  killBoundedCommands();
  await proxy?.close();
  await server?.stop();
  if (outputRoot) await rm(outputRoot, { recursive: true, force: true });
});

/** `conformance server --scenario <name>`, its checks read from the `checks.json` it saves. */
async function runScenario(scenario: string): Promise<ConformanceRun> {
  const outputDir = await mkdtemp(path.join(outputRoot, `${scenario}-`));
  const result = await runBoundedCommand(
    process.execPath,
    [CONFORMANCE_CLI, 'server', '--url', `${proxy.url}/mcp`, '--scenario', scenario, '--output-dir', outputDir],
    { env: { ...process.env, NO_PROXY: '127.0.0.1,localhost', NO_COLOR: '1' } },
  );
  const output = `${result.stdout}\n${result.stderr}`;
  if (result.timedOut) throw new Error(`conformance ${scenario} ran past ${COMMAND_TIMEOUT_MS} ms:\n${output}`);
  const [runDir] = await readdir(outputDir);
  if (runDir === undefined)
    throw new Error(`conformance ${scenario} saved no results (exit ${result.code}):\n${output}`);
  const checks = JSON.parse(await readFile(path.join(outputDir, runDir, 'checks.json'), 'utf8')) as ConformanceCheck[];
  return { code: result.code, checks, output };
}

function summarize(scenario: string, checks: readonly ConformanceCheck[]): string {
  const lines = checks.map(
    (check) => `  ${check.status.padEnd(7)} ${check.id}: ${check.errorMessage ?? check.description}`,
  );
  return `conformance ${scenario}\n${lines.join('\n')}`;
}

interface ScenarioExpectation {
  readonly scenario: string;
  readonly behaviour: string;
  /** Checks the scenario must report, with their status. */
  readonly expected: Readonly<Record<string, CheckStatus>>;
}

const SCENARIOS: readonly ScenarioExpectation[] = [
  {
    scenario: 'server-initialize',
    behaviour: 'completes the initialize handshake through a proxy that supplies the token',
    expected: { 'server-initialize': 'SUCCESS' },
  },
  {
    scenario: 'ping',
    behaviour: 'answers ping with an empty result',
    expected: { ping: 'SUCCESS' },
  },
  {
    scenario: 'tools-list',
    behaviour: 'lists tools that each carry a name, a description and an input schema',
    expected: { 'tools-list': 'SUCCESS' },
  },
  {
    scenario: 'dns-rebinding-protection',
    behaviour: 'refuses a foreign Host and Origin with a 4xx and accepts the loopback ones',
    expected: { 'localhost-host-rebinding-rejected': 'SUCCESS', 'localhost-host-valid-accepted': 'SUCCESS' },
  },
  {
    scenario: 'server-sse-multiple-streams',
    behaviour: 'passes the multiple-streams scenario, warning only that a stateless server has no session id',
    expected: { 'server-sse-multiple-streams-session': 'WARNING' },
  },
];

for (const { scenario, behaviour, expected } of SCENARIOS) {
  it(
    `${behaviour} (conformance: ${scenario})`,
    async () => {
      const run = await runScenario(scenario);
      console.log(summarize(scenario, run.checks));

      expect(run.checks.length, run.output).toBeGreaterThan(0);
      expect(run.checks.filter((check) => check.status === 'FAILURE')).toEqual([]);
      expect(run.code, run.output).toBe(0);
      const statuses = Object.fromEntries(run.checks.map((check) => [check.id, check.status]));
      expect(statuses).toMatchObject(expected);
    },
    COMMAND_TIMEOUT_MS + 10_000,
  );
}

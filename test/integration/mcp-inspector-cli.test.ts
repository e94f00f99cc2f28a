/**
 * The MCP Inspector CLI (`mcp-inspector --cli`, @modelcontextprotocol/inspector
 * 2.x) as a real client of `POST /mcp`, the way an integrator smoke-tests a
 * server from a shell or CI job: a bearer token in `--header`, one JSON object
 * on stdout (`--format json`), and its exit code (0 ok, 5 when a tool answers
 * `isError`). It runs non-interactively: no OAuth login (`--stored-auth-only`),
 * no browser, and its config under a temporary HOME.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createPacerClient } from '@pacer/client-sdk';
import { MCP_SCOPES } from '@pacer/contract';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import {
  COMMAND_TIMEOUT_MS,
  killBoundedCommands,
  runBoundedCommand,
  type BoundedCommandResult,
} from '../support/bounded-command.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { ROOT } from '../support/process.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const INSPECTOR_BIN = path.join(ROOT, 'node_modules/.bin/mcp-inspector');
/** The Inspector CLI's exit code for a tool result with `isError: true`. */
const EXIT_TOOL_ERROR = 5;
const TEST_TIMEOUT_MS = COMMAND_TIMEOUT_MS + 10_000;

interface ToolCallOutput {
  readonly result: {
    readonly content: readonly { readonly type: string; readonly text: string }[];
    readonly structuredContent?: Record<string, unknown>;
    readonly isError?: boolean;
  };
}

let server: TestServer;
let athlete: User;
let mcpToken: string;
let inspectorHome: string;

beforeAll(async () => {
  server = await startTestServer();
  athlete = await makeUser(server.db);
  mcpToken = (await mintToken(server.db, athlete, { scopes: [...MCP_SCOPES], resource: server.config.mcpResource }))
    .token;
  const restToken = (await mintToken(server.db, athlete, { scopes: ['health:write'] })).token;
  const seeded = await createPacerClient({ baseUrl: server.url, accessToken: restToken }).wellness.upsertWellness({
    body: { date: '2026-11-03', hrv: 61, restingHr: 48 },
  });
  expect(seeded.status).toBe(201);
  inspectorHome = await mkdtemp(path.join(os.tmpdir(), 'pacer-inspector-home-'));
});

afterAll(async () => {
  killBoundedCommands();
  await server?.stop();
  if (inspectorHome) await rm(inspectorHome, { recursive: true, force: true });
});

/** Everything the Inspector could read or write stays in a temporary HOME; nothing opens a browser. */
function inspectorEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('MCP_')) env[name] = value;
  }
  return {
    ...env,
    HOME: inspectorHome,
    XDG_CONFIG_HOME: path.join(inspectorHome, '.config'),
    XDG_CACHE_HOME: path.join(inspectorHome, '.cache'),
    XDG_DATA_HOME: path.join(inspectorHome, '.local/share'),
    MCP_AUTO_OPEN_ENABLED: 'false',
    BROWSER: 'none',
    NO_UPDATE_NOTIFIER: '1',
    CI: '1',
    NO_COLOR: '1',
    NO_PROXY: '127.0.0.1,localhost',
  };
}

/** `mcp-inspector --cli` against this server's `/mcp` with the athlete's MCP token. */
function inspect(args: readonly string[]): Promise<BoundedCommandResult> {
  return runBoundedCommand(
    process.execPath,
    [
      INSPECTOR_BIN,
      '--cli',
      '--transport',
      'http',
      '--server-url',
      server.config.mcpResource,
      '--header',
      `Authorization: Bearer ${mcpToken}`,
      '--format',
      'json',
      '--quiet',
      '--stored-auth-only',
      ...args,
    ],
    { env: inspectorEnv() },
  );
}

function describeRun(run: BoundedCommandResult): string {
  return `exit ${run.code}${run.timedOut ? ' (killed: timed out)' : ''}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
}

/** The one JSON object `--format json` prints on stdout. */
function parseStdout<T>(run: BoundedCommandResult): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`stdout is not one JSON object: ${describeRun(run)}`);
  }
}

/** A successful call's `structuredContent`, checked to be the JSON of `content[0].text`. */
function toolOutput(run: BoundedCommandResult): Record<string, unknown> {
  const { result } = parseStdout<ToolCallOutput>(run);
  expect(result.isError, describeRun(run)).toBeUndefined();
  expect(JSON.parse(result.content[0]?.text ?? 'null')).toEqual(result.structuredContent);
  return result.structuredContent ?? {};
}

it(
  'lists the tools the token may call and exits 0 (tools/list)',
  async () => {
    const run = await inspect(['--method', 'tools/list']);

    expect(run.code, describeRun(run)).toBe(0);
    const { result } = parseStdout<{ result: { tools: { name: string; description: string }[] } }>(run);
    const names = result.tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['get_profile', 'get_wellness', 'get_workout', 'log_wellness', 'get_current_time']),
    );
    expect(result.tools.every((tool) => tool.description.length > 0)).toBe(true);
  },
  TEST_TIMEOUT_MS,
);

it(
  "calls get_profile and prints the token holder's own profile",
  async () => {
    const run = await inspect(['--method', 'tools/call', '--tool-name', 'get_profile']);

    expect(run.code, describeRun(run)).toBe(0);
    expect(toolOutput(run)).toMatchObject({ id: athlete.id, email: athlete.email });
  },
  TEST_TIMEOUT_MS,
);

it(
  'passes --tool-arg values to get_wellness and prints the days in that range',
  async () => {
    const run = await inspect([
      '--method',
      'tools/call',
      '--tool-name',
      'get_wellness',
      '--tool-arg',
      'from=2026-11-01',
      'to=2026-11-07',
    ]);

    expect(run.code, describeRun(run)).toBe(0);
    const output = toolOutput(run) as { items: { date: string; hrv: number; restingHr: number }[] };
    expect(output.items).toEqual([expect.objectContaining({ date: '2026-11-03', hrv: 61, restingHr: 48 })]);
  },
  TEST_TIMEOUT_MS,
);

it(
  'exits 5 with the not_found tool error when get_workout is asked for an unknown id',
  async () => {
    const run = await inspect([
      '--method',
      'tools/call',
      '--tool-name',
      'get_workout',
      '--tool-arg',
      `id=${randomUUID()}`,
    ]);

    expect(run.code, describeRun(run)).toBe(EXIT_TOOL_ERROR);
    const { result } = parseStdout<ToolCallOutput>(run);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(JSON.parse(result.content[0]?.text ?? 'null')).toMatchObject({ error: 'not_found' });
    expect(JSON.parse(run.stderr)).toMatchObject({ error: { code: 'tool_is_error' } });
  },
  TEST_TIMEOUT_MS,
);

/**
 * The MCP tool manifest (docs/design.md §3 "Operations", specification §4.2): the
 * committed `mcp-manifest.json` is what the tool registry generates (the same
 * check `npm run check:generated` runs), and start-up logs the drift check
 * when MCP is enabled.
 */
import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MCP_MANIFEST_PATH, renderMcpManifest } from '../../server/src/mcp/manifest.ts';
import { MAX_TOOLS, TOOL_NAME } from '../../server/src/mcp/registry.ts';
import { startTestServer } from '../support/test-server.ts';

async function startupLines(env: Record<string, string>): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  const capture = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const server = await startTestServer({ PACER_LOG_LEVEL: 'info', ...env }, { logDestination: capture });
  await server.stop();
  return lines;
}

describe('mcp-manifest.json', () => {
  it('is the committed output of the tool registry', async () => {
    expect(await readFile(MCP_MANIFEST_PATH, 'utf8')).toBe(renderMcpManifest());
  });

  it('names at most 40 snake_case tools, each with scopes, a phase, all four hints and schema hashes', async () => {
    const manifest = JSON.parse(await readFile(MCP_MANIFEST_PATH, 'utf8')) as {
      tools: { name: string; phase: string; scopes: string[]; annotations: Record<string, boolean> }[];
    };
    expect(manifest.tools.length).toBeLessThanOrEqual(MAX_TOOLS);
    for (const tool of manifest.tools) {
      expect(tool.name).toMatch(TOOL_NAME);
      expect(['read', 'write', 'async']).toContain(tool.phase);
      expect(Object.keys(tool.annotations).sort()).toEqual([
        'destructiveHint',
        'idempotentHint',
        'openWorldHint',
        'readOnlyHint',
      ]);
      expect(tool.annotations['openWorldHint']).toBe(false);
      expect(tool).toMatchObject({ inputSchemaSha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    }
  });

  it('is checked and logged at start-up when MCP is enabled, and not when it is off', async () => {
    const enabled = await startupLines({});
    const check = enabled.find((line) => String(line['msg']).startsWith('MCP manifest check'));
    expect(check).toMatchObject({ level: 30, tools: JSON.parse(renderMcpManifest()).tools.length });
    const disabled = await startupLines({ PACER_MCP_ENABLED: 'false' });
    expect(disabled.some((line) => String(line['msg']).includes('MCP manifest'))).toBe(false);
  });
});

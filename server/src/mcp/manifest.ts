import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { canonicalJson } from '../modules/idempotency/idempotency.service.ts';
import type { Logger } from '../logger.ts';
import { describeAllTools } from './registry.ts';

/** The committed manifest, at the repository's root beside openapi.json. */
export const MCP_MANIFEST_PATH = fileURLToPath(new URL('../../../mcp-manifest.json', import.meta.url));

const hashOf = (value: unknown) => createHash('sha256').update(canonicalJson(value)).digest('hex');

/**
 * The MCP tool manifest (docs/design.md §3 "Operations"): every tool with its
 * phase, scopes, feature gate, annotations and the SHA-256 of its input and
 * output JSON Schemas, so a change of any tool's wire shape shows as drift.
 */
export function buildMcpManifest() {
  return {
    tools: describeAllTools().map(({ tool, listed }) => ({
      name: tool.name,
      title: tool.title,
      phase: tool.phase,
      scopes: [...tool.scopes],
      ...(tool.feature ? { feature: tool.feature } : {}),
      annotations: { ...tool.annotations },
      inputSchemaSha256: hashOf(listed.inputSchema),
      outputSchemaSha256: hashOf(listed.outputSchema),
    })),
  };
}

export function renderMcpManifest(): string {
  return `${JSON.stringify(buildMcpManifest(), null, 2)}\n`;
}

/** Start-up check (specification §4.2): logs whether the running tools match the committed manifest. */
export async function checkMcpManifest(logger: Logger): Promise<boolean> {
  const committed = await readFile(MCP_MANIFEST_PATH, 'utf8').catch(() => undefined);
  const tools = describeAllTools().length;
  if (committed === renderMcpManifest()) {
    logger.info({ tools }, 'MCP manifest check: the tools match mcp-manifest.json');
    return true;
  }
  logger.warn(
    { tools, manifest: committed === undefined ? 'missing' : 'different' },
    'MCP manifest drift: the running tools differ from mcp-manifest.json (run `npm run mcp:manifest`)',
  );
  return false;
}

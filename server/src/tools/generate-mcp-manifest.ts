import { readFile, writeFile } from 'node:fs/promises';
import { MCP_MANIFEST_PATH, renderMcpManifest } from '../mcp/manifest.ts';

/**
 * `npm run mcp:manifest` writes mcp-manifest.json from the tool registry;
 * `npm run check:generated` fails when the committed file differs.
 */
const generated = renderMcpManifest();

if (process.argv.includes('--check')) {
  const committed = await readFile(MCP_MANIFEST_PATH, 'utf8').catch(() => '');
  if (committed !== generated) {
    process.stderr.write(
      'mcp-manifest.json is out of date with the MCP tools: run `npm run mcp:manifest` and commit it.\n',
    );
    process.exit(1);
  }
  process.stdout.write('mcp-manifest.json matches the MCP tools.\n');
} else {
  await writeFile(MCP_MANIFEST_PATH, generated);
  process.stdout.write(`wrote ${MCP_MANIFEST_PATH}\n`);
}

import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../http/openapi.ts';

/**
 * `npm run openapi` writes openapi.json from the contract;
 * `npm run check:generated` fails when the committed file differs.
 */
const target = fileURLToPath(new URL('../../../openapi.json', import.meta.url));
const generated = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

if (process.argv.includes('--check')) {
  const committed = await readFile(target, 'utf8').catch(() => '');
  if (committed !== generated) {
    process.stderr.write('openapi.json is out of date with the contract: run `npm run openapi` and commit it.\n');
    process.exit(1);
  }
  process.stdout.write('openapi.json matches the contract.\n');
} else {
  await writeFile(target, generated);
  process.stdout.write(`wrote ${target}\n`);
}

// `npm pack` / `npm publish` ship package.json as it is on disk after `prepack`. The workspace's copy has a
// `pacer-source` export condition (the monorepo type-checks and runs tools against src/, which is not shipped);
// `strip` saves the file and removes that condition, `restore` (postpack) puts the saved file back.
import { readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const file = fileURLToPath(new URL('../package.json', import.meta.url));
const saved = `${file}.workspace`;
const mode = process.argv[2];

if (mode === 'strip') {
  const text = readFileSync(file, 'utf8');
  if (!existsSync(saved)) writeFileSync(saved, text);
  /** @type {{ exports: Record<string, Record<string, unknown>>, devDependencies?: unknown }} */
  const manifest = JSON.parse(text);
  delete manifest.exports['.']['pacer-source'];
  delete manifest.devDependencies;
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
} else if (mode === 'restore') {
  if (existsSync(saved)) renameSync(saved, file);
} else {
  throw new Error(`usage: manifest.mjs strip|restore (got ${mode})`);
}

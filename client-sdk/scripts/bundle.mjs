// The published build: tsup (see tsup.config.ts), then the CommonJS copy of the bundled declarations.
// The bundled index.d.ts imports only zod and @ts-rest/core (both ship CommonJS and ESM types), so the same text
// is right for `require` consumers as index.d.cts. Run through npm (`npm run bundle`), which puts tsup on PATH.
//
// tsup writes into .dist-next/, which then replaces dist/ by two renames: processes importing the SDK meanwhile
// (the integration suite packs the SDK while other test files run) never see a half-written or missing dist/.
//
// `--if-changed` (the root `npm run build`, which `npm start` runs first) skips the bundle when dist/ is newer than
// every input: the SDK's and the contract's sources and the build's own configuration. Packing always bundles.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));

/** The newest modification time among `paths` (files, or folders walked whole); 0 for none. */
function newestMtimeMs(paths) {
  let newest = 0;
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    if (stat.isDirectory()) {
      const children = readdirSync(path).map((name) => `${path}/${name}`);
      newest = Math.max(newest, newestMtimeMs(children));
    } else newest = Math.max(newest, stat.mtimeMs);
  }
  return newest;
}

if (process.argv.includes('--if-changed') && existsSync(`${here}/dist/index.d.cts`)) {
  const inputs = [
    `${here}/src`,
    `${here}/../contract/src`,
    `${here}/tsup.config.ts`,
    `${here}/tsconfig.bundle.json`,
    `${here}/package.json`,
  ];
  if (newestMtimeMs(inputs) < statSync(`${here}/dist/index.d.cts`).mtimeMs) process.exit(0);
}
const next = `${here}/.dist-next`;
const old = `${here}/.dist-old`;
rmSync(next, { recursive: true, force: true });
rmSync(old, { recursive: true, force: true });
const result = spawnSync('tsup', ['--silent'], {
  cwd: here,
  stdio: 'inherit',
  env: { ...process.env, PACER_SDK_OUT: '.dist-next' },
});
if (result.error) throw result.error;
if (result.status !== 0) process.exit(result.status ?? 1);
copyFileSync(`${next}/index.d.ts`, `${next}/index.d.cts`);
if (existsSync(`${here}/dist`)) renameSync(`${here}/dist`, old);
renameSync(next, `${here}/dist`);
rmSync(old, { recursive: true, force: true });

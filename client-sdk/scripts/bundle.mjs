// The published build: tsup (see tsup.config.ts), then the CommonJS copy of the bundled declarations.
// The bundled index.d.ts imports only zod and @ts-rest/core (both ship CommonJS and ESM types), so the same text
// is right for `require` consumers as index.d.cts. Run through npm (`npm run bundle`), which puts tsup on PATH.
//
// tsup writes into .dist-next/, which then replaces dist/ by two renames: processes importing the SDK meanwhile
// (the integration suite packs the SDK while other test files run) never see a half-written or missing dist/.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, renameSync, rmSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
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

// The published build: tsup (see tsup.config.ts), then the CommonJS copy of the bundled declarations.
// The bundled index.d.ts imports only zod and @ts-rest/core (both ship CommonJS and ESM types), so the same text
// is right for `require` consumers as index.d.cts. Run through npm (`npm run bundle`), which puts tsup on PATH.
import { spawnSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
rmSync(`${here}/dist`, { recursive: true, force: true });
const result = spawnSync('tsup', ['--silent'], { cwd: here, stdio: 'inherit' });
if (result.error) throw result.error;
if (result.status !== 0) process.exit(result.status ?? 1);
copyFileSync(`${here}/dist/index.d.ts`, `${here}/dist/index.d.cts`);

import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { startNodeFlags } from '../support/process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

it("decodes in its worker under npm start's node flags (V8 heap flags are refused in a Worker's execArgv)", async () => {
  const flags = startNodeFlags(ROOT);
  expect(flags.some((flag) => flag.startsWith('--max-semi-space-size'))).toBe(true);
  expect(flags.some((flag) => flag.startsWith('--heap-growing-percent'))).toBe(true);
  const script = `
    import { FitDecoderPool } from ${JSON.stringify(path.join(ROOT, 'server/src/modules/workouts/fit-decoder.pool.ts'))};
    import { oneHourRide } from ${JSON.stringify(path.join(ROOT, 'test/support/fit-fixtures.ts'))};
    const pool = new FitDecoderPool({ size: 1 });
    const outcome = await pool.decodeActivity(oneHourRide().bytes, { maxRecords: 1000000, timeoutMs: 60000 });
    await pool.close();
    process.stdout.write(JSON.stringify({ ok: outcome.ok }));`;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pacer-pool-flags-'));
  try {
    const file = path.join(dir, 'decode.ts');
    await writeFile(file, script);
    const { stdout } = await promisify(execFile)(process.execPath, [...flags, file], { cwd: ROOT });
    expect(JSON.parse(stdout)).toEqual({ ok: true });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

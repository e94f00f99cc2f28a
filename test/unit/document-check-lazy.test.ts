/**
 * Ajv (the openapi.json half of PACER_CHECK_RESPONSES) is loaded by the first
 * answer checked, not by importing the check: every process serving the API
 * imports response-check.ts, and only a test server checks answers, so an
 * idle production server must not hold Ajv's code (docs/design.md §2 "Memory").
 * A fresh node process, as `npm start` runs it, records every module it loads.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { startNodeFlags } from '../support/process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

it('loads Ajv with the first answer checked against openapi.json, not with the check module', async () => {
  const script = `
    import { registerHooks } from 'node:module';
    const loaded = [];
    registerHooks({ load: (url, context, nextLoad) => (loaded.push(url), nextLoad(url, context)) });
    const ajvLoaded = () => loaded.some((url) => /\\/node_modules\\/ajv(-formats)?\\//.test(url));
    const { documentMismatch } = await import(${JSON.stringify(path.join(ROOT, 'server/src/http/document-check.ts'))});
    await import(${JSON.stringify(path.join(ROOT, 'server/src/http/response-check.ts'))});
    const atImport = ajvLoaded();
    // GET /api/profile as the contract routes it: a body the document's schema refuses.
    const mismatch = documentMismatch({ method: 'GET', path: '/api/profile', responses: {} }, 200, { unexpected: true });
    process.stdout.write(JSON.stringify({ atImport, afterCheck: ajvLoaded(), mismatch: typeof mismatch }));`;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pacer-document-check-'));
  try {
    const file = path.join(dir, 'check.ts');
    await writeFile(file, script);
    const { stdout } = await promisify(execFile)(process.execPath, [...startNodeFlags(ROOT), file], { cwd: ROOT });
    expect(JSON.parse(stdout)).toEqual({ atImport: false, afterCheck: true, mismatch: 'string' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

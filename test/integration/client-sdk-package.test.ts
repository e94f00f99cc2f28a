import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_DATA_SCOPES, makeUser, mintToken } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/**
 * The SDK as an integrator gets it: built, packed with `npm pack`, unpacked
 * into a project of its own outside the repository, and used from plain
 * `node` (no `pacer-source` condition, so only `dist/` can be resolved) and
 * from a strict TypeScript project type-checked against the shipped `.d.ts`.
 */

const TIMEOUT = 120_000;
const repoRoot = path.resolve(import.meta.dirname, '..', '..');
const tscBin = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');

interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function runOk(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<RunResult> {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited with ${result.code}\n${result.stdout}\n${result.stderr}`);
  }
  return result;
}

/** A child environment without anything that could add `--conditions=pacer-source`. */
function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env['NODE_OPTIONS'];
  return env;
}

/** What the integrator's plain JavaScript does with the packed SDK. */
const CONSUMER_MJS = `
import { createPacerClient } from '@pacer/client-sdk';

const baseUrl = process.env.PACER_URL;
const accessToken = process.env.PACER_TOKEN;
const pacer = createPacerClient({ baseUrl: baseUrl + '/', accessToken });

const created = await pacer.wellness.upsertWellness({ body: { date: '2026-11-20', hrv: 62.5, restingHr: 47 } });
const updated = await pacer.wellness.upsertWellness({ body: { date: '2026-11-20', sleepSecs: 27000 } });
await pacer.wellness.upsertWellness({ body: { date: '2026-11-21', hrv: 58 } });

const nutrition = await pacer.nutrition.upsertNutrition({
  body: {
    date: '2026-11-20',
    items: [
      { name: 'Gel', carbs: 25, calories: 100, logged_at: '2026-11-20T09:15:00+01:00', absorptionType: 'RAPID' },
      { name: 'Rice bowl', carbs: 80, protein: 20, fat: 10, calories: 490, logged_at: '2026-11-20T13:00:00+01:00' },
    ],
  },
});

const wellnessPages = [];
let cursor;
do {
  const page = await pacer.wellness.listWellness({
    query: { from: '2026-11-19', to: '2026-11-22', limit: 1, cursor },
  });
  if (page.status !== 200) throw new Error('listWellness answered ' + page.status + ': ' + JSON.stringify(page.body));
  wellnessPages.push(page.body.items.map((item) => ({ date: item.date, hrv: item.hrv, sleepSecs: item.sleepSecs })));
  cursor = page.body.nextCursor ?? undefined;
} while (cursor && wellnessPages.length < 10);

const nutritionList = await pacer.nutrition.listNutrition({ query: { from: '2026-11-19', to: '2026-11-22' } });

const invalid = await pacer.wellness.upsertWellness({ body: { date: '2026-11-20', hrv: 'high' } });

const stranger = createPacerClient({ baseUrl, accessToken: async () => 'pat_not-a-real-token' });
const unauthorized = await stranger.wellness.listWellness({ query: { from: '2026-11-19', to: '2026-11-22' } });

console.log(JSON.stringify({
  resolvedSdk: import.meta.resolve('@pacer/client-sdk'),
  resolvedContract: import.meta.resolve('@pacer/contract'),
  created: { status: created.status, date: created.body.date, hrv: created.body.hrv, restingHr: created.body.restingHr },
  updated: { status: updated.status, hrv: updated.body.hrv, restingHr: updated.body.restingHr, sleepSecs: updated.body.sleepSecs },
  nutrition: {
    status: nutrition.status,
    date: nutrition.body.date,
    items: nutrition.body.items?.map((item) => ({ name: item.name, absorptionType: item.absorptionType })),
    totals: nutrition.body.totals,
  },
  wellnessPages,
  nutritionList: {
    status: nutritionList.status,
    days: nutritionList.body.items?.map((day) => ({ date: day.date, items: day.items.length, carbs: day.totals.carbs })),
    nextCursor: nutritionList.body.nextCursor,
  },
  invalid: {
    status: invalid.status,
    type: invalid.body.type,
    title: invalid.body.title,
    contentType: invalid.headers.get('content-type'),
    code: invalid.body.code,
    paths: invalid.body.errors?.map((error) => error.path),
  },
  unauthorized: { status: unauthorized.status, code: unauthorized.body.code },
}));
`;

/**
 * The integrator's TypeScript: compiles only if the shipped declarations give
 * the client its real types (an `any` would make the @ts-expect-error lines
 * unused, which is itself an error).
 */
const CONSUMER_TS = `
import {
  createPacerClient,
  type NutritionUpsert,
  type PacerClient,
  type Problem,
  type WellnessRecord,
} from '@pacer/client-sdk';

export async function syncDay(baseUrl: string, accessToken: string): Promise<number | null> {
  const pacer: PacerClient = createPacerClient({ baseUrl, accessToken: () => accessToken });

  const res = await pacer.wellness.upsertWellness({ body: { date: '2026-11-20', hrv: 62.5, restingHr: null } });
  if (res.status === 201) {
    const record: WellnessRecord = res.body;
    const hrv: number | null = res.body.hrv;
    // @ts-expect-error a stored hrv is a number or null, never a string
    const wrong: string = res.body.hrv;
    void record;
    void wrong;
    return hrv;
  }
  if (res.status === 200) return res.body.restingHr;
  const problem: Problem = res.body;
  const firstPath: string | undefined = problem.errors?.[0]?.path;
  void firstPath;

  // @ts-expect-error hrv is a number, not a word
  await pacer.wellness.upsertWellness({ body: { date: '2026-11-20', hrv: 'high' } });
  // @ts-expect-error unknown fields are refused by the contract's strict schema
  await pacer.wellness.upsertWellness({ body: { date: '2026-11-20', heartRateVariability: 62 } });

  const meal: NutritionUpsert = {
    date: '2026-11-20',
    items: [{ name: 'Gel', carbs: 25, logged_at: '2026-11-20T09:15:00+01:00', absorptionType: 'RAPID' }],
  };
  const logged = await pacer.nutrition.upsertNutrition({ body: meal });
  if (logged.status === 201 || logged.status === 200) {
    const carbs: number = logged.body.totals.carbs;
    void carbs;
  }
  await pacer.nutrition.upsertNutrition({
    // @ts-expect-error absorptionType is one of the contract's enum values
    body: { date: '2026-11-20', items: [{ name: 'Gel', logged_at: '2026-11-20T09:15:00+01:00', absorptionType: 'SLOW' }] },
  });

  let cursor: string | undefined;
  const dates: string[] = [];
  do {
    const page = await pacer.wellness.listWellness({ query: { from: '2026-11-01', to: '2026-11-30', limit: 50, cursor } });
    if (page.status !== 200) break;
    dates.push(...page.body.items.map((item) => item.date));
    cursor = page.body.nextCursor ?? undefined;
  } while (cursor);
  return dates.length;
}
`;

const CONSUMER_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2023', 'DOM'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    // @ts-rest/core's own declarations are written against zod 3's types.
    skipLibCheck: true,
    types: [],
  },
  files: ['consumer.ts'],
};

let server: TestServer;
let token: string;
let tmp: string;
let consumerDir: string;
const tarballs: Record<'contract' | 'client-sdk', { file: string; entries: string[] }> = {
  contract: { file: '', entries: [] },
  'client-sdk': { file: '', entries: [] },
};

beforeAll(async () => {
  server = await startTestServer();
  const athlete = await makeUser(server.db);
  token = (await mintToken(server.db, athlete, { scopes: ALL_DATA_SCOPES })).token;

  tmp = await mkdtemp(path.join(os.tmpdir(), 'pacer-sdk-pack-'));
  consumerDir = path.join(tmp, 'consumer');

  await runOk(process.execPath, [tscBin, '-b', 'client-sdk'], { cwd: repoRoot });
  await runOk('npm', ['pack', '--workspace', 'contract', '--workspace', 'client-sdk', '--pack-destination', tmp], {
    cwd: repoRoot,
  });
  const packed = await readdir(tmp);
  for (const name of ['contract', 'client-sdk'] as const) {
    const file = packed.find((entry) => entry.startsWith(`pacer-${name}-`) && entry.endsWith('.tgz'));
    if (!file) throw new Error(`npm pack made no tarball for ${name}: ${packed.join(', ')}`);
    const listing = await runOk('tar', ['-tzf', path.join(tmp, file)], { cwd: tmp });
    tarballs[name] = { file: path.join(tmp, file), entries: listing.stdout.split('\n').filter(Boolean) };

    const target = path.join(consumerDir, 'node_modules', '@pacer', name);
    await mkdir(target, { recursive: true });
    await runOk('tar', ['-xzf', tarballs[name].file, '-C', target, '--strip-components=1'], { cwd: tmp });
  }

  // The runtime dependencies, from the repository's install: no network.
  await mkdir(path.join(consumerDir, 'node_modules', '@ts-rest'), { recursive: true });
  await symlink(path.join(repoRoot, 'node_modules', 'zod'), path.join(consumerDir, 'node_modules', 'zod'), 'dir');
  await symlink(
    path.join(repoRoot, 'node_modules', '@ts-rest', 'core'),
    path.join(consumerDir, 'node_modules', '@ts-rest', 'core'),
    'dir',
  );

  await writeFile(
    path.join(consumerDir, 'package.json'),
    JSON.stringify({ name: 'pacer-integrator', private: true, type: 'module' }, null, 2),
  );
  await writeFile(path.join(consumerDir, 'consumer.mjs'), CONSUMER_MJS);
  await writeFile(path.join(consumerDir, 'consumer.ts'), CONSUMER_TS);
  await writeFile(path.join(consumerDir, 'tsconfig.json'), JSON.stringify(CONSUMER_TSCONFIG, null, 2));
}, TIMEOUT);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
  await server?.stop();
});

describe('@pacer/client-sdk as a packed package', () => {
  it('ships the built dist (JavaScript and declarations), the README and no sources', () => {
    const sdk = tarballs['client-sdk'].entries;
    expect(sdk).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/dist/index.js',
        'package/dist/index.d.ts',
        'package/dist/client.js',
        'package/dist/client.d.ts',
        'package/README.md',
      ]),
    );
    const contract = tarballs.contract.entries;
    expect(contract).toEqual(
      expect.arrayContaining(['package/package.json', 'package/dist/index.js', 'package/dist/index.d.ts']),
    );
    for (const entries of [sdk, contract]) {
      expect(entries.filter((entry) => entry.startsWith('package/src/'))).toEqual([]);
      expect(entries.filter((entry) => entry.endsWith('.tsbuildinfo'))).toEqual([]);
    }
  });

  it(
    'works from a plain node script: 201 then 200, nutrition, paginated lists and RFC 9457 problems',
    async () => {
      const result = await run(process.execPath, ['consumer.mjs'], {
        cwd: consumerDir,
        env: plainEnv({ PACER_URL: server.url, PACER_TOKEN: token }),
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const summary = JSON.parse(result.stdout.trim());

      // Resolved from the unpacked tarballs' dist, not from the repository.
      expect(summary.resolvedSdk).toBe(`file://${consumerDir}/node_modules/@pacer/client-sdk/dist/index.js`);
      expect(summary.resolvedContract).toBe(`file://${consumerDir}/node_modules/@pacer/contract/dist/index.js`);

      expect(summary.created).toEqual({ status: 201, date: '2026-11-20', hrv: 62.5, restingHr: 47 });
      expect(summary.updated).toEqual({ status: 200, hrv: 62.5, restingHr: 47, sleepSecs: 27_000 });
      expect(summary.nutrition).toEqual({
        status: 201,
        date: '2026-11-20',
        items: [
          { name: 'Gel', absorptionType: 'RAPID' },
          { name: 'Rice bowl', absorptionType: 'BALANCED' },
        ],
        totals: { calories: 590, carbs: 105, protein: 20, fat: 10, waterMl: 0 },
      });
      expect(summary.wellnessPages).toEqual([
        [{ date: '2026-11-20', hrv: 62.5, sleepSecs: 27_000 }],
        [{ date: '2026-11-21', hrv: 58, sleepSecs: null }],
      ]);
      expect(summary.nutritionList).toEqual({
        status: 200,
        days: [{ date: '2026-11-20', items: 2, carbs: 105 }],
        nextCursor: null,
      });
      expect(summary.invalid).toMatchObject({
        status: 400,
        type: 'urn:pacer:problem:validation_failed',
        title: 'Validation failed',
        code: 'validation_failed',
        paths: ['hrv'],
      });
      expect(summary.invalid.contentType).toMatch(/^application\/problem\+json/);
      expect(summary.unauthorized).toEqual({ status: 401, code: 'invalid_token' });
    },
    TIMEOUT,
  );

  it(
    "type-checks an integrator's strict TypeScript against the shipped declarations",
    async () => {
      const result = await run(process.execPath, [tscBin, '-p', consumerDir], { cwd: consumerDir, env: plainEnv() });
      expect(result.stdout + result.stderr).toBe('');
      expect(result.code).toBe(0);
    },
    TIMEOUT,
  );
});

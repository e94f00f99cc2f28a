import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_DATA_SCOPES, makeUser, mintToken } from '../support/factories.ts';
import { oneHourRide } from '../support/fit-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/**
 * The SDK as an integrator gets it: packed with `npm pack` (its prepack runs
 * the tsup build and strips the workspace-only `pacer-source` condition),
 * unpacked into a project of its own outside the repository (the contract is
 * bundled in: no @pacer/contract is installed), and used from plain `node` as
 * ES module and as CommonJS, from strict TypeScript projects under bundler,
 * nodenext, node16-CommonJS and node10 resolution, and from a browser bundle
 * (esbuild) of the PKCE helpers, and from a CommonJS Jest test. `npm publish
 * --dry-run` accepts the tarball. Beside it, a client an integrator generates
 * from the committed openapi.json with a standard generator (openapi-typescript
 * types, openapi-fetch calls) type-checks and runs, the FIT upload included.
 */

const TIMEOUT = 120_000;
const repoRoot = path.resolve(import.meta.dirname, '..', '..');
const tscBin = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const jestBin = path.join(repoRoot, 'node_modules', 'jest', 'bin', 'jest.js');
/** The bar for a browser bundle of the PKCE helpers (minified). */
const PKCE_BUNDLE_LIMIT_BYTES = 20_000;

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

/** The same SDK from CommonJS: plain `require`, one real call. */
const CONSUMER_CJS = `
const { createPacerClient, SDK_VERSION, contract } = require('@pacer/client-sdk');

async function main() {
  const pacer = createPacerClient({ baseUrl: process.env.PACER_URL, accessToken: process.env.PACER_TOKEN });
  const created = await pacer.wellness.upsertWellness({ body: { date: '2026-10-02', hrv: 70, restingHr: 44 } });
  console.log(JSON.stringify({
    resolvedSdk: require.resolve('@pacer/client-sdk'),
    sdkVersion: SDK_VERSION,
    hasContract: typeof contract.wellness.upsertWellness.path,
    created: { status: created.status, date: created.body.date, hrv: created.body.hrv },
  }));
}
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

/** A browser app that signs in with PKCE: only these helpers end up in its bundle. */
const PKCE_BROWSER_APP = `
import { buildAuthorizeUrl, createPkcePair, createState } from '@pacer/client-sdk';

export async function signIn() {
  const pkce = await createPkcePair();
  const state = createState();
  sessionStorage.setItem('pkce', JSON.stringify({ verifier: pkce.verifier, state }));
  location.assign(
    buildAuthorizeUrl({
      baseUrl: 'https://pacer.example',
      clientId: 'web-app',
      redirectUri: location.origin + '/callback',
      scope: ['wellness:read'],
      state,
      codeChallenge: pkce.challenge,
    }),
  );
}
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

/**
 * A CommonJS Jest test, as an integrator's existing suite has it: `require`s
 * the SDK (Jest 29/30 once said "Must use import" for an ESM-only package) and
 * makes one real call.
 */
const JEST_TEST_CJS = `
const { createPacerClient, PacerError } = require('@pacer/client-sdk');

test('the SDK loads under Jest and upserts a wellness day', async () => {
  const pacer = createPacerClient({ baseUrl: process.env.PACER_URL, accessToken: process.env.PACER_TOKEN });
  const created = await pacer.wellness.upsertWellness({ body: { date: '2026-09-01', hrv: 66, restingHr: 43 } });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ date: '2026-09-01', hrv: 66, restingHr: 43 });
  expect(typeof PacerError).toBe('function');
});
`;

/**
 * The generator step of an integrator who does not use the SDK:
 * openapi-typescript's Node API over the committed openapi.json. Its `transform`
 * option (the generator's documented way to type uploads) turns every
 * `format: binary` schema into `Blob`, so the multipart upload needs no cast.
 */
const GENERATE_MJS = `
import { writeFile } from 'node:fs/promises';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';

const blob = ts.factory.createTypeReferenceNode('Blob');
const ast = await openapiTS(new URL('./openapi.json', import.meta.url), {
  transform(schema) {
    return schema.format === 'binary' ? blob : undefined;
  },
});
await writeFile(new URL('./generated/api.d.ts', import.meta.url), astToString(ast));
`;

/**
 * Three calls through openapi-fetch over the generated types: read the profile,
 * upsert a wellness day, upload a FIT file as multipart. No cast anywhere; the
 * never-called \`wrongUses\` proves the types are the document's (an unused
 * @ts-expect-error is itself an error).
 */
const GENERATED_CLIENT_TS = `
import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

type Workout = components['schemas']['Workout'];

export async function threeCalls(baseUrl: string, token: string, fit: Blob) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: 'Bearer ' + token } });

  const profile = await client.GET('/api/profile');
  if (!profile.data) throw new Error('GET /api/profile answered ' + profile.response.status);
  const email: string = profile.data.email;

  const wellness = await client.POST('/api/wellness', { body: { date: '2026-11-22', hrv: 61.5, restingHr: 45 } });
  if (!wellness.data) throw new Error('POST /api/wellness answered ' + wellness.response.status);
  const hrv: number | null = wellness.data.hrv;

  const upload = await client.POST('/api/workouts/upload-fit', {
    body: { file: fit, name: 'Generated-client ride' },
    bodySerializer(body) {
      const form = new FormData();
      form.append('file', body.file, 'ride.fit');
      if (body.name !== undefined) form.append('name', body.name);
      return form;
    },
  });
  if (!upload.data) throw new Error('upload-fit answered ' + upload.response.status + ' ' + JSON.stringify(upload.error));
  const workout: Workout = upload.data;

  return {
    profile: { status: profile.response.status, email },
    wellness: { status: wellness.response.status, hrv, requestId: wellness.response.headers.get('x-request-id') },
    upload: { status: upload.response.status, name: workout.name, sport: workout.sport },
  };
}

export async function wrongUses(baseUrl: string, fit: Blob) {
  const client = createClient<paths>({ baseUrl });
  // @ts-expect-error the upload's file is binary (a Blob), not a string
  await client.POST('/api/workouts/upload-fit', { body: { file: 'ride.fit' } });
  // @ts-expect-error hrv is a number
  await client.POST('/api/wellness', { body: { date: '2026-11-22', hrv: 'high' } });
  // @ts-expect-error the request body is required
  await client.POST('/api/wellness', {});
  void fit;
}
`;

/** Runs the generated client (Node strips the TypeScript types) against the test server. */
const GENERATED_RUN_MJS = `
import { readFile } from 'node:fs/promises';
import { threeCalls } from './client.ts';

const fit = new Blob([await readFile(new URL('../ride.fit', import.meta.url))], { type: 'application/octet-stream' });
console.log(JSON.stringify(await threeCalls(process.env.PACER_URL, process.env.PACER_TOKEN, fit)));
`;

/** One strict TypeScript project per way of resolving the package. */
const TS_PROJECTS = {
  'esm-nodenext': { type: 'module', compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } },
  'esm-bundler': { type: 'module', compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler' } },
  'cjs-node16': { type: 'commonjs', compilerOptions: { module: 'Node16', moduleResolution: 'Node16' } },
  'cjs-node10': { type: 'commonjs', compilerOptions: { module: 'CommonJS', moduleResolution: 'Node10' } },
} as const;

function tsconfigFor(compilerOptions: Record<string, string>) {
  return {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2023', 'DOM'],
      ...compilerOptions,
      strict: true,
      noEmit: true,
      // @ts-rest/core's own declarations are written against zod 3's types.
      skipLibCheck: true,
      types: [],
    },
    files: ['consumer.ts'],
  };
}

let server: TestServer;
let token: string;
let athleteEmail: string;
let tmp: string;
let consumerDir: string;
let tarball = '';
let entries: string[] = [];
let shippedManifest: Record<string, unknown> = {};

beforeAll(async () => {
  server = await startTestServer();
  const athlete = await makeUser(server.db);
  athleteEmail = athlete.email;
  token = (
    await mintToken(server.db, athlete, {
      scopes: [...ALL_DATA_SCOPES, 'profile:read', 'workout:read', 'workout:write'],
    })
  ).token;

  tmp = await mkdtemp(path.join(os.tmpdir(), 'pacer-sdk-pack-'));
  consumerDir = path.join(tmp, 'consumer');

  // The SDK's prepack builds dist/ with tsup; the contract is bundled in, so only the SDK is packed.
  await runOk(process.execPath, [tscBin, '-b', 'client-sdk'], { cwd: repoRoot });
  await runOk('npm', ['pack', '--workspace', 'client-sdk', '--pack-destination', tmp], { cwd: repoRoot });
  const packed = await readdir(tmp);
  const file = packed.find((entry) => entry.startsWith('pacer-client-sdk-') && entry.endsWith('.tgz'));
  if (!file) throw new Error(`npm pack made no SDK tarball: ${packed.join(', ')}`);
  tarball = path.join(tmp, file);
  entries = (await runOk('tar', ['-tzf', tarball], { cwd: tmp })).stdout.split('\n').filter(Boolean);

  const target = path.join(consumerDir, 'node_modules', '@pacer', 'client-sdk');
  await mkdir(target, { recursive: true });
  await runOk('tar', ['-xzf', tarball, '-C', target, '--strip-components=1'], { cwd: tmp });
  shippedManifest = JSON.parse(await readFile(path.join(target, 'package.json'), 'utf8')) as Record<string, unknown>;

  // The peer and runtime dependencies, from the repository's install: no network.
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
  await writeFile(path.join(consumerDir, 'consumer.cjs'), CONSUMER_CJS);
  await writeFile(path.join(consumerDir, 'pkce-app.js'), PKCE_BROWSER_APP);

  // Jest: a CommonJS project of its own (Jest itself runs from the repository's install).
  const jestDir = path.join(consumerDir, 'jest-cjs');
  await mkdir(jestDir);
  await writeFile(
    path.join(jestDir, 'package.json'),
    JSON.stringify({ private: true, type: 'commonjs', jest: { testEnvironment: 'node' } }),
  );
  await writeFile(path.join(jestDir, 'sdk.test.js'), JEST_TEST_CJS);

  // The generated client: the committed document, the generator and openapi-fetch, a FIT file.
  for (const name of ['openapi-typescript', 'openapi-fetch', 'typescript']) {
    await symlink(path.join(repoRoot, 'node_modules', name), path.join(consumerDir, 'node_modules', name), 'dir');
  }
  await writeFile(path.join(consumerDir, 'openapi.json'), await readFile(path.join(repoRoot, 'openapi.json')));
  await writeFile(path.join(consumerDir, 'ride.fit'), oneHourRide().bytes);
  await writeFile(path.join(consumerDir, 'generate.mjs'), GENERATE_MJS);
  const generatedDir = path.join(consumerDir, 'generated');
  await mkdir(generatedDir);
  await writeFile(path.join(generatedDir, 'client.ts'), GENERATED_CLIENT_TS);
  await writeFile(path.join(generatedDir, 'run.mjs'), GENERATED_RUN_MJS);
  await writeFile(
    path.join(generatedDir, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023', 'DOM'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          types: [],
        },
        files: ['client.ts'],
      },
      null,
      2,
    ),
  );

  for (const [name, project] of Object.entries(TS_PROJECTS)) {
    const dir = path.join(consumerDir, name);
    await mkdir(dir);
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ private: true, type: project.type }));
    await writeFile(path.join(dir, 'consumer.ts'), CONSUMER_TS);
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfigFor(project.compilerOptions), null, 2));
  }
}, TIMEOUT);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
  await server?.stop();
});

describe('@pacer/client-sdk as a packed package', () => {
  it('ships ESM, CommonJS, both declarations, the browser build, README, CHANGELOG and LICENSE, and no sources', () => {
    expect(entries).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/dist/index.js',
        'package/dist/index.cjs',
        'package/dist/index.d.ts',
        'package/dist/index.d.cts',
        'package/dist/browser/index.js',
        'package/dist/browser/index.cjs',
        'package/README.md',
        'package/CHANGELOG.md',
        'package/LICENSE',
      ]),
    );
    expect(entries.filter((entry) => entry.startsWith('package/src/'))).toEqual([]);
    expect(entries.filter((entry) => entry.endsWith('.map') || entry.endsWith('.tsbuildinfo'))).toEqual([]);
  });

  it('has a publishable manifest: a licence, no workspace-only condition, zod as a peer, no @pacer/contract', async () => {
    expect(shippedManifest['license']).toBe('MIT');
    expect(shippedManifest['sideEffects']).toBe(false);
    expect(JSON.stringify(shippedManifest['exports'])).not.toContain('pacer-source');
    expect(shippedManifest['peerDependencies']).toEqual({ zod: expect.stringMatching(/^\^4\./) });
    expect(shippedManifest['dependencies']).toEqual({ '@ts-rest/core': expect.stringMatching(/^\^3\.53\./) });
    expect(shippedManifest).not.toHaveProperty('devDependencies');
    // The workspace's own package.json is back as it was (postpack), condition included.
    const workspace = JSON.parse(await readFile(path.join(repoRoot, 'client-sdk', 'package.json'), 'utf8')) as {
      exports: Record<string, Record<string, unknown>>;
    };
    expect(workspace.exports['.']).toHaveProperty('pacer-source');
    // Every file the manifest points at is in the tarball.
    const pointed = JSON.stringify(shippedManifest['exports']).match(/\.\/dist\/[^"]+/g) ?? [];
    for (const file of [...pointed, shippedManifest['main'], shippedManifest['types'], shippedManifest['module']]) {
      expect(entries).toContain(`package/${String(file).replace(/^\.\//, '')}`);
    }
    // The bundled code and declarations import nothing of ours.
    const shipped = await readdir(path.join(consumerDir, 'node_modules', '@pacer', 'client-sdk', 'dist'), {
      recursive: true,
    });
    for (const name of shipped.filter((entry) => /\.(c?js|d\.c?ts)$/.test(entry))) {
      const text = await readFile(path.join(consumerDir, 'node_modules', '@pacer', 'client-sdk', 'dist', name), 'utf8');
      expect(text, name).not.toContain('@pacer/contract');
    }
  });

  it(
    '`npm publish --dry-run` accepts the tarball',
    async () => {
      const result = await run('npm', ['publish', '--dry-run', tarball], { cwd: tmp, env: plainEnv() });
      expect(result.stdout + result.stderr).toContain('+ @pacer/client-sdk@');
      expect(result.code).toBe(0);
    },
    TIMEOUT,
  );

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
    'works from CommonJS: require() gets the .cjs build and makes a real call',
    async () => {
      const result = await run(process.execPath, ['consumer.cjs'], {
        cwd: consumerDir,
        env: plainEnv({ PACER_URL: server.url, PACER_TOKEN: token }),
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const summary = JSON.parse(result.stdout.trim());
      expect(summary).toEqual({
        resolvedSdk: path.join(consumerDir, 'node_modules', '@pacer', 'client-sdk', 'dist', 'index.cjs'),
        sdkVersion: shippedManifest['version'],
        hasContract: 'string',
        created: { status: 201, date: '2026-10-02', hrv: 70 },
      });
    },
    TIMEOUT,
  );

  it.each(Object.keys(TS_PROJECTS))(
    "type-checks an integrator's strict TypeScript against the shipped declarations (%s)",
    async (name) => {
      const dir = path.join(consumerDir, name);
      const result = await run(process.execPath, [tscBin, '-p', dir], { cwd: dir, env: plainEnv() });
      expect(result.stdout + result.stderr).toBe('');
      expect(result.code).toBe(0);
    },
    TIMEOUT,
  );

  it(
    'works from a CommonJS Jest test: require() loads the SDK and a real call succeeds',
    async () => {
      const dir = path.join(consumerDir, 'jest-cjs');
      const result = await run(
        process.execPath,
        [jestBin, '--ci', '--watchman=false', '--rootDir', dir, '--cacheDirectory', path.join(tmp, 'jest-cache')],
        { cwd: dir, env: plainEnv({ PACER_URL: server.url, PACER_TOKEN: token }) },
      );
      expect(result.stdout + result.stderr).toMatch(/Tests:\s+1 passed, 1 total/);
      expect(result.stderr).not.toContain('Must use import');
      expect(result.code).toBe(0);
      // The call reached the server.
      const stored = await server.db
        .selectFrom('wellness')
        .select(['hrv'])
        .where('date', '=', '2026-09-01')
        .executeTakeFirst();
      expect(stored?.hrv).toBe(66);
    },
    TIMEOUT,
  );

  it(
    'a client generated from openapi.json (openapi-typescript + openapi-fetch) type-checks three calls with no cast and runs them',
    async () => {
      await runOk(process.execPath, ['generate.mjs'], { cwd: consumerDir, env: plainEnv() });
      const generatedDir = path.join(consumerDir, 'generated');
      const types = await readFile(path.join(generatedDir, 'api.d.ts'), 'utf8');
      expect(types).toMatch(/file: Blob;/);

      const checked = await run(process.execPath, [tscBin, '-p', generatedDir], { cwd: generatedDir, env: plainEnv() });
      expect(checked.stdout + checked.stderr).toBe('');
      expect(checked.code).toBe(0);
      expect(await readFile(path.join(generatedDir, 'client.ts'), 'utf8')).not.toMatch(/ as (?!const)/);

      const ran = await run(process.execPath, ['run.mjs'], {
        cwd: generatedDir,
        env: plainEnv({ PACER_URL: server.url, PACER_TOKEN: token }),
      });
      expect(ran.stderr).toBe('');
      expect(ran.code).toBe(0);
      const summary = JSON.parse(ran.stdout.trim());
      expect(summary).toEqual({
        profile: { status: 200, email: athleteEmail },
        wellness: { status: 201, hrv: 61.5, requestId: expect.any(String) },
        upload: { status: 201, name: 'Generated-client ride', sport: 'cycling' },
      });
    },
    TIMEOUT,
  );

  it(
    `bundles the PKCE helpers for a browser in under ${PKCE_BUNDLE_LIMIT_BYTES / 1000} kB minified, with no node:* import`,
    async () => {
      // esbuild (a devDependency) resolves @pacer/client-sdk from the consumer's node_modules, browser conditions.
      const built = await build({
        absWorkingDir: consumerDir,
        entryPoints: ['pkce-app.js'],
        bundle: true,
        minify: true,
        format: 'esm',
        platform: 'browser',
        write: false,
        logLevel: 'silent',
      });
      const bundle = built.outputFiles[0]?.text ?? '';
      const bytes = Buffer.byteLength(bundle);
      // Printed for the report: the size an integrator's sign-in page pays.
      process.stdout.write(
        `PKCE browser bundle: ${bytes} bytes minified; SDK tarball: ${(await stat(tarball)).size} bytes\n`,
      );
      expect(bytes).toBeLessThan(PKCE_BUNDLE_LIMIT_BYTES);
      expect(bundle).toContain('code_challenge');
      expect(bundle).not.toMatch(/node:|fs\/promises/);
      // Nothing of zod or the contract came along.
      expect(bundle).not.toContain('upsertWellness');
    },
    TIMEOUT,
  );
});

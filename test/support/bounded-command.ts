import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT, type CommandResult } from './process.ts';

/** How long a third-party CLI may run before it is killed. */
export const COMMAND_TIMEOUT_MS = 60_000;

export interface BoundedCommandResult extends CommandResult {
  /** True when the command was killed for running past its time limit. */
  readonly timedOut: boolean;
}

export interface BoundedCommandOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
}

const running = new Set<ChildProcess>();

/**
 * Run a command from the repository root to completion, stdout and stderr
 * collected, SIGKILLed after `timeoutMs` so a hung client cannot hang the run.
 */
export function runBoundedCommand(
  file: string,
  args: readonly string[],
  options: BoundedCommandOptions,
): Promise<BoundedCommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: ROOT, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? COMMAND_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error) => {
      clearTimeout(timer);
      running.delete(child);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

/** Kill whatever `runBoundedCommand` started that is still running (for `afterAll`). */
export function killBoundedCommands(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

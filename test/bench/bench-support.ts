import { readFileSync } from 'node:fs';
import type pg from 'pg';

/** Helpers the bench sections share: waiting, rounding, and CPU time of the server and its PostgreSQL backends. */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** CPU ticks (user + system) of a process, from /proc; undefined where that cannot be read. */
export function ticksOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

export interface CpuSnapshot {
  readonly server: number;
  readonly postgres: ReadonlyMap<number, number>;
}

/** The server's ticks and those of every backend connected to the bench database. */
export async function cpuSnapshot(options: {
  readonly pool: pg.Pool;
  readonly serverPid?: number | undefined;
}): Promise<CpuSnapshot | undefined> {
  if (options.serverPid === undefined) return undefined;
  const server = ticksOf(options.serverPid);
  if (server === undefined) return undefined;
  const { rows } = await options.pool.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
  );
  const postgres = new Map<number, number>();
  for (const { pid } of rows) {
    const ticks = ticksOf(pid);
    if (ticks !== undefined) postgres.set(pid, ticks);
  }
  return { server, postgres };
}

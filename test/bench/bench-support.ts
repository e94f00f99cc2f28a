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

export interface LatencyStats {
  readonly count: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

/** Count, mean and nearest-rank percentiles of raw samples (ms, float). */
export function latencyStats(samples: readonly number[]): LatencyStats {
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) =>
    sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    count: sorted.length,
    mean: round(sorted.length ? sum / sorted.length : 0),
    p50: round(at(0.5)),
    p90: round(at(0.9)),
    p95: round(at(0.95)),
    p99: round(at(0.99)),
    max: round(sorted.at(-1) ?? 0),
  };
}

export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

/** Min, median (the upper one of an even count) and max of a few figures, e.g. one per round. */
export function spreadOf(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0] ?? 0, median: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted.at(-1) ?? 0 };
}

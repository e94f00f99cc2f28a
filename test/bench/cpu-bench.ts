/**
 * Section `cpu` of `npm run bench`: CPU time per request of the server
 * process (user + system, every thread of it, read from /proc/<pid>/stat),
 * not throughput. On a machine other processes share, requests/s measures
 * the scheduler as much as the server; the CPU a request costs the process
 * that serves it moves far less.
 *
 * For each figure: `requests` requests sent by `clients` closed-loop clients
 * (one keep-alive socket each), the server's CPU ticks read before and after;
 * the CPU the process burns when idle (timers, pg-boss's polling; measured
 * over IDLE_MS just before) is taken off for the same wall time. A write in
 * role `all` is charged for the derived recompute it triggers as well: the
 * "after" reading waits until the user's change records are drained.
 *
 * Figures: POST /api/wellness (Pacer and the lean reference server, role api
 * and role all), GET /api/profile and MCP tools/call get_profile (role api),
 * and the 1-hour FIT upload against a plain @garmin/fitsdk decode of the
 * same bytes in this process, and against the server's own decode + summary
 * (`decodeFitActivity`) in this process (CPU of those loops from
 * process.cpuUsage()). Ticks are 10 ms: with the default counts each figure
 * rests on 50 ticks or more.
 *
 * Why not the CPU profile's attribution: a `--cpu-prof` profile samples on
 * wall time, so on a busy machine a `write(2)` that wakes the reader (the
 * bench client, PostgreSQL, whatever reads stdout) is charged with the time
 * the server then waits for a core. Profiles of this section showed socket
 * and log writes as a third of the server's time while /proc counted 8-17 %
 * of its CPU as system time: JavaScript is where the CPU goes.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { CrcCalculator, Decoder, Stream } from '@garmin/fitsdk';
import type pg from 'pg';
import { decodeFitActivity, LEAN_READ } from '../../server/src/modules/workouts/fit-activity.ts';
import { oneHourRide } from '../support/fit-fixtures.ts';
import { readFileSync } from 'node:fs';
import { round, sleep, ticksOf } from './bench-support.ts';

const CLOCK_TICK_US = 10_000; // USER_HZ = 100 on Linux
/** How long the idle rate is measured before each figure. */
const IDLE_MS = 2000;
const SETTLE_TIMEOUT_MS = 120_000;
const PROTOCOL_VERSION = '2025-11-25';
const DAY_MS = 86_400_000;

export interface CpuServer {
  readonly url: string;
  readonly pid: number;
}

export interface CpuFigure {
  readonly requests: number;
  /** Server CPU per request, idle rate taken off (µs). */
  readonly cpuUs: number;
  /** Of the CPU per request (before the idle rate is taken off), the share spent in the kernel (system time). */
  readonly systemShare: number;
  /** The server's idle CPU over the same wall time, taken off above (µs per request). */
  readonly idleUs: number;
  readonly wallMs: number;
  readonly errors: number;
  readonly firstError: string | undefined;
}

/** One figure: its runs (the reference first), each with its median round. */
export interface CpuFigures {
  readonly name: string;
  readonly runs: readonly {
    readonly name: string;
    readonly figure: CpuFigure;
    /** Every round's figure, in round order (the first run's round k is measured just before this run's). */
    readonly rounds?: readonly CpuFigure[];
  }[];
}

// ---------------------------------------------------------------------------
// Requests.

export interface CpuTarget {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The body of the n-th request (counted over every client from 0). */
  readonly body?: (n: number) => string | Uint8Array;
  readonly ok: (status: number, body: string) => boolean;
}

function send(url: URL, agent: http.Agent, target: CpuTarget, body: string | Uint8Array | undefined) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const headers =
      body === undefined ? target.headers : { ...target.headers, 'content-length': String(Buffer.byteLength(body)) };
    const req = http.request(url, { method: target.method, agent, timeout: 30_000, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

/** System-time ticks of a process (/proc/<pid>/stat field 15). */
function systemTicksOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[12]);
}

async function idleTicksPerMs(pid: number): Promise<number> {
  const before = ticksOf(pid);
  const started = performance.now();
  await sleep(IDLE_MS);
  const after = ticksOf(pid);
  if (before === undefined || after === undefined) throw new Error(`cannot read /proc/${pid}/stat`);
  return (after - before) / (performance.now() - started);
}

export interface MeasureOptions {
  readonly server: CpuServer;
  readonly target: CpuTarget;
  readonly requests: number;
  readonly clients: number;
  /** Waits until the work the requests triggered is done (role all: the derived recompute). */
  readonly settled?: () => Promise<void>;
}

/** The server's CPU per request over `requests` requests, idle rate taken off. */
export async function measureCpu(options: MeasureOptions): Promise<CpuFigure> {
  const { server, target } = options;
  const idleRate = await idleTicksPerMs(server.pid);
  const url = new URL(target.path, server.url);
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const before = ticksOf(server.pid) ?? 0;
  const systemBefore = systemTicksOf(server.pid);
  const started = performance.now();
  const client = async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let n = next++; n < options.requests; n = next++) {
        try {
          const answer = await send(url, agent, target, target.body?.(n));
          if (!target.ok(answer.status, answer.body)) {
            errors += 1;
            firstError ??= `${target.method} ${target.path} ${answer.status}: ${answer.body.slice(0, 300)}`;
          }
        } catch (error) {
          errors += 1;
          firstError ??= String(error);
        }
      }
    } finally {
      agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: options.clients }, client));
  await options.settled?.();
  const wallMs = performance.now() - started;
  const ticks = (ticksOf(server.pid) ?? 0) - before;
  const systemTicks = systemTicksOf(server.pid) - systemBefore;
  const idleTicks = idleRate * wallMs;
  return {
    requests: options.requests,
    cpuUs: round((Math.max(0, ticks - idleTicks) * CLOCK_TICK_US) / options.requests, 0),
    systemShare: round(systemTicks / Math.max(ticks, 1), 2),
    idleUs: round((idleTicks * CLOCK_TICK_US) / options.requests, 0),
    wallMs: round(wallMs, 0),
    errors,
    firstError,
  };
}

/** CPU of this process per plain decode (the SDK's recipe with the server's read options), over `runs` distinct files. */
export function measureDecodeCpu(files: readonly Uint8Array[]): CpuFigure {
  const started = performance.now();
  const before = process.cpuUsage();
  for (const bytes of files) {
    if (!Decoder.isFIT(Stream.fromByteArray(bytes))) throw new Error('not a FIT file');
    const decoder = new Decoder(Stream.fromByteArray(bytes));
    const intact = decoder.checkIntegrity();
    const { errors } = decoder.read(LEAN_READ);
    if (!intact || errors.length > 0) throw new Error(`the bench fixture does not decode: ${String(errors[0])}`);
  }
  const used = process.cpuUsage(before);
  return {
    requests: files.length,
    cpuUs: round((used.user + used.system) / files.length, 0),
    systemShare: round(used.system / Math.max(used.user + used.system, 1), 2),
    idleUs: 0,
    wallMs: round(performance.now() - started, 0),
    errors: 0,
    firstError: undefined,
  };
}

/**
 * CPU of this process per decode and summary as the server's decoder worker runs it
 * (`decodeFitActivity`): what of an upload's cost is the summary rather than the decode.
 */
export function measureDecodeSummaryCpu(files: readonly Uint8Array[]): CpuFigure {
  const started = performance.now();
  const before = process.cpuUsage();
  for (const bytes of files) {
    const outcome = decodeFitActivity(bytes, { maxRecords: Number.MAX_SAFE_INTEGER });
    if (!outcome.ok) throw new Error(`the bench fixture does not decode: ${outcome.reason}`);
  }
  const used = process.cpuUsage(before);
  return {
    requests: files.length,
    cpuUs: round((used.user + used.system) / files.length, 0),
    systemShare: round(used.system / Math.max(used.user + used.system, 1), 2),
    idleUs: 0,
    wallMs: round(performance.now() - started, 0),
    errors: 0,
    firstError: undefined,
  };
}

// ---------------------------------------------------------------------------
// The figures' requests.

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** POST /api/wellness for a day of the last 60 before `todayMs` (as the issue's load), with a sleep value that feeds recovery. */
export function wellnessPost(token: string, todayMs: number): CpuTarget {
  return {
    method: 'POST',
    path: '/api/wellness',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: (n) =>
      JSON.stringify({
        date: new Date(todayMs - (n % 60) * DAY_MS).toISOString().slice(0, 10),
        hrv: 40 + (n % 60),
        restingHr: 40 + (n % 30),
        sleepSecs: 25_000 + (n % 5000),
      }),
    ok: (status) => status === 200 || status === 201,
  };
}

export function profileGet(token: string): CpuTarget {
  return {
    method: 'GET',
    path: '/api/profile',
    headers: { ...bearer(token), accept: 'application/json' },
    ok: (status) => status === 200,
  };
}

export function mcpGetProfile(token: string): CpuTarget {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'get_profile', arguments: {} },
  });
  return {
    method: 'POST',
    path: '/mcp',
    headers: {
      ...bearer(token),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
    },
    body: () => body,
    ok: (status, text) => status === 200 && text.includes('"result"') && !text.includes('"isError":true'),
  };
}

const BOUNDARY = 'pacer-bench-cpu-boundary';

/** POST /api/workouts/upload-fit of files[n] (each distinct bytes: a create). */
export function fitUpload(token: string, files: readonly Uint8Array[]): CpuTarget {
  const encoder = new TextEncoder();
  return {
    method: 'POST',
    path: '/api/workouts/upload-fit',
    headers: { ...bearer(token), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    body: (n) => {
      const head = encoder.encode(
        `--${BOUNDARY}\r\ncontent-disposition: form-data; name="name"\r\n\r\nbench ${n}\r\n` +
          `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="ride-${n}.fit"\r\n` +
          'content-type: application/octet-stream\r\n\r\n',
      );
      const tail = encoder.encode(`\r\n--${BOUNDARY}--\r\n`);
      return Buffer.concat([head, files[n] as Uint8Array, tail]);
    },
    ok: (status) => status === 201,
  };
}

/** `count` distinct 1-hour rides: the fixture with its serial number changed and its CRC recomputed. */
export function distinctOneHourRides(count: number, firstSerial: number): Uint8Array[] {
  const serial = 3_600_000_000;
  const template = oneHourRide({ serialNumber: serial }).bytes;
  const view = new DataView(template.buffer, template.byteOffset, template.byteLength);
  const offsets: number[] = [];
  for (let i = 0; i + 4 <= Math.min(template.length, 512); i += 1)
    if (view.getUint32(i, true) === serial) offsets.push(i);
  if (offsets.length === 0) throw new Error('serial number not found in the fixture');
  return Array.from({ length: count }, (_, n) => {
    const bytes = Uint8Array.from(template);
    const copy = new DataView(bytes.buffer);
    for (const offset of offsets) copy.setUint32(offset, firstSerial + n, true);
    copy.setUint16(bytes.length - 2, CrcCalculator.calculateCRC(bytes, 0, bytes.length - 2), true);
    return bytes;
  });
}

/** Resolves once `userId` has no change record left (a recompute deletes them as it stores its numbers). */
export function derivedSettled(pool: pg.Pool, userId: string): () => Promise<void> {
  return async () => {
    const deadline = performance.now() + SETTLE_TIMEOUT_MS;
    while (performance.now() < deadline) {
      const { rowCount } = await pool.query('select 1 from derived_changes where user_id = $1 limit 1', [userId]);
      if (rowCount === 0) return;
      await sleep(20);
    }
    throw new Error(`the derived data of ${userId} did not settle within ${SETTLE_TIMEOUT_MS} ms`);
  };
}

/** Each figure's runs, and each run's CPU over the first run's (the reference's) as a ratio reference/run. */
export function cpuLines(figures: readonly CpuFigures[]): string[] {
  const describe = (f: CpuFigure) =>
    `${f.cpuUs} µs/req (${Math.round(100 * f.systemShare)}% system; ${f.requests} req, ${f.wallMs} ms wall, idle ${f.idleUs} µs/req taken off${f.errors ? `, ${f.errors} errors: ${f.firstError}` : ''})`;
  /** The ratio reference/run of each round pair, as min/median/max (the rounds are measured in turn). */
  const perRound = (reference: readonly CpuFigure[] | undefined, run: readonly CpuFigure[] | undefined) => {
    if (!reference || !run || run.length < 2 || reference.length !== run.length) return '';
    const ratios = run.map((f, k) => (reference[k]?.cpuUs ?? 0) / Math.max(f.cpuUs, 1)).sort((x, y) => x - y);
    const middle = ratios[Math.floor(ratios.length / 2)] ?? 0;
    return ` (per round: min ${round(ratios[0] ?? 0, 3)}, median ${round(middle, 3)}, max ${round(ratios.at(-1) ?? 0, 3)})`;
  };
  return figures.flatMap((figure) => {
    const first = figure.runs[0];
    return [
      `    ${figure.name}`,
      ...figure.runs.map(
        (entry, index) =>
          `      ${entry.name}: ${describe(entry.figure)}${index > 0 && first ? `; ratio ${round(first.figure.cpuUs / Math.max(entry.figure.cpuUs, 1), 3)}${perRound(first.rounds, entry.rounds)}` : ''}`,
      ),
    ];
  });
}

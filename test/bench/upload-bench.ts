/**
 * FIT upload figures for `npm run bench` (issue 4), on the server bench.ts spawned:
 * - throughput (MB/s, median of sequential runs) of a 1-hour and a 10-hour ride
 *   through `POST /api/workouts/upload-fit` end to end (multipart, SHA-256,
 *   worker decode, summary, store, answer), against a plain `@garmin/fitsdk`
 *   decode of the same bytes in this process with the options the server
 *   uses (isFIT + checkIntegrity + read without expansion, fit-activity.ts);
 *   runs alternate (decode, upload, decode, upload, ...) so drift hits both;
 * - `GET /api/profile` latency at a fixed request rate, idle and while
 *   `concurrency` loops upload 10-hour rides back to back;
 * - the server process's resident memory (VmRSS sampled every 20 ms from
 *   /proc, and VmHWM, reset through /proc/<pid>/clear_refs before each phase):
 *   worker threads live in the process, so this covers the decoders.
 *
 * Every upload is distinct bytes (the fixture with its serial number changed
 * and the file CRC recomputed), so each one is a create (201): re-sending the
 * same bytes would only relabel the stored workout (200) without decoding.
 */
import { CrcCalculator, Decoder, Stream } from '@garmin/fitsdk';
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { decodeFitActivity, LEAN_READ } from '../../server/src/modules/workouts/fit-activity.ts';
import { oneHourRide, tenHourRide } from '../support/fit-fixtures.ts';
import { type Spread, spreadOf } from './bench-support.ts';

export interface UploadBenchOptions {
  readonly serverUrl: string;
  readonly serverPid: number;
  /**
   * Scopes `workout:write profile:read`, one per concurrent loop, each of its
   * own user: the server decodes one file per user at a time (a second one
   * is refused with 429), so concurrent uploads are several users'. The
   * first one also makes the sequential runs and the profile reads.
   */
  readonly tokens: readonly string[];
  /** Sequential runs per file (after WARMUP_RUNS uncounted runs each). */
  readonly repetitions: number;
  /** Concurrent 10-hour upload loops in the load phase. */
  readonly concurrency: number;
  /** Length of the concurrent phase, and of the idle profile baseline (warmupS). */
  readonly durationS: number;
  readonly warmupS: number;
  /** `GET /api/profile` requests per second (open loop: sent on a timer, not after the previous answer). */
  readonly profileRate: number;
  readonly interrupted: () => boolean;
}

export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export interface SequentialResult {
  readonly fileBytes: number;
  readonly runs: number;
  readonly statusCodes: Record<string, number>;
  /** End to end through HTTP, per run. */
  readonly uploadMs: LatencySummary;
  readonly uploadMBps: number;
  /** Plain @garmin/fitsdk decode in this process, server options. */
  readonly decodeMs: LatencySummary;
  readonly decodeMBps: number;
  /** For reference: the server's own decode + summary (`decodeFitActivity`) in this process. */
  readonly decodeSummaryMs: LatencySummary;
  /** uploadMBps / decodeMBps (medians). */
  readonly ratio: number;
  /** Plain decode over upload of each run (decode and upload of the same bytes, one after the other). */
  readonly ratioPerRun: Spread;
}

export interface MemoryResult {
  /** VmRSS just before the phase. */
  readonly baselineRssMb: number;
  /** Largest sampled VmRSS. */
  readonly peakSampledRssMb: number;
  /** VmHWM at the end of the phase (since the reset, or since the process started when the reset failed). */
  readonly hwmMb: number;
  readonly hwmReset: boolean;
  readonly samples: number;
  /** Longest gap between two samples: a peak shorter than this can be missed by the sampler (not by VmHWM). */
  readonly maxSampleGapMs: number;
}

export interface UploadBenchResult {
  /** VmRSS of the server before the first upload (no decoder worker yet, unless an earlier section started one). */
  readonly serverIdleRssMb: number;
  readonly oneHour: SequentialResult;
  readonly tenHour: SequentialResult;
  /** Memory over the sequential 10-hour runs (one upload in flight at a time). */
  readonly singleTenHourMemory: MemoryResult;
  readonly profileIdle: LatencySummary & { readonly errors: number; readonly rate: number };
  readonly concurrent: {
    readonly concurrency: number;
    readonly windowS: number;
    /** Uploads that finished inside the window / in all (the last ones end after it). */
    readonly completedInWindow: number;
    readonly completed: number;
    readonly statusCodes: Record<string, number>;
    readonly uploadMs: LatencySummary;
    /** MB of FIT files accepted per second of the window, over all loops. */
    readonly aggregateMBps: number;
    readonly profile: LatencySummary & { readonly errors: number; readonly rate: number };
    readonly memory: MemoryResult;
  };
}

const WARMUP_RUNS = 2;
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const MB = 1e6;

function summarize(samples: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) =>
    sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0);
  return { count: sorted.length, p50: round(at(0.5)), p90: round(at(0.9)), p99: round(at(0.99)), max: round(at(1)) };
}

// ---------------------------------------------------------------------------
// Distinct files: the fixture with another serial number.

interface Template {
  readonly bytes: Uint8Array;
  readonly serial: number;
  /** Where the serial number (uint32, little endian) sits: file_id and device_info. */
  readonly offsets: readonly number[];
}

function templateOf(bytes: Uint8Array, serial: number): Template {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const offsets: number[] = [];
  // The serial is in the first messages (file_id, device_info), long before the records.
  for (let i = 0; i + 4 <= Math.min(bytes.length, 512); i += 1) if (view.getUint32(i, true) === serial) offsets.push(i);
  if (offsets.length === 0) throw new Error(`serial number ${serial} not found in the fixture`);
  return { bytes, serial, offsets };
}

let variantCounter = 0;

/** The template with serial number `serial + n` (n ≥ 1, distinct per call) and a fresh file CRC. */
function variantOf(template: Template): Uint8Array {
  variantCounter += 1;
  const bytes = Uint8Array.from(template.bytes);
  const view = new DataView(bytes.buffer);
  for (const offset of template.offsets) view.setUint32(offset, template.serial + variantCounter, true);
  view.setUint16(bytes.length - 2, CrcCalculator.calculateCRC(bytes, 0, bytes.length - 2), true);
  return bytes;
}

// ---------------------------------------------------------------------------

/**
 * The SDK's own recipe (its README: isFIT, checkIntegrity, read) with the
 * read options the server uses; no summary.
 */
function plainDecode(bytes: Uint8Array): number {
  const started = performance.now();
  if (!Decoder.isFIT(Stream.fromByteArray(bytes))) throw new Error('not a FIT file');
  const decoder = new Decoder(Stream.fromByteArray(bytes));
  const intact = decoder.checkIntegrity();
  const { errors } = decoder.read(LEAN_READ);
  const elapsed = performance.now() - started;
  if (!intact || errors.length > 0) throw new Error(`the bench fixture does not decode: ${String(errors[0])}`);
  return elapsed;
}

function decodeAndSummarize(bytes: Uint8Array): number {
  const started = performance.now();
  const outcome = decodeFitActivity(bytes, { maxRecords: Number.MAX_SAFE_INTEGER });
  const elapsed = performance.now() - started;
  if (!outcome.ok) throw new Error(`the bench fixture does not decode: ${outcome.reason}`);
  return elapsed;
}

async function upload(
  options: UploadBenchOptions,
  bytes: Uint8Array,
  name: string,
  token = options.tokens[0] as string,
): Promise<{ status: number; ms: number; body: string }> {
  const form = new FormData();
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), `${name}.fit`);
  form.append('name', name);
  form.append('metadata', JSON.stringify({ bench: true }));
  const started = performance.now();
  const res = await fetch(`${options.serverUrl}/api/workouts/upload-fit`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const body = await res.text();
  return { status: res.status, ms: performance.now() - started, body };
}

function expectStored(result: { status: number; body: string }): void {
  if (result.status !== 201 && result.status !== 200)
    throw new Error(`POST /api/workouts/upload-fit answered ${result.status}: ${result.body.slice(0, 500)}`);
}

// ---------------------------------------------------------------------------
// Memory of the server process.

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) : Number.NaN;
}

class MemorySampler {
  private readonly baselineKb: number;
  private readonly hwmReset: boolean;
  private peakKb = 0;
  private samples = 0;
  private lastAt = performance.now();
  private maxGap = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly pid: number;

  constructor(pid: number) {
    this.pid = pid;
    // "5" resets the peak RSS (VmHWM) to the current RSS (Linux ≥ 4.0, proc(5)).
    let reset = true;
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
    } catch {
      reset = false;
    }
    this.hwmReset = reset;
    this.baselineKb = statusKb(pid, 'VmRSS');
    this.sample();
    this.timer = setInterval(() => this.sample(), 20);
  }

  private sample(): void {
    const now = performance.now();
    this.maxGap = Math.max(this.maxGap, now - this.lastAt);
    this.lastAt = now;
    try {
      this.peakKb = Math.max(this.peakKb, statusKb(this.pid, 'VmRSS'));
      this.samples += 1;
    } catch {
      // the process is gone; the phase fails on its own
    }
  }

  stop(): MemoryResult {
    clearInterval(this.timer);
    this.sample();
    return {
      baselineRssMb: round(this.baselineKb / 1024, 1),
      peakSampledRssMb: round(this.peakKb / 1024, 1),
      hwmMb: round(statusKb(this.pid, 'VmHWM') / 1024, 1),
      hwmReset: this.hwmReset,
      samples: this.samples,
      maxSampleGapMs: round(this.maxGap, 0),
    };
  }
}

// ---------------------------------------------------------------------------

async function sequential(options: UploadBenchOptions, template: Template, label: string): Promise<SequentialResult> {
  const decodeMs: number[] = [];
  const decodeSummaryMs: number[] = [];
  const uploadMs: number[] = [];
  const statusCodes: Record<string, number> = {};
  // The first runs warm up the decoder here and in the server's worker; they are not counted.
  for (let run = 0; run < WARMUP_RUNS + options.repetitions && !options.interrupted(); run += 1) {
    const bytes = variantOf(template);
    const decode = plainDecode(bytes);
    const summary = decodeAndSummarize(bytes);
    const result = await upload(options, bytes, `bench ${label} ${run}`);
    expectStored(result);
    if (run < WARMUP_RUNS) continue;
    decodeMs.push(decode);
    decodeSummaryMs.push(summary);
    uploadMs.push(result.ms);
    statusCodes[result.status] = (statusCodes[result.status] ?? 0) + 1;
  }
  const upload50 = summarize(uploadMs);
  const decode50 = summarize(decodeMs);
  const mbps = (ms: number) => (ms > 0 ? round(template.bytes.length / MB / (ms / 1000)) : 0);
  return {
    fileBytes: template.bytes.length,
    runs: uploadMs.length,
    statusCodes,
    uploadMs: upload50,
    uploadMBps: mbps(upload50.p50),
    decodeMs: decode50,
    decodeMBps: mbps(decode50.p50),
    decodeSummaryMs: summarize(decodeSummaryMs),
    ratio: decode50.p50 > 0 ? round(decode50.p50 / upload50.p50, 3) : 0,
    ratioPerRun: spreadOf(uploadMs.map((ms, run) => round((decodeMs[run] ?? 0) / ms, 3))),
  };
}

/** `GET /api/profile` at `rate` per second until `until()` is false; latency per answer. */
async function profileLoad(
  options: UploadBenchOptions,
  running: () => boolean,
): Promise<LatencySummary & { errors: number; rate: number }> {
  const samples: number[] = [];
  let errors = 0;
  const inFlight = new Set<Promise<void>>();
  const interval = 1000 / options.profileRate;
  let next = performance.now();
  while (running() && !options.interrupted()) {
    const request = (async () => {
      const started = performance.now();
      try {
        const res = await fetch(`${options.serverUrl}/api/profile`, {
          headers: { authorization: `Bearer ${options.tokens[0] as string}` },
        });
        await res.arrayBuffer();
        if (res.status === 200) samples.push(performance.now() - started);
        else errors += 1;
      } catch {
        errors += 1;
      }
    })();
    inFlight.add(request);
    void request.finally(() => inFlight.delete(request));
    next += interval;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
  }
  await Promise.all(inFlight);
  return { ...summarize(samples), errors, rate: options.profileRate };
}

async function concurrentPhase(
  options: UploadBenchOptions,
  template: Template,
): Promise<UploadBenchResult['concurrent']> {
  // Made beforehand (a CRC over each file): the bench's own CPU must not delay the latencies it measures.
  const ready = Array.from({ length: options.concurrency * Math.ceil(options.durationS * 3) }, () =>
    variantOf(template),
  );
  const memory = new MemorySampler(options.serverPid);
  const started = performance.now();
  const deadline = started + options.durationS * 1000;
  const open = () => performance.now() < deadline;
  const uploadMs: number[] = [];
  const statusCodes: Record<string, number> = {};
  let completedInWindow = 0;
  let bytesInWindow = 0;
  const loop = async (index: number) => {
    for (let run = 0; open() && !options.interrupted(); run += 1) {
      const bytes = ready.pop() ?? variantOf(template);
      const token = options.tokens[index % options.tokens.length] as string;
      const result = await upload(options, bytes, `bench concurrent ${index}.${run}`, token);
      expectStored(result);
      uploadMs.push(result.ms);
      statusCodes[result.status] = (statusCodes[result.status] ?? 0) + 1;
      if (performance.now() <= deadline) {
        completedInWindow += 1;
        bytesInWindow += bytes.length;
      }
    }
  };
  const loops = Promise.all(Array.from({ length: options.concurrency }, (_, index) => loop(index)));
  // Profile reads while the uploads run: stop with the window.
  const profile = await profileLoad(options, open);
  await loops;
  const windowS = (Math.min(performance.now(), deadline) - started) / 1000;
  return {
    concurrency: options.concurrency,
    windowS: round(windowS),
    completedInWindow,
    completed: uploadMs.length,
    statusCodes,
    uploadMs: summarize(uploadMs),
    aggregateMBps: round(bytesInWindow / MB / windowS),
    profile,
    memory: memory.stop(),
  };
}

export async function runUploadBench(options: UploadBenchOptions): Promise<UploadBenchResult> {
  const serverIdleRssMb = round(statusKb(options.serverPid, 'VmRSS') / 1024, 1);
  const oneHour = templateOf(oneHourRide({ serialNumber: 3_500_000_000 }).bytes, 3_500_000_000);
  const tenHourSerial = 3_600_000_000;
  const tenHour = templateOf(tenHourRide({ serialNumber: tenHourSerial }).bytes, tenHourSerial);

  const oneHourResult = await sequential(options, oneHour, '1h');
  const singleMemory = new MemorySampler(options.serverPid);
  const tenHourResult = await sequential(options, tenHour, '10h');
  const singleTenHourMemory = singleMemory.stop();

  const idleUntil = performance.now() + options.warmupS * 1000;
  const profileIdle = await profileLoad(options, () => performance.now() < idleUntil);
  const concurrent = await concurrentPhase(options, tenHour);
  return {
    serverIdleRssMb,
    oneHour: oneHourResult,
    tenHour: tenHourResult,
    singleTenHourMemory,
    profileIdle,
    concurrent,
  };
}

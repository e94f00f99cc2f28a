import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { RUNS_FROM_SOURCE } from '../../lib/runs-from-source.ts';
import type { FitDecodeOptions } from './fit-activity.ts';
import type { AcceptedFormats, ActivityDecodeOutcome, ActivityStreamsOutcome } from './activity-file.ts';

/**
 * A small pool of worker threads that decode activity files (FIT, TCX, GPX: activity-file.ts), so a 10-hour file
 * (about a second of CPU) never blocks the event loop that serves other
 * requests. `size` workers at most (`PACER_FIT_DECODE_WORKERS`, config.ts:
 * by default one per CPU but one, which is left to the event loop and a
 * local PostgreSQL, and at most 2): with a worker on every CPU, concurrent
 * uploads starve the requests the workers exist to protect (`npm run bench`,
 * uploads: GET /api/profile p99 while 4 uploads run), and each worker's heap
 * adds to the process's peak. Started on first use, and a worker left idle
 * for `idleTimeoutMs` exits, giving its heap (tens of MB after a long ride)
 * back to the system: a process that decodes a file now and then does not
 * hold a decoder's memory in between. Tasks beyond the workers wait in a
 * queue holding only the caller's bytes (the worker's copy is made when it
 * takes the task, and freed by the worker when it is done); this pool does
 * not bound the queue: its callers do (fit-decode-queue.ts admits files by
 * count, bytes and user before they are read). Workers are `unref()`ed: an
 * idle pool never keeps the process alive, so it needs no shutdown hook.
 */

/** `activity`: the workout record (upload); `streams`: the time series (first read of the streams). */
export type DecodeKind = 'activity' | 'streams';
export interface DecodeTask {
  readonly id: number;
  readonly kind: DecodeKind;
  readonly bytes: Uint8Array;
  readonly options: FitDecodeOptions;
  /** For `activity`: which formats the route takes (streams read any stored file). */
  readonly accept: AcceptedFormats;
}

/** What one decode may spend: data messages in the file (checked in the worker) and time. */
export interface DecodeLimits extends FitDecodeOptions {
  /** A decode running longer than this is abandoned and its worker replaced. */
  readonly timeoutMs: number;
}
export type DecodeOutcome = ActivityDecodeOutcome | ActivityStreamsOutcome;
export type DecodeReply =
  { readonly id: number; readonly outcome: DecodeOutcome } | { readonly id: number; readonly failure: string };

export interface FitDecoderPoolOptions {
  /** Worker threads at most; default `os.availableParallelism() - 1`, at least 1 (the server passes its config's). */
  readonly size?: number;
  /** V8 old-space cap per worker: a hostile file fails alone instead of exhausting the process. */
  readonly maxOldGenerationSizeMb?: number;
  /**
   * V8 young-generation size per worker. Decoding allocates a short-lived
   * object per field of every record; left to itself V8 grows the young
   * generation of each worker to 128 MB of resident memory on a 10-hour
   * file. 16 MB decodes as fast (measured: `npm run bench`, uploads).
   */
  readonly maxYoungGenerationSizeMb?: number;
  /** A worker with nothing to do for this long exits (default 30 s); the next task starts a new one. */
  readonly idleTimeoutMs?: number;
}

/** The file could not be decoded within the pool's limits (time, memory): the file's fault, not ours. */
export class FitDecoderError extends Error {
  override readonly name: string = 'FitDecoderError';
}

/** The decode ran out of its time (`DecodeLimits.timeoutMs`); its worker was replaced. */
export class FitDecodeTimeoutError extends FitDecoderError {
  override readonly name = 'FitDecodeTimeoutError';
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super(`decoding took longer than ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

interface Pending {
  readonly id: number;
  readonly kind: DecodeKind;
  /** The caller's bytes: copied for the worker only when it takes the task, so a queued file is held once. */
  readonly bytes: Uint8Array;
  readonly options: FitDecodeOptions;
  readonly accept: AcceptedFormats;
  readonly timeoutMs: number;
  readonly resolve: (outcome: DecodeOutcome) => void;
  readonly reject: (error: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  current: (Pending & { timer: NodeJS.Timeout }) | undefined;
  /** Running while the worker has nothing to do; it retires the worker when it fires. */
  idleTimer: NodeJS.Timeout | undefined;
}

const WORKER_URL = new URL(RUNS_FROM_SOURCE ? './fit-decode.worker.ts' : './fit-decode.worker.js', import.meta.url);

/**
 * V8 heap flags, which Worker refuses in `execArgv`: heap sizes are per
 * isolate (a worker's are its `resourceLimits`); the growing factor is
 * process-wide, so it applies to the workers' isolates without being passed.
 */
const HEAP_SIZE_FLAG = /^--(max-semi-space-size|max-old-space-size|heap-growing-percent)(=|$)/;

/**
 * The parent's own flags (e.g. `--conditions`) are kept, but for its V8 heap
 * flags (`npm start` sets `--max-semi-space-size` and `--heap-growing-percent`). Run from source, the
 * worker is a `.ts` file: Node strips its types natively from 22.18/23.6;
 * older 22.x need the flag, which Worker accepts in `execArgv`.
 */
function workerExecArgv(): string[] {
  const flags = process.execArgv.filter((flag) => !HEAP_SIZE_FLAG.test(flag));
  const stripsTypes = Boolean((process.features as { typescript?: unknown }).typescript);
  if (RUNS_FROM_SOURCE && !stripsTypes && !flags.includes('--experimental-strip-types')) {
    flags.push('--experimental-strip-types');
  }
  if (!flags.some((flag) => flag.startsWith('--disable-warning=ExperimentalWarning'))) {
    flags.push('--disable-warning=ExperimentalWarning');
  }
  return flags;
}

export class FitDecoderPool {
  readonly size: number;
  private readonly maxOldGenerationSizeMb: number;
  private readonly maxYoungGenerationSizeMb: number;
  private readonly idleTimeoutMs: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(options: FitDecoderPoolOptions = {}) {
    this.size = Math.max(1, options.size ?? os.availableParallelism() - 1);
    this.maxOldGenerationSizeMb = options.maxOldGenerationSizeMb ?? 512;
    this.maxYoungGenerationSizeMb = options.maxYoungGenerationSizeMb ?? 16;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  }

  /** Worker threads running now (for tests and logs). */
  get workers(): number {
    return this.slots.length;
  }

  /** Files waiting for a worker now (for tests and logs). */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * The workout record of a file, decoded in a worker. Resolves with the
   * outcome (a bad file is an outcome);
   * rejects with a `FitDecodeTimeoutError` when the worker ran out of time on
   * it, a `FitDecoderError` when it ran out of memory, with a plain `Error`
   * when our own code failed.
   */
  decodeActivity(
    bytes: Uint8Array,
    limits: DecodeLimits,
    accept: AcceptedFormats = 'fit',
  ): Promise<ActivityDecodeOutcome> {
    return this.run('activity', bytes, limits, accept) as Promise<ActivityDecodeOutcome>;
  }

  /** The streams of a file, whichever its format; rejects like `decodeActivity`. */
  decodeStreams(bytes: Uint8Array, limits: DecodeLimits): Promise<ActivityStreamsOutcome> {
    return this.run('streams', bytes, limits, 'any') as Promise<ActivityStreamsOutcome>;
  }

  private run(
    kind: DecodeKind,
    bytes: Uint8Array,
    limits: DecodeLimits,
    accept: AcceptedFormats,
  ): Promise<DecodeOutcome> {
    if (this.closed) return Promise.reject(new FitDecoderError('the FIT decoder pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({
        id: this.nextId++,
        kind,
        bytes,
        options: { maxRecords: limits.maxRecords },
        accept,
        timeoutMs: limits.timeoutMs,
        resolve,
        reject,
      });
      this.dispatch();
    });
  }

  /** Stop every worker; queued and running decodes reject. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(new FitDecoderError('the FIT decoder pool closed'));
    await Promise.all(
      this.slots.splice(0).map((slot) => this.retire(slot, new FitDecoderError('the FIT decoder pool closed'))),
    );
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((candidate) => candidate.current === undefined);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      const pending = this.queue.shift() as Pending;
      const timer = setTimeout(() => {
        void this.retire(slot, new FitDecodeTimeoutError(pending.timeoutMs));
      }, pending.timeoutMs);
      timer.unref();
      clearTimeout(slot.idleTimer);
      slot.idleTimer = undefined;
      slot.current = { ...pending, timer };
      slot.worker.ref();
      // A private copy moved to the worker (which frees it when done); the caller keeps its own bytes to store.
      const copy = new Uint8Array(pending.bytes);
      const task: DecodeTask = {
        id: pending.id,
        kind: pending.kind,
        bytes: copy,
        options: pending.options,
        accept: pending.accept,
      };
      slot.worker.postMessage(task, [copy.buffer]);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_URL, {
      execArgv: workerExecArgv(),
      resourceLimits: {
        maxOldGenerationSizeMb: this.maxOldGenerationSizeMb,
        maxYoungGenerationSizeMb: this.maxYoungGenerationSizeMb,
      },
      name: 'pacer-fit-decoder',
    });
    worker.unref();
    const slot: Slot = { worker, current: undefined, idleTimer: undefined };
    worker.on('message', (reply: DecodeReply) => {
      const current = slot.current;
      if (!current || current.id !== reply.id) return;
      clearTimeout(current.timer);
      slot.current = undefined;
      worker.unref();
      if ('outcome' in reply) current.resolve(reply.outcome);
      else current.reject(new Error(`the FIT decoder failed: ${reply.failure}`));
      this.dispatch();
      if (slot.current === undefined) this.retireWhenIdle(slot);
    });
    worker.on('error', (error: Error) => {
      void this.retire(slot, new FitDecoderError(`the FIT decoder worker crashed: ${error.message}`));
    });
    worker.on('exit', () => {
      void this.retire(slot, new FitDecoderError('the FIT decoder worker exited'));
    });
    this.slots.push(slot);
    return slot;
  }

  private retireWhenIdle(slot: Slot): void {
    slot.idleTimer = setTimeout(() => {
      if (slot.current === undefined) void this.retire(slot, new FitDecoderError('the FIT decoder worker was idle'));
    }, this.idleTimeoutMs);
    slot.idleTimer.unref();
  }

  /** Take a worker out of the pool, failing its task; queued tasks go to a fresh worker. */
  private async retire(slot: Slot, reason: FitDecoderError): Promise<void> {
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    clearTimeout(slot.idleTimer);
    const current = slot.current;
    slot.current = undefined;
    if (current) {
      clearTimeout(current.timer);
      current.reject(reason);
    }
    await slot.worker.terminate();
    if (!this.closed) this.dispatch();
  }
}

const shared = new Map<number, FitDecoderPool>();

/**
 * The process's pool of `size` workers, shared by every app instance in it
 * that asks for that size (tests run several servers in one process).
 */
export function sharedFitDecoderPool(size: number): FitDecoderPool {
  let pool = shared.get(size);
  if (!pool) {
    pool = new FitDecoderPool({ size });
    shared.set(size, pool);
  }
  return pool;
}

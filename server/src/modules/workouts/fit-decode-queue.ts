import { AppError } from '../../errors.ts';
import type { AcceptedFormats, ActivityDecodeOutcome, ActivityStreamsOutcome } from './activity-file.ts';
import type { DecodeLimits, FitDecoderPool } from './fit-decoder.pool.ts';

/**
 * Admission to FIT decoding (docs/design.md §3 "Sync resources"). A file is
 * admitted before its bytes are read (an upload's body, a stored file for its
 * streams) and holds its place until it is decoded or refused, so what this
 * process holds in memory for decoding is bounded:
 * - by files and by bytes: at most `maxQueuedFiles` files and
 *   `maxQueuedBytes` bytes at once, whether they are still arriving, waiting
 *   for a worker or being decoded; an upload counts at its declared length
 *   (the limit when it declares none) until its body is in, then at its
 *   file's size. Beyond that: 503 `fit_decode_queue_full` + `Retry-After`;
 * - by user: one file per user at a time. A second one is refused at once
 *   (429 `fit_decode_in_progress` + `Retry-After`) rather than queued, so one
 *   account can neither fill the queue nor take more than one worker.
 *
 * Per process, not across processes: what it guards is this process's
 * memory and its decoder pool (fit-decoder.pool.ts), which no other process
 * shares. Behind a load balancer one user may decode one file in each API
 * process, never two in one; counting across processes would cost a
 * PostgreSQL round trip per upload and protect nothing more here.
 */

/** Seconds to wait when the queue is full: a few decodes of ordinary files. */
export const QUEUE_FULL_RETRY_AFTER_SECS = 5;
/** Seconds to wait when the user's own file is still being decoded: most take well under a second. */
export const IN_PROGRESS_RETRY_AFTER_SECS = 1;

function queueFull(): AppError {
  return new AppError(
    'fit_decode_queue_full',
    `The server is processing as many FIT files as it can hold; nothing was read or stored. Try again in ${QUEUE_FULL_RETRY_AFTER_SECS} seconds.`,
    { headers: { 'Retry-After': String(QUEUE_FULL_RETRY_AFTER_SECS) } },
  );
}

export interface FitDecodeQueueLimits extends DecodeLimits {
  readonly maxQueuedFiles: number;
  readonly maxQueuedBytes: number;
}

/** A file's place in the queue, from admission until `release()`; decodes through it count as the user's one. */
export class DecodeTicket {
  readonly userId: string;
  private heldBytes: number;
  /** The caller's hold and one per decode running; the place is freed when none is left. */
  private holds = 1;
  private released = false;
  private freed = false;
  private readonly queue: FitDecodeQueue;

  constructor(queue: FitDecodeQueue, userId: string, bytes: number) {
    this.queue = queue;
    this.userId = userId;
    this.heldBytes = bytes;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  get limits(): DecodeLimits {
    return this.queue.limits;
  }

  /**
   * The file may be larger than admitted (a gzip-compressed upload inflates):
   * count it at `bytes` if the queue has room for the difference; `false`
   * when it has not (the caller refuses with `queueFullError()`).
   */
  growTo(bytes: number): boolean {
    if (this.released || bytes <= this.heldBytes) return true;
    if (!this.queue.takeBytes(bytes - this.heldBytes)) return false;
    this.heldBytes = bytes;
    return true;
  }

  queueFullError(): AppError {
    return queueFull();
  }

  /** The body has arrived: count the file at its real size (never more than admitted). */
  settleSize(bytes: number): void {
    if (this.released || bytes >= this.heldBytes) return;
    this.queue.returnBytes(this.heldBytes - bytes);
    this.heldBytes = bytes;
  }

  decodeActivity(bytes: Uint8Array, accept: AcceptedFormats): Promise<ActivityDecodeOutcome> {
    return this.whileHeld(() => this.queue.pool.decodeActivity(bytes, this.queue.limits, accept));
  }

  decodeStreams(bytes: Uint8Array): Promise<ActivityStreamsOutcome> {
    return this.whileHeld(() => this.queue.pool.decodeStreams(bytes, this.queue.limits));
  }

  /**
   * The caller is done (the request ended, however). A decode still running
   * (its client went away) keeps the place until the worker is done with it,
   * so going away does not let a user start a second one.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.drop();
  }

  private async whileHeld<T>(decode: () => Promise<T>): Promise<T> {
    if (this.freed) throw new Error('a FIT decode ticket was used after its place was freed');
    this.holds += 1;
    try {
      return await decode();
    } finally {
      this.drop();
    }
  }

  private drop(): void {
    this.holds -= 1;
    if (this.holds > 0 || this.freed) return;
    this.freed = true;
    this.queue.free(this);
  }
}

export class FitDecodeQueue {
  readonly pool: FitDecoderPool;
  readonly limits: FitDecodeQueueLimits;
  private files = 0;
  private bytes = 0;
  private readonly users = new Set<string>();

  constructor(pool: FitDecoderPool, limits: FitDecodeQueueLimits) {
    this.pool = pool;
    this.limits = limits;
  }

  /** Files and bytes admitted now (for logs and tests). */
  get load(): { readonly files: number; readonly bytes: number } {
    return { files: this.files, bytes: this.bytes };
  }

  /**
   * A place for one file of at most `bytes` bytes of `userId`, or the refusal:
   * 429 `fit_decode_in_progress` while the user has one, 503
   * `fit_decode_queue_full` when it would take the queue past either bound.
   */
  admit(userId: string, bytes: number): DecodeTicket {
    if (this.users.has(userId)) {
      throw new AppError(
        'fit_decode_in_progress',
        'Another of your FIT files is still being processed: send this one when it has finished (one file at a time).',
        { headers: { 'Retry-After': String(IN_PROGRESS_RETRY_AFTER_SECS) } },
      );
    }
    if (this.files + 1 > this.limits.maxQueuedFiles || this.bytes + bytes > this.limits.maxQueuedBytes) {
      throw queueFull();
    }
    this.users.add(userId);
    this.files += 1;
    this.bytes += bytes;
    return new DecodeTicket(this, userId, bytes);
  }

  /** @internal A ticket grows by `bytes` if the queue's byte bound allows. */
  takeBytes(bytes: number): boolean {
    if (this.bytes + bytes > this.limits.maxQueuedBytes) return false;
    this.bytes += bytes;
    return true;
  }

  /** @internal A ticket's size shrank. */
  returnBytes(bytes: number): void {
    this.bytes -= bytes;
  }

  /** @internal A ticket's last hold ended. */
  free(ticket: DecodeTicket): void {
    this.users.delete(ticket.userId);
    this.files -= 1;
    this.bytes -= ticket.bytes;
  }
}

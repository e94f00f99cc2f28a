import { createHash } from 'node:crypto';
import { type Gunzip, createGunzip } from 'node:zlib';
import { WORKOUT_METADATA_MAX_BYTES, WORKOUT_NAME_MAX } from '@pacer/contract';
import busboy from 'busboy';
import type { Readable } from 'node:stream';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, type FieldError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { DecodeTicket, FitDecodeQueue } from '../modules/workouts/fit-decode-queue.ts';
import { admitFitUpload, type FitUpload } from '../modules/workouts/workouts.service.ts';
import { actorOf } from './bearer-auth.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's own augmentation point
  namespace Express {
    interface Locals {
      fitUpload?: FitUpload;
    }
  }
}

export interface FitUploadOptions {
  /** `PACER_MAX_UPLOAD_BYTES`: the largest file accepted. */
  readonly maxBytes: number;
  /** Where the file takes its place before a byte of it is read. */
  readonly decoding: FitDecodeQueue;
  readonly logger: Logger;
}

const TEXT_FIELDS = new Set(['name', 'metadata']);
/** Room for the text fields, part headers and boundaries around the file. */
const FORM_OVERHEAD_BYTES = WORKOUT_METADATA_MAX_BYTES + 16 * 1024;

function tooLarge(maxBytes: number): AppError {
  return new AppError('payload_too_large', `The file is larger than the ${maxBytes} bytes this server accepts.`, {
    errors: [{ path: 'file', message: `larger than ${maxBytes} bytes` }],
  });
}

function inflatesTooLarge(maxBytes: number): AppError {
  return new AppError(
    'upload_decompressed_too_large',
    `The gzip-compressed file decompresses to more than the ${maxBytes} bytes this server accepts; it was not decompressed further and nothing was stored.`,
    { errors: [{ path: 'file', message: `decompresses to more than ${maxBytes} bytes` }] },
  );
}

/** RFC 1952 §2.3.1: every gzip member starts with ID1 = 0x1f, ID2 = 0x8b. */
const GZIP_MAGIC = [0x1f, 0x8b] as const;

/**
 * The typed client (ts-rest) JSON-encodes every text part of a multipart
 * body, so `name` may arrive as `"Morning ride"` with the quotes: take the
 * string inside.
 */
function unwrapJsonString(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    try {
      const inner: unknown = JSON.parse(value);
      if (typeof inner === 'string') return inner;
    } catch {
      // Not JSON: the quotes belong to the name.
    }
  }
  return value;
}

/** The `metadata` field as an object, or why it is not one. */
function parseMetadata(
  raw: string,
): { readonly ok: true; readonly value: Record<string, unknown> } | { readonly ok: false; readonly error: FieldError } {
  let value: unknown;
  try {
    value = JSON.parse(raw);
    // A JSON object that was encoded once more (a string holding it).
    if (typeof value === 'string') value = JSON.parse(value);
  } catch {
    return {
      ok: false,
      error: { path: 'metadata', message: 'must be a JSON object in a string; it is not valid JSON' },
    };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: { path: 'metadata', message: 'must be a JSON object' } };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * Route middleware of `POST /api/workouts/upload-fit` and `POST /api/workouts/upload`
 * (docs/design.md §5: ts-rest drops multipart file fields from handler types).
 * Streams the body through busboy: the `file` part is hashed (SHA-256) as it
 * arrives and kept in memory up to `maxBytes` (the decoder needs all of it);
 * one byte more is a 413 and nothing is kept. A part that starts with the
 * gzip magic bytes is inflated as it arrives (node:zlib, off the event loop),
 * and what is hashed and kept is the decompressed file, within the same
 * `maxBytes`: one byte more stops the inflation at once (413
 * `upload_decompressed_too_large`), so a gzip bomb costs at most `maxBytes`
 * of output and nothing is stored; corrupt or truncated gzip data is a 422
 * `upload_gzip_invalid`. It runs after authentication, so an anonymous
 * caller never makes us read a body; and before reading, the upload takes
 * its place in the decode queue at its declared length (429 while the user
 * has another file in it, 503 when it is full; fit-decode-queue.ts), held
 * until the response has gone out.
 *
 * On success `res.locals.fitUpload` holds the upload and `req.body` the text
 * fields, which ts-rest then validates against the contract.
 */
export function parseFitUpload(options: FitUploadOptions): RequestHandler {
  const { maxBytes, decoding, logger } = options;
  return (req, res, next) => {
    const contentType = req.headers['content-type'] ?? '';
    if (!/^multipart\/form-data\s*;/i.test(contentType)) {
      next(
        new AppError('unsupported_media_type', 'Send the upload as `multipart/form-data` with a `file` part.', {
          errors: [{ path: '', message: `content type ${contentType || '(none)'} is not multipart/form-data` }],
        }),
      );
      return;
    }
    const declaredLength = Number(req.headers['content-length']);
    if (Number.isFinite(declaredLength) && declaredLength > maxBytes + FORM_OVERHEAD_BYTES) {
      // Refused before a byte is read; the connection closes rather than drain the body.
      refuseUnread(req, next, tooLarge(maxBytes));
      return;
    }
    let ticket: DecodeTicket;
    try {
      // The file is at most the body, and at most `maxBytes` (one byte more is a 413).
      const bound = Number.isFinite(declaredLength) ? Math.min(declaredLength, maxBytes) : maxBytes;
      ticket = admitFitUpload(decoding, actorOf(res), bound);
    } catch (error) {
      if (error instanceof AppError && error.code === 'fit_decode_queue_full') {
        // The operator's sign that PACER_FIT_DECODE_QUEUE_* (or the number of processes) is too small for the load.
        logger.warn({ requestId: res.locals.requestId, queue: decoding.load }, 'FIT decode queue full: upload refused');
      }
      // A declared body (at most the limit, checked above) is read and discarded, never kept, so the
      // client gets its 429/503 rather than a connection reset mid-send and can retry on the same
      // connection; a chunked one may never end, and closes the connection.
      if (Number.isFinite(declaredLength)) {
        req.resume();
        next(error);
      } else refuseUnread(req, next, error);
      return;
    }
    logger.debug({ requestId: res.locals.requestId, queue: decoding.load }, 'FIT upload admitted to the decode queue');
    // However the request ends: answered, failed, or the client gone.
    res.once('close', () => ticket.release());
    new UploadReader(
      req,
      res,
      next,
      maxBytes,
      ticket,
      Number.isFinite(declaredLength) ? ticket.bytes : undefined,
    ).start();
  };
}

/** An answer before the body is read: discard what arrives and close the connection after the answer. */
function refuseUnread(req: Request, next: NextFunction, error: unknown): void {
  req.resume();
  if (!(error instanceof AppError)) {
    next(error);
    return;
  }
  next(
    new AppError(error.code, error.message, {
      errors: error.errors,
      headers: { ...error.headers, Connection: 'close' },
    }),
  );
}

/**
 * The file's bytes as they stream in, copied into one buffer of this upload's
 * own (docs/design.md §3 "Sync resources", memory): the socket's chunks are
 * garbage as soon as they are copied, so the young generation takes them;
 * nothing of the body but this buffer outlives the request's first
 * milliseconds. Sized at the declared length when there is one (the file is
 * at most the body), else grown by doubling. `dispose()` hands its memory back
 * to the system at once, instead of when V8's next full collection finds the
 * buffer dead: a process that takes uploads back to back would otherwise hold
 * tens of MB of finished files (V8 collects external memory only past a
 * 64 MB allowance).
 */
export class UploadBytes {
  private buffer: ArrayBuffer;
  private view: Uint8Array;
  private length = 0;
  private readonly limit: number;

  /** `expected`: the most the file can be (declared body length); `limit`: the most it may grow to. */
  constructor(expected: number | undefined, limit: number) {
    this.limit = limit;
    this.buffer = new ArrayBuffer(Math.min(expected ?? INITIAL_UNDECLARED_BYTES, limit));
    this.view = new Uint8Array(this.buffer);
  }

  get size(): number {
    return this.length;
  }

  append(chunk: Uint8Array): void {
    const needed = this.length + chunk.length;
    if (needed > this.buffer.byteLength) {
      // `transfer` moves the bytes to the larger buffer and frees the old one now.
      this.buffer = this.buffer.transfer(Math.min(Math.max(needed, this.buffer.byteLength * 2), this.limit));
      this.view = new Uint8Array(this.buffer);
    }
    this.view.set(chunk, this.length);
    this.length = needed;
  }

  /** The file as a Buffer over this memory (no copy): valid until `dispose()`. */
  bytes(): Buffer {
    return Buffer.from(this.buffer, 0, this.length);
  }

  /** Free the memory now; every view of it reads as empty afterwards. */
  dispose(): void {
    if (!this.buffer.detached) this.buffer.transfer(0);
    this.length = 0;
  }
}

/** A body without Content-Length starts here and doubles. */
const INITIAL_UNDECLARED_BYTES = 256 * 1024;

/** One upload's parse: what has streamed in so far, and how it ends (once). */
class UploadReader {
  private readonly hash = createHash('sha256');
  private readonly file: UploadBytes;
  private fileName: string | null = null;
  private sawFile = false;
  private finished = false;
  /** The first bytes of the file, until there are enough to tell gzip from the rest. */
  private head: Buffer | undefined = Buffer.alloc(0);
  /** Set when the file is gzip-compressed: what it inflates to is the file. */
  private inflater: Gunzip | undefined;
  private inflated = false;
  private readonly texts = new Map<string, string>();
  private readonly problems: FieldError[] = [];

  private readonly req: Request;
  private readonly res: Response;
  private readonly next: NextFunction;
  private readonly maxBytes: number;
  private readonly ticket: DecodeTicket;

  /** `declaredBytes`: the most the file can be when the body declared its length. */
  constructor(
    req: Request,
    res: Response,
    next: NextFunction,
    maxBytes: number,
    ticket: DecodeTicket,
    declaredBytes: number | undefined,
  ) {
    this.req = req;
    this.res = res;
    this.next = next;
    this.maxBytes = maxBytes;
    this.ticket = ticket;
    // One byte over the limit is a 413 before it is kept: the buffer never needs more than `maxBytes`.
    this.file = new UploadBytes(declaredBytes, maxBytes);
  }

  start(): void {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: this.req.headers,
        // File names as browsers and fetch send them: UTF-8 (busboy's default is latin1).
        defParamCharset: 'utf8',
        // Busboy reports a limit when a part reaches it: one byte over ours.
        limits: {
          fileSize: this.maxBytes + 1,
          fieldSize: WORKOUT_METADATA_MAX_BYTES + 1,
          files: 1,
          fields: 8,
          parts: 10,
        },
      });
    } catch (error) {
      this.next(
        AppError.validation('', `the multipart body cannot be parsed: ${error instanceof Error ? error.message : ''}`),
      );
      return;
    }
    parser.on('file', (field, stream, info) => this.onFile(field, stream, info.filename));
    parser.on('field', (field, value, info) => this.onField(field, value, info.valueTruncated));
    parser.on('filesLimit', () => this.problems.push({ path: 'file', message: 'send exactly one file' }));
    parser.on('fieldsLimit', () => this.problems.push({ path: '', message: 'too many form fields' }));
    parser.on('partsLimit', () => this.problems.push({ path: '', message: 'too many form parts' }));
    parser.on('error', (error: Error) => {
      this.fail(AppError.validation('', `the multipart body is malformed: ${error.message}`));
    });
    parser.on('close', () => this.onClose());
    this.req.pipe(parser);
  }

  private fail(error: AppError): void {
    if (this.finished) return;
    this.finished = true;
    this.inflater?.destroy();
    this.file.dispose();
    this.ticket.settleSize(0);
    this.req.unpipe();
    // Read and discard whatever is still coming, and close the connection
    // after the answer so the rest of a large body is not drained.
    this.req.resume();
    this.next(new AppError(error.code, error.message, { errors: error.errors, headers: { Connection: 'close' } }));
  }

  private onFile(field: string, stream: Readable, filename: string | undefined): void {
    if (field !== 'file') {
      this.problems.push({ path: field, message: 'unknown field: send the FIT file as `file`' });
      stream.resume();
      return;
    }
    this.sawFile = true;
    this.fileName = filename ?? null;
    stream.on('data', (chunk: Buffer) => {
      if (this.finished) return;
      if (this.head === undefined) this.take(chunk);
      else this.sniff(Buffer.concat([this.head, chunk]));
    });
    stream.on('end', () => {
      if (this.finished) return;
      // A file shorter than the gzip magic is kept as it is.
      if (this.head !== undefined) this.sniff(this.head, true);
      this.inflater?.end();
    });
    stream.on('limit', () => this.fail(tooLarge(this.maxBytes)));
  }

  /** Tell a gzip-compressed file by its first two bytes (never by its name), then take what has arrived. */
  private sniff(head: Buffer, ended = false): void {
    if (head.length < GZIP_MAGIC.length && !ended) {
      this.head = head;
      return;
    }
    this.head = undefined;
    if (head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1]) this.startInflating();
    this.take(head);
  }

  private startInflating(): void {
    // What the file inflates to may be larger than what was admitted (its compressed size): count it at the most.
    if (!this.ticket.growTo(this.maxBytes)) {
      this.fail(this.ticket.queueFullError());
      return;
    }
    const inflater = createGunzip();
    this.inflater = inflater;
    inflater.on('data', (chunk: Buffer) => this.keep(chunk, true));
    inflater.on('error', (error: Error) => {
      this.fail(
        new AppError('upload_gzip_invalid', `The file starts as gzip data but does not decompress: ${error.message}.`, {
          errors: [{ path: 'file', message: `corrupt gzip data: ${error.message}` }],
        }),
      );
    });
    inflater.on('end', () => {
      this.inflated = true;
    });
  }

  /** A chunk of the file as sent: inflated first when it is compressed. */
  private take(chunk: Buffer): void {
    if (this.finished) return;
    if (this.inflater) this.inflater.write(chunk);
    else this.keep(chunk, false);
  }

  /** A chunk of the file itself: hashed and kept, up to `maxBytes`. */
  private keep(chunk: Buffer, inflated: boolean): void {
    if (this.finished) return;
    if (this.file.size + chunk.length > this.maxBytes) {
      // Sent as is, busboy reports `limit` (a 413) past the limit; inflated, we stop here.
      if (inflated) this.fail(inflatesTooLarge(this.maxBytes));
      return;
    }
    this.hash.update(chunk);
    this.file.append(chunk);
  }

  private onField(field: string, value: string, truncated: boolean): void {
    if (!TEXT_FIELDS.has(field)) {
      this.problems.push({ path: field, message: 'unknown field (the form takes `file`, `name` and `metadata`)' });
      return;
    }
    if (truncated) {
      const limit = field === 'metadata' ? `${WORKOUT_METADATA_MAX_BYTES} bytes` : `${WORKOUT_NAME_MAX} characters`;
      this.fail(
        new AppError('payload_too_large', `\`${field}\` is longer than ${limit}.`, {
          errors: [{ path: field, message: `longer than ${limit}` }],
        }),
      );
      return;
    }
    this.texts.set(field, value);
  }

  private onClose(): void {
    if (this.finished) return;
    if (this.inflater && !this.inflated) {
      // The body is in; the last of the file is still inflating.
      this.inflater.once('end', () => this.onClose());
      return;
    }
    if (!this.sawFile)
      this.problems.push({ path: 'file', message: 'required: the FIT file as a file part named `file`' });
    const name = this.texts.has('name') ? unwrapJsonString(this.texts.get('name') as string).trim() : '';
    const rawMetadata = this.texts.get('metadata')?.trim() ?? '';
    let metadata: Record<string, unknown> | undefined;
    if (rawMetadata !== '') {
      const parsed = parseMetadata(rawMetadata);
      if (parsed.ok) metadata = parsed.value;
      else this.problems.push(parsed.error);
    }
    this.finished = true;
    if (this.problems.length > 0) {
      this.file.dispose();
      const summary = this.problems.map((problem) => (problem.path ? `${problem.path}: ` : '') + problem.message);
      this.next(new AppError('validation_failed', summary.join('; '), { errors: this.problems }));
      return;
    }
    // The file is in: the queue counts its real size from now on.
    this.ticket.settleSize(this.file.size);
    const file = this.file;
    const upload: FitUpload = {
      ticket: this.ticket,
      bytes: file.bytes(),
      dispose: () => file.dispose(),
      sha256: this.hash.digest('hex'),
      fileName: this.fileName,
      // An empty text field is what a browser form sends for a blank input: not given.
      name: name === '' ? undefined : name,
      metadata,
    };
    this.res.locals.fitUpload = upload;
    // Read by the Idempotency-Key middleware's stored fingerprint.
    this.res.locals.uploadSha256 = upload.sha256;
    // What ts-rest validates against the contract. `file` is a stand-in: the
    // bytes travel in res.locals, ts-rest's handler types have no file field.
    this.req.body = {
      file: { name: this.fileName, size: this.file.size, sha256: upload.sha256 },
      ...(upload.name === undefined ? {} : { name: upload.name }),
      ...(metadata ? { metadata } : {}),
    };
    this.next();
  }
}

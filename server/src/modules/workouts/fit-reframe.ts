/**
 * A pre-pass that turns a FIT file the Garmin decoder (@garmin/fitsdk
 * 21.217) refuses, although its records are readable, into one it reads:
 * one stream of definition and data messages, decoded with `dataOnly`
 * (no file header, no CRC check). Only files the decoder refused come here
 * (fit-activity.ts `readFit`); whole, ordinary files never do.
 *
 * What it repairs, following the FIT protocol (Garmin, "Flexible and
 * Interoperable Data Transfer (FIT) Protocol", sections "File Header",
 * "Record Header" with "Normal Header" and "Compressed Timestamp Header",
 * "Definition Message", "CRC"):
 * - Compressed timestamp headers, which the decoder does not support. Such a
 *   header byte has bit 7 set, bits 5-6 name the local message type (0-3)
 *   and bits 0-4 hold a time offset in seconds: the message's timestamp is
 *   the last full timestamp (field 253 of any earlier message) with its low
 *   five bits replaced by the offset, plus 32 s when the offset is smaller
 *   than those bits (the 5-bit counter rolled over). Each such message is
 *   rewritten as a normal data message of a definition that adds the
 *   timestamp (field 253, uint32) to its local type's definition; the
 *   definition is written again whenever a local type switches between its
 *   plain and its timestamped form.
 * - A cut-off recording (a device whose battery died: no end, no CRC): every
 *   complete message before the cut is kept, and the file is `truncated`.
 * - Unreadable stretches inside the data (a record header naming an
 *   undefined local type, a definition with an unknown base type): the last
 *   data message before the break is dropped (it was read misaligned), and
 *   reading resumes where messages read cleanly again, in time order (see
 *   `RESYNC_RECORDS`); the file is `truncated` (messages were lost). The
 *   Strava Android file of the corpus needs it: 19 bytes are missing from it
 *   (its header declares 78,236 data bytes, 78,217 follow). Each break in it
 *   follows an LF byte (0x0a) in a record that reads true with a CR (0x0d)
 *   before that LF, as a text-mode copy that turns CRLF into LF leaves a
 *   file (a likely cause, not proven: putting CRs back by hand did not give
 *   the file's CRC). The first, in the record at byte 7,451, moves every
 *   later record by one byte, and the decoder stops at byte 7,472 on a
 *   record header naming an undefined local type.
 * - Chained files (several FIT files one after the other) become one stream;
 *   bytes after the last whole file that are not a FIT file (a chained
 *   header with a bad signature) are left out, and the file is `truncated`.
 * - A wrong file CRC: every message is kept (the records read to the
 *   declared end), and `crcMismatch` says so.
 *
 * Bounded: at most `maxRecords` data messages (as fit-message-count.ts
 * counts them before decoding), `MAX_RESYNCS` resynchronisations, each
 * scanning at most `MAX_RESYNC_SCAN_BYTES`, and an output at most twice the
 * input plus `OUTPUT_SLACK_BYTES` (a local type flipping between compressed
 * and normal headers rewrites its definition each time).
 */
import { CrcCalculator } from '@garmin/fitsdk';

const COMPRESSED_TIMESTAMP_HEADER = 0x80;
const DEFINITION_HEADER = 0x40;
const DEVELOPER_DATA_FLAG = 0x20;
const LOCAL_TYPE_MASK = 0x0f;
const COMPRESSED_LOCAL_TYPE_SHIFT = 5;
const COMPRESSED_LOCAL_TYPE_MASK = 0x03;
const TIME_OFFSET_MASK = 0x1f;
const MIN_FILE_HEADER_BYTES = 12;
const CRC_BYTES = 2;
/** Definition: record header, reserved, architecture, global number ×2, field count. */
const DEFINITION_FIXED_BYTES = 6;
const FIELD_DEFINITION_BYTES = 3;
/** Field 253 of every message is its timestamp (seconds since the FIT epoch, uint32, base type 0x86). */
const TIMESTAMP_FIELD = 253;
const UINT32_BASE_TYPE = 0x86;
/** Base types the profile defines: 0x00-0x10 in the low five bits ("Definition Message", base type field). */
const BASE_TYPE_NUMBER_MASK = 0x1f;
const MAX_BASE_TYPE_NUMBER = 0x10;

/**
 * Reading resumes after a break at the byte, of the first `RESYNC_WINDOW_BYTES`
 * after the dropped message, from which the most messages (up to
 * `RESYNC_BEST_OF`) read cleanly, and at least `RESYNC_RECORDS`: a stretch read
 * one byte off often reads cleanly for a few messages, the true boundary until
 * the next damage.
 */
const RESYNC_RECORDS = 8;
const RESYNC_BEST_OF = 512;
const RESYNC_WINDOW_BYTES = 128;
/**
 * Once a file has shown damage, a timestamp more than a minute before the
 * last one or 12 hours after it was read misaligned: bytes read as a
 * timestamp land in such a window about once in 100,000 times.
 */
const PLAUSIBLE_BACK_SECS = 60;
const PLAUSIBLE_AHEAD_SECS = 12 * 3600;
const MAX_RESYNCS = 200;
const MAX_RESYNC_SCAN_BYTES = 16 * 1024;
const OUTPUT_SLACK_BYTES = 64 * 1024;

export interface ReframedFit {
  readonly ok: true;
  /** Definition and data messages, then two bytes where the decoder reads a CRC: decode with `dataOnly`. */
  readonly data: Uint8Array;
  /** The file ended early, or bytes of it could not be read: messages may be missing. */
  readonly truncated: boolean;
  /** A whole file (or chained part) whose CRC does not match its bytes. */
  readonly crcMismatch: boolean;
}

export interface ReframeRefusal {
  readonly ok: false;
  readonly tooManyRecords?: true;
  readonly reason: string;
}

interface Definition {
  /** The definition message's bytes (record header first). */
  readonly bytes: Uint8Array;
  /** Bytes of a data message's content (without its header byte). */
  readonly size: number;
  readonly bigEndian: boolean;
  /** Offset of a 4-byte timestamp (field 253) in the content, or -1. */
  readonly timestampAt: number;
  /** The same definition with a timestamp field appended (for compressed-header messages), made when needed. */
  timestamped?: Uint8Array;
}

const isFitSignature = (bytes: Uint8Array, at: number): boolean =>
  bytes[at + 8] === 0x2e && bytes[at + 9] === 0x46 && bytes[at + 10] === 0x49 && bytes[at + 11] === 0x54;

const uint32At = (bytes: Uint8Array, at: number, bigEndian = false): number =>
  bigEndian
    ? (((bytes[at] as number) << 24) |
        ((bytes[at + 1] as number) << 16) |
        ((bytes[at + 2] as number) << 8) |
        (bytes[at + 3] as number)) >>>
      0
    : ((bytes[at] as number) |
        ((bytes[at + 1] as number) << 8) |
        ((bytes[at + 2] as number) << 16) |
        ((bytes[at + 3] as number) << 24)) >>>
      0;

/**
 * The definition message at `at`, or a reason it cannot be one: cut off
 * before `end`, or a field of an unknown base type.
 */
function readDefinition(bytes: Uint8Array, at: number, end: number): Definition | 'cut' | 'invalid' {
  const header = bytes[at] as number;
  if (at + DEFINITION_FIXED_BYTES > end) return 'cut';
  const bigEndian = bytes[at + 2] === 1;
  if (bytes[at + 2] !== 0 && !bigEndian) return 'invalid';
  const fields = bytes[at + 5] as number;
  let next = at + DEFINITION_FIXED_BYTES;
  if (next + fields * FIELD_DEFINITION_BYTES > end) return 'cut';
  let size = 0;
  let timestampAt = -1;
  for (let i = 0; i < fields; i += 1, next += FIELD_DEFINITION_BYTES) {
    const fieldSize = bytes[next + 1] as number;
    if (((bytes[next + 2] as number) & BASE_TYPE_NUMBER_MASK) > MAX_BASE_TYPE_NUMBER) return 'invalid';
    if (bytes[next] === TIMESTAMP_FIELD && fieldSize === 4) timestampAt = size;
    size += fieldSize;
  }
  if ((header & DEVELOPER_DATA_FLAG) !== 0) {
    if (next + 1 > end) return 'cut';
    const developerFields = bytes[next] as number;
    next += 1;
    if (next + developerFields * FIELD_DEFINITION_BYTES > end) return 'cut';
    for (let i = 0; i < developerFields; i += 1, next += FIELD_DEFINITION_BYTES) size += bytes[next + 1] as number;
  }
  return { bytes: bytes.subarray(at, next), size, bigEndian, timestampAt };
}

/**
 * The definition with field 253 (uint32) added after its own fields (before
 * any developer fields); `undefined` when it already has the most fields a
 * definition can have.
 */
function withTimestampField(definition: Definition): Uint8Array | undefined {
  const { bytes } = definition;
  const fields = bytes[5] as number;
  if (fields === 0xff) return undefined;
  const ownEnd = DEFINITION_FIXED_BYTES + fields * FIELD_DEFINITION_BYTES;
  const out = new Uint8Array(bytes.length + FIELD_DEFINITION_BYTES);
  out.set(bytes.subarray(0, ownEnd));
  out[5] = fields + 1;
  out.set([TIMESTAMP_FIELD, 4, UINT32_BASE_TYPE], ownEnd);
  // Developer fields follow the message's own fields in the content, so the timestamp goes before them.
  out.set(bytes.subarray(ownEnd), ownEnd + FIELD_DEFINITION_BYTES);
  return out;
}

interface DataMark {
  readonly outLength: number;
  readonly piecesLength: number;
  readonly run: readonly [number, number];
  readonly inputAt: number;
  readonly timestampBefore: number | undefined;
}

/** A timestamp in the window after `last` (see `PLAUSIBLE_AHEAD_SECS`); any one when there is no `last`. */
const plausible = (timestamp: number, last: number | undefined): boolean =>
  last === undefined || (timestamp >= last - PLAUSIBLE_BACK_SECS && timestamp <= last + PLAUSIBLE_AHEAD_SECS);

/** Collects the output: runs of input bytes copied as they are, and rewritten pieces. */
class Output {
  private readonly pieces: Uint8Array[] = [];
  private runStart = -1;
  private runEnd = -1;
  length = 0;
  /** Where the last data message begins in the output and the input, to drop it at a break. */
  lastData: DataMark | undefined;

  private readonly input: Uint8Array;

  constructor(input: Uint8Array) {
    this.input = input;
  }

  copy(from: number, to: number): void {
    if (this.runEnd === from) this.runEnd = to;
    else {
      this.flush();
      this.runStart = from;
      this.runEnd = to;
    }
    this.length += to - from;
  }

  write(piece: Uint8Array): void {
    this.flush();
    this.pieces.push(piece);
    this.length += piece.length;
  }

  markData(inputAt: number, timestampBefore: number | undefined): void {
    const run = [this.runStart, this.runEnd] as const;
    this.lastData = { outLength: this.length, piecesLength: this.pieces.length, run, inputAt, timestampBefore };
  }

  /** Forget everything written since the last `markData`; where that message began, and the timestamp before it. */
  dropLastData(): DataMark | undefined {
    const mark = this.lastData;
    if (!mark) return undefined;
    this.pieces.length = mark.piecesLength;
    [this.runStart, this.runEnd] = mark.run;
    this.length = mark.outLength;
    this.lastData = undefined;
    return mark;
  }

  private flush(): void {
    if (this.runStart >= 0 && this.runEnd > this.runStart)
      this.pieces.push(this.input.subarray(this.runStart, this.runEnd));
    this.runStart = -1;
    this.runEnd = -1;
  }

  finish(): Uint8Array {
    this.flush();
    const out = new Uint8Array(this.length + CRC_BYTES);
    let at = 0;
    for (const piece of this.pieces) {
      out.set(piece, at);
      at += piece.length;
    }
    return out;
  }
}

/**
 * How many messages (at most `limit`) read cleanly from `at` with the known
 * definitions (definitions met on the way count for the ones after), their
 * timestamps plausible after `lastTimestamp` and never going back; reaching
 * `end` counts as clean.
 */
function cleanRunFrom(
  bytes: Uint8Array,
  at: number,
  end: number,
  definitions: readonly (Definition | undefined)[],
  lastTimestamp: number | undefined,
  limit: number,
  compressedHeaders: boolean,
): number {
  const known = [...definitions];
  let position = at;
  let read = 0;
  let previous = lastTimestamp;
  for (; read < limit; read += 1) {
    if (position >= end) return position === end ? limit : read;
    const header = bytes[position] as number;
    if ((header & COMPRESSED_TIMESTAMP_HEADER) !== 0) {
      const definition = known[(header >> COMPRESSED_LOCAL_TYPE_SHIFT) & COMPRESSED_LOCAL_TYPE_MASK];
      if (!definition || !compressedHeaders) return read;
      position += 1 + definition.size;
    } else if ((header & DEFINITION_HEADER) !== 0) {
      const definition = readDefinition(bytes, position, end);
      if (typeof definition === 'string') return read;
      known[header & LOCAL_TYPE_MASK] = definition;
      position += definition.bytes.length;
    } else {
      const definition = known[header & LOCAL_TYPE_MASK];
      if (!definition || position + 1 + definition.size > end) return read;
      if (definition.timestampAt >= 0) {
        // A file's messages come in time order: a stretch read off its boundaries soon goes back in time.
        const timestamp = uint32At(bytes, position + 1 + definition.timestampAt, definition.bigEndian);
        if (!plausible(timestamp, lastTimestamp) || (previous !== undefined && timestamp < previous)) return read;
        previous = timestamp;
      }
      position += 1 + definition.size;
    }
  }
  return position <= end ? read : read - 1;
}

class Reframer {
  private readonly definitions: (Definition | undefined)[] = new Array<Definition | undefined>(LOCAL_TYPE_MASK + 1);
  /** Which form of each local type's definition the output last wrote. */
  private readonly written = new Array<'plain' | 'timestamped' | undefined>(LOCAL_TYPE_MASK + 1);
  private readonly out: Output;
  private lastTimestamp: number | undefined;
  private dataMessages = 0;
  private resyncs = 0;
  /**
   * Set at the first break: from then on, implausible timestamps are breaks
   * too, and so are compressed timestamp headers in a file that had none
   * before it (a byte read off a boundary often has bit 7 set).
   */
  private damaged = false;
  private compressedHeaders = false;
  truncated = false;
  crcMismatch = false;

  private readonly bytes: Uint8Array;
  private readonly maxRecords: number;

  constructor(bytes: Uint8Array, maxRecords: number) {
    this.bytes = bytes;
    this.maxRecords = maxRecords;
    this.out = new Output(bytes);
  }

  run(): ReframedFit | ReframeRefusal {
    const { bytes } = this;
    let fileStart = 0;
    while (fileStart < bytes.length) {
      const headerSize = bytes[fileStart] as number;
      if (
        fileStart + MIN_FILE_HEADER_BYTES > bytes.length ||
        headerSize < MIN_FILE_HEADER_BYTES ||
        !isFitSignature(bytes, fileStart)
      ) {
        // Not a chained FIT file: bytes we cannot read (the first header was checked before).
        this.truncated = true;
        break;
      }
      const dataEnd = fileStart + headerSize + uint32At(bytes, fileStart + 4);
      const outcome = this.readMessages(fileStart + headerSize, Math.min(dataEnd, bytes.length));
      if (outcome === 'stopped') break;
      if (outcome !== undefined) return outcome;
      if (dataEnd + CRC_BYTES > bytes.length) {
        this.truncated = true;
        break;
      }
      const crc = (bytes[dataEnd] as number) | ((bytes[dataEnd + 1] as number) << 8);
      if (crc !== 0 && crc !== CrcCalculator.calculateCRC(bytes, fileStart, dataEnd)) this.crcMismatch = true;
      fileStart = dataEnd + CRC_BYTES;
    }
    return { ok: true, data: this.out.finish(), truncated: this.truncated, crcMismatch: this.crcMismatch };
  }

  /**
   * Copy the messages of `[start, end)` to the output; `stopped` when the
   * data ends early or cannot be read on, a refusal when a bound is exceeded.
   */
  private readMessages(start: number, end: number): ReframeRefusal | 'stopped' | undefined {
    const { bytes, out } = this;
    let at = start;
    while (at < end) {
      if (out.length > 2 * bytes.length + OUTPUT_SLACK_BYTES) {
        return { ok: false, reason: 'its compressed timestamp headers expand it beyond twice its size' };
      }
      const header = bytes[at] as number;
      let next: number | 'cut' | 'invalid';
      if ((header & COMPRESSED_TIMESTAMP_HEADER) !== 0) next = this.compressed(at, end);
      else if ((header & DEFINITION_HEADER) !== 0) next = this.definition(at, end);
      else next = this.data(at, end);
      if (typeof next === 'number') {
        at = next;
        if (this.dataMessages > this.maxRecords) {
          return { ok: false, reason: `the file holds more than ${this.maxRecords} records`, tooManyRecords: true };
        }
        continue;
      }
      this.truncated = true;
      const resumeAt = next === 'cut' ? undefined : this.resync(at, end);
      // Cut off (or unreadable to its end): what was read before stays, the rest is lost.
      if (resumeAt === undefined) return 'stopped';
      at = resumeAt;
    }
    return undefined;
  }

  private compressed(at: number, end: number): number | 'cut' | 'invalid' {
    const { bytes } = this;
    const header = bytes[at] as number;
    const localType = (header >> COMPRESSED_LOCAL_TYPE_SHIFT) & COMPRESSED_LOCAL_TYPE_MASK;
    const definition = this.definitions[localType];
    if (!definition || this.lastTimestamp === undefined) return 'invalid';
    const next = at + 1 + definition.size;
    if (next > end) return 'cut';
    if (this.damaged && !this.compressedHeaders) return 'invalid';
    definition.timestamped ??= withTimestampField(definition);
    if (!definition.timestamped) return 'invalid';
    this.compressedHeaders = true;
    const offset = header & TIME_OFFSET_MASK;
    const base = (this.lastTimestamp & ~TIME_OFFSET_MASK) >>> 0;
    const rollover = offset >= (this.lastTimestamp & TIME_OFFSET_MASK) ? 0 : TIME_OFFSET_MASK + 1;
    const timestamp = (base + offset + rollover) >>> 0;
    if (this.written[localType] !== 'timestamped') {
      this.out.write(definition.timestamped);
      this.written[localType] = 'timestamped';
    }
    this.out.markData(at, this.lastTimestamp);
    this.lastTimestamp = timestamp;
    const message = new Uint8Array(1 + definition.size + 4);
    message[0] = localType;
    message.set(bytes.subarray(at + 1, next), 1);
    const view = new DataView(message.buffer);
    // The developer fields follow the timestamp in the rewritten definition: move them after it.
    const ownSize = definition.size - developerBytes(definition);
    message.copyWithin(1 + ownSize + 4, 1 + ownSize, 1 + definition.size);
    view.setUint32(1 + ownSize, timestamp, !definition.bigEndian);
    this.out.write(message);
    this.dataMessages += 1;
    return next;
  }

  private definition(at: number, end: number): number | 'cut' | 'invalid' {
    const definition = readDefinition(this.bytes, at, end);
    if (typeof definition === 'string') return definition;
    const localType = (this.bytes[at] as number) & LOCAL_TYPE_MASK;
    this.definitions[localType] = definition;
    this.written[localType] = 'plain';
    this.out.copy(at, at + definition.bytes.length);
    return at + definition.bytes.length;
  }

  private data(at: number, end: number): number | 'cut' | 'invalid' {
    const localType = (this.bytes[at] as number) & LOCAL_TYPE_MASK;
    const definition = this.definitions[localType];
    if (!definition) return 'invalid';
    const next = at + 1 + definition.size;
    if (next > end) return 'cut';
    const timestamp =
      definition.timestampAt >= 0
        ? uint32At(this.bytes, at + 1 + definition.timestampAt, definition.bigEndian)
        : undefined;
    if (timestamp !== undefined && this.damaged && !plausible(timestamp, this.lastTimestamp)) return 'invalid';
    if (this.written[localType] !== 'plain') {
      this.out.write(definition.bytes);
      this.written[localType] = 'plain';
    }
    this.out.markData(at, this.lastTimestamp);
    if (timestamp !== undefined) this.lastTimestamp = timestamp;
    this.out.copy(at, next);
    this.dataMessages += 1;
    return next;
  }

  /** Where reading resumes after a break at `at`, dropping the data message before it; `undefined` when nowhere. */
  private resync(at: number, end: number): number | undefined {
    if (this.resyncs >= MAX_RESYNCS) return undefined;
    this.resyncs += 1;
    this.damaged = true;
    const dropped = this.out.dropLastData();
    if (dropped !== undefined) {
      this.dataMessages -= 1;
      this.lastTimestamp = dropped.timestampBefore;
    }
    const from = (dropped?.inputAt ?? at) + 1;
    const run = (candidate: number, limit: number) =>
      cleanRunFrom(this.bytes, candidate, end, this.definitions, this.lastTimestamp, limit, this.compressedHeaders);
    let best: number | undefined;
    let bestRun = RESYNC_RECORDS - 1;
    for (let candidate = from; candidate < Math.min(end, from + RESYNC_WINDOW_BYTES); candidate += 1) {
      const length = run(candidate, RESYNC_BEST_OF);
      if (length > bestRun) [best, bestRun] = [candidate, length];
    }
    if (best !== undefined) return best;
    const limit = Math.min(end, from + MAX_RESYNC_SCAN_BYTES);
    for (let candidate = from + RESYNC_WINDOW_BYTES; candidate < limit; candidate += 1) {
      if (run(candidate, RESYNC_RECORDS) >= RESYNC_RECORDS) return candidate;
    }
    return undefined;
  }
}

function developerBytes(definition: Definition): number {
  const { bytes } = definition;
  if (((bytes[0] as number) & DEVELOPER_DATA_FLAG) === 0) return 0;
  const fields = bytes[5] as number;
  let at = DEFINITION_FIXED_BYTES + fields * FIELD_DEFINITION_BYTES;
  const developerFields = bytes[at] as number;
  at += 1;
  let size = 0;
  for (let i = 0; i < developerFields; i += 1) size += bytes[at + i * FIELD_DEFINITION_BYTES + 1] as number;
  return size;
}

/**
 * The messages of a FIT file whose first header is intact (checked by the
 * caller), rewritten into one stream the Garmin decoder reads with
 * `dataOnly`; see the module comment for what is repaired.
 */
export function reframeFit(bytes: Uint8Array, maxRecords: number): ReframedFit | ReframeRefusal {
  return new Reframer(bytes, maxRecords).run();
}

/**
 * Counts the data messages of a FIT file without decoding them: a walk over
 * the record headers that only reads each definition's field sizes, so a
 * file of millions of tiny records is refused in milliseconds instead of
 * after the decoder has built an object for each of them.
 *
 * It reads the file the way the Garmin decoder does (@garmin/fitsdk
 * `Decoder#read`; FIT protocol, "File Header" and "Record Header"):
 * - a file is a header (its first byte is its size, bytes 4-7 the size of
 *   the data that follows), the data, and a 2-byte CRC; files may be
 *   chained one after the other, and local message definitions carry over
 *   from one to the next;
 * - each record starts with a header byte: bit 7 set is a compressed
 *   timestamp header (a data message of local type 0-3, in bits 5-6; the
 *   pre-pass of fit-reframe.ts rewrites them for the decoder), bit 6 set a
 *   definition message (bit 5: it has developer fields), else a normal data
 *   message; bits 0-3 name the local message type;
 * - a definition is 5 bytes (reserved, architecture, global number ×2,
 *   field count) and 3 bytes per field (number, size, base type), then, with
 *   developer fields, their count and 3 bytes each (number, size, index);
 *   a data message of that local type is the header byte and the sum of the
 *   field sizes.
 * Every data message counts, whatever its global number (records, laps,
 * events, HRV, unknown ones): the decoder reads each of them. Where the walk
 * meets what the decoder would fail on (a data message of an undefined local
 * type, a cut-off definition, a chained part that is not FIT), it stops: the
 * decoder stops there, after no more messages than were counted; the
 * pre-pass that reads on past such a break counts for itself.
 */

const COMPRESSED_TIMESTAMP_HEADER = 0x80;
const COMPRESSED_LOCAL_TYPE_SHIFT = 5;
const COMPRESSED_LOCAL_TYPE_MASK = 0x03;
const DEFINITION_HEADER = 0x40;
const DEVELOPER_DATA_FLAG = 0x20;
const LOCAL_TYPE_MASK = 0x0f;
/** Header size byte, protocol version, profile version ×2, data size ×4, ".FIT". */
const MIN_FILE_HEADER_BYTES = 12;
const CRC_BYTES = 2;
/** Definition: record header, reserved, architecture, global number ×2, field count. */
const DEFINITION_FIXED_BYTES = 6;
const FIELD_DEFINITION_BYTES = 3;

function isFitSignature(bytes: Uint8Array, at: number): boolean {
  // ".FIT" at bytes 8-11 of the file header.
  return bytes[at + 8] === 0x2e && bytes[at + 9] === 0x46 && bytes[at + 10] === 0x49 && bytes[at + 11] === 0x54;
}

function uint32At(bytes: Uint8Array, at: number): number {
  return (
    ((bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8) | ((bytes[at + 2] ?? 0) << 16) | ((bytes[at + 3] ?? 0) << 24)) >>> 0
  );
}

/** Sum of the sizes of `count` 3-byte field definitions from `at`. */
function fieldBytes(bytes: Uint8Array, at: number, count: number): number {
  let size = 0;
  for (let i = 0; i < count; i += 1) size += bytes[at + i * FIELD_DEFINITION_BYTES + 1] ?? 0;
  return size;
}

/**
 * `true` as soon as the file holds more than `limit` data messages; `false`
 * when it holds at most `limit` (or stops being readable before that).
 */
export function hasMoreDataMessagesThan(bytes: Uint8Array, limit: number): boolean {
  // Bytes of a data message of each local type; -1 while the type is undefined.
  const messageBytes = new Int32Array(LOCAL_TYPE_MASK + 1).fill(-1);
  let count = 0;
  let fileStart = 0;
  while (fileStart + MIN_FILE_HEADER_BYTES <= bytes.length && isFitSignature(bytes, fileStart)) {
    const headerSize = bytes[fileStart] ?? 0;
    const dataEnd = fileStart + headerSize + uint32At(bytes, fileStart + 4);
    let at = fileStart + headerSize;
    while (at < dataEnd && at < bytes.length) {
      const header = bytes[at] as number;
      if ((header & COMPRESSED_TIMESTAMP_HEADER) !== 0) {
        const size = messageBytes[(header >> COMPRESSED_LOCAL_TYPE_SHIFT) & COMPRESSED_LOCAL_TYPE_MASK] as number;
        if (size < 0) return false;
        count += 1;
        if (count > limit) return true;
        at += 1 + size;
      } else if ((header & DEFINITION_HEADER) !== 0) {
        const fields = bytes[at + DEFINITION_FIXED_BYTES - 1];
        if (fields === undefined) return false;
        let next = at + DEFINITION_FIXED_BYTES;
        let size = fieldBytes(bytes, next, fields);
        next += fields * FIELD_DEFINITION_BYTES;
        if ((header & DEVELOPER_DATA_FLAG) !== 0) {
          const developerFields = bytes[next];
          if (developerFields === undefined) return false;
          size += fieldBytes(bytes, next + 1, developerFields);
          next += 1 + developerFields * FIELD_DEFINITION_BYTES;
        }
        messageBytes[header & LOCAL_TYPE_MASK] = size;
        at = next;
      } else {
        const size = messageBytes[header & LOCAL_TYPE_MASK] as number;
        if (size < 0) return false;
        count += 1;
        if (count > limit) return true;
        at += 1 + size;
      }
    }
    fileStart = dataEnd + CRC_BYTES;
  }
  return false;
}

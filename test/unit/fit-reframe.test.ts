import { CrcCalculator, Decoder, Stream } from '@garmin/fitsdk';
import { describe, expect, it } from 'vitest';
import { decodeFitActivity, decodeFitStreams } from '../../server/src/modules/workouts/fit-activity.ts';
import { hasMoreDataMessagesThan } from '../../server/src/modules/workouts/fit-message-count.ts';
import { reframeFit } from '../../server/src/modules/workouts/fit-reframe.ts';

const RECORD = 20;
const TIMESTAMP_FIELD = [253, 4, 0x86];
const HEART_RATE_FIELD = [3, 1, 0x02];
/** A full timestamp whose low five bits are 30, so the next offsets show the 5-bit rollover. */
const T = 1_000_000_030;

const definition = (localType: number, fields: number[][]) => [
  0x40 | localType,
  0,
  0, // little endian
  RECORD & 0xff,
  RECORD >> 8,
  fields.length,
  ...fields.flat(),
];
const uint32 = (value: number) => [value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff, (value >>> 24) & 0xff];

/** A FIT file (12-byte header, CRC) around `data`. */
function fitFile(data: number[]): Uint8Array {
  const header = [12, 0x10, 0x2d, 0x08, ...uint32(data.length), 0x2e, 0x46, 0x49, 0x54];
  const body = Uint8Array.from([...header, ...data]);
  const crc = CrcCalculator.calculateCRC(body, 0, body.length);
  return Uint8Array.from([...body, crc & 0xff, crc >> 8]);
}

/**
 * One record with a full timestamp (T, 100 bpm), then two with compressed
 * timestamp headers of local type 1: offset 31 (T + 1) and offset 2, below
 * the last timestamp's low bits, so the counter rolled over (T + 4).
 */
function compressedRecords(): Uint8Array {
  return fitFile([
    ...definition(0, [TIMESTAMP_FIELD, HEART_RATE_FIELD]),
    0x00,
    ...uint32(T),
    100,
    ...definition(1, [HEART_RATE_FIELD]),
    0x80 | (1 << 5) | 31,
    101,
    0x80 | (1 << 5) | 2,
    102,
  ]);
}

const streamsOf = (bytes: Uint8Array) => {
  const outcome = decodeFitStreams(bytes, { maxRecords: 1000 });
  if (!outcome.ok) throw new Error(outcome.reason);
  return JSON.parse(outcome.streamsJson) as { time: number[]; heartRate: number[] };
};

describe('the FIT pre-pass (fit-reframe.ts)', () => {
  it('gives compressed timestamp headers their time per the FIT protocol, rollover included', () => {
    const bytes = compressedRecords();
    expect(new Decoder(Stream.fromByteArray(bytes)).read().errors[0]?.message).toContain('compressed timestamp');
    const streams = streamsOf(bytes);
    expect(streams.time).toEqual([0, 1, 4]);
    expect(streams.heartRate).toEqual([100, 101, 102]);
  });

  it('counts compressed-header messages against the record limit before decoding', () => {
    expect(hasMoreDataMessagesThan(compressedRecords(), 3)).toBe(false);
    expect(hasMoreDataMessagesThan(compressedRecords(), 2)).toBe(true);
    const refusal = decodeFitActivity(compressedRecords(), { maxRecords: 2 });
    expect(refusal.ok ? undefined : refusal.code).toBe('fit_too_many_records');
  });

  it('keeps the whole records of a cut-off file and says it is truncated', () => {
    const whole = compressedRecords();
    // Cut inside the last record: its header byte is there, its heart rate and the CRC are not.
    const cut = whole.subarray(0, whole.length - 3);
    const reframed = reframeFit(cut, 1000);
    expect(reframed.ok && reframed.truncated).toBe(true);
    expect(streamsOf(cut).time).toEqual([0, 1]);
    const activity = decodeFitActivity(cut, { maxRecords: 1000 });
    expect(activity.ok && activity.activity.truncated).toBe(true);
  });

  it('reads on past bytes that cannot be read, dropping the message before them', () => {
    const records = Array.from({ length: 40 }, (_, i) => [0x00, ...uint32(T + i), 100 + i]);
    // Record 20 loses a byte (its heart rate): the decoder reads into record 21 and meets an undefined local type.
    const damaged = records.flatMap((record, i) => (i === 20 ? record.slice(0, -1) : record));
    const bytes = fitFile([...definition(0, [TIMESTAMP_FIELD, HEART_RATE_FIELD]), ...damaged]);
    const reframed = reframeFit(bytes, 1000);
    expect(reframed.ok && reframed.truncated).toBe(true);
    const { time } = streamsOf(bytes);
    expect(time.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(time.length).toBeGreaterThanOrEqual(37);
    expect(time.every((t, i) => i === 0 || t > (time[i - 1] as number))).toBe(true);
    expect(time.at(-1)).toBe(39);
  });

  it('keeps every message of a file with a wrong CRC, and says so', () => {
    const bytes = compressedRecords();
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff;
    const reframed = reframeFit(bytes, 1000);
    expect(reframed.ok && !reframed.truncated && reframed.crcMismatch).toBe(true);
    expect(streamsOf(bytes).time).toEqual([0, 1, 4]);
  });
});

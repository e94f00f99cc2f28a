/**
 * FIT activity file -> workout record (summary, laps, device) at upload, and
 * -> time series on the first read of the streams. Pure and synchronous: it
 * runs inside the decoder worker threads (see fit-decoder.pool.ts), never on
 * the event loop of the HTTP server.
 *
 * Summary values come from the file's own session and lap messages when the
 * device wrote them (its sensors and settings know best), and are derived
 * from the 1 Hz records otherwise. Normalized power is always computed from
 * the records when they carry power, so every workout uses the same formula.
 */
import { CrcCalculator, Decoder, Profile, Stream } from '@garmin/fitsdk';
import { hasMoreDataMessagesThan } from './fit-message-count.ts';
import { MAX_HELD_GAP_SECS, normalizedPower, perSecond } from './power-metrics.ts';

export interface ActivitySummary {
  readonly elapsedSecs: number | null;
  readonly movingSecs: number | null;
  readonly distanceMeters: number | null;
  readonly ascentMeters: number | null;
  readonly avgHr: number | null;
  readonly maxHr: number | null;
  readonly avgPower: number | null;
  readonly maxPower: number | null;
  readonly normalizedPower: number | null;
  readonly avgCadence: number | null;
  readonly calories: number | null;
}

export interface DecodedLap extends ActivitySummary {
  readonly index: number;
  readonly startTime: string;
}

export interface DecodedDevice {
  readonly manufacturer: string | null;
  readonly product: string | null;
  readonly serial: string | null;
}

/** The decoded time series, one array per channel, index-aligned with `time`. */
export interface ActivityStreams {
  readonly time: number[];
  readonly heartRate: (number | null)[] | null;
  readonly power: (number | null)[] | null;
  readonly cadence: (number | null)[] | null;
  readonly speed: (number | null)[] | null;
  readonly altitude: (number | null)[] | null;
  readonly distance: (number | null)[] | null;
  readonly latitude: (number | null)[] | null;
  readonly longitude: (number | null)[] | null;
}
const STREAM_CHANNELS = [
  'heartRate',
  'power',
  'cadence',
  'speed',
  'altitude',
  'distance',
  'latitude',
  'longitude',
] as const;

export interface DecodedActivity {
  readonly sport: string;
  readonly subSport: string | null;
  /** UTC, ISO 8601. */
  readonly startTime: string;
  /** From the activity message's local_timestamp; `null` when the file has none. */
  readonly utcOffsetMinutes: number | null;
  readonly summary: ActivitySummary;
  readonly laps: DecodedLap[];
  readonly device: DecodedDevice;
}

/** A file the decoder refuses; `tooManyRecords` when it holds more data messages than allowed. */
export interface FitRefusal {
  readonly ok: false;
  readonly reason: string;
  readonly tooManyRecords?: true;
}

export type FitDecodeOutcome = { readonly ok: true; readonly activity: DecodedActivity } | FitRefusal;

export type FitStreamsOutcome =
  | {
      readonly ok: true;
      /** `ActivityStreams` as JSON, built in the worker so the event loop never serialises it. */
      readonly streamsJson: string;
    }
  | FitRefusal;

export interface FitDecodeOptions {
  /** Most data messages (records, laps, events, …) a file may hold; checked before the decoder builds any. */
  readonly maxRecords: number;
}

/** FIT positions are semicircles: 2^31 of them make 180 degrees (FIT SDK, "position" fields). */
const DEGREES_PER_SEMICIRCLE = 180 / 2 ** 31;
/** Slower than this (1.8 km/h) is standing still. */
export const MOVING_SPEED_MPS = 0.5;
/** Altitude changes smaller than this are noise, not climbing. */
const ASCENT_DEAD_BAND_METERS = 1;
/** 1989-12-31T00:00:00Z, the FIT epoch. */
const FIT_EPOCH_MS = 631_065_600_000;
/** Time zones run from UTC-12 to UTC+14. */
const MAX_UTC_OFFSET_MINUTES = 14 * 60;

type Message = Record<string, unknown>;

/**
 * The records as columns: index-aligned typed arrays, `NaN` where a record
 * has no value. A 10-hour file has 36 000 records; columns keep the summary
 * and laps free of per-sample objects.
 */
export interface Columns {
  readonly length: number;
  /** Seconds since the start of the activity, ascending. */
  readonly t: Float64Array;
  readonly heartRate: Float64Array;
  readonly power: Float64Array;
  readonly cadence: Float64Array;
  readonly speed: Float64Array;
  readonly altitude: Float64Array;
  readonly distance: Float64Array;
  readonly latitude: Float64Array;
  readonly longitude: Float64Array;
}
type ChannelName = Exclude<keyof Columns, 'length' | 't'>;
export const COLUMN_NAMES: readonly ChannelName[] = STREAM_CHANNELS;

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const date = (value: unknown): Date | null => (value instanceof Date && !Number.isNaN(value.getTime()) ? value : null);
/** An enum value as the FIT profile names it, or its number when the profile does not know it. */
const label = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : null;
const tidy = (value: number | null, decimals = 3): number | null =>
  value === null ? null : Math.round(value * 10 ** decimals) / 10 ** decimals;

/** Mean of the present values of `values[from, to)` (above `floor` when given); `null` when none. */
function meanOf(values: ArrayLike<number>, from: number, to: number, floor = -Infinity): number | null {
  let sum = 0;
  let count = 0;
  for (let i = from; i < to; i += 1) {
    const value = values[i] as number;
    if (value > floor) {
      sum += value;
      count += 1;
    }
  }
  return count === 0 ? null : sum / count;
}

function maxOf(values: ArrayLike<number>, from: number, to: number): number | null {
  let max = -Infinity;
  for (let i = from; i < to; i += 1) if ((values[i] as number) > max) max = values[i] as number;
  return max === -Infinity ? null : max;
}

/** The last present value before index `to` (at or after `from`), else `null`. */
function lastOf(values: ArrayLike<number>, from: number, to: number): number | null {
  for (let i = to - 1; i >= from; i -= 1) if (!Number.isNaN(values[i])) return values[i] as number;
  return null;
}

/** First index whose time is at or after `t` (times ascending). */
export function lowerBound(times: Float64Array, t: number): number {
  let low = 0;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((times[middle] as number) < t) low = middle + 1;
    else high = middle;
  }
  return low;
}

type FitMessages = Record<string, Message[] | undefined>;

/**
 * Read options for the common case: no sub-field or component expansion
 * (about a fifth faster on 1 Hz records). What we read from them is
 * recovered by hand (product names, see `productName`) or, for the rare
 * files that need them, by a second, full decode (see `needsFullDecode`).
 */
export const LEAN_READ = { expandSubFields: false, expandComponents: false, mergeHeartRates: false } as const;

/**
 * Files whose data only the full decode yields: heart rate in separate HR
 * messages (chest straps that store and forward, e.g. while swimming), to be
 * merged into the records; speed and distance packed as components.
 */
function needsFullDecode(messages: FitMessages): boolean {
  if ((messages['hrMesgs']?.length ?? 0) > 0) return true;
  return (messages['recordMesgs'] ?? []).some((record) => record['compressedSpeedDistance'] !== undefined);
}

/**
 * What `Decoder#checkIntegrity()` checks that `read()` does not: the header
 * CRC (14-byte headers; 0 means "not computed") and that the file is as long
 * as its header says. `read()` itself checks the file CRC ("CRC error") and
 * fails at an early end of the stream, so the file CRC, about 5% of the
 * decode of a 10-hour file, is computed once instead of twice.
 */
function headerIntact(bytes: Uint8Array): boolean {
  if (bytes.length < 12) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerSize = bytes[0] as number;
  if (bytes.length < headerSize + view.getUint32(4, true) + 2) return false;
  if (headerSize === 14) {
    const headerCrc = view.getUint16(12, true);
    if (headerCrc !== 0 && headerCrc !== CrcCalculator.calculateCRC(bytes, 0, 12)) return false;
  }
  return true;
}

/**
 * The bytes as the decoder reads them. `Stream.fromByteArray` copies; bytes
 * that span their whole buffer (the decoder pool transfers such a copy to
 * its worker) are read in place: the decoder never writes to its stream.
 */
function streamOf(bytes: Uint8Array): Stream {
  const { buffer } = bytes;
  return buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength
    ? Stream.fromArrayBuffer(buffer)
    : Stream.fromByteArray(bytes);
}

/**
 * Decode and check a FIT file. The Garmin decoder never throws: it returns
 * errors ("CRC error", "end of stream at byte N", "input is not a FIT file");
 * `headerIntact` adds the header checks of `checkIntegrity()`.
 */
function readFit(bytes: Uint8Array, options: FitDecodeOptions): { ok: true; messages: FitMessages } | FitRefusal {
  const stream = streamOf(bytes);
  if (!Decoder.isFIT(stream)) {
    return { ok: false, reason: 'input is not a FIT file (no ".FIT" file header)' };
  }
  // Before the decoder makes an object per message: a file of millions of tiny records fails here, in milliseconds.
  if (hasMoreDataMessagesThan(bytes, options.maxRecords)) {
    return { ok: false, reason: `the file holds more than ${options.maxRecords} records`, tooManyRecords: true };
  }
  const { messages, errors } = new Decoder(stream).read(LEAN_READ);
  const error = errors[0];
  if (error) return { ok: false, reason: error.message };
  if (!headerIntact(bytes)) {
    return { ok: false, reason: 'the file failed the FIT integrity check (header, size or CRC)' };
  }
  if (needsFullDecode(messages as FitMessages)) {
    return { ok: true, messages: new Decoder(streamOf(bytes)).read().messages as FitMessages };
  }
  return { ok: true, messages: messages as FitMessages };
}

/** The workout record of a FIT activity file: summary, laps, device. */
export function decodeFitActivity(bytes: Uint8Array, options: FitDecodeOptions): FitDecodeOutcome {
  const read = readFit(bytes, options);
  return read.ok ? summarizeMessages(read.messages) : read;
}

/** The time series of a FIT activity file (its records), for `GET /api/workouts/{id}/streams`. */
export function decodeFitStreams(bytes: Uint8Array, options: FitDecodeOptions): FitStreamsOutcome {
  const read = readFit(bytes, options);
  if (!read.ok) return read;
  const activity = activityOf(read.messages);
  if (!activity.ok) return activity;
  return { ok: true, streamsJson: JSON.stringify(toStreams(toColumns(activity.records, activity.start))) };
}

interface ActivityParts {
  readonly ok: true;
  readonly start: Date;
  readonly fileId: Message | undefined;
  readonly sessions: Message[];
  readonly records: Message[];
  readonly activity: Message | undefined;
}

/** The messages an activity is made of, and its start: the time every stream counts from. */
function activityOf(messages: FitMessages): ActivityParts | FitRefusal {
  const fileId = messages['fileIdMesgs']?.[0];
  const fileType = fileId?.['type'];
  if (fileType !== undefined && fileType !== 'activity') {
    return { ok: false, reason: `the FIT file is a ${label(fileType) ?? 'non-activity'} file, not an activity` };
  }
  const sessions = [...(messages['sessionMesgs'] ?? [])].sort(byStartTime);
  const records = messages['recordMesgs'] ?? [];
  const activity = messages['activityMesgs']?.[0];
  const start =
    date(sessions[0]?.['startTime']) ??
    firstRecordTime(records) ??
    activityStart(activity) ??
    date(fileId?.['timeCreated']);
  if (!start || (sessions.length === 0 && records.length === 0)) {
    return { ok: false, reason: 'the FIT file holds no activity: no session or record messages with a time' };
  }
  return { ok: true, start, fileId, sessions, records, activity };
}

function summarizeMessages(messages: FitMessages): FitDecodeOutcome {
  const parts = activityOf(messages);
  if (!parts.ok) return parts;
  const { start, fileId, sessions, records, activity } = parts;

  const columns = toColumns(records, start);
  const sports = new Set(sessions.map((session) => label(session['sport']) ?? 'generic'));
  const onlySession = sessions.length === 1 ? sessions[0] : undefined;
  const sport = sports.size > 1 ? 'multisport' : ([...sports][0] ?? label(messages['sportMesgs']?.[0]?.['sport']));
  const subSport =
    sports.size > 1
      ? null
      : (label(onlySession?.['subSport']) ?? label(messages['sportMesgs']?.[0]?.['subSport']) ?? null);

  const totals: Message = onlySession ?? sumSessions(sessions);
  const summary = summarize(totals, columns, 0, columns.length);

  const laps = [...(messages['lapMesgs'] ?? [])].sort(byStartTime).map((lap, index): DecodedLap => {
    const lapStart = date(lap['startTime']) ?? start;
    const lapFrom = (lapStart.getTime() - start.getTime()) / 1000;
    const elapsed = num(lap['totalElapsedTime']);
    const from = lowerBound(columns.t, lapFrom);
    const to = elapsed === null ? columns.length : lowerBound(columns.t, lapFrom + elapsed);
    return { index, startTime: lapStart.toISOString(), ...summarize(lap, columns, from, to) };
  });

  return {
    ok: true,
    activity: {
      sport: sport ?? 'generic',
      subSport: subSport === 'generic' ? null : subSport,
      startTime: start.toISOString(),
      utcOffsetMinutes: utcOffsetOf(activity),
      summary,
      laps,
      device: deviceOf(fileId, messages['deviceInfoMesgs'] ?? []),
    },
  };
}

function byStartTime(a: Message, b: Message): number {
  return (date(a['startTime'])?.getTime() ?? 0) - (date(b['startTime'])?.getTime() ?? 0);
}

function firstRecordTime(records: readonly Message[]): Date | null {
  for (const record of records) {
    const time = date(record['timestamp']);
    if (time) return time;
  }
  return null;
}

function activityStart(activity: Message | undefined): Date | null {
  const end = date(activity?.['timestamp']);
  const timer = num(activity?.['totalTimerTime']);
  return end && timer !== null ? new Date(end.getTime() - timer * 1000) : null;
}

/**
 * FIT `local_timestamp` (activity message) is the activity's end on the local
 * clock, in seconds since the FIT epoch; its difference from `timestamp` (UTC)
 * is the local offset. Rounded to 15 minutes, the finest offset in use.
 */
function utcOffsetOf(activity: Message | undefined): number | null {
  const local = num(activity?.['localTimestamp']);
  const utc = date(activity?.['timestamp']);
  if (local === null || !utc) return null;
  const utcSecs = (utc.getTime() - FIT_EPOCH_MS) / 1000;
  const minutes = Math.round((local - utcSecs) / 60 / 15) * 15;
  return Math.abs(minutes) <= MAX_UTC_OFFSET_MINUTES ? minutes : null;
}

function toColumns(records: readonly Message[], start: Date): Columns {
  const timed = records.filter((record) => date(record['timestamp']) !== null);
  const length = timed.length;
  const column = () => new Float64Array(length).fill(Number.NaN);
  const columns: Columns = {
    length,
    t: new Float64Array(length),
    heartRate: column(),
    power: column(),
    cadence: column(),
    speed: column(),
    altitude: column(),
    distance: column(),
    latitude: column(),
    longitude: column(),
  };
  const startMs = start.getTime();
  const value = (input: unknown) => num(input) ?? Number.NaN;
  timed.forEach((record, i) => {
    columns.t[i] = ((record['timestamp'] as Date).getTime() - startMs) / 1000;
    columns.heartRate[i] = value(record['heartRate']);
    columns.power[i] = value(record['power']);
    columns.cadence[i] = value(record['cadence']);
    columns.speed[i] = num(record['enhancedSpeed']) ?? value(record['speed']);
    columns.altitude[i] = num(record['enhancedAltitude']) ?? value(record['altitude']);
    columns.distance[i] = value(record['distance']);
    const lat = num(record['positionLat']);
    const lng = num(record['positionLong']);
    if (lat !== null && lng !== null) {
      columns.latitude[i] = lat * DEGREES_PER_SEMICIRCLE;
      columns.longitude[i] = lng * DEGREES_PER_SEMICIRCLE;
    }
  });
  return inTimeOrder(columns);
}

/** FIT records are written in time order; a stable sort repairs files that are not. */
function inTimeOrder(columns: Columns): Columns {
  const { t } = columns;
  let sorted = true;
  for (let i = 1; i < columns.length && sorted; i += 1) sorted = (t[i] as number) >= (t[i - 1] as number);
  if (sorted) return columns;
  const order = Array.from({ length: columns.length }, (_, i) => i).sort((a, b) => (t[a] as number) - (t[b] as number));
  const permute = (values: Float64Array) => Float64Array.from(order, (i) => values[i] as number);
  const result: Record<string, unknown> = { length: columns.length, t: permute(t) };
  for (const name of COLUMN_NAMES) result[name] = permute(columns[name]);
  return result as unknown as Columns;
}

/** Multi-session files (multisport): totals add up; averages come from the records. */
function sumSessions(sessions: readonly Message[]): Message {
  const sum = (key: string) => {
    const values = sessions.map((session) => num(session[key]));
    return values.length > 0 && values.every((value) => value !== null)
      ? values.reduce<number>((total, value) => total + (value ?? 0), 0)
      : undefined;
  };
  const keys = [
    'totalElapsedTime',
    'totalTimerTime',
    'totalMovingTime',
    'totalDistance',
    'totalAscent',
    'totalCalories',
  ];
  return Object.fromEntries(keys.map((key) => [key, sum(key)]));
}

/**
 * A session's or lap's summary over the records `[from, to)`: the message's
 * own totals when present, else derived from the records.
 */
export function summarize(mesg: Message, columns: Columns, from: number, to: number): ActivitySummary {
  const power = perSecond(columns.t, columns.power, from, to);
  const recordedSpan = to > from ? (columns.t[to - 1] as number) - (columns.t[from] as number) + 1 : null;
  // FIT `distance` counts from the start of the activity: a lap's is the rise over it.
  const lastDistance = lastOf(columns.distance, from, to);
  const distanceBefore = lastOf(columns.distance, 0, from) ?? 0;

  return {
    elapsedSecs: tidy(num(mesg['totalElapsedTime']) ?? recordedSpan),
    movingSecs: tidy(num(mesg['totalMovingTime']) ?? movingSecsOf(columns, from, to) ?? num(mesg['totalTimerTime'])),
    distanceMeters: tidy(
      num(mesg['totalDistance']) ?? (lastDistance === null ? null : lastDistance - distanceBefore),
      2,
    ),
    ascentMeters: tidy(num(mesg['totalAscent']) ?? ascentOf(columns.altitude, from, to), 1),
    avgHr: tidy(num(mesg['avgHeartRate']) ?? meanOf(columns.heartRate, from, to), 1),
    maxHr: num(mesg['maxHeartRate']) ?? maxOf(columns.heartRate, from, to),
    avgPower: tidy(num(mesg['avgPower']) ?? meanOf(power, 0, power.length), 1),
    maxPower: num(mesg['maxPower']) ?? maxOf(columns.power, from, to),
    normalizedPower: tidy(normalizedPower(power) ?? num(mesg['normalizedPower']), 1),
    // Coasting and standing (cadence 0) do not count towards the average.
    avgCadence: tidy(num(mesg['avgCadence']) ?? meanOf(columns.cadence, from, to, 0), 1),
    calories: num(mesg['totalCalories']),
  };
}

function hasAny(values: Float64Array, from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) if (!Number.isNaN(values[i])) return true;
  return false;
}

/**
 * Seconds in motion: each record stands for the time since the previous one
 * (one second for the first, and for gaps longer than a held gap: pauses),
 * counted when the athlete moved: speed at or above walking pace, or, without
 * a speed sensor, power or cadence above zero. `null` without such channels.
 */
function movingSecsOf(columns: Columns, from: number, to: number): number | null {
  const hasSpeed = hasAny(columns.speed, from, to);
  if (!hasSpeed && !hasAny(columns.power, from, to) && !hasAny(columns.cadence, from, to)) return null;
  let moving = 0;
  for (let i = from; i < to; i += 1) {
    const gap = i === from ? 1 : (columns.t[i] as number) - (columns.t[i - 1] as number);
    // NaN compares false: a record without the channel does not count as moving.
    const isMoving = hasSpeed
      ? (columns.speed[i] as number) >= MOVING_SPEED_MPS
      : (columns.power[i] as number) > 0 || (columns.cadence[i] as number) > 0;
    if (isMoving && gap > 0) moving += gap <= MAX_HELD_GAP_SECS ? gap : 1;
  }
  return moving;
}

/** Total ascent: rises counted once they clear a 1 m dead band, so sensor noise does not add up. */
function ascentOf(altitudes: Float64Array, from: number, to: number): number | null {
  let ascent = 0;
  let reference = Number.NaN;
  for (let i = from; i < to; i += 1) {
    const value = altitudes[i] as number;
    if (Number.isNaN(value)) continue;
    if (Number.isNaN(reference)) reference = value;
    else if (value >= reference + ASCENT_DEAD_BAND_METERS) {
      ascent += value - reference;
      reference = value;
    } else if (value < reference) reference = value;
  }
  return Number.isNaN(reference) ? null : ascent;
}

/** Manufacturers whose `product` is a `garmin_product` (the FIT profile's sub-field map). */
const GARMIN_PRODUCT_MAKERS = new Set(['garmin', 'dynastream', 'dynastreamOem', 'tacx']);

/** The product's name where the FIT profile has one (`edge1040`), else its number. */
function productName(mesg: Message | undefined): string | null {
  const named = label(mesg?.['garminProduct']) ?? label(mesg?.['faveroProduct']);
  if (named !== null) return named;
  const product = num(mesg?.['product']);
  if (product === null) return null;
  const manufacturer = mesg?.['manufacturer'];
  const table =
    typeof manufacturer === 'string' && GARMIN_PRODUCT_MAKERS.has(manufacturer)
      ? Profile.types['garminProduct']
      : manufacturer === 'faveroElectronics'
        ? Profile.types['faveroProduct']
        : undefined;
  return table?.[product] ?? String(product);
}

function deviceOf(fileId: Message | undefined, deviceInfos: readonly Message[]): DecodedDevice {
  const creator = deviceInfos.find((info) => info['deviceIndex'] === 'creator' || info['deviceIndex'] === 0);
  const source = fileId?.['serialNumber'] !== undefined || !creator ? fileId : creator;
  const serial = num(source?.['serialNumber']);
  return {
    manufacturer: label(source?.['manufacturer']) ?? label(creator?.['manufacturer']),
    product: productName(source) ?? productName(creator),
    serial: serial === null ? null : String(serial),
  };
}

export function toStreams(columns: Columns): ActivityStreams {
  const column = (name: ChannelName, decimals: number | null): (number | null)[] | null => {
    const values = columns[name];
    if (!hasAny(values, 0, columns.length)) return null;
    return Array.from(values, (value) =>
      Number.isNaN(value) ? null : decimals === null ? value : tidy(value, decimals),
    );
  };
  return {
    time: Array.from(columns.t),
    heartRate: column('heartRate', 0),
    power: column('power', 0),
    cadence: column('cadence', 0),
    speed: column('speed', 3),
    altitude: column('altitude', 2),
    distance: column('distance', 2),
    // Exactly semicircles × 180 / 2^31: no rounding, so positions round-trip.
    latitude: column('latitude', null),
    longitude: column('longitude', null),
  };
}

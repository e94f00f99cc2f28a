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
import { reframeFit } from './fit-reframe.ts';
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
  /**
   * The file ended early (a cut-off recording) or held bytes that could not
   * be read: the activity is made of the messages read (fit-reframe.ts).
   */
  readonly truncated: boolean;
}

/**
 * Why a FIT file is refused, as the API's error code says it (README,
 * "REST conventions"):
 * - `fit_not_fit_file`: no FIT file header (or one too short to be one);
 * - `fit_corrupt_header`: the header's CRC does not match it;
 * - `fit_not_activity`: a FIT file of another type (settings, monitoring,
 *   weight scale, workout, course, …);
 * - `fit_no_activity`: an activity file with no session and no record with a
 *   time (developer data only, or no data at all);
 * - `fit_unreadable`: the data cannot be read into messages within bounds;
 * - `fit_too_many_records`: more data messages than the server reads.
 */
export type FitRefusalCode =
  | 'fit_not_fit_file'
  | 'fit_corrupt_header'
  | 'fit_not_activity'
  | 'fit_no_activity'
  | 'fit_unreadable'
  | 'fit_too_many_records';

/** A file the decoder refuses, and why. */
export interface FitRefusal {
  readonly ok: false;
  readonly code: FitRefusalCode;
  readonly reason: string;
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
/** A heart rate of 0 is no reading (a strap that lost contact, a device that writes 0 for "none"). */
const heartRate = (value: unknown): number | null => {
  const bpm = num(value);
  return bpm !== null && bpm > 0 ? bpm : null;
};
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
 * What `Decoder#checkIntegrity()` checks of the header that `read()` does
 * not: its CRC (14-byte headers; 0 means "not computed"). The file's length
 * and CRC are `read()`'s to check; a file that fails them is read again by
 * the pre-pass (fit-reframe.ts), which keeps what can be read.
 */
function headerCrcIntact(bytes: Uint8Array): boolean {
  if (bytes[0] !== 14) return true;
  const headerCrc = (bytes[12] as number) | ((bytes[13] as number) << 8);
  return headerCrc === 0 || headerCrc === CrcCalculator.calculateCRC(bytes, 0, 12);
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

interface ReadFit {
  readonly ok: true;
  readonly messages: FitMessages;
  readonly truncated: boolean;
}

const tooManyRecords = (maxRecords: number): FitRefusal => ({
  ok: false,
  code: 'fit_too_many_records',
  reason: `the file holds more than ${maxRecords} records`,
});

/**
 * Decode a FIT file. The Garmin decoder never throws: it returns errors
 * ("CRC error", "end of stream at byte N", a runtime error at a byte it
 * cannot read, "compressed timestamp messages are not currently
 * supported"). A whole, ordinary file is decoded once, as it is; a file the
 * decoder refuses is rewritten by the pre-pass (fit-reframe.ts) into the
 * messages that can be read, and those are decoded (`dataOnly`: the pre-pass
 * has checked the headers and CRCs itself).
 */
function readFit(bytes: Uint8Array, options: FitDecodeOptions): ReadFit | FitRefusal {
  const stream = streamOf(bytes);
  if (!Decoder.isFIT(stream)) {
    return { ok: false, code: 'fit_not_fit_file', reason: 'input is not a FIT file (no ".FIT" file header)' };
  }
  if (!headerCrcIntact(bytes)) {
    return { ok: false, code: 'fit_corrupt_header', reason: 'the FIT file header does not match its CRC' };
  }
  // Before the decoder makes an object per message: a file of millions of tiny records fails here, in milliseconds.
  if (hasMoreDataMessagesThan(bytes, options.maxRecords)) return tooManyRecords(options.maxRecords);
  const { messages, errors } = new Decoder(stream).read(LEAN_READ);
  if (errors.length === 0)
    return { ok: true, messages: fullyDecoded(messages as FitMessages, bytes, {}), truncated: false };

  const reframed = reframeFit(bytes, options.maxRecords);
  if (!reframed.ok) {
    return reframed.tooManyRecords
      ? tooManyRecords(options.maxRecords)
      : { ok: false, code: 'fit_unreadable', reason: `the file cannot be read: ${reframed.reason}` };
  }
  const read = new Decoder(streamOf(reframed.data)).read({ ...LEAN_READ, dataOnly: true });
  return {
    ok: true,
    messages: fullyDecoded(read.messages as FitMessages, reframed.data, { dataOnly: true }),
    // An error here is at a message the pre-pass let through: the ones before it are whole.
    truncated: reframed.truncated || read.errors.length > 0,
  };
}

/** The messages of the lean read, or of a full decode when the file needs one (see `needsFullDecode`). */
function fullyDecoded(messages: FitMessages, bytes: Uint8Array, options: { dataOnly?: true }): FitMessages {
  return needsFullDecode(messages) ? (new Decoder(streamOf(bytes)).read(options).messages as FitMessages) : messages;
}

/** The workout record of a FIT activity file: summary, laps, device. */
export function decodeFitActivity(bytes: Uint8Array, options: FitDecodeOptions): FitDecodeOutcome {
  const read = readFit(bytes, options);
  return read.ok ? summarizeMessages(read.messages, read.truncated) : read;
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
    return {
      ok: false,
      code: 'fit_not_activity',
      reason: `the FIT file is a ${label(fileType) ?? 'non-activity'} file, not an activity`,
    };
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
    return {
      ok: false,
      code: 'fit_no_activity',
      reason: 'the FIT file holds no activity: no session or record messages with a time',
    };
  }
  return { ok: true, start, fileId, sessions, records, activity };
}

function summarizeMessages(messages: FitMessages, truncated: boolean): FitDecodeOutcome {
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
      truncated,
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
    columns.heartRate[i] = heartRate(record['heartRate']) ?? Number.NaN;
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
  for (const name of SENSOR_CHANNELS) if (!hasPositive(columns[name])) columns[name].fill(Number.NaN);
  return inTimeOrder(columns);
}

/**
 * Channels whose sensor is missing when none of its values is above 0:
 * devices write 0 for a sensor they do not have (a power field of zeros on
 * a ride without a power meter, distance 0 on indoor equipment).
 */
const SENSOR_CHANNELS: readonly ChannelName[] = ['heartRate', 'power', 'cadence', 'speed', 'distance'];

function hasPositive(values: Float64Array): boolean {
  for (const value of values) if (value > 0) return true;
  return false;
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
 * own totals when present, else derived from the records. A sensor the file
 * lacks is `null`, never 0: devices write 0 into the session's averages for
 * a channel no record carries (or carries only as invalid values), and a 0
 * heart rate is never a reading.
 */
export function summarize(mesg: Message, columns: Columns, from: number, to: number): ActivitySummary {
  const power = perSecond(columns.t, columns.power, from, to);
  /** The message's value, but `null` for a 0 that no record of the channel backs. */
  const measured = (key: string, channel: ChannelName): number | null => {
    const value = num(mesg[key]);
    return value === 0 && !hasAny(columns[channel], from, to) ? null : value;
  };
  const recordedSpan = to > from ? (columns.t[to - 1] as number) - (columns.t[from] as number) + 1 : null;
  // FIT `distance` counts from the start of the activity: a lap's is the rise over it.
  const lastDistance = lastOf(columns.distance, from, to);
  const distanceBefore = lastOf(columns.distance, 0, from) ?? 0;

  return {
    elapsedSecs: tidy(num(mesg['totalElapsedTime']) ?? recordedSpan),
    movingSecs: tidy(num(mesg['totalMovingTime']) ?? movingSecsOf(columns, from, to, num(mesg['totalTimerTime']))),
    distanceMeters: tidy(
      measured('totalDistance', 'distance') ?? (lastDistance === null ? null : lastDistance - distanceBefore),
      2,
    ),
    ascentMeters: tidy(num(mesg['totalAscent']) ?? ascentOf(columns.altitude, from, to), 1),
    avgHr: tidy(heartRate(mesg['avgHeartRate']) ?? meanOf(columns.heartRate, from, to), 1),
    maxHr: heartRate(mesg['maxHeartRate']) ?? maxOf(columns.heartRate, from, to),
    avgPower: tidy(measured('avgPower', 'power') ?? meanOf(power, 0, power.length), 1),
    maxPower: measured('maxPower', 'power') ?? maxOf(columns.power, from, to),
    normalizedPower: tidy(normalizedPower(power) ?? measured('normalizedPower', 'power'), 1),
    // Coasting and standing (cadence 0) do not count towards the average.
    avgCadence: tidy(measured('avgCadence', 'cadence') ?? meanOf(columns.cadence, from, to, 0), 1),
    calories: num(mesg['totalCalories']),
  };
}

function hasAny(values: Float64Array, from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) if (!Number.isNaN(values[i])) return true;
  return false;
}

/**
 * A speed stream: speed in at least half of the records. A pool swim writes
 * speed only with each length, and indoor equipment none; their moving time
 * is the timer's.
 */
function hasSpeedStream(columns: Columns, from: number, to: number): boolean {
  let count = 0;
  for (let i = from; i < to; i += 1) if (!Number.isNaN(columns.speed[i])) count += 1;
  return count > 0 && count * 2 >= to - from;
}

/**
 * Seconds in motion: each record stands for the time since the previous one
 * (one second for the first, and for gaps longer than a held gap: pauses),
 * counted when the athlete moved: speed at or above walking pace. Without a
 * speed stream, the timer time (`timerSecs`, the device's own count of the
 * time it recorded, pauses left out); without one either (a cut-off file has
 * no session), the records with power or cadence above zero. `null` without
 * any of these.
 */
function movingSecsOf(columns: Columns, from: number, to: number, timerSecs: number | null): number | null {
  const hasSpeed = hasSpeedStream(columns, from, to);
  if (!hasSpeed && timerSecs !== null) return timerSecs;
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
  // The first record's second (and rounding) can take the count past the timer's: never more time moving than recorded.
  return timerSecs === null ? moving : Math.min(moving, timerSecs);
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

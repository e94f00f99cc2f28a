/**
 * FIT activity files built in the tests with the Garmin SDK's own `Encoder`
 * (no binary blobs), each with the values it encodes, so tests compare what
 * the server decodes against what went in. The message order follows
 * Garmin's activity-file recipe: file_id, device_info, timer start event,
 * records, timer stop event, laps, session, activity.
 */
import { CrcCalculator, Encoder, Profile, Utils } from '@garmin/fitsdk';

/** One 1 Hz sample; absent channels are not written. */
export interface FitSample {
  /** Seconds since the start. */
  readonly t: number;
  readonly heartRate?: number;
  readonly power?: number;
  readonly cadence?: number;
  /** Metres per second. */
  readonly speed?: number;
  /** Metres from the start. */
  readonly distance?: number;
  /** Metres. */
  readonly altitude?: number;
  /** Degrees. */
  readonly lat?: number;
  readonly lng?: number;
}

export interface FitFixtureOptions {
  readonly startTime: Date;
  readonly sport: string;
  readonly subSport: string;
  readonly samples: readonly FitSample[];
  /** Lap boundaries, in seconds since the start (each lap runs to the next). */
  readonly lapStarts?: readonly number[];
  /** The activity's UTC offset in seconds, written as the activity's local_timestamp; omitted when undefined. */
  readonly utcOffsetSecs?: number;
  readonly serialNumber?: number;
  /** Garmin product id (3843 = edge1040). */
  readonly product?: number;
  /**
   * `full`: session and laps carry the totals as a device writes them;
   * `minimal`: only sport and times, so the server derives the rest from records.
   */
  readonly summaries?: 'full' | 'minimal';
  readonly calories?: number;
  /** Write speed and altitude as the 32-bit "enhanced" fields. */
  readonly enhanced?: boolean;
}

/** What a correct decoder must find in the file. */
export interface FitExpected {
  readonly startTime: string;
  readonly elapsedSecs: number;
  readonly distanceMeters: number;
  readonly avgHr: number | null;
  readonly maxHr: number | null;
  readonly avgPower: number | null;
  readonly maxPower: number | null;
  /** Coggan's normalized power of the encoded 1 Hz power, computed here independently. */
  readonly normalizedPower: number | null;
  readonly avgCadence: number | null;
  readonly ascentMeters: number;
  readonly laps: number;
  readonly points: number;
}

export interface FitFixture {
  readonly bytes: Uint8Array;
  readonly samples: readonly FitSample[];
  readonly expected: FitExpected;
}

function mesgNum(name: string): number {
  const value = Profile.MesgNum[name];
  if (value === undefined) throw new Error(`no FIT message ${name}`);
  return value;
}
const MESG = {
  FILE_ID: mesgNum('FILE_ID'),
  DEVICE_INFO: mesgNum('DEVICE_INFO'),
  EVENT: mesgNum('EVENT'),
  RECORD: mesgNum('RECORD'),
  LAP: mesgNum('LAP'),
  SESSION: mesgNum('SESSION'),
  ACTIVITY: mesgNum('ACTIVITY'),
};

const SEMICIRCLES_PER_DEGREE = 2 ** 31 / 180;

export function toSemicircles(degrees: number): number {
  return Math.round(degrees * SEMICIRCLES_PER_DEGREE);
}

/** What a FIT position field can hold: the degrees of the nearest semicircle. */
export function roundTripDegrees(degrees: number): number {
  return toSemicircles(degrees) / SEMICIRCLES_PER_DEGREE;
}

const round = (value: number, step: number) => Math.round(value / step) * step;

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
}

function max(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => Math.max(a, b), -Infinity);
}

/** Coggan's normalized power for gap-free 1 Hz data: 30 s rolling mean, fourth power, mean, fourth root. */
export function referenceNormalizedPower(power: readonly number[]): number | null {
  if (power.length < 30) return null;
  let windowSum = 0;
  let sum4 = 0;
  let count = 0;
  for (let i = 0; i < power.length; i += 1) {
    windowSum += power[i] as number;
    if (i >= 30) windowSum -= power[i - 30] as number;
    if (i >= 29) {
      sum4 += (windowSum / 30) ** 4;
      count += 1;
    }
  }
  return (sum4 / count) ** 0.25;
}

function present<K extends keyof FitSample>(samples: readonly FitSample[], key: K): number[] {
  return samples.map((sample) => sample[key]).filter((value): value is number => typeof value === 'number');
}

/** Sum of rises of at least 1 m (the dead band the server also uses on record altitudes). */
function ascentOf(altitudes: readonly number[]): number {
  let ascent = 0;
  let reference = altitudes[0];
  for (const altitude of altitudes) {
    if (reference === undefined) break;
    if (altitude >= reference + 1) {
      ascent += altitude - reference;
      reference = altitude;
    } else if (altitude < reference) reference = altitude;
  }
  return ascent;
}

/** The values as the file stores them (FIT resolution), so expectations match what a decoder can read. */
function quantize(sample: FitSample): FitSample {
  return {
    t: sample.t,
    ...(sample.heartRate === undefined ? {} : { heartRate: Math.round(sample.heartRate) }),
    ...(sample.power === undefined ? {} : { power: Math.round(sample.power) }),
    ...(sample.cadence === undefined ? {} : { cadence: Math.round(sample.cadence) }),
    ...(sample.speed === undefined ? {} : { speed: round(sample.speed, 0.001) }),
    ...(sample.distance === undefined ? {} : { distance: round(sample.distance, 0.01) }),
    ...(sample.altitude === undefined ? {} : { altitude: round(sample.altitude, 0.2) }),
    ...(sample.lat === undefined ? {} : { lat: sample.lat }),
    ...(sample.lng === undefined ? {} : { lng: sample.lng }),
  };
}

interface Totals {
  elapsed: number;
  distance: number;
  heartRate: number[];
  power: number[];
  cadence: number[];
  ascent: number;
}

/** `distanceBefore`: the cumulative distance when the lap began (FIT `distance` counts from the start). */
function totalsOf(samples: readonly FitSample[], elapsed: number, distanceBefore = 0): Totals {
  const distances = present(samples, 'distance');
  return {
    elapsed,
    distance: (distances.at(-1) ?? distanceBefore) - distanceBefore,
    heartRate: present(samples, 'heartRate'),
    power: present(samples, 'power'),
    cadence: present(samples, 'cadence'),
    ascent: ascentOf(present(samples, 'altitude')),
  };
}

function summaryFields(totals: Totals) {
  const avg = (values: number[]) => {
    const value = mean(values);
    return value === null ? undefined : Math.round(value);
  };
  const fields: Record<string, number | undefined> = {
    totalDistance: totals.distance,
    avgHeartRate: avg(totals.heartRate),
    maxHeartRate: max(totals.heartRate) ?? undefined,
    avgPower: avg(totals.power),
    maxPower: max(totals.power) ?? undefined,
    avgCadence: avg(totals.cadence),
    totalAscent: Math.round(totals.ascent),
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

export function buildFitActivity(options: FitFixtureOptions): FitFixture {
  const samples = options.samples.map(quantize);
  const first = samples[0];
  const last = samples.at(-1);
  if (!first || !last) throw new Error('a FIT fixture needs samples');
  const start = options.startTime.getTime();
  const at = (t: number) => new Date(start + t * 1000);
  // Samples cover [start, start + elapsed): the last one is one second before the end.
  const elapsed = last.t - first.t + 1;
  const end = at(elapsed);
  const full = (options.summaries ?? 'full') === 'full';

  const encoder = new Encoder();
  encoder.onMesg(MESG.FILE_ID, {
    type: 'activity',
    manufacturer: 'garmin',
    product: options.product ?? 3843,
    serialNumber: options.serialNumber ?? 3_412_345_678,
    timeCreated: options.startTime,
  } as never);
  encoder.onMesg(MESG.DEVICE_INFO, {
    deviceIndex: 'creator',
    manufacturer: 'garmin',
    product: options.product ?? 3843,
    serialNumber: options.serialNumber ?? 3_412_345_678,
    softwareVersion: 26.08,
    timestamp: options.startTime,
  } as never);
  encoder.onMesg(MESG.EVENT, {
    timestamp: options.startTime,
    event: 'timer',
    eventType: 'start',
  } as never);

  for (const sample of samples) {
    const record: Record<string, unknown> = { timestamp: at(sample.t) };
    if (sample.heartRate !== undefined) record['heartRate'] = sample.heartRate;
    if (sample.power !== undefined) record['power'] = sample.power;
    if (sample.cadence !== undefined) record['cadence'] = sample.cadence;
    if (sample.distance !== undefined) record['distance'] = sample.distance;
    if (sample.speed !== undefined) record[options.enhanced ? 'enhancedSpeed' : 'speed'] = sample.speed;
    if (sample.altitude !== undefined) record[options.enhanced ? 'enhancedAltitude' : 'altitude'] = sample.altitude;
    if (sample.lat !== undefined && sample.lng !== undefined) {
      record['positionLat'] = toSemicircles(sample.lat);
      record['positionLong'] = toSemicircles(sample.lng);
    }
    encoder.onMesg(MESG.RECORD, record);
  }

  encoder.onMesg(MESG.EVENT, { timestamp: end, event: 'timer', eventType: 'stopAll' } as never);

  const lapStarts = options.lapStarts && options.lapStarts.length > 0 ? [...options.lapStarts] : [first.t];
  lapStarts.forEach((lapStart, index) => {
    const lapEnd = lapStarts[index + 1] ?? elapsed;
    const lapSamples = samples.filter((sample) => sample.t >= lapStart && sample.t < lapEnd);
    const lapElapsed = lapEnd - lapStart;
    const distanceBefore = present(
      samples.filter((sample) => sample.t < lapStart),
      'distance',
    ).at(-1);
    encoder.onMesg(MESG.LAP, {
      messageIndex: index,
      timestamp: at(lapEnd),
      startTime: at(lapStart),
      totalElapsedTime: lapElapsed,
      totalTimerTime: lapElapsed,
      event: 'lap',
      eventType: 'stop',
      lapTrigger: index === lapStarts.length - 1 ? 'sessionEnd' : 'time',
      sport: options.sport,
      ...(full ? summaryFields(totalsOf(lapSamples, lapElapsed, distanceBefore)) : {}),
    } as never);
  });

  const totals = totalsOf(samples, elapsed);
  encoder.onMesg(MESG.SESSION, {
    messageIndex: 0,
    timestamp: end,
    startTime: options.startTime,
    totalElapsedTime: elapsed,
    totalTimerTime: elapsed,
    sport: options.sport,
    subSport: options.subSport,
    event: 'session',
    eventType: 'stop',
    trigger: 'activityEnd',
    firstLapIndex: 0,
    numLaps: lapStarts.length,
    ...(full ? summaryFields(totals) : {}),
    ...(full && options.calories !== undefined ? { totalCalories: options.calories } : {}),
  } as never);

  const activity: Record<string, unknown> = {
    timestamp: end,
    totalTimerTime: elapsed,
    numSessions: 1,
    type: 'manual',
    event: 'activity',
    eventType: 'stop',
  };
  if (options.utcOffsetSecs !== undefined) {
    // local_timestamp: seconds since the FIT epoch on the local clock.
    activity['localTimestamp'] = Math.round((end.getTime() - Utils.FIT_EPOCH_MS) / 1000) + options.utcOffsetSecs;
  }
  encoder.onMesg(MESG.ACTIVITY, activity);

  const bytes = encoder.close();
  const summarised = full
    ? {
        avgHr: totals.heartRate.length > 0 ? Math.round(mean(totals.heartRate) as number) : null,
        avgPower: totals.power.length > 0 ? Math.round(mean(totals.power) as number) : null,
        avgCadence: totals.cadence.length > 0 ? Math.round(mean(totals.cadence) as number) : null,
        ascentMeters: Math.round(totals.ascent),
      }
    : {
        avgHr: mean(totals.heartRate),
        avgPower: mean(totals.power),
        avgCadence: mean(totals.cadence),
        ascentMeters: totals.ascent,
      };
  return {
    bytes,
    samples,
    expected: {
      startTime: options.startTime.toISOString(),
      elapsedSecs: elapsed,
      distanceMeters: totals.distance,
      maxHr: max(totals.heartRate),
      maxPower: max(totals.power),
      normalizedPower: totals.power.length === samples.length ? referenceNormalizedPower(totals.power) : null,
      laps: lapStarts.length,
      points: samples.length,
      ...summarised,
    },
  };
}

// ---------------------------------------------------------------------------
// The activities the tests use.

/** A hilly road ride at 1 Hz with power in blocks: 5 min at ~300 W, 5 min at ~100 W. */
export function rideSamples(durationSecs: number, options: { positions?: boolean } = {}): FitSample[] {
  const samples: FitSample[] = [];
  let distance = 0;
  let heartRate = 110;
  for (let t = 0; t < durationSecs; t += 1) {
    const hard = Math.floor(t / 300) % 2 === 0;
    const power = (hard ? 300 : 100) + 10 * Math.sin(t / 7);
    // Heart rate follows the effort with a ~30 s time constant.
    heartRate += ((hard ? 165 : 125) - heartRate) / 30;
    const speed = hard ? 10.5 : 7.5;
    distance += speed;
    const altitude = 200 + 50 * Math.sin((2 * Math.PI * t) / 1200);
    const angle = distance / 5000;
    samples.push({
      t,
      power,
      heartRate,
      cadence: hard ? 95 : 82,
      speed,
      distance,
      altitude,
      ...(options.positions ? { lat: 46.5 + 0.045 * Math.sin(angle), lng: 7.0 + 0.065 * Math.cos(angle) } : {}),
    });
  }
  return samples;
}

/** A stop during a ride: from `fromSecs` (since the start), `secs` long. */
export interface RideStop {
  readonly fromSecs: number;
  readonly secs: number;
}

export interface SteadyRideOptions {
  readonly durationSecs: number;
  /** Mean power while moving, watts; each sample varies around it by up to ±11 %. */
  readonly watts: number;
  /** Café stops: the bike stands (speed 0, no power, no cadence) and the clock runs on. */
  readonly stops?: readonly RideStop[];
}

/**
 * An endurance ride at 1 Hz: power rolls around `watts` (two sine waves,
 * ±8 % over ~5 min and ±3 % over ~45 s), speed follows the power, and during
 * a stop the rider stands still with 0 W while the heart rate settles. The
 * file's mechanical work is then `watts` × moving seconds (within the
 * waves' residue), which the tests can compare with the server's figures.
 */
export function steadyRideSamples(options: SteadyRideOptions): FitSample[] {
  const samples: FitSample[] = [];
  const stops = options.stops ?? [];
  let distance = 0;
  let heartRate = 100;
  for (let t = 0; t < options.durationSecs; t += 1) {
    const stopped = stops.some((stop) => t >= stop.fromSecs && t < stop.fromSecs + stop.secs);
    const power = stopped
      ? 0
      : options.watts * (1 + 0.08 * Math.sin((2 * Math.PI * t) / 300) + 0.03 * Math.sin((2 * Math.PI * t) / 45));
    heartRate += ((stopped ? 85 : 95 + 0.25 * power) - heartRate) / 40;
    const speed = stopped ? 0 : 3 + power / 30;
    distance += speed;
    samples.push({
      t,
      power,
      heartRate,
      cadence: stopped ? 0 : 88,
      speed,
      distance,
      altitude: 300 + 80 * Math.sin((2 * Math.PI * distance) / 20_000),
    });
  }
  return samples;
}

/** A run on a 1.2 km loop around a park in Zurich, 3.3 m/s, with heart rate and positions. */
export function runSamples(durationSecs: number): FitSample[] {
  const center = { lat: 47.3622, lng: 8.5506 };
  const radius = 190;
  const samples: FitSample[] = [];
  for (let t = 0; t < durationSecs; t += 1) {
    const distance = 3.3 * t;
    const angle = distance / radius;
    samples.push({
      t,
      heartRate: 140 + 15 * Math.sin(t / 120) + (t > durationSecs / 2 ? 8 : 0),
      cadence: 86,
      speed: 3.3,
      distance,
      altitude: 410 + 6 * Math.sin(angle),
      lat: center.lat + ((radius * Math.sin(angle)) / 6_371_000) * (180 / Math.PI),
      lng:
        center.lng +
        ((radius * Math.cos(angle)) / (6_371_000 * Math.cos((center.lat * Math.PI) / 180))) * (180 / Math.PI),
    });
  }
  return samples;
}

export function oneHourRide(overrides: Partial<FitFixtureOptions> = {}): FitFixture {
  return buildFitActivity({
    startTime: new Date('2026-11-11T03:00:00Z'),
    sport: 'cycling',
    subSport: 'road',
    samples: rideSamples(3600),
    lapStarts: [0, 1200, 2400],
    calories: 812,
    ...overrides,
  });
}

export function runWithPositions(overrides: Partial<FitFixtureOptions> = {}): FitFixture {
  return buildFitActivity({
    startTime: new Date('2026-11-20T23:30:00Z'),
    sport: 'running',
    subSport: 'street',
    samples: runSamples(1800),
    lapStarts: [0, 600, 1200],
    utcOffsetSecs: 3600,
    summaries: 'minimal',
    serialNumber: 3_999_000_111,
    product: 4315,
    ...overrides,
  });
}

export function tenHourRide(overrides: Partial<FitFixtureOptions> = {}): FitFixture {
  return buildFitActivity({
    startTime: new Date('2026-10-03T05:00:00Z'),
    sport: 'cycling',
    subSport: 'road',
    samples: rideSamples(10 * 3600, { positions: true }),
    lapStarts: Array.from({ length: 10 }, (_, hour) => hour * 3600),
    calories: 7400,
    enhanced: true,
    serialNumber: 3_412_000_010,
    ...overrides,
  });
}

/** The same file with one byte of its trailing CRC flipped. */
export function withBadCrc(bytes: Uint8Array): Uint8Array {
  const copy = Uint8Array.from(bytes);
  copy[copy.length - 1] = (copy[copy.length - 1] as number) ^ 0xff;
  return copy;
}

/** The file cut short, as an interrupted transfer leaves it. */
export function truncated(bytes: Uint8Array, keepFraction = 0.6): Uint8Array {
  return bytes.slice(0, Math.floor(bytes.length * keepFraction));
}

/** Not a FIT file at all (a GPX track). */
export function notFit(): Uint8Array {
  return new TextEncoder().encode(
    '<?xml version="1.0"?><gpx version="1.1" creator="test"><trk><trkseg><trkpt lat="47.1" lon="8.5"/></trkseg></trk></gpx>\n',
  );
}

/**
 * The hostile file of issue 18: a `file_id`, one record definition (a
 * timestamp, nothing else), then `records` records of 5 bytes each, every
 * one a second after the last. Written byte by byte (the Encoder takes
 * seconds per million messages): a valid FIT file, CRCs and all, that makes
 * a decoder build an object per record. 5 000 000 records are 25 MB.
 */
export function tinyRecordFlood(records: number): Uint8Array {
  const FIT_HEADER = 14;
  const head = Uint8Array.from([
    // Definition, local type 0: file_id (global 0), little endian, one field: type (0), 1 byte, enum.
    0x40, 0, 0, 0, 0, 1, 0, 1, 0x00,
    // file_id: type = activity (4).
    0x00, 4,
    // Definition, local type 1: record (global 20), one field: timestamp (253), 4 bytes, uint32.
    0x41, 0, 0, 20, 0, 1, 253, 4, 0x86,
  ]);
  const dataSize = head.length + records * 5;
  const bytes = new Uint8Array(FIT_HEADER + dataSize + 2);
  const view = new DataView(bytes.buffer);
  bytes[0] = FIT_HEADER;
  bytes[1] = 0x20; // protocol 2.0
  view.setUint16(2, 2195, true); // profile 21.95
  view.setUint32(4, dataSize, true);
  bytes.set([0x2e, 0x46, 0x49, 0x54], 8); // ".FIT"
  view.setUint16(12, CrcCalculator.calculateCRC(bytes, 0, 12), true);
  bytes.set(head, FIT_HEADER);
  // 2026-11-26T00:00:00Z in seconds since the FIT epoch.
  const start = (Date.UTC(2026, 10, 26) - Utils.FIT_EPOCH_MS) / 1000;
  let at = FIT_HEADER + head.length;
  for (let i = 0; i < records; i += 1, at += 5) {
    bytes[at] = 0x01;
    view.setUint32(at + 1, start + i, true);
  }
  view.setUint16(at, CrcCalculator.calculateCRC(bytes, 0, at), true);
  return bytes;
}

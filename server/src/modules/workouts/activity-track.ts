/**
 * Track points read from a TCX or GPX file, turned into the record columns
 * the FIT module summarises (fit-activity.ts `Columns`): one summary, lap and
 * stream code for every format.
 */
import { COLUMN_NAMES, type Columns, type DecodedDevice } from './fit-activity.ts';
import { XmlActivityError } from './activity-xml.ts';

/**
 * The mean radius of the Earth, R1 = (2a + b) / 3 of the GRS 80 ellipsoid:
 * 6,371,008.8 m (H. Moritz, "Geodetic Reference System 1980", Journal of
 * Geodesy 74 (2000), p. 131).
 */
const EARTH_MEAN_RADIUS_METERS = 6_371_008.8;
const RADIANS_PER_DEGREE = Math.PI / 180;

/**
 * Great-circle distance between two positions on a sphere of the Earth's mean
 * radius, by the haversine formula (R. W. Sinnott, "Virtues of the
 * Haversine", Sky and Telescope 68 (2), 1984, p. 159). On the ellipsoid the
 * true distance differs by at most about 0.5%, less than GPS noise adds.
 */
export function haversineMeters(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const phi1 = lat1 * RADIANS_PER_DEGREE;
  const phi2 = lat2 * RADIANS_PER_DEGREE;
  const sinHalfDPhi = Math.sin((phi2 - phi1) / 2);
  const sinHalfDLambda = Math.sin(((lon2 - lon1) * RADIANS_PER_DEGREE) / 2);
  const h = sinHalfDPhi * sinHalfDPhi + Math.cos(phi1) * Math.cos(phi2) * sinHalfDLambda * sinHalfDLambda;
  return 2 * EARTH_MEAN_RADIUS_METERS * Math.asin(Math.min(1, Math.sqrt(h)));
}

type Channel = (typeof COLUMN_NAMES)[number];

/** One track point as read; `NaN` where the point has no value. */
export type TrackPoint = Record<Channel, number> & {
  /** UTC, milliseconds since the epoch. */
  timeMs: number;
  /** Points of different segments (GPX `trkseg`, TCX `Track`) are not joined: no distance across the gap. */
  readonly segment: number;
};

/** A lap as a TCX file sums it up, in the FIT profile's field names (`totalTimerTime`, `avgHeartRate`, …). */
export interface TrackLap {
  /** UTC, milliseconds since the epoch. */
  readonly startMs: number;
  readonly values: Record<string, number>;
}

/** What a TCX or GPX reader found: enough for the workout record and its streams. */
export interface TrackActivity {
  readonly sport: string;
  /** UTC, milliseconds since the epoch; every time of the activity counts from it. */
  readonly startMs: number;
  /** The activity's own totals, in FIT field names; empty when the file has none (GPX). */
  readonly totals: Record<string, number>;
  readonly laps: readonly TrackLap[];
  readonly device: DecodedDevice;
  readonly points: TrackRecorder;
}

export const emptyPoint = (segment: number): TrackPoint => ({
  timeMs: Number.NaN,
  segment,
  heartRate: Number.NaN,
  power: Number.NaN,
  cadence: Number.NaN,
  speed: Number.NaN,
  altitude: Number.NaN,
  distance: Number.NaN,
  latitude: Number.NaN,
  longitude: Number.NaN,
});

/**
 * The points of a file in file order, as columns, up to `maxPoints` (`PACER_FIT_MAX_RECORDS`): one more is
 * refused (`activity_too_many_records`) before it is kept.
 */
export class TrackRecorder {
  private readonly maxPoints: number;
  readonly timeMs: number[] = [];
  readonly segment: number[] = [];
  readonly channels: Record<Channel, number[]>;

  constructor(maxPoints: number) {
    this.maxPoints = maxPoints;
    this.channels = Object.fromEntries(COLUMN_NAMES.map((name) => [name, [] as number[]])) as Record<Channel, number[]>;
  }

  get length(): number {
    return this.timeMs.length;
  }

  push(point: TrackPoint): void {
    if (this.timeMs.length >= this.maxPoints) {
      throw new XmlActivityError(
        'activity_too_many_records',
        `the file holds more than ${this.maxPoints} track points`,
      );
    }
    this.timeMs.push(point.timeMs);
    this.segment.push(point.segment);
    for (const name of COLUMN_NAMES) this.channels[name].push(point[name]);
  }

  /** Points with a time (a point without one cannot be placed on the timeline). */
  get timedPoints(): number {
    return this.timeMs.reduce((count, time) => (Number.isNaN(time) ? count : count + 1), 0);
  }

  /** Distinct times among the points: fewer than two spans no time at all. */
  distinctTimes(): number {
    return new Set(this.timeMs.filter((time) => !Number.isNaN(time))).size;
  }

  /** The earliest time of a point, `NaN` when none has one. */
  firstTime(): number {
    let first = Infinity;
    for (const time of this.timeMs) if (time < first) first = time;
    return first === Infinity ? Number.NaN : first;
  }

  /**
   * The record columns, seconds counted from `startMs`, in time order: only
   * points with a time; distance from the start, from the file's own
   * distances or else from the positions (haversine, within each segment,
   * through points without a time too); speed from the file, or else the
   * interval speed. `intervalSpeed[i]`: the distance covered since the
   * previous point of the same segment over the time it took (`NaN` at a
   * segment's first point, or without distances).
   */
  toColumns(startMs: number): { columns: Columns; intervalSpeed: Float64Array } {
    const distance = hasValue(this.channels.distance) ? this.channels.distance : this.distanceFromPositions();
    const timed: number[] = [];
    this.timeMs.forEach((time, i) => {
      if (!Number.isNaN(time)) timed.push(i);
    });
    // Files are written in time order; a stable sort repairs those that are not.
    timed.sort((a, b) => (this.timeMs[a] as number) - (this.timeMs[b] as number));
    const pick = (values: readonly number[]) => Float64Array.from(timed, (i) => values[i] as number);
    const t = Float64Array.from(timed, (i) => ((this.timeMs[i] as number) - startMs) / 1000);
    const channels = Object.fromEntries(COLUMN_NAMES.map((name) => [name, pick(this.channels[name])])) as Record<
      Channel,
      Float64Array
    >;
    const columns: Columns = { length: timed.length, t, ...channels, distance: pick(distance) };
    const intervalSpeed = intervalSpeedOf(t, columns.distance, pick(this.segment));
    return {
      columns: hasValue(this.channels.speed) ? columns : { ...columns, speed: intervalSpeed },
      intervalSpeed,
    };
  }

  /** Cumulative great-circle distance of the positions in file order; no distance across a segment break. */
  private distanceFromPositions(): number[] {
    const { latitude, longitude } = this.channels;
    const result = new Array<number>(this.length).fill(Number.NaN);
    let total = 0;
    let last = -1;
    for (let i = 0; i < this.length; i += 1) {
      const lat = latitude[i] as number;
      const lon = longitude[i] as number;
      if (Number.isNaN(lat) || Number.isNaN(lon)) continue;
      if (last >= 0 && this.segment[last] === this.segment[i]) {
        total += haversineMeters(latitude[last] as number, longitude[last] as number, lat, lon);
      }
      result[i] = total;
      last = i;
    }
    return result;
  }
}

function hasValue(values: readonly number[]): boolean {
  return values.some((value) => !Number.isNaN(value));
}

/** Speed at each point: the distance covered since the previous point of its segment over the time it took. */
function intervalSpeedOf(t: Float64Array, distance: Float64Array, segment: Float64Array): Float64Array {
  const speed = new Float64Array(t.length).fill(Number.NaN);
  for (let i = 1; i < t.length; i += 1) {
    const dt = (t[i] as number) - (t[i - 1] as number);
    const dd = (distance[i] as number) - (distance[i - 1] as number);
    if (segment[i] === segment[i - 1] && dt > 0 && dd >= 0) speed[i] = dd / dt;
  }
  return speed;
}

/**
 * Seconds in motion along a track: the time to each point whose interval
 * speed is at least `threshold` (fit-activity.ts `MOVING_SPEED_MPS`). GPX and
 * TCX points come every few to tens of seconds, so the interval's average
 * speed, not a per-second speed, says whether it was spent moving. `null`
 * when no interval has a speed (no positions or distances).
 */
export function movingSecsAlong(t: Float64Array, intervalSpeed: Float64Array, threshold: number): number | null {
  if (!intervalSpeed.some((speed) => !Number.isNaN(speed))) return null;
  let moving = 0;
  for (let i = 1; i < t.length; i += 1) {
    if ((intervalSpeed[i] as number) >= threshold) moving += (t[i] as number) - (t[i - 1] as number);
  }
  return moving;
}

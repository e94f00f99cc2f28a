/**
 * GPX 1.0 and 1.1 tracks (https://www.topografix.com/GPX/1/1/): every
 * `trk/trkseg/trkpt` of the file with its time, position and elevation; GPX
 * 1.0's `speed`; heart rate and cadence from the Garmin
 * TrackPointExtension (v1 and v2: `hr`, `cad`), power from the `power`
 * element that Strava and others write in a point's extensions (and Garmin's
 * PowerExtension `PowerInWatts`). GPX has no laps and no totals: distance is
 * measured along the positions (activity-track.ts: haversine on the mean
 * Earth sphere, within each segment) and moving time from the speed between
 * points (fit-activity.ts `MOVING_SPEED_MPS`).
 */
import { emptyPoint, type TrackActivity, type TrackPoint, TrackRecorder } from './activity-track.ts';
import {
  XmlActivityError,
  type XmlVisitor,
  parseXmlDegrees,
  parseXmlMeasure,
  parseXmlNumber,
  parseXmlTime,
} from './activity-xml.ts';

export const GPX_ROOT = 'gpx';

/** A track's `type` (free text; Garmin Connect and Strava write these words) in the FIT profile's words. */
const GPX_SPORTS: Record<string, string> = {
  running: 'running',
  run: 'running',
  trail_running: 'running',
  cycling: 'cycling',
  biking: 'cycling',
  bike: 'cycling',
  ride: 'cycling',
  road_biking: 'cycling',
  mountain_biking: 'cycling',
  walking: 'walking',
  walk: 'walking',
  hiking: 'hiking',
  hike: 'hiking',
  swimming: 'swimming',
  swim: 'swimming',
};

/** The writing app's name (`creator`) is free text: at most this much of it is kept. */
const MAX_NAME_CHARS = 64;

class GpxVisitor implements XmlVisitor {
  private readonly points: TrackRecorder;
  private readonly creator: string | null;
  private tracks = 0;
  private sport = 'generic';
  private segment = 0;
  private point: TrackPoint | undefined;

  constructor(maxPoints: number, creator: string | undefined) {
    this.points = new TrackRecorder(maxPoints);
    this.creator = creator?.trim().slice(0, MAX_NAME_CHARS) || null;
  }

  open(name: string, parent: string | undefined, attributes: Readonly<Record<string, string>>): void {
    if (name === 'trk') this.tracks += 1;
    // Points outside a segment (a few writers put them straight in `trk`) are a segment of their own.
    else if (name === 'trkseg' || (name === 'trkpt' && parent === 'trk')) this.segment += 1;
    if (name !== 'trkpt') return;
    this.point = emptyPoint(this.segment);
    this.point.latitude = parseXmlDegrees(attributes['lat'] ?? '', 90);
    this.point.longitude = parseXmlDegrees(attributes['lon'] ?? '', 180);
  }

  close(name: string, parent: string | undefined, text: string): void {
    const point = this.point;
    if (!point) {
      if (name === 'type' && parent === 'trk' && this.tracks === 1) {
        this.sport = GPX_SPORTS[text.toLowerCase()] ?? 'generic';
      }
      return;
    }
    switch (name) {
      case 'trkpt':
        this.points.push(point);
        this.point = undefined;
        return;
      case 'time':
        point.timeMs = parseXmlTime(text);
        return;
      case 'ele':
        point.altitude = parseXmlNumber(text);
        return;
      case 'speed':
        point.speed = parseXmlMeasure(text);
        return;
      case 'hr':
        point.heartRate = parseXmlMeasure(text);
        return;
      case 'cad':
        point.cadence = parseXmlMeasure(text);
        return;
      case 'power':
      case 'PowerInWatts':
        point.power = parseXmlMeasure(text);
        return;
      default:
    }
  }

  finish(): TrackActivity {
    if (this.points.length === 0) {
      throw new XmlActivityError(
        'gpx_no_track',
        'the GPX file has no track points (a route or waypoints are a plan, not a recorded activity)',
      );
    }
    const timed = this.points.timedPoints;
    if (timed === 0 || this.points.distinctTimes() < 2) {
      throw new XmlActivityError(
        'gpx_no_times',
        timed === 0
          ? 'the GPX track has no times: without them it is a path, not an activity'
          : 'the GPX track points all have the same time: without times it is a path, not an activity',
      );
    }
    // A few timed points among many untimed ones would time a fraction of the path: not an activity either.
    if (timed * 2 < this.points.length) {
      throw new XmlActivityError(
        'gpx_no_times',
        `only ${timed} of the GPX track's ${this.points.length} points have a time: without times it is a path, not an activity`,
      );
    }
    return {
      sport: this.sport,
      startMs: this.points.firstTime(),
      totals: {},
      laps: [],
      device: { manufacturer: null, product: this.creator, serial: null },
      points: this.points,
    };
  }
}

export function gpxVisitor(
  maxPoints: number,
  attributes: Readonly<Record<string, string>>,
): XmlVisitor & { finish(): TrackActivity } {
  return new GpxVisitor(maxPoints, attributes['creator']);
}

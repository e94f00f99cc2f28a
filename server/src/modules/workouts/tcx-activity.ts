/**
 * TCX (Garmin Training Center Database v2) activities: the first `Activity`
 * of the file, its sport, laps, track points and the device that recorded it.
 * Power, and speed and cadence where the device wrote them there, come from
 * the ActivityExtension v2 (`TPX/Watts`, `TPX/Speed`, `TPX/RunCadence`; lap
 * `LX/AvgWatts`, `LX/MaxWatts`). Schemas: https://www8.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd
 * and ActivityExtensionv2.xsd.
 */
import type { DecodedDevice } from './fit-activity.ts';
import { emptyPoint, type TrackActivity, type TrackLap, type TrackPoint, TrackRecorder } from './activity-track.ts';
import {
  XmlActivityError,
  type XmlVisitor,
  parseXmlDegrees,
  parseXmlMeasure,
  parseXmlNumber,
  parseXmlTime,
} from './activity-xml.ts';

export const TCX_ROOT = 'TrainingCenterDatabase';

/** TCX `Sport_t` in the FIT profile's words. */
const TCX_SPORTS: Record<string, string> = { Running: 'running', Biking: 'cycling', Other: 'generic' };

/** Device names are free text: at most this much of one is kept. */
const MAX_NAME_CHARS = 64;

/** Lap children and the FIT field each becomes. */
const LAP_FIELDS: Record<string, string> = {
  TotalTimeSeconds: 'totalTimerTime',
  DistanceMeters: 'totalDistance',
  Calories: 'totalCalories',
  Cadence: 'avgCadence',
};
/** Lap extension (`LX`) children and their FIT fields. */
const LAP_EXTENSION_FIELDS: Record<string, string> = {
  AvgWatts: 'avgPower',
  MaxWatts: 'maxPower',
  AvgRunCadence: 'avgCadence',
};

class TcxVisitor implements XmlVisitor {
  private readonly points: TrackRecorder;
  private activities = 0;
  private inActivity = false;
  private inCreator = false;
  private sport = 'generic';
  private idMs = Number.NaN;
  private readonly laps: TrackLap[] = [];
  private lap: TrackLap | undefined;
  private segment = 0;
  private point: TrackPoint | undefined;
  private device: { product: string | null; serial: string | null } = { product: null, serial: null };

  constructor(maxPoints: number) {
    this.points = new TrackRecorder(maxPoints);
  }

  open(name: string, _parent: string | undefined, attributes: Readonly<Record<string, string>>): void {
    if (name === 'Activity') {
      this.activities += 1;
      // A file of several activities (rare: a history export) gives its first one.
      this.inActivity = this.activities === 1;
      if (this.inActivity) this.sport = TCX_SPORTS[attributes['Sport'] ?? ''] ?? 'generic';
      return;
    }
    if (!this.inActivity) return;
    if (name === 'Lap') {
      this.lap = { startMs: parseXmlTime(attributes['StartTime'] ?? ''), values: {} };
      this.laps.push(this.lap);
    } else if (name === 'Track') this.segment += 1;
    else if (name === 'Trackpoint') this.point = emptyPoint(this.segment);
    else if (name === 'Creator') this.inCreator = true;
  }

  close(name: string, parent: string | undefined, text: string): void {
    if (!this.inActivity) return;
    if (this.point) this.closeInPoint(this.point, name, parent, text);
    else if (name === 'Activity') this.inActivity = false;
    else if (name === 'Id' && parent === 'Activity') this.idMs = parseXmlTime(text);
    else if (this.inCreator) this.closeInCreator(name, parent, text);
    else if (this.lap) this.closeInLap(this.lap, name, parent, text);
  }

  private closeInPoint(point: TrackPoint, name: string, parent: string | undefined, text: string): void {
    switch (name) {
      case 'Trackpoint':
        this.points.push(point);
        this.point = undefined;
        return;
      case 'Time':
        point.timeMs = parseXmlTime(text);
        return;
      case 'LatitudeDegrees':
        point.latitude = parseXmlDegrees(text, 90);
        return;
      case 'LongitudeDegrees':
        point.longitude = parseXmlDegrees(text, 180);
        return;
      case 'AltitudeMeters':
        point.altitude = parseXmlNumber(text);
        return;
      case 'DistanceMeters':
        point.distance = parseXmlMeasure(text);
        return;
      case 'Value':
        if (parent === 'HeartRateBpm') point.heartRate = parseXmlMeasure(text);
        return;
      case 'Cadence':
        point.cadence = parseXmlMeasure(text);
        return;
      case 'RunCadence':
        if (Number.isNaN(point.cadence)) point.cadence = parseXmlMeasure(text);
        return;
      case 'Speed':
        point.speed = parseXmlMeasure(text);
        return;
      case 'Watts':
        point.power = parseXmlMeasure(text);
        return;
      default:
    }
  }

  private closeInCreator(name: string, parent: string | undefined, text: string): void {
    if (name === 'Creator') this.inCreator = false;
    else if (parent === 'Creator' && name === 'Name') this.device.product = text.slice(0, MAX_NAME_CHARS) || null;
    else if (parent === 'Creator' && name === 'UnitId') this.device.serial = /^\d{1,20}$/.test(text) ? text : null;
  }

  private closeInLap(lap: TrackLap, name: string, parent: string | undefined, text: string): void {
    if (name === 'Lap') {
      this.lap = undefined;
      return;
    }
    const field =
      parent === 'Lap'
        ? LAP_FIELDS[name]
        : parent === 'LX'
          ? LAP_EXTENSION_FIELDS[name]
          : name === 'Value' && parent === 'AverageHeartRateBpm'
            ? 'avgHeartRate'
            : name === 'Value' && parent === 'MaximumHeartRateBpm'
              ? 'maxHeartRate'
              : undefined;
    if (field !== undefined && lap.values[field] === undefined) lap.values[field] = parseXmlMeasure(text);
  }

  finish(): TrackActivity {
    if (this.activities === 0) {
      throw new XmlActivityError(
        'tcx_no_activity',
        'the TCX file holds no activity (no Activity element: courses and workouts are plans, not activities)',
      );
    }
    if (this.points.timedPoints === 0) {
      throw new XmlActivityError('tcx_no_activity', 'the TCX activity has no track point with a time');
    }
    const candidates = [this.idMs, this.laps[0]?.startMs ?? Number.NaN, this.points.firstTime()];
    const startMs = Math.min(...candidates.filter((time) => !Number.isNaN(time)));
    const device: DecodedDevice = { manufacturer: null, product: this.device.product, serial: this.device.serial };
    return { sport: this.sport, startMs, totals: totalsOf(this.laps), laps: this.laps, device, points: this.points };
  }
}

/**
 * The activity's totals from its laps, as a device sums a session: times,
 * distances and energy add up (when every lap has them), the highest heart
 * rate is the laps' highest, the average heart rate is the laps' weighted by
 * their time.
 */
function totalsOf(laps: readonly TrackLap[]): Record<string, number> {
  const totals: Record<string, number> = {};
  const all = (field: string) => laps.length > 0 && laps.every((lap) => (lap.values[field] ?? Number.NaN) >= 0);
  const values = (field: string) => laps.map((lap) => lap.values[field] as number);
  for (const field of ['totalTimerTime', 'totalDistance', 'totalCalories']) {
    if (all(field)) totals[field] = values(field).reduce((sum, value) => sum + value, 0);
  }
  if (all('maxHeartRate')) totals['maxHeartRate'] = Math.max(...values('maxHeartRate'));
  if (all('avgHeartRate') && (totals['totalTimerTime'] ?? 0) > 0) {
    const weighted = laps.reduce(
      (sum, lap) => sum + (lap.values['avgHeartRate'] as number) * (lap.values['totalTimerTime'] as number),
      0,
    );
    totals['avgHeartRate'] = weighted / (totals['totalTimerTime'] as number);
  }
  return totals;
}

export function tcxVisitor(maxPoints: number): XmlVisitor & { finish(): TrackActivity } {
  return new TcxVisitor(maxPoints);
}

/**
 * An activity file of any format we take (FIT, TCX, GPX) -> workout record,
 * and -> time series on the first read of the streams. The format is told by
 * the content, never by a file name: a FIT file has ".FIT" at bytes 8-11 of
 * its header (FIT protocol, "File Header"); an XML file is TCX or GPX by its
 * root element. Runs in the decoder worker threads (fit-decode.worker.ts).
 * Compressed uploads arrive here already inflated (http/upload-inflate.ts).
 */
import {
  type DecodedActivity,
  type DecodedLap,
  type FitDecodeOptions,
  type FitRefusalCode,
  type FitStreamsOutcome,
  MOVING_SPEED_MPS,
  decodeFitActivity,
  decodeFitStreams,
  lowerBound,
  summarize,
  toStreams,
} from './fit-activity.ts';
import { type TrackActivity, movingSecsAlong } from './activity-track.ts';
import { XmlActivityError, type XmlRefusalCode, looksLikeXml, readXml, xmlText } from './activity-xml.ts';
import { GPX_ROOT, gpxVisitor } from './gpx-activity.ts';
import { TCX_ROOT, tcxVisitor } from './tcx-activity.ts';

export type ActivityFormat = 'fit' | 'tcx' | 'gpx';
/** `fit`: only FIT (`POST /api/workouts/upload-fit`); `any`: FIT, TCX or GPX (`POST /api/workouts/upload`). */
export type AcceptedFormats = 'fit' | 'any';

/** A refusal; `code` names why: the FIT decoder's codes (fit-activity.ts) or the TCX and GPX readers' (activity-xml.ts). */
export interface ActivityRefusal {
  readonly ok: false;
  readonly code: FitRefusalCode | XmlRefusalCode;
  readonly reason: string;
}

export type ActivityDecodeOutcome =
  { readonly ok: true; readonly format: ActivityFormat; readonly activity: DecodedActivity } | ActivityRefusal;
export type ActivityStreamsOutcome = FitStreamsOutcome | ActivityRefusal;

const FIT_SIGNATURE = [0x2e, 0x46, 0x49, 0x54]; // ".FIT"

/** FIT protocol, File Header: bytes 8-11 hold the ASCII characters ".FIT". */
export function hasFitSignature(bytes: Uint8Array): boolean {
  return bytes.length >= 12 && FIT_SIGNATURE.every((byte, i) => bytes[8 + i] === byte);
}

/** The workout record of an activity file; with `accept` `fit`, anything but FIT is refused as the FIT decoder does. */
export function decodeActivityFile(
  bytes: Uint8Array,
  options: FitDecodeOptions,
  accept: AcceptedFormats,
): ActivityDecodeOutcome {
  if (accept === 'fit' || hasFitSignature(bytes)) {
    const outcome = decodeFitActivity(bytes, options);
    return outcome.ok ? { ...outcome, format: 'fit' } : outcome;
  }
  return refusingBadXml(() => {
    const { format, track } = readTrackActivity(bytes, options);
    return { ok: true, format, activity: recordOf(track) };
  });
}

/** The time series of a stored activity file, whichever its format. */
export function decodeActivityStreams(bytes: Uint8Array, options: FitDecodeOptions): ActivityStreamsOutcome {
  if (hasFitSignature(bytes)) return decodeFitStreams(bytes, options);
  return refusingBadXml(() => {
    const { track } = readTrackActivity(bytes, options);
    return { ok: true, streamsJson: JSON.stringify(toStreams(track.points.toColumns(track.startMs).columns)) };
  });
}

function refusingBadXml<T>(read: () => T): T | ActivityRefusal {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof XmlActivityError)) throw error;
    return { ok: false, code: error.code, reason: error.message };
  }
}

/** A TCX or GPX file's activity; throws `XmlActivityError` for anything else. */
function readTrackActivity(
  bytes: Uint8Array,
  options: FitDecodeOptions,
): { format: 'tcx' | 'gpx'; track: TrackActivity } {
  if (bytes.length === 0) throw new XmlActivityError('activity_file_empty', 'the file is empty');
  const text = xmlText(bytes);
  if (text.trim() === '') throw new XmlActivityError('activity_file_empty', 'the file holds only white space');
  if (!looksLikeXml(text)) {
    throw new XmlActivityError('activity_format_unknown', 'the file is neither FIT (no ".FIT" header) nor XML');
  }
  const found: { reader?: { format: 'tcx' | 'gpx'; visitor: ReturnType<typeof tcxVisitor> } } = {};
  readXml(text, (root, attributes) => {
    if (root === TCX_ROOT) found.reader = { format: 'tcx', visitor: tcxVisitor(options.maxRecords) };
    else if (root === GPX_ROOT) found.reader = { format: 'gpx', visitor: gpxVisitor(options.maxRecords, attributes) };
    else {
      throw new XmlActivityError(
        'activity_format_unknown',
        `the XML file's root element is <${root}>: neither TCX (<${TCX_ROOT}>) nor GPX (<${GPX_ROOT}>)`,
      );
    }
    return found.reader.visitor;
  });
  const { reader } = found;
  if (!reader) throw new XmlActivityError('activity_xml_malformed', 'the XML has no root element');
  return { format: reader.format, track: reader.visitor.finish() };
}

/**
 * The workout record of a TCX or GPX activity, summarised as a FIT file
 * without a session is: totals where the file has them (TCX laps), the rest
 * from the track points.
 */
function recordOf(track: TrackActivity): DecodedActivity {
  const { columns, intervalSpeed } = track.points.toColumns(track.startMs);
  const lastPointSecs = columns.length > 0 ? Math.max(0, columns.t[columns.length - 1] as number) : 0;
  const lapEnds = track.laps.map(
    (lap) => (lap.startMs - track.startMs) / 1000 + (lap.values['totalTimerTime'] ?? Number.NaN),
  );
  // Wall-clock time: to the last point, or to the end of the last lap when a device ends it later.
  const elapsed = Math.max(lastPointSecs, ...lapEnds.filter((end) => Number.isFinite(end)));
  const moving = movingSecsAlong(columns.t, intervalSpeed, MOVING_SPEED_MPS);
  const totals = {
    ...track.totals,
    totalElapsedTime: elapsed,
    ...(moving === null ? {} : { totalMovingTime: moving }),
  };
  const summary = summarize(totals, columns, 0, columns.length);

  const laps = track.laps.map((lap, index): DecodedLap => {
    const lapStartMs = Number.isNaN(lap.startMs) ? track.startMs : lap.startMs;
    const from = (lapStartMs - track.startMs) / 1000;
    const nextStartMs = track.laps[index + 1]?.startMs ?? Number.NaN;
    const to = Number.isNaN(nextStartMs) ? Number.POSITIVE_INFINITY : (nextStartMs - track.startMs) / 1000;
    const first = lowerBound(columns.t, from);
    const end = to === Number.POSITIVE_INFINITY ? columns.length : lowerBound(columns.t, to);
    const lapElapsed = to === Number.POSITIVE_INFINITY ? Math.max(0, elapsed - from) : to - from;
    const lapMoving = movingSecsAlong(
      columns.t.subarray(first, end),
      intervalSpeed.subarray(first, end),
      MOVING_SPEED_MPS,
    );
    const lapTotals = {
      ...lap.values,
      totalElapsedTime: lapElapsed,
      ...(lapMoving === null ? {} : { totalMovingTime: lapMoving }),
    };
    return { index, startTime: new Date(lapStartMs).toISOString(), ...summarize(lapTotals, columns, first, end) };
  });

  return {
    sport: track.sport,
    subSport: null,
    startTime: new Date(track.startMs).toISOString(),
    utcOffsetMinutes: null,
    summary,
    laps,
    device: track.device,
    // A TCX or GPX file is whole or refused: the XML must be well-formed to its end.
    truncated: false,
  };
}

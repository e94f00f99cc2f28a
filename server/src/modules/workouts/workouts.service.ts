import type { Workout, WorkoutLap, WorkoutListQuery, WorkoutStreams } from '@pacer/contract';
import type { Db } from '../../db/database.ts';
import { AppError } from '../../errors.ts';
import { resolveDatePage } from '../../lib/date-range.ts';
import { zoneOffsetMinutes } from '../../lib/dates.ts';
import { findUserById } from '../accounts/user.repository.ts';
import type { Actor } from '../../lib/actor.ts';
import type { DecodedActivity } from './fit-activity.ts';
import type { AcceptedFormats, ActivityFormat, ActivityRefusal } from './activity-file.ts';
import type { DecodeTicket, FitDecodeQueue } from './fit-decode-queue.ts';
import { FitDecodeTimeoutError, FitDecoderError } from './fit-decoder.pool.ts';
import { trainingStressScore } from './power-metrics.ts';
import { downsampleStreams, type StoredStreams } from './workout-streams.ts';
import {
  cacheWorkoutStreams,
  deleteWorkout,
  findWorkout,
  findWorkoutFile,
  findWorkoutIdByFile,
  findWorkoutStreams,
  listWorkouts,
  relabelWorkout,
  upsertWorkoutWithFile,
  type WorkoutRelabel,
  type WorkoutWithDuplicate,
} from './workouts.repository.ts';
import { decodeCursor, encodeCursor, UUID_PATTERN, keysetPage, type KeysetPage } from '../../lib/cursor.ts';
import { inTransaction } from '../../db/transaction.ts';
import { type InputWriteDeps, recordChange } from '../changes/changes.repository.ts';

/** An activity file upload as the HTTP layer parsed it (`http/fit-upload.middleware.ts`). */
export interface FitUpload {
  /** The file, decompressed when it was sent gzip-compressed. */
  readonly bytes: Buffer;
  /** SHA-256 of `bytes` (the decompressed file), lowercase hex, computed while the body streamed in. */
  readonly sha256: string;
  readonly fileName: string | null;
  /** Absent when the form did not send a (non-empty) `name`. */
  readonly name: string | undefined;
  readonly metadata: Record<string, unknown> | undefined;
  /** Its place in the decode queue, taken before the body was read (`admitFitUpload`). */
  readonly ticket: DecodeTicket;
  /**
   * Free `bytes` at once (they read as empty afterwards): the handler calls it
   * when the upload is done with, stored or refused, so a finished file's
   * memory does not wait for a garbage collection (fit-upload.middleware.ts).
   */
  readonly dispose: () => void;
}

export interface WorkoutsDeps extends InputWriteDeps {
  readonly db: Db;
  readonly decoding: FitDecodeQueue;
}

/**
 * A place in the decode queue for an upload of at most `bytes` bytes, taken
 * before its body is read: 429 `fit_decode_in_progress` while another file
 * of the user is being processed, 503 `fit_decode_queue_full` when the
 * process holds as many files or bytes as it may (fit-decode-queue.ts). The
 * caller releases it when the request ends.
 */
export function admitFitUpload(decoding: FitDecodeQueue, actor: Actor, bytes: number): DecodeTicket {
  return decoding.admit(actor.userId, bytes);
}

export interface WorkoutUploadResult {
  readonly workout: Workout;
  readonly created: boolean;
}

function notFound(): AppError {
  return new AppError('not_found', 'No workout with this id belongs to you.');
}

function relabelOf(upload: FitUpload): WorkoutRelabel {
  return {
    ...(upload.name === undefined ? {} : { name: upload.name }),
    ...(upload.metadata === undefined ? {} : { metadata: JSON.stringify(upload.metadata) }),
  };
}

/**
 * Upload an activity file (docs/design.md §3 "Sync resources"): an upsert
 * keyed on (user, SHA-256 of the decompressed bytes). Bytes seen before only
 * relabel their workout (200) without decoding again; new bytes are decoded
 * in the worker pool (FIT only with `accept` `fit`, else FIT, TCX or GPX,
 * told by the content) and stored with the original file and their change
 * record in one statement (201). A file the decoder refuses is a 422 and
 * nothing is stored. The streams are decoded on their first read (see
 * `getWorkoutStreams`), which keeps uploads (and bulk imports) fast and
 * stores nothing for workouts nobody charts.
 */
export async function uploadWorkoutFile(
  deps: WorkoutsDeps,
  actor: Actor,
  upload: FitUpload,
  accept: AcceptedFormats,
): Promise<WorkoutUploadResult> {
  const relabel = relabelOf(upload);
  const knownId = await findWorkoutIdByFile(deps.db, actor.userId, upload.sha256);
  if (knownId !== undefined) {
    const id = await relabelWorkout(deps.db, actor.userId, knownId, relabel);
    // Deleted in between: it is a new upload after all.
    if (id !== undefined) return { workout: await readWorkout(deps.db, actor, id), created: false };
  }

  // The user's FTP (for the training stress) is read while the worker decodes.
  const [{ activity, format }, user] = await Promise.all([
    decodeOrRefuse(upload.ticket, upload.bytes, accept),
    findUserById(deps.db, actor.userId),
  ]);
  const localStart = localStartOf(activity, actor.timeZone);
  const localDate = localStart.date;
  const { summary } = activity;

  // One statement: the workout, its file and its change record commit together.
  const { workout, created } = await upsertWorkoutWithFile(
    deps.db,
    {
      userId: actor.userId,
      fileSha256: upload.sha256,
      fileSize: upload.bytes.length,
      fileName: upload.fileName,
      fileFormat: format,
      name: upload.name ?? defaultName(activity.sport, localStart.hour),
      metadata: JSON.stringify(upload.metadata ?? {}),
      source: actor.source,
      sport: activity.sport,
      subSport: activity.subSport,
      startTime: activity.startTime,
      localDate,
      utcOffsetMinutes: activity.utcOffsetMinutes,
      ...summary,
      trainingStress: roundTo(
        trainingStressScore({
          secs: summary.movingSecs ?? summary.elapsedSecs,
          normalizedPower: summary.normalizedPower,
          ftpWatts: user?.ftpWatts ?? null,
        }),
        1,
      ),
      laps: JSON.stringify(activity.laps),
      deviceManufacturer: activity.device.manufacturer,
      deviceProduct: activity.device.product,
      deviceSerial: activity.device.serial,
      truncated: activity.truncated,
    },
    relabel,
    upload.bytes,
  );
  return { workout: toWorkout(workout), created };
}

/** Decoded in the worker pool; a file the decoder refuses, or that exhausts a worker's time or memory, is a 422. */
async function decodeOrRefuse(
  ticket: DecodeTicket,
  bytes: Uint8Array,
  accept: AcceptedFormats,
): Promise<{ activity: DecodedActivity; format: ActivityFormat }> {
  const outcome = await ticket.decodeActivity(bytes, accept).catch((error: unknown) => {
    throw asRefusal(ticket, error);
  });
  if (!outcome.ok) throw refusal(ticket, outcome);
  return { activity: outcome.activity, format: outcome.format };
}

/** A worker that ran out of time (`fit_decode_timeout`) or memory (`unprocessable`) on the file; other errors are ours. */
function asRefusal(ticket: DecodeTicket, error: unknown): unknown {
  if (error instanceof FitDecodeTimeoutError) {
    const secs = Math.round(ticket.limits.timeoutMs / 100) / 10;
    return new AppError(
      'fit_decode_timeout',
      `Reading this FIT file took longer than ${secs} s, the most this server spends on one file; nothing was stored.`,
      { errors: [{ path: 'file', message: `decoding took longer than ${ticket.limits.timeoutMs} ms` }] },
    );
  }
  if (!(error instanceof FitDecoderError)) return error;
  return new AppError('unprocessable', `The file could not be read within this server's limits: ${error.message}.`, {
    errors: [{ path: 'file', message: error.message }],
  });
}

/** What each refusal tells the athlete, after "The file …" (the codes: fit-activity.ts, activity-xml.ts). */
const REFUSAL_WORDS: Record<Exclude<ActivityRefusal['code'], 'fit_too_many_records'>, string> = {
  fit_not_fit_file: 'is not a FIT file',
  fit_corrupt_header: 'has a damaged FIT header',
  fit_not_activity: 'is not an activity',
  fit_no_activity: 'holds no activity',
  fit_unreadable: 'cannot be read',
  activity_file_empty: 'is empty',
  activity_format_unknown: 'is neither FIT, TCX nor GPX',
  activity_xml_malformed: 'is not well-formed XML',
  activity_too_many_records: 'holds more track points than this server reads from one file',
  gpx_no_track: 'has no GPX track',
  gpx_no_times: 'has a GPX track without times',
  tcx_no_activity: 'holds no TCX activity',
};

function refusal(ticket: DecodeTicket, outcome: ActivityRefusal): AppError {
  if (outcome.code === 'fit_too_many_records') {
    const limit = ticket.limits.maxRecords;
    return new AppError(
      'fit_too_many_records',
      `The file holds more than ${limit.toLocaleString('en')} records, the most this server reads from one file (a week recorded every second is about 605,000); nothing was stored. Split the activity, or record less often.`,
      { errors: [{ path: 'file', message: `more than ${limit} records` }] },
    );
  }
  return new AppError(outcome.code, `The file ${REFUSAL_WORDS[outcome.code]}: ${outcome.reason}; nothing was stored.`, {
    errors: [{ path: 'file', message: outcome.reason }],
  });
}

/**
 * Where the activity happened on the clock: in its own UTC offset when the
 * file records one (docs/design.md §3 "Dates": a timestamp's own offset wins),
 * else in the profile time zone's offset at that instant. Both the same way:
 * the start shifted by the offset (the zone's through `zoneOffsetMinutes`,
 * whose formatter is built once per zone; building an `Intl.DateTimeFormat`
 * per upload cost a third of a millisecond on the upload's critical path).
 */
function localStartOf(activity: DecodedActivity, timeZone: string): { date: string; hour: number } {
  const start = new Date(activity.startTime);
  const offsetMinutes = activity.utcOffsetMinutes ?? zoneOffsetMinutes(start, timeZone);
  const shifted = new Date(start.getTime() + offsetMinutes * 60_000);
  return { date: shifted.toISOString().slice(0, 10), hour: shifted.getUTCHours() };
}

/** What an athlete calls an activity of each FIT sport; others use the sport's own words. */
const SPORT_NOUNS: Record<string, string> = {
  cycling: 'ride',
  eBiking: 'e-bike ride',
  running: 'run',
  walking: 'walk',
  hiking: 'hike',
  swimming: 'swim',
  rowing: 'row',
  crossCountrySkiing: 'ski',
  alpineSkiing: 'ski',
  training: 'workout',
  generic: 'workout',
  multisport: 'multisport session',
};

/** Parts of the day by their first hour, latest first; before 05:00 is still night. */
const PARTS_OF_DAY: readonly (readonly [number, string])[] = [
  [22, 'Night'],
  [18, 'Evening'],
  [14, 'Afternoon'],
  [11, 'Lunch'],
  [5, 'Morning'],
];

/**
 * A name when the upload sends none, after the time of day on the activity's
 * own clock: `Morning ride`, `Evening run`. File names are rarely better
 * (devices write `2026-11-11-07-12-54.fit`); the file name is kept apart.
 */
function defaultName(sport: string, localHour: number): string {
  const noun = SPORT_NOUNS[sport] ?? sport.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  const part = PARTS_OF_DAY.find(([firstHour]) => localHour >= firstHour)?.[1] ?? 'Night';
  return `${part} ${noun}`;
}

function roundTo(value: number | null, decimals: number): number | null {
  return value === null ? null : Math.round(value * 10 ** decimals) / 10 ** decimals;
}

async function readWorkout(db: Db, actor: Actor, id: string): Promise<Workout> {
  const row = await findWorkout(db, actor.userId, id);
  if (!row) throw notFound();
  return toWorkout(row);
}

export async function getWorkout(db: Db, actor: Actor, id: string): Promise<Workout> {
  return readWorkout(db, actor, id);
}

/** Keyset cursor: the (startTime, id) of the last workout of the previous page. */
function encodeWorkoutCursor(row: { readonly startTime: Date; readonly id: string }): string {
  return encodeCursor({ t: row.startTime.toISOString(), i: row.id });
}

function decodeWorkoutCursor(cursor: string): { startTime: Date; id: string } {
  return decodeCursor(cursor, ({ t, i }) => {
    const startTime = t === undefined ? undefined : new Date(t);
    if (!startTime || Number.isNaN(startTime.getTime()) || i === undefined || !UUID_PATTERN.test(i)) return undefined;
    return { startTime, id: i };
  });
}

/**
 * A page of workouts whose local date is in `[from, to]` (bounded as every
 * date-range list is), newest first.
 */
export async function listWorkoutPage(db: Db, actor: Actor, query: WorkoutListQuery): Promise<KeysetPage<Workout>> {
  const page = resolveDatePage({ ...query, cursor: undefined }, actor.timeZone);
  const before = query.cursor === undefined ? undefined : decodeWorkoutCursor(query.cursor);
  const rows = await listWorkouts(db, actor.userId, {
    from: page.from,
    to: page.to,
    sport: query.sport,
    before,
    limit: page.limit,
  });
  return keysetPage(rows, page.limit, toWorkout, encodeWorkoutCursor);
}

export interface WorkoutFileDownload {
  readonly bytes: Buffer;
  /** A file name for `Content-Disposition`. */
  readonly fileName: string;
  readonly sha256: string;
}

export async function getWorkoutFile(db: Db, actor: Actor, id: string): Promise<WorkoutFileDownload> {
  const file = await findWorkoutFile(db, actor.userId, id);
  if (!file) throw notFound();
  const fileName =
    file.fileName ?? `${file.name.replace(/[^\w.-]+/g, '_').slice(0, 100) || 'workout'}.${file.fileFormat}`;
  return { bytes: file.bytes, fileName, sha256: file.fileSha256 };
}

/**
 * The time series of a workout, decoded from the original file in the worker
 * pool on first read and kept for later reads; down-sampled on request. The
 * first read goes through the decode queue like an upload (same bounds:
 * 429/503 before the file is loaded, 422 for too many records or too long).
 */
export async function getWorkoutStreams(
  deps: WorkoutsDeps,
  actor: Actor,
  id: string,
  maxPoints: number | undefined,
): Promise<WorkoutStreams> {
  const found = await findWorkoutStreams(deps.db, actor.userId, id);
  if (!found) throw notFound();
  let streamsJson = found.streamsJson;
  if (streamsJson === null) {
    const ticket = deps.decoding.admit(actor.userId, found.fileSize);
    try {
      streamsJson = await decodeStoredStreams(deps, actor, id, ticket);
    } finally {
      ticket.release();
    }
  }
  const streams = JSON.parse(streamsJson) as StoredStreams;
  const sampled = maxPoints === undefined ? streams : downsampleStreams(streams, maxPoints);
  return {
    workoutId: id,
    startTime: found.startTime.toISOString(),
    points: sampled.time.length,
    originalPoints: streams.time.length,
    ...sampled,
  };
}

async function decodeStoredStreams(
  deps: WorkoutsDeps,
  actor: Actor,
  id: string,
  ticket: DecodeTicket,
): Promise<string> {
  const file = await findWorkoutFile(deps.db, actor.userId, id);
  if (!file) throw notFound();
  const outcome = await ticket.decodeStreams(file.bytes).catch((error: unknown) => {
    throw asRefusal(ticket, error);
  });
  // A file stored before the record limit was lowered: refused like an upload.
  if (!outcome.ok && outcome.code === 'fit_too_many_records') throw refusal(ticket, outcome);
  // The file decoded when it was uploaded; failing now is our fault, not the caller's.
  if (!outcome.ok) throw new Error(`stored file of workout ${id} no longer decodes: ${outcome.reason}`);
  await cacheWorkoutStreams(deps.db, { workoutId: id, userId: actor.userId, streamsJson: outcome.streamsJson });
  return outcome.streamsJson;
}

export async function removeWorkout(deps: InputWriteDeps, actor: Actor, id: string): Promise<void> {
  await inTransaction(deps.db, async (trx) => {
    const date = await deleteWorkout(trx, actor.userId, id);
    if (date === undefined) throw notFound();
    await recordChange(trx, { userId: actor.userId, kind: 'workouts', fromDate: date });
  });
}

export function toWorkout(row: WorkoutWithDuplicate): Workout {
  return {
    id: row.id,
    name: row.name,
    metadata: row.metadata,
    sport: row.sport,
    subSport: row.subSport,
    startTime: row.startTime.toISOString(),
    localDate: row.localDate,
    elapsedSecs: row.elapsedSecs,
    movingSecs: row.movingSecs,
    distanceMeters: row.distanceMeters,
    ascentMeters: row.ascentMeters,
    avgHr: row.avgHr,
    maxHr: row.maxHr,
    avgPower: row.avgPower,
    maxPower: row.maxPower,
    normalizedPower: row.normalizedPower,
    avgCadence: row.avgCadence,
    calories: row.calories,
    trainingStress: row.trainingStress,
    laps: row.laps.map(lapOf),
    device: { manufacturer: row.deviceManufacturer, product: row.deviceProduct, serial: row.deviceSerial },
    truncated: row.truncated,
    possibleDuplicateOf: row.possibleDuplicateOf,
    file: { sha256: row.fileSha256, sizeBytes: row.fileSize, fileName: row.fileName, format: row.fileFormat },
    source: row.source,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** jsonb keeps keys in its own order: put them back in the contract's. */
function lapOf(lap: WorkoutLap): WorkoutLap {
  return {
    index: lap.index,
    startTime: lap.startTime,
    elapsedSecs: lap.elapsedSecs,
    movingSecs: lap.movingSecs,
    distanceMeters: lap.distanceMeters,
    ascentMeters: lap.ascentMeters,
    avgHr: lap.avgHr,
    maxHr: lap.maxHr,
    avgPower: lap.avgPower,
    maxPower: lap.maxPower,
    normalizedPower: lap.normalizedPower,
    avgCadence: lap.avgCadence,
    calories: lap.calories,
  };
}

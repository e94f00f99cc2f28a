import type { Workout, WorkoutLap, WorkoutListQuery, WorkoutStreams } from '@pacer/contract';
import type { Db } from '../../db/database.ts';
import { AppError } from '../../errors.ts';
import { resolveDatePage } from '../../lib/date-range.ts';
import { localDateOf } from '../../lib/dates.ts';
import { findUserById } from '../accounts/user.repository.ts';
import type { TokenPrincipal } from '../oauth/token.service.ts';
import type { DecodedActivity } from './fit-activity.ts';
import { FitDecoderError, type FitDecoderPool } from './fit-decoder.pool.ts';
import { trainingStressScore } from './power-metrics.ts';
import { downsampleStreams, type StoredStreams } from './workout-streams.ts';
import {
  cacheWorkoutStreams,
  deleteWorkout,
  findWorkout,
  findWorkoutFile,
  findWorkoutIdByFile,
  findWorkoutStreams,
  insertWorkoutFile,
  listWorkouts,
  relabelWorkout,
  upsertWorkout,
  type WorkoutRelabel,
  type WorkoutWithDuplicate,
} from './workouts.repository.ts';
import { decodeCursor, encodeCursor, UUID_PATTERN, keysetPage, type KeysetPage } from '../../lib/cursor.ts';
import { inTransaction } from '../../db/transaction.ts';
import { type AnalyticsInputDeps, requestRecompute } from '../analytics/recompute-request.ts';

/** A FIT upload as the HTTP layer parsed it (`http/fit-upload.middleware.ts`). */
export interface FitUpload {
  readonly bytes: Buffer;
  /** SHA-256 of `bytes`, lowercase hex, computed while the body streamed in. */
  readonly sha256: string;
  readonly fileName: string | null;
  /** Absent when the form did not send a (non-empty) `name`. */
  readonly name: string | undefined;
  readonly metadata: Record<string, unknown> | undefined;
}

export interface WorkoutsDeps extends AnalyticsInputDeps {
  readonly db: Db;
  readonly decoder: FitDecoderPool;
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
 * Upload a FIT file (docs/design.md §3 "Sync resources"): an upsert keyed on
 * (user, SHA-256 of the bytes). Bytes seen before only relabel their workout
 * (200) without decoding again; new bytes are decoded in the worker pool and
 * stored with the original file in one transaction (201). A file the decoder
 * refuses is a 422 and nothing is stored. The streams are decoded on their
 * first read (see `getWorkoutStreams`), which keeps uploads (and bulk
 * imports) fast and stores nothing for workouts nobody charts.
 */
export async function uploadFitWorkout(
  deps: WorkoutsDeps,
  principal: TokenPrincipal,
  upload: FitUpload,
): Promise<WorkoutUploadResult> {
  const relabel = relabelOf(upload);
  const knownId = await findWorkoutIdByFile(deps.db, principal.userId, upload.sha256);
  if (knownId !== undefined) {
    const id = await relabelWorkout(deps.db, principal.userId, knownId, relabel);
    // Deleted in between: it is a new upload after all.
    if (id !== undefined) return { workout: await readWorkout(deps.db, principal, id), created: false };
  }

  // The user's FTP (for the training stress) is read while the worker decodes.
  const [activity, user] = await Promise.all([
    decodeOrRefuse(deps.decoder, upload.bytes),
    findUserById(deps.db, principal.userId),
  ]);
  const localStart = localStartOf(activity, principal.timeZone);
  const localDate = localStart.date;
  const { summary } = activity;

  const { id, created } = await deps.db.transaction().execute(async (trx) => {
    const result = await upsertWorkout(
      trx,
      {
        userId: principal.userId,
        fileSha256: upload.sha256,
        fileSize: upload.bytes.length,
        fileName: upload.fileName,
        name: upload.name ?? defaultName(activity.sport, localStart.hour),
        metadata: JSON.stringify(upload.metadata ?? {}),
        source: principal.clientId,
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
      },
      relabel,
    );
    // A concurrent upload of the same bytes may have won the insert; its file is the same.
    if (result.created) {
      await insertWorkoutFile(trx, { workoutId: result.id, userId: principal.userId, bytes: upload.bytes });
      await requestRecompute(deps, trx, principal.userId, localDate);
    }
    return result;
  });
  return { workout: await readWorkout(deps.db, principal, id), created };
}

/** Decoded in the worker pool; a file the decoder refuses, or that exhausts a worker's time or memory, is a 422. */
async function decodeOrRefuse(decoder: FitDecoderPool, bytes: Uint8Array): Promise<DecodedActivity> {
  const outcome = await decoder.decodeActivity(bytes).catch((error: unknown) => {
    throw error instanceof FitDecoderError ? refusal(error.message) : error;
  });
  if (!outcome.ok) throw refusal(outcome.reason);
  return outcome.activity;
}

function refusal(reason: string): AppError {
  return new AppError('unprocessable', `The file is not a valid FIT activity: ${reason}.`, {
    errors: [{ path: 'file', message: reason }],
  });
}

/**
 * Where the activity happened on the clock: in its own UTC offset when the
 * file records one (docs/design.md §3 "Dates": a timestamp's own offset wins),
 * else in the profile time zone.
 */
function localStartOf(activity: DecodedActivity, timeZone: string): { date: string; hour: number } {
  const start = new Date(activity.startTime);
  if (activity.utcOffsetMinutes !== null) {
    const shifted = new Date(start.getTime() + activity.utcOffsetMinutes * 60_000);
    return { date: shifted.toISOString().slice(0, 10), hour: shifted.getUTCHours() };
  }
  const hour = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', hourCycle: 'h23' }).format(start);
  return { date: localDateOf(start, timeZone), hour: Number(hour) };
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

async function readWorkout(db: Db, principal: TokenPrincipal, id: string): Promise<Workout> {
  const row = await findWorkout(db, principal.userId, id);
  if (!row) throw notFound();
  return toWorkout(row);
}

export async function getWorkout(db: Db, principal: TokenPrincipal, id: string): Promise<Workout> {
  return readWorkout(db, principal, id);
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
export async function listWorkoutPage(
  db: Db,
  principal: TokenPrincipal,
  query: WorkoutListQuery,
): Promise<KeysetPage<Workout>> {
  const page = resolveDatePage({ ...query, cursor: undefined }, principal.timeZone);
  const before = query.cursor === undefined ? undefined : decodeWorkoutCursor(query.cursor);
  const rows = await listWorkouts(db, principal.userId, {
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

export async function getWorkoutFile(db: Db, principal: TokenPrincipal, id: string): Promise<WorkoutFileDownload> {
  const file = await findWorkoutFile(db, principal.userId, id);
  if (!file) throw notFound();
  const fileName = file.fileName ?? `${file.name.replace(/[^\w.-]+/g, '_').slice(0, 100) || 'workout'}.fit`;
  return { bytes: file.bytes, fileName, sha256: file.fileSha256 };
}

/**
 * The time series of a workout, decoded from the original file in the worker
 * pool on first read and kept for later reads; down-sampled on request.
 */
export async function getWorkoutStreams(
  deps: WorkoutsDeps,
  principal: TokenPrincipal,
  id: string,
  maxPoints: number | undefined,
): Promise<WorkoutStreams> {
  const found = await findWorkoutStreams(deps.db, principal.userId, id);
  if (!found) throw notFound();
  let streamsJson = found.streamsJson;
  if (streamsJson === null) {
    const file = await findWorkoutFile(deps.db, principal.userId, id);
    if (!file) throw notFound();
    const outcome = await deps.decoder.decodeStreams(file.bytes);
    // The file decoded when it was uploaded; failing now is our fault, not the caller's.
    if (!outcome.ok) throw new Error(`stored FIT file of workout ${id} no longer decodes: ${outcome.reason}`);
    streamsJson = outcome.streamsJson;
    await cacheWorkoutStreams(deps.db, { workoutId: id, userId: principal.userId, streamsJson });
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

export async function removeWorkout(deps: AnalyticsInputDeps, principal: TokenPrincipal, id: string): Promise<void> {
  await inTransaction(deps.db, async (trx) => {
    const date = await deleteWorkout(trx, principal.userId, id);
    if (date === undefined) throw notFound();
    await requestRecompute(deps, trx, principal.userId, date);
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
    laps: (row.laps as unknown as WorkoutLap[]).map(lapOf),
    device: { manufacturer: row.deviceManufacturer, product: row.deviceProduct, serial: row.deviceSerial },
    possibleDuplicateOf: row.possibleDuplicateOf,
    file: { sha256: row.fileSha256, sizeBytes: row.fileSize, fileName: row.fileName },
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

import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  DateRangeQuerySchema,
  IdempotencyHeadersSchema,
  LocalDateSchema,
  ProblemSchema,
  RawJsonSchema,
  TimestampSchema,
  notFoundResponses,
  pageOf,
  problemResponses,
  requireScopes,
  writeProblemResponses,
} from './common.ts';

const c = initContract();

/** The media type of FIT files (IANA registration by ANT/Garmin). */
export const FIT_MEDIA_TYPE = 'application/vnd.ant.fit';

/** Formats of activity files: FIT, TCX (Garmin Training Center Database v2) and GPX (1.0, 1.1). */
export const ACTIVITY_FILE_FORMATS = ['fit', 'tcx', 'gpx'] as const;
export type ActivityFileFormat = (typeof ACTIVITY_FILE_FORMATS)[number];

export const WORKOUT_NAME_MAX = 200;
/** `metadata` is a small JSON object for the client's own use, not a data channel. */
export const WORKOUT_METADATA_MAX_BYTES = 64 * 1024;
export const STREAM_POINTS_MIN = 2;
export const STREAM_POINTS_MAX = 100_000;

const UuidSchema = z.uuid();

/**
 * A sport or sub-sport as the Garmin FIT profile names it, in camelCase
 * (`cycling`, `running`, `indoorCycling`, `trail`); a number when the file
 * carries a value the profile does not know.
 */
const FitEnumSchema = z.string().max(64);

const seconds = (description: string) => z.number().min(0).nullable().describe(`${description}, seconds.`);
const metres = (description: string) => z.number().nullable().describe(`${description}, metres.`);
const bpm = (description: string) => z.number().min(0).nullable().describe(`${description}, bpm.`);
const watts = (description: string) => z.number().min(0).nullable().describe(`${description}, watts.`);

/** The measures a workout and each of its laps share. */
const summaryShape = {
  elapsedSecs: seconds('Wall-clock time from start to end, pauses included'),
  movingSecs: seconds('Time in motion'),
  distanceMeters: metres('Distance'),
  ascentMeters: metres('Total ascent'),
  avgHr: bpm('Average heart rate'),
  maxHr: bpm('Maximum heart rate'),
  avgPower: watts('Average power'),
  maxPower: watts('Maximum power'),
  normalizedPower: watts(
    'Normalized power (Coggan): the fourth root of the mean of the fourth powers of the 30-second rolling average power',
  ),
  avgCadence: z.number().min(0).nullable().describe('Average cadence, rpm (cycling) or steps per minute (running).'),
  calories: z.number().min(0).nullable().describe('Energy expended, kcal.'),
} as const;

export const WorkoutLapSchema = z
  .object({
    index: z.number().int().min(0).describe('Position of the lap, from 0.'),
    startTime: TimestampSchema.describe('Start of the lap, UTC.'),
    ...summaryShape,
  })
  .meta({ title: 'WorkoutLap' });
export type WorkoutLap = z.infer<typeof WorkoutLapSchema>;

export const WorkoutDeviceSchema = z
  .object({
    manufacturer: z.string().nullable().describe('Manufacturer as the FIT profile names it, e.g. `garmin`.'),
    product: z.string().nullable().describe('Product name (e.g. `edge1040`) or number.'),
    serial: z.string().nullable().describe('Serial number of the recording device.'),
  })
  .meta({ title: 'WorkoutDevice' });
export type WorkoutDevice = z.infer<typeof WorkoutDeviceSchema>;

export const WorkoutSchema = z
  .object({
    id: UuidSchema,
    name: z.string(),
    metadata: RawJsonSchema.describe('The `metadata` object last uploaded with the file, kept verbatim.'),
    sport: FitEnumSchema.describe('Sport, e.g. `cycling`, `running`, `swimming`, `generic`.'),
    subSport: FitEnumSchema.nullable().describe('Sub-sport, e.g. `road`, `indoorCycling`, `trail`.'),
    startTime: TimestampSchema.describe('Start of the activity, UTC.'),
    localDate: LocalDateSchema.describe(
      "Calendar date of the start in the activity's own time zone offset when the file records one, otherwise in the profile time zone.",
    ),
    ...summaryShape,
    trainingStress: z
      .number()
      .min(0)
      .nullable()
      .describe(
        'Training Stress Score (Coggan): secs × NP × IF / (FTP × 3600) × 100 with IF = NP / FTP and secs the moving time, using the profile FTP at upload; `null` without power or without an FTP in the profile.',
      ),
    laps: z.array(WorkoutLapSchema),
    device: WorkoutDeviceSchema,
    truncated: z
      .boolean()
      .describe(
        'The file was damaged: it ends before its end (a recording cut off when the battery died) or holds bytes that could not be read. The workout holds every whole record read, and its summary comes from them where the file has no session; `false` for a whole file.',
      ),
    possibleDuplicateOf: UuidSchema.nullable().describe(
      'Another of your workouts recorded by the same device (serial) with the same start time: probably the same activity from another source.',
    ),
    file: z.object({
      sha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .describe('SHA-256 of the original file (uncompressed), hex; uploads are keyed on it.'),
      sizeBytes: z.number().int().min(0).describe('Size of the original file, uncompressed.'),
      fileName: z.string().nullable().describe('File name the client sent, if any.'),
      format: z
        .enum(ACTIVITY_FILE_FORMATS)
        .describe('Format of the original file, told from its content: `fit`, `tcx` or `gpx`.'),
    }),
    source: z.string().describe('Client id of the app that first uploaded the file.'),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .meta({ title: 'Workout' });
export type Workout = z.infer<typeof WorkoutSchema>;

/**
 * The multipart form of an upload. `metadata` travels as a string that holds
 * a JSON object (specification §2.4); in OpenAPI an object property of a
 * multipart body is a JSON part, and the typed client JSON-encodes it.
 */
export const WorkoutUploadSchema = z
  .object({
    file: z
      .custom<File>()
      .meta({ type: 'string', format: 'binary' })
      .describe(
        `The original file, at most \`PACER_MAX_UPLOAD_BYTES\` (default 25 MiB), also once decompressed when it is gzip-compressed.`,
      ),
    name: z
      .string()
      .min(1)
      .max(WORKOUT_NAME_MAX)
      .optional()
      .describe(
        'Display name. Default on a first upload: time of day and sport (`Morning ride`); absent on a re-upload: the stored name stays.',
      ),
    metadata: RawJsonSchema.optional().describe(
      `Free-form client metadata: a JSON object in a string field, at most ${WORKOUT_METADATA_MAX_BYTES / 1024} KiB. Absent on a re-upload: the stored metadata stays.`,
    ),
  })
  .meta({ title: 'WorkoutUpload' });
export type WorkoutUpload = z.infer<typeof WorkoutUploadSchema>;

export const WorkoutListQuerySchema = DateRangeQuerySchema.extend({
  sport: FitEnumSchema.optional().describe('Only workouts of this sport, e.g. `cycling`.'),
});
export type WorkoutListQuery = z.infer<typeof WorkoutListQuerySchema>;

const StreamChannel = (description: string) =>
  z
    .array(z.number().nullable())
    .nullable()
    .describe(`${description}; \`null\` when the file has none, a \`null\` item where a sample has none.`);

export const WorkoutStreamsSchema = z
  .object({
    workoutId: UuidSchema,
    startTime: TimestampSchema,
    points: z.number().int().min(0).describe('Samples in each array of this answer.'),
    originalPoints: z.number().int().min(0).describe('Samples recorded in the file.'),
    time: z.array(z.number()).describe('Seconds since `startTime`.'),
    heartRate: StreamChannel('Heart rate, bpm'),
    power: StreamChannel('Power, watts'),
    cadence: StreamChannel('Cadence, rpm or steps per minute'),
    speed: StreamChannel('Speed, metres per second'),
    altitude: StreamChannel('Altitude, metres'),
    distance: StreamChannel('Distance from the start, metres'),
    latitude: StreamChannel('Latitude, degrees (FIT semicircles × 180 / 2^31)'),
    longitude: StreamChannel('Longitude, degrees (FIT semicircles × 180 / 2^31)'),
  })
  .meta({ title: 'WorkoutStreams' });
export type WorkoutStreams = z.infer<typeof WorkoutStreamsSchema>;

const WorkoutIdParams = z.object({ id: UuidSchema.describe('The workout id.') });

const fitQueueFull = ProblemSchema.describe(
  'The server holds as many FIT files for decoding as it may (`fit_decode_queue_full`: `PACER_FIT_DECODE_QUEUE_FILES`, `PACER_FIT_DECODE_QUEUE_BYTES`); nothing was read or stored. Retry after `Retry-After` seconds.',
);

const uploadResponses = {
  200: WorkoutSchema.describe('The file was uploaded before; its workout was updated.'),
  201: WorkoutSchema.describe('The workout was created.'),
  ...writeProblemResponses,
  413: ProblemSchema.describe(
    'The file is larger than `PACER_MAX_UPLOAD_BYTES` (`payload_too_large`), or decompresses to more than that (`upload_decompressed_too_large`), or `metadata` is over 64 KiB.',
  ),
  415: ProblemSchema.describe('The body is not `multipart/form-data`.'),
  429: ProblemSchema.describe(
    'Too many requests from this token or address (`rate_limited`: the `RateLimit-*` headers show the window), or another file of this user is still being processed (`fit_decode_in_progress`, refused before the body is read). `Retry-After` says when to retry.',
  ),
  503: fitQueueFull,
} as const;

const GZIP_NOTE =
  'The file may be gzip-compressed (told by its content, not its name): it is decompressed as it arrives, and the upsert key is the SHA-256 of the decompressed file, so the same activity sent raw and compressed is one workout; corrupt gzip data is a 422 `upload_gzip_invalid`.';

export const workoutsContract = c.router({
  uploadActivity: {
    method: 'POST',
    path: '/api/workouts/upload',
    summary: 'Upload an activity file: FIT, TCX or GPX',
    description: `The format is told by the content, never by the file name: FIT by its ".FIT" header, TCX and GPX by the XML root element. ${GZIP_NOTE} Upsert keyed on the SHA-256 of the file, as \`upload-fit\`: 201 creates the workout, the same file again answers the same workout (200) with \`name\` and \`metadata\` updated. A GPX file's distance is measured along its track points (haversine on a sphere of radius 6,371,008.8 m) and its moving time counts the intervals between points covered at 0.5 m/s or faster. A damaged FIT file (cut off, or with bytes that cannot be read) is stored from the records it holds, with \`truncated: true\`. One file per user is processed at a time.`,
    contentType: 'multipart/form-data',
    body: WorkoutUploadSchema,
    headers: IdempotencyHeadersSchema,
    responses: {
      ...uploadResponses,
      422: ProblemSchema.describe(
        'The file is not an activity we can read, and nothing is stored: an empty file (`activity_file_empty`); neither FIT, TCX nor GPX (`activity_format_unknown`); malformed XML or a DOCTYPE (`activity_xml_malformed`); a GPX file without a track, e.g. a route (`gpx_no_track`), or whose track points have no times (`gpx_no_times`); a TCX file without an activity or without timed track points (`tcx_no_activity`); a FIT file that is not one (`fit_not_fit_file`), whose header fails its CRC (`fit_corrupt_header`), of another type: settings, monitoring, weight scale, workout, … (`fit_not_activity`), with no session and no timed record (`fit_no_activity`), or with data that cannot be read into messages within bounds (`fit_unreadable`); a file that runs the decoder out of memory (`unprocessable`; `detail` carries the reason); more records or track points than `PACER_FIT_MAX_RECORDS` (`fit_too_many_records`, `activity_too_many_records`); longer to read than `PACER_FIT_DECODE_TIMEOUT_MS` (`fit_decode_timeout`); corrupt gzip data (`upload_gzip_invalid`). Or the `Idempotency-Key` was already used with a different request (`idempotency_key_reused`).',
      ),
    },
    metadata: requireScopes('workout:write'),
    strictStatusCodes: true,
  },
  uploadFit: {
    method: 'POST',
    path: '/api/workouts/upload-fit',
    summary: 'Upload a FIT activity file',
    description: `Upsert keyed on the SHA-256 of the file: the first upload creates the workout (201); the same bytes again update \`name\` and \`metadata\` and answer the same workout (200). Any activity FIT file is read: compressed timestamp headers, chained files, a wrong file CRC; a damaged file (cut off, or with bytes that cannot be read) is stored from the records it holds, with \`truncated: true\`. A file that is not an activity is refused with 422 and a code saying why, and nothing is stored. ${GZIP_NOTE} For TCX and GPX use \`POST /api/workouts/upload\`. One file per user is processed at a time: send the next one when the previous answer has arrived.`,
    contentType: 'multipart/form-data',
    body: WorkoutUploadSchema,
    headers: IdempotencyHeadersSchema,
    responses: {
      ...uploadResponses,
      422: ProblemSchema.describe(
        'The file is not a FIT activity, and nothing is stored: ' +
          'a FIT file that is not one (`fit_not_fit_file`), whose header fails its CRC (`fit_corrupt_header`), of another type: settings, monitoring, weight scale, workout, … (`fit_not_activity`), with no session and no timed record (`fit_no_activity`), or with data that cannot be read into messages within bounds (`fit_unreadable`); a file that runs the decoder out of memory (`unprocessable`; `detail` carries the reason)' +
          '; a TCX or GPX file is not FIT either (`fit_not_fit_file`: send it to `POST /api/workouts/upload`). Or it holds more data messages than `PACER_FIT_MAX_RECORDS` (`fit_too_many_records`), took longer to read than `PACER_FIT_DECODE_TIMEOUT_MS` (`fit_decode_timeout`), or is corrupt gzip data (`upload_gzip_invalid`); nothing is stored. Or the `Idempotency-Key` was already used with a different request (`idempotency_key_reused`).',
      ),
    },
    metadata: requireScopes('workout:write'),
    strictStatusCodes: true,
  },
  listWorkouts: {
    method: 'GET',
    path: '/api/workouts',
    summary: 'List workouts in a date range, newest first',
    query: WorkoutListQuerySchema,
    responses: {
      200: pageOf(WorkoutSchema).meta({ title: 'WorkoutPage' }),
      ...problemResponses,
    },
    metadata: requireScopes('workout:read'),
    strictStatusCodes: true,
  },
  getWorkout: {
    method: 'GET',
    path: '/api/workouts/:id',
    summary: 'Read one workout',
    pathParams: WorkoutIdParams,
    responses: {
      200: WorkoutSchema,
      ...problemResponses,
      ...notFoundResponses,
    },
    metadata: requireScopes('workout:read'),
    strictStatusCodes: true,
  },
  getWorkoutFile: {
    method: 'GET',
    path: '/api/workouts/:id/file',
    summary: 'Download the original activity file',
    description:
      'The bytes exactly as uploaded (decompressed when they were sent gzip-compressed), as `application/vnd.ant.fit` whatever the format (`file.format` of the workout says which it is).',
    pathParams: WorkoutIdParams,
    responses: {
      200: c.otherResponse({
        contentType: FIT_MEDIA_TYPE,
        body: z.custom<Blob>().meta({ type: 'string', format: 'binary' }),
      }),
      ...problemResponses,
      ...notFoundResponses,
    },
    metadata: requireScopes('workout:read'),
    strictStatusCodes: true,
  },
  getWorkoutStreams: {
    method: 'GET',
    path: '/api/workouts/:id/streams',
    summary: 'Read the time series of a workout',
    description:
      'One array per channel, index-aligned with `time`. With `maxPoints`, the samples are cut into at most that many runs of consecutive samples: heart rate, power, cadence, speed and altitude are the mean of each run; time, distance and position are those of its first sample.',
    pathParams: WorkoutIdParams,
    query: z.strictObject({
      maxPoints: z.coerce
        .number()
        .int()
        .min(STREAM_POINTS_MIN)
        .max(STREAM_POINTS_MAX)
        .optional()
        .describe('Down-sample to at most this many points.'),
    }),
    responses: {
      200: WorkoutStreamsSchema,
      ...problemResponses,
      ...notFoundResponses,
      422: ProblemSchema.describe(
        'The first read decodes the stored file (FIT, TCX or GPX), within the bounds of an upload: more data messages or track points than `PACER_FIT_MAX_RECORDS` (`fit_too_many_records`, `activity_too_many_records`), or longer than `PACER_FIT_DECODE_TIMEOUT_MS` (`fit_decode_timeout`).',
      ),
      429: ProblemSchema.describe(
        'Too many requests from this token or address (`rate_limited`), or the first read would decode the file while another file of this user is being processed (`fit_decode_in_progress`). `Retry-After` says when to retry.',
      ),
      503: fitQueueFull,
    },
    metadata: requireScopes('workout:read'),
    strictStatusCodes: true,
  },
  deleteWorkout: {
    method: 'DELETE',
    path: '/api/workouts/:id',
    summary: 'Delete a workout and its file',
    pathParams: WorkoutIdParams,
    headers: IdempotencyHeadersSchema,
    responses: {
      204: c.noBody(),
      ...writeProblemResponses,
      ...notFoundResponses,
    },
    metadata: requireScopes('workout:write'),
    strictStatusCodes: true,
  },
});

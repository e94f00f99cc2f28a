import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Decoder, Stream } from '@garmin/fitsdk';
import {
  createPacerClient,
  FIT_MEDIA_TYPE,
  uploadFit,
  type Problem,
  type Workout,
  type WorkoutStreams,
} from '@pacer/client-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { User } from '../../server/src/db/tables.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import {
  buildFitActivity,
  notFit,
  oneHourRide,
  rideSamples,
  roundTripDegrees,
  runWithPositions,
  tenHourRide,
  toSemicircles,
  truncated,
  withBadCrc,
  type FitFixture,
  type FitFixtureOptions,
} from '../support/fit-fixtures.ts';
import { asProblem, call, type JsonResponse } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { sharedFitDecoderPool } from '../../server/src/modules/workouts/fit-decoder.pool.ts';

// Uploads here outnumber the default upload rate limit; rate limits have their own tests.
const NO_UPLOAD_LIMIT = { PACER_RATE_LIMIT_UPLOADS_PER_MINUTE: '0' };
const FTP_WATTS = 250;

let server: TestServer;
let athlete: User;
let token: string;
let readToken: string;
let writeOnlyToken: string;
let ride: FitFixture;
let run: FitFixture;

beforeAll(async () => {
  server = await startTestServer(NO_UPLOAD_LIMIT);
  athlete = await makeUser(server.db, { timeZone: 'America/New_York' });
  await server.db.updateTable('users').set({ ftpWatts: FTP_WATTS }).where('id', '=', athlete.id).execute();
  token = (await mintToken(server.db, athlete, { scopes: ['workout:read', 'workout:write'] })).token;
  readToken = (await mintToken(server.db, athlete, { scopes: ['workout:read'] })).token;
  writeOnlyToken = (await mintToken(server.db, athlete, { scopes: ['workout:write'] })).token;
  ride = oneHourRide();
  run = runWithPositions();
});
afterAll(async () => {
  await server.stop();
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

interface UploadFields {
  readonly fileName?: string;
  readonly name?: string;
  /** Sent verbatim as the `metadata` part. */
  readonly metadata?: string;
  /** Extra parts, e.g. unknown fields. */
  readonly extra?: Record<string, string>;
}

/** A plain multipart upload, as a browser form or curl -F sends it. */
async function upload<T = Workout>(
  bytes: Uint8Array,
  fields: UploadFields = {},
  options: { token?: string; url?: string } = {},
): Promise<JsonResponse<T>> {
  const form = new FormData();
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), fields.fileName ?? 'activity.fit');
  if (fields.name !== undefined) form.append('name', fields.name);
  if (fields.metadata !== undefined) form.append('metadata', fields.metadata);
  for (const [key, value] of Object.entries(fields.extra ?? {})) form.append(key, value);
  const res = await fetch(`${options.url ?? server.url}/api/workouts/upload-fit`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.token ?? token}` },
    body: form,
  });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, headers: res.headers, body: (type.includes('json') ? JSON.parse(text) : text) as T };
}

async function uploaded(bytes: Uint8Array, fields: UploadFields = {}): Promise<Workout> {
  const res = await upload(bytes, fields);
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

async function countStored(userId: string): Promise<{ workouts: number; files: number; streams: number }> {
  const count = async (table: 'workouts' | 'workoutFiles' | 'workoutStreams') =>
    Number(
      (
        await server.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('userId', '=', userId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    workouts: await count('workouts'),
    files: await count('workoutFiles'),
    streams: await count('workoutStreams'),
  };
}

/** A short ride (10 min) with its own bytes: start time and serial make each one distinct. */
function shortRide(startTime: string, overrides: Partial<FitFixtureOptions> = {}) {
  return buildFitActivity({
    startTime: new Date(startTime),
    sport: 'cycling',
    subSport: 'road',
    samples: rideSamples(600),
    ...overrides,
  });
}

describe('POST /api/workouts/upload-fit', () => {
  let rideWorkout: Workout;

  it('creates a workout from a 1-hour ride with 201 and the values encoded in the file', async () => {
    const res = await upload(ride.bytes, {
      fileName: 'Tempo blocks.fit',
      name: 'Tempo blocks',
      metadata: JSON.stringify({ appVersion: '4.2.0', deviceId: 'edge-77' }),
    });
    expect(res.status).toBe(201);
    rideWorkout = res.body;
    const { expected } = ride;
    expect(rideWorkout).toMatchObject({
      name: 'Tempo blocks',
      metadata: { appVersion: '4.2.0', deviceId: 'edge-77' },
      sport: 'cycling',
      subSport: 'road',
      startTime: expected.startTime,
      // 03:00Z is 22:00 the day before in New York; the file has no local_timestamp.
      localDate: '2026-11-10',
      elapsedSecs: 3600,
      movingSecs: 3600,
      distanceMeters: expected.distanceMeters,
      ascentMeters: expected.ascentMeters,
      avgHr: expected.avgHr,
      maxHr: expected.maxHr,
      avgPower: 200,
      maxPower: expected.maxPower,
      avgCadence: expected.avgCadence,
      calories: 812,
      device: { manufacturer: 'garmin', product: 'edge1040', serial: '3412345678' },
      possibleDuplicateOf: null,
      file: { sha256: sha256(ride.bytes), sizeBytes: ride.bytes.length, fileName: 'Tempo blocks.fit' },
    });
    // Blocks of 300 W and 100 W average 200 W; their normalized power is about 253 W (the
    // fourth-power mean), a little less where the 30 s average ramps between blocks.
    expect(rideWorkout.normalizedPower).toBeCloseTo(expected.normalizedPower as number, 0);
    expect(rideWorkout.normalizedPower).toBeGreaterThan(245);
    expect(rideWorkout.normalizedPower).toBeLessThan(254);
    // One hour at IF = NP / FTP: TSS = IF² × 100.
    const intensity = (rideWorkout.normalizedPower as number) / FTP_WATTS;
    expect(rideWorkout.trainingStress).toBeCloseTo(intensity ** 2 * 100, 0);
    expect(rideWorkout.laps).toHaveLength(3);
    expect(rideWorkout.laps.map((lap) => [lap.index, lap.startTime, lap.elapsedSecs])).toEqual([
      [0, '2026-11-11T03:00:00.000Z', 1200],
      [1, '2026-11-11T03:20:00.000Z', 1200],
      [2, '2026-11-11T03:40:00.000Z', 1200],
    ]);
    const lapDistance = rideWorkout.laps.reduce((sum, lap) => sum + (lap.distanceMeters ?? 0), 0);
    expect(lapDistance).toBeCloseTo(expected.distanceMeters, 1);
    expect(rideWorkout.laps[0]?.normalizedPower).toBeGreaterThan(200);
  });

  it('stores the original file compressed with lz4 where PostgreSQL has it (pglz would store it uncompressed)', async () => {
    const { rows } = await sql<{ lz4: boolean; compression: string | null }>`
      SELECT 'lz4' = ANY (s.enumvals) AS lz4, pg_column_compression(f.bytes) AS compression
      FROM workout_files f, pg_settings s
      WHERE f.workout_id = ${rideWorkout.id} AND s.name = 'default_toast_compression'`.execute(server.db);
    const [row] = rows;
    expect(row?.compression).toBe(row?.lz4 ? 'lz4' : null);
  });

  it('answers the same bytes again with 200, the same workout id, and the new name and metadata', async () => {
    const res = await upload(ride.bytes, { name: 'Renamed', metadata: '{"appVersion":"4.3.0"}' });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(rideWorkout.id);
    expect(res.body).toMatchObject({
      name: 'Renamed',
      metadata: { appVersion: '4.3.0' },
      normalizedPower: rideWorkout.normalizedPower,
    });
    expect((await countStored(athlete.id)).workouts).toBe(1);
  });

  it('keeps the stored name and metadata when a re-upload sends none', async () => {
    const res = await upload(ride.bytes);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: rideWorkout.id, name: 'Renamed', metadata: { appVersion: '4.3.0' } });
  });

  it("derives a run's summary from its records and dates it in the activity's own UTC offset", async () => {
    const res = await upload(run.bytes, { fileName: '2026-11-21-00-30-00.fit' });
    expect(res.status).toBe(201);
    const workout = res.body;
    expect(workout.file.fileName).toBe('2026-11-21-00-30-00.fit');
    const { expected } = run;
    // 23:30Z on the 20th is 00:30 on the 21st at the file's +01:00 (New York would say the 20th).
    expect(workout).toMatchObject({
      // No name sent: the time of day on the activity's own clock (00:30) and the sport.
      name: 'Night run',
      sport: 'running',
      subSport: 'street',
      localDate: '2026-11-21',
      elapsedSecs: 1800,
      movingSecs: 1800,
      maxHr: expected.maxHr,
      avgPower: null,
      maxPower: null,
      normalizedPower: null,
      trainingStress: null,
      calories: null,
      device: { manufacturer: 'garmin', serial: '3999000111' },
    });
    expect(workout.distanceMeters).toBeCloseTo(expected.distanceMeters, 1);
    expect(workout.avgHr).toBeCloseTo(expected.avgHr as number, 1);
    expect(workout.avgCadence).toBeCloseTo(expected.avgCadence as number, 1);
    expect(workout.ascentMeters).toBeCloseTo(expected.ascentMeters, 0);
    expect(workout.laps.map((lap) => Math.round(lap.distanceMeters ?? 0))).toEqual([1977, 1980, 1980]);
  });

  it("names and dates a file without a UTC offset on the profile zone's clock, summer time included", async () => {
    // New York is UTC-4 in July (17:30) and UTC-5 in November (22:30 on the day before).
    const summer = await uploaded(shortRide('2026-07-01T21:30:00Z', { serialNumber: 3003 }).bytes);
    const winter = await uploaded(shortRide('2026-11-09T03:30:00Z', { serialNumber: 3004 }).bytes);
    expect([summer.name, summer.localDate]).toEqual(['Afternoon ride', '2026-07-01']);
    expect([winter.name, winter.localDate]).toEqual(['Night ride', '2026-11-08']);
  });

  it('creates exactly one workout when identical uploads arrive at once at several API processes', async () => {
    // One process decodes one file per user at a time (hostile-uploads.test.ts); processes behind a load
    // balancer each decode one, and the upsert keeps them to one workout.
    const others = await Promise.all(
      Array.from({ length: 3 }, () => startTestServer(NO_UPLOAD_LIMIT, { database: server.database })),
    );
    const fixture = shortRide('2026-11-12T12:00:00Z', { serialNumber: 1001 });
    try {
      const urls = [server.url, ...others.map((other) => other.url)];
      const results = await Promise.all(urls.map((url) => upload(fixture.bytes, { name: 'Race' }, { url })));
      const statuses = results.map((res) => res.status).sort();
      expect(statuses.filter((status) => status === 201)).toHaveLength(1);
      expect(statuses.filter((status) => status === 200)).toHaveLength(3);
      expect(new Set(results.map((res) => res.body.id)).size).toBe(1);
    } finally {
      await Promise.all(others.map((other) => other.stop()));
    }
    const rows = await server.db
      .selectFrom('workouts')
      .select('id')
      .where('userId', '=', athlete.id)
      .where('fileSha256', '=', sha256(fixture.bytes))
      .execute();
    expect(rows).toHaveLength(1);
    const files = await server.db
      .selectFrom('workoutFiles')
      .select('workoutId')
      .where('workoutId', '=', rows[0]?.id as string)
      .execute();
    expect(files).toHaveLength(1);
  });

  it('links the same activity from another source with possibleDuplicateOf', async () => {
    const original = await uploaded(shortRide('2026-11-13T07:00:00Z', { serialNumber: 2002 }).bytes);
    // Same device and start, other bytes (another platform re-exported it with calories).
    const copy = await uploaded(shortRide('2026-11-13T07:00:00Z', { serialNumber: 2002, calories: 150 }).bytes);
    expect(copy.id).not.toBe(original.id);
    expect(copy.possibleDuplicateOf).toBe(original.id);
    const again = await call<Workout>(server.url, 'GET', `/api/workouts/${original.id}`, { token });
    expect(again.body.possibleDuplicateOf).toBe(copy.id);
    const unrelated = await uploaded(shortRide('2026-11-13T07:00:00Z', { serialNumber: 2003 }).bytes);
    expect(unrelated.possibleDuplicateOf).toBeNull();
  });

  it('stores a file with a bad CRC whole: every record is read, nothing is missing', async () => {
    const damaged = withBadCrc(shortRide('2026-11-14T07:00:00Z', { serialNumber: 2004 }).bytes);
    const res = await upload(damaged);
    expect(res.status).toBe(201);
    expect(res.body.truncated).toBe(false);
    expect(res.body.elapsedSecs).toBeGreaterThan(0);
  });

  it('stores a cut-off file from its whole records, flagged truncated', async () => {
    const whole = shortRide('2026-11-15T07:00:00Z', { serialNumber: 2005 });
    const res = await upload(truncated(whole.bytes));
    expect(res.status).toBe(201);
    expect(res.body.truncated).toBe(true);
    // No session survives the cut: the summary comes from the records before it.
    expect(res.body.startTime).toBe('2026-11-15T07:00:00.000Z');
    expect(res.body.elapsedSecs).toBeGreaterThan(0);
    expect(res.body.elapsedSecs).toBeLessThan(whole.samples.length);
  });

  it.each([
    ['a file that is not FIT', () => notFit(), 'not a FIT file'],
    ['an empty file', () => new Uint8Array(0), 'not a FIT file'],
  ])("refuses %s with 422 and the decoder's reason, storing nothing", async (_what, bytes, reason) => {
    const before = await countStored(athlete.id);
    const res = await upload<Problem>(bytes(), { name: 'Broken' });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body.code).toBe('fit_not_fit_file');
    expect(res.body.detail).toContain(reason);
    expect(res.body.errors?.[0]?.path).toBe('file');
    expect(await countStored(athlete.id)).toEqual(before);
  });

  it('refuses a FIT file that is not an activity with 422', async () => {
    const { Encoder, Profile } = await import('@garmin/fitsdk');
    const encoder = new Encoder();
    encoder.onMesg(
      Profile.MesgNum['FILE_ID'] as number,
      {
        type: 'workout',
        manufacturer: 'development',
        product: 1,
        timeCreated: new Date(),
      } as never,
    );
    const res = await upload<Problem>(encoder.close());
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('fit_not_activity');
    expect(res.body.detail).toContain('not an activity');
  });

  it.each([
    ['not JSON', '{"appVersion": '],
    ['a JSON array', '[1, 2]'],
    ['a JSON number', '42'],
  ])('refuses metadata that is %s with 400 naming metadata', async (_what, metadata) => {
    const before = await countStored(athlete.id);
    const res = await upload<Problem>(shortRide('2026-11-14T07:00:00Z').bytes, { metadata });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors?.map((error) => error.path)).toEqual(['metadata']);
    expect(await countStored(athlete.id)).toEqual(before);
  });

  it('refuses a form without a file, and unknown fields, with 400 naming them', async () => {
    const form = new FormData();
    form.append('name', 'No file');
    const noFile = await fetch(`${server.url}/api/workouts/upload-fit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expect(noFile.status).toBe(400);
    expect(asProblem(await noFile.json()).errors?.map((error) => error.path)).toEqual(['file']);
    const unknown = await upload<Problem>(ride.bytes, { extra: { title: 'x', sport: 'run' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors?.map((error) => error.path)).toEqual(['title', 'sport']);
  });

  it('keeps a UTF-8 file name and offers it again for download', async () => {
    const workout = await uploaded(shortRide('2026-11-14T16:00:00Z').bytes, { fileName: 'Zürich – Üetliberg.fit' });
    expect(workout.file.fileName).toBe('Zürich – Üetliberg.fit');
    const res = await fetch(`${server.url}/api/workouts/${workout.id}/file`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="Z_rich _ _etliberg.fit"; filename*=UTF-8''${encodeURIComponent('Zürich – Üetliberg.fit')}`,
    );
    await res.arrayBuffer();
  });

  it('refuses a name over 200 characters with 400 naming name', async () => {
    const res = await upload<Problem>(ride.bytes, { name: 'x'.repeat(201) });
    expect(res.status).toBe(400);
    expect(res.body.errors?.map((error) => error.path)).toEqual(['name']);
  });

  it('refuses a body that is not multipart/form-data with 415', async () => {
    const res = await call(server.url, 'POST', '/api/workouts/upload-fit', { token, body: { name: 'x' } });
    expect(res.status).toBe(415);
    expect(asProblem(res.body).code).toBe('unsupported_media_type');
  });

  it('needs an access token with workout:write', async () => {
    const anonymous = await fetch(`${server.url}/api/workouts/upload-fit`, { method: 'POST' });
    expect(anonymous.status).toBe(401);
    const readOnly = await upload<Problem>(ride.bytes, {}, { token: readToken });
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.code).toBe('insufficient_scope');
    expect(readOnly.headers.get('www-authenticate')).toContain('insufficient_scope');
  });
});

describe('the SDK', () => {
  it('uploads a Buffer with uploadFit(), name and metadata, and answers 201 then 200', async () => {
    const bytes = Buffer.from(shortRide('2026-11-15T06:00:00Z').bytes);
    const pacer = createPacerClient({ baseUrl: server.url, accessToken: token });
    const first = await uploadFit(pacer, {
      file: bytes,
      fileName: 'sdk.fit',
      name: 'From the SDK',
      metadata: { app: 'sdk' },
    });
    expect(first.status).toBe(201);
    if (first.status !== 201) throw new Error('unreachable');
    expect(first.body).toMatchObject({ name: 'From the SDK', metadata: { app: 'sdk' }, file: { fileName: 'sdk.fit' } });
    const second = await uploadFit(
      { baseUrl: server.url, accessToken: token },
      { file: new Blob([bytes]), name: 'Again' },
    );
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ id: first.body.id, name: 'Again' });
  });

  it('uploads from a file path (Node), naming the part after the file', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pacer-sdk-path-'));
    try {
      const file = path.join(dir, 'morning-ride.fit');
      await writeFile(file, shortRide('2026-11-15T07:00:00Z').bytes);
      const res = await uploadFit({ baseUrl: server.url, accessToken: token }, { file, name: 'From a path' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'From a path', file: { fileName: 'morning-ride.fit' } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("takes the generated method's JSON-encoded text parts as plain text", async () => {
    const bytes = shortRide('2026-11-15T08:00:00Z').bytes as Uint8Array<ArrayBuffer>;
    const pacer = createPacerClient({ baseUrl: server.url, accessToken: token });
    const res = await pacer.workouts.uploadFit({
      body: { file: new File([bytes], 'generated.fit'), name: 'Generated', metadata: { via: 'ts-rest' } },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Generated', metadata: { via: 'ts-rest' } });
  });
});

describe('upload size limit', () => {
  const LIMIT = 32 * 1024;
  let small: TestServer;
  let smallUser: User;
  let smallToken: string;

  beforeAll(async () => {
    small = await startTestServer({ ...NO_UPLOAD_LIMIT, PACER_MAX_UPLOAD_BYTES: String(LIMIT) });
    smallUser = await makeUser(small.db);
    smallToken = (await mintToken(small.db, smallUser, { scopes: ['workout:read', 'workout:write'] })).token;
  });
  afterAll(async () => {
    await small.stop();
  });

  async function storedOnSmall(): Promise<number> {
    const rows = await small.db.selectFrom('workouts').select('id').where('userId', '=', smallUser.id).execute();
    return rows.length;
  }

  it('refuses a file over PACER_MAX_UPLOAD_BYTES with 413 and stores nothing', async () => {
    expect(ride.bytes.length).toBeGreaterThan(LIMIT);
    const res = await upload<Problem>(ride.bytes, {}, { token: smallToken, url: small.url });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
    expect(res.body.errors?.[0]?.path).toBe('file');
    expect(await storedOnSmall()).toBe(0);
  });

  it('refuses an oversized file sent without Content-Length (chunked) with 413 while streaming', async () => {
    const boundary = 'pacer-test-boundary';
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.fit"\r\nContent-Type: ${FIT_MEDIA_TYPE}\r\n\r\n`,
    );
    const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
    const parts = [head, ride.bytes.slice(0, 20_000), ride.bytes.slice(20_000), tail];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = parts.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const res = await fetch(`${small.url}/api/workouts/upload-fit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${smallToken}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(asProblem(await res.json()).errors?.[0]?.path).toBe('file');
    expect(await storedOnSmall()).toBe(0);
  });

  it('accepts a file under the limit on the same server', async () => {
    const fixture = buildFitActivity({
      startTime: new Date('2026-11-16T06:00:00Z'),
      sport: 'cycling',
      subSport: 'indoorCycling',
      samples: rideSamples(300),
    });
    expect(fixture.bytes.length).toBeLessThan(LIMIT);
    const res = await upload(fixture.bytes, {}, { token: smallToken, url: small.url });
    expect(res.status).toBe(201);
    expect(await storedOnSmall()).toBe(1);
  });
});

describe('a 10-hour ride', () => {
  it('decodes 36 000 one-second records in the worker pool while the server keeps answering', async () => {
    const long = tenHourRide();
    const megabytes = long.bytes.length / 1e6;

    // Plain @garmin/fitsdk on the same bytes, in this process (one warm-up run first).
    new Decoder(Stream.fromByteArray(long.bytes)).read();
    const decodeStart = performance.now();
    const { errors } = new Decoder(Stream.fromByteArray(long.bytes)).read();
    const decodeSecs = (performance.now() - decodeStart) / 1000;
    expect(errors).toEqual([]);

    // While the upload decodes, the event loop keeps serving other requests.
    let uploading = true;
    const latencies: number[] = [];
    const probe = (async () => {
      while (uploading) {
        const started = performance.now();
        await fetch(`${server.url}/healthz`);
        latencies.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const uploadStart = performance.now();
    const res = await upload(long.bytes, { fileName: 'ten-hours.fit' });
    const uploadSecs = (performance.now() - uploadStart) / 1000;
    uploading = false;
    await probe;

    expect(res.status).toBe(201);
    const workout = res.body;
    expect(workout).toMatchObject({
      elapsedSecs: 36_000,
      movingSecs: 36_000,
      distanceMeters: long.expected.distanceMeters,
      avgPower: 200,
      maxHr: long.expected.maxHr,
      calories: 7400,
      device: { serial: '3412000010' },
    });
    expect(workout.laps).toHaveLength(10);
    expect(workout.normalizedPower).toBeCloseTo(long.expected.normalizedPower as number, 0);
    expect(workout.trainingStress).toBeCloseTo(10 * ((workout.normalizedPower as number) / FTP_WATTS) ** 2 * 100, -1);

    const streams = await call<WorkoutStreams>(server.url, 'GET', `/api/workouts/${workout.id}/streams`, { token });
    expect(streams.body.points).toBe(36_000);
    expect(streams.body.latitude?.[1000]).toBe(toSemicircles(long.samples[1000]?.lat as number) * (180 / 2 ** 31));

    latencies.sort((a, b) => a - b);
    const worst = latencies.at(-1) ?? 0;
    console.log(
      [
        `10-hour FIT file: ${long.bytes.length} bytes, 36 000 records`,
        `  plain @garmin/fitsdk decode: ${(decodeSecs * 1000).toFixed(0)} ms = ${(megabytes / decodeSecs).toFixed(2)} MB/s`,
        `  HTTP upload end to end (multipart + SHA-256 + worker decode + store): ${(uploadSecs * 1000).toFixed(0)} ms = ${(megabytes / uploadSecs).toFixed(2)} MB/s`,
        `  /healthz during the upload: ${latencies.length} requests, worst ${worst.toFixed(1)} ms`,
      ].join('\n'),
    );
  });
});

describe('decoding beyond PACER_FIT_DECODE_WORKERS', () => {
  let oneWorker: TestServer;
  beforeAll(async () => {
    oneWorker = await startTestServer({ ...NO_UPLOAD_LIMIT, PACER_FIT_DECODE_WORKERS: '1' });
  });
  afterAll(async () => {
    await oneWorker.stop();
  });

  async function downloaded(url: string, id: string, bearer: string): Promise<Buffer> {
    const res = await fetch(`${url}/api/workouts/${id}/file`, { headers: { authorization: `Bearer ${bearer}` } });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  }

  it("queues three athletes' concurrent 10-hour uploads for its one worker and answers each 201 with its own file", async () => {
    const pool = sharedFitDecoderPool(oneWorker.runtime.config.fitDecoding.workers);
    const athletes = await Promise.all(
      [1, 2, 3].map(async (n) => {
        const user = await makeUser(oneWorker.db);
        const bearer = (await mintToken(oneWorker.db, user, { scopes: ['workout:read', 'workout:write'] })).token;
        return { bearer, fixture: tenHourRide({ serialNumber: 3_800_000_000 + n }) };
      }),
    );
    let busiest = { workers: 0, waiting: 0 };
    let sending = true;
    const watch = (async () => {
      while (sending) {
        busiest = {
          workers: Math.max(busiest.workers, pool.workers),
          waiting: Math.max(busiest.waiting, pool.waiting),
        };
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    })();
    const answers = await Promise.all(
      athletes.map(({ bearer, fixture }) =>
        upload(fixture.bytes, { fileName: 'long.fit' }, { token: bearer, url: oneWorker.url }),
      ),
    );
    sending = false;
    await watch;

    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201]);
    // One file decoded at a time; the others waited for the worker instead of starting their own.
    expect(busiest.workers).toBe(1);
    expect(busiest.waiting).toBeGreaterThanOrEqual(1);
    for (const [index, { bearer, fixture }] of athletes.entries()) {
      const workout = answers[index]?.body as Workout;
      expect(workout.device.serial).toBe(String(3_800_000_000 + index + 1));
      expect(workout.elapsedSecs).toBe(36_000);
      // The upload's buffer is freed after the answer: what was stored is the whole file, byte for byte.
      expect((await downloaded(oneWorker.url, workout.id, bearer)).equals(Buffer.from(fixture.bytes))).toBe(true);
    }
  });

  it('stores a file sent without Content-Length (chunked), larger than the first buffer it is read into, byte for byte', async () => {
    const user = await makeUser(oneWorker.db);
    const bearer = (await mintToken(oneWorker.db, user, { scopes: ['workout:read', 'workout:write'] })).token;
    const fixture = tenHourRide({ serialNumber: 3_800_000_010 });
    const boundary = 'pacer-chunked-boundary';
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="chunked.fit"\r\nContent-Type: ${FIT_MEDIA_TYPE}\r\n\r\n`,
    );
    const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
    // 1 MB in 64 KiB pieces: the buffer, 256 KiB at first without a declared length, grows twice.
    const pieces = [head];
    for (let at = 0; at < fixture.bytes.length; at += 65_536) pieces.push(fixture.bytes.slice(at, at + 65_536));
    pieces.push(tail);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = pieces.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const res = await fetch(`${oneWorker.url}/api/workouts/upload-fit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(201);
    const workout = (await res.json()) as Workout;
    expect(workout.file).toEqual({
      sha256: sha256(fixture.bytes),
      sizeBytes: fixture.bytes.length,
      fileName: 'chunked.fit',
      format: 'fit',
    });
    expect((await downloaded(oneWorker.url, workout.id, bearer)).equals(Buffer.from(fixture.bytes))).toBe(true);
  });
});

describe('GET /api/workouts/{id}, /file and /streams', () => {
  let runWorkout: Workout;

  beforeAll(async () => {
    runWorkout = await uploaded(run.bytes);
  });

  it('reads a workout by id with a workout:read token', async () => {
    const res = await call<Workout>(server.url, 'GET', `/api/workouts/${runWorkout.id}`, { token: readToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(runWorkout);
  });

  it('needs workout:read to read', async () => {
    const res = await call(server.url, 'GET', `/api/workouts/${runWorkout.id}`, { token: writeOnlyToken });
    expect(res.status).toBe(403);
    expect(asProblem(res.body).code).toBe('insufficient_scope');
  });

  it('downloads the original bytes, byte for byte, as application/vnd.ant.fit', async () => {
    const res = await fetch(`${server.url}/api/workouts/${runWorkout.id}/file`, {
      headers: { authorization: `Bearer ${readToken}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(FIT_MEDIA_TYPE);
    expect(res.headers.get('content-disposition')).toContain(`filename="${runWorkout.file.fileName as string}"`);
    expect(res.headers.get('etag')).toBe(`"${sha256(run.bytes)}"`);
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(run.bytes))).toBe(true);
  });

  it('serves the file to the SDK as a Blob', async () => {
    const pacer = createPacerClient({ baseUrl: server.url, accessToken: readToken });
    const res = await pacer.workouts.getWorkoutFile({ params: { id: runWorkout.id } });
    if (res.status !== 200) throw new Error(`status ${String(res.status)}`);
    expect(sha256(new Uint8Array(await res.body.arrayBuffer()))).toBe(sha256(run.bytes));
  });

  it('serves every channel as index-aligned arrays with positions in degrees', async () => {
    const res = await call<WorkoutStreams>(server.url, 'GET', `/api/workouts/${runWorkout.id}/streams`, { token });
    expect(res.status).toBe(200);
    const streams = res.body;
    expect(streams).toMatchObject({
      workoutId: runWorkout.id,
      startTime: run.expected.startTime,
      points: 1800,
      originalPoints: 1800,
    });
    expect(streams.time.slice(0, 3)).toEqual([0, 1, 2]);
    expect(streams.power).toBeNull();
    for (const channel of ['heartRate', 'cadence', 'speed', 'altitude', 'distance', 'latitude', 'longitude'] as const) {
      expect(streams[channel]).toHaveLength(1800);
    }
    for (const i of [0, 450, 1799]) {
      const sample = run.samples[i];
      if (!sample) throw new Error('no sample');
      expect(streams.heartRate?.[i]).toBe(sample.heartRate);
      expect(streams.speed?.[i]).toBeCloseTo(sample.speed as number, 3);
      expect(streams.altitude?.[i]).toBeCloseTo(sample.altitude as number, 1);
      // Degrees = semicircles × 180 / 2^31, exactly, and within a centimetre of the encoded position.
      expect(streams.latitude?.[i]).toBe(roundTripDegrees(sample.lat as number));
      expect(streams.longitude?.[i]).toBe(roundTripDegrees(sample.lng as number));
      expect(Math.abs((streams.latitude?.[i] as number) - (sample.lat as number))).toBeLessThan(1e-7);
    }
  });

  it('down-samples streams to maxPoints, averaging each run of samples', async () => {
    const rideId = (await uploaded(ride.bytes)).id;
    const res = await call<WorkoutStreams>(server.url, 'GET', `/api/workouts/${rideId}/streams?maxPoints=60`, {
      token,
    });
    expect(res.status).toBe(200);
    const streams = res.body;
    expect(streams).toMatchObject({ points: 60, originalPoints: 3600 });
    expect(streams.time).toHaveLength(60);
    expect(streams.time.slice(0, 3)).toEqual([0, 60, 120]);
    const power = streams.power as number[];
    expect(power).toHaveLength(60);
    const expectedFirst = ride.samples.slice(0, 60).reduce((sum, sample) => sum + (sample.power as number), 0) / 60;
    expect(power[0]).toBeCloseTo(expectedFirst, 2);
    // Means of equal runs keep the average power.
    expect(power.reduce((sum, value) => sum + value, 0) / power.length).toBeCloseTo(200, 0);
    expect(streams.latitude).toBeNull();
    const unchanged = await call<WorkoutStreams>(server.url, 'GET', `/api/workouts/${rideId}/streams?maxPoints=5000`, {
      token,
    });
    expect(unchanged.body.points).toBe(3600);
  });

  it('refuses maxPoints outside 2..100000 with 400', async () => {
    for (const maxPoints of ['1', '100001', 'many']) {
      const res = await call(server.url, 'GET', `/api/workouts/${runWorkout.id}/streams?maxPoints=${maxPoints}`, {
        token,
      });
      expect(res.status).toBe(400);
      expect(asProblem(res.body).errors?.[0]?.path).toBe('maxPoints');
    }
  });

  it("answers 404, never 403, for another user's workout on every route", async () => {
    const other = await makeUser(server.db);
    const otherToken = (await mintToken(server.db, other, { scopes: ['workout:read', 'workout:write'] })).token;
    for (const [method, path] of [
      ['GET', `/api/workouts/${runWorkout.id}`],
      ['GET', `/api/workouts/${runWorkout.id}/file`],
      ['GET', `/api/workouts/${runWorkout.id}/streams`],
      ['DELETE', `/api/workouts/${runWorkout.id}`],
    ] as const) {
      const res = await call(server.url, method, path, { token: otherToken });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(asProblem(res.body).code).toBe('not_found');
    }
    expect((await call(server.url, 'GET', `/api/workouts/${runWorkout.id}`, { token })).status).toBe(200);
  });

  it('answers 404 for an unknown id and 400 for an id that is not a UUID', async () => {
    const unknown = await call(server.url, 'GET', '/api/workouts/00000000-0000-4000-8000-000000000000', { token });
    expect(unknown.status).toBe(404);
    const malformed = await call(server.url, 'GET', '/api/workouts/not-a-uuid', { token });
    expect(malformed.status).toBe(400);
    expect(asProblem(malformed.body).errors?.[0]?.path).toBe('id');
  });
});

describe('DELETE /api/workouts/{id}', () => {
  it('deletes the workout with its file and streams (204), after which it is a 404 and the bytes upload anew', async () => {
    const fixture = shortRide('2026-11-17T06:00:00Z', { serialNumber: 3003 });
    const workout = await uploaded(fixture.bytes);
    expect((await call(server.url, 'DELETE', `/api/workouts/${workout.id}`, { token: readToken })).status).toBe(403);
    const res = await call(server.url, 'DELETE', `/api/workouts/${workout.id}`, { token });
    expect(res.status).toBe(204);
    expect(res.body).toBe('');
    expect((await call(server.url, 'GET', `/api/workouts/${workout.id}`, { token })).status).toBe(404);
    expect((await call(server.url, 'GET', `/api/workouts/${workout.id}/file`, { token })).status).toBe(404);
    expect((await call(server.url, 'DELETE', `/api/workouts/${workout.id}`, { token })).status).toBe(404);
    const leftovers = await server.db
      .selectFrom('workoutFiles')
      .select('workoutId')
      .where('workoutId', '=', workout.id)
      .execute();
    expect(leftovers).toEqual([]);
    const again = await upload(fixture.bytes);
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(workout.id);
  });
});

describe('GET /api/workouts', () => {
  let lister: User;
  let listToken: string;
  const ids = new Map<string, string>();

  beforeAll(async () => {
    lister = await makeUser(server.db, { timeZone: 'Europe/Berlin' });
    listToken = (await mintToken(server.db, lister, { scopes: ['workout:read', 'workout:write'] })).token;
    const sessions: [string, string, string][] = [
      ['ride-1', '2026-09-01T06:00:00Z', 'cycling'],
      ['run-1', '2026-09-01T17:00:00Z', 'running'],
      ['ride-2', '2026-09-02T06:00:00Z', 'cycling'],
      ['ride-3', '2026-09-03T06:00:00Z', 'cycling'],
      ['run-2', '2026-09-04T06:00:00Z', 'running'],
      ['ride-4', '2026-09-05T06:00:00Z', 'cycling'],
      // 23:30Z on the 5th is already the 6th in Berlin.
      ['ride-5', '2026-09-05T23:30:00Z', 'cycling'],
    ];
    for (const [name, startTime, sport] of sessions) {
      const fixture = shortRide(startTime, { sport, subSport: sport === 'running' ? 'street' : 'road' });
      const res = await upload(fixture.bytes, { name }, { token: listToken });
      if (res.status !== 201) throw new Error(`upload ${name}: ${res.status}`);
      ids.set(name, res.body.id);
    }
  });

  async function list(query: string) {
    return call<{ items: Workout[]; nextCursor: string | null }>(server.url, 'GET', `/api/workouts?${query}`, {
      token: listToken,
    });
  }

  it('lists a local-date range newest first, paging with a cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(`from=2026-09-01&to=2026-09-06&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((item) => item.name));
      cursor = res.body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(seen).toEqual(['ride-5', 'ride-4', 'run-2', 'ride-3', 'ride-2', 'run-1', 'ride-1']);
    expect(pages).toBe(3);
  });

  it('filters by local date and by sport', async () => {
    const sixth = await list('from=2026-09-06&to=2026-09-06');
    expect(sixth.body.items.map((item) => [item.name, item.localDate])).toEqual([['ride-5', '2026-09-06']]);
    const runs = await list('from=2026-09-01&to=2026-09-30&sport=running');
    expect(runs.body.items.map((item) => item.name)).toEqual(['run-2', 'run-1']);
    const firstDay = await list('from=2026-09-01&to=2026-09-01');
    expect(firstDay.body.items.map((item) => item.name)).toEqual(['run-1', 'ride-1']);
  });

  it('works through the SDK with typed query parameters', async () => {
    const pacer = createPacerClient({ baseUrl: server.url, accessToken: listToken });
    const res = await pacer.workouts.listWorkouts({
      query: { from: '2026-09-02', to: '2026-09-03', sport: 'cycling' },
    });
    expect(res.status).toBe(200);
    if (res.status !== 200) throw new Error('unreachable');
    expect(res.body.items.map((item) => item.id)).toEqual([ids.get('ride-3'), ids.get('ride-2')]);
  });

  it("never lists another user's workouts", async () => {
    const res = await call<{ items: Workout[] }>(server.url, 'GET', '/api/workouts?from=2026-09-01&to=2026-09-30', {
      token,
    });
    expect(res.body.items.filter((item) => [...ids.values()].includes(item.id))).toEqual([]);
  });

  it('refuses a range over 366 days, a forged cursor and unknown parameters with 400', async () => {
    const tooLong = await list('from=2025-01-01&to=2026-06-01');
    expect(tooLong.status).toBe(400);
    expect(asProblem(tooLong.body).code).toBe('date_range_too_large');
    const forged = await list('cursor=not-ours');
    expect(forged.status).toBe(400);
    expect(asProblem(forged.body).code).toBe('invalid_cursor');
    const unknown = await list('kind=ride');
    expect(unknown.status).toBe(400);
    expect(asProblem(unknown.body).errors?.[0]?.path).toBe('kind');
  });
});

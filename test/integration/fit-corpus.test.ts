/**
 * The real-device FIT corpus (test/fixtures/corpus/fit, from python-fitparse;
 * its README says what each file is), uploaded file by file through
 * `POST /api/workouts/upload-fit` of a real server, as athletes would send
 * them (issue 24):
 * - every activity is stored (201, then 200 with the same id), its summary
 *   matching the file's own session within 1 %, read here with the Garmin
 *   decoder; a cut-off or partly unreadable one with `truncated: true`;
 * - every other file is refused with 422, a code naming why, and nothing
 *   stored;
 * - no summary says 0 for a sensor the file lacks, moving time is the timer
 *   time where there is no speed stream, and training stress is never
 *   power-based without power.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CrcCalculator, Decoder, Stream } from '@garmin/fitsdk';
import type { Problem, Workout } from '@pacer/client-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { reframeFit } from '../../server/src/modules/workouts/fit-reframe.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { waitForRecompute } from '../support/recompute.ts';
import { call, type JsonResponse } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const CORPUS = fileURLToPath(new URL('../fixtures/corpus/fit/', import.meta.url));
const FTP_WATTS = 250;

type Expected =
  /** Stored; `truncated` as the API should flag it. */
  | { readonly stored: true; readonly truncated: boolean }
  /** Refused with 422 and this code. */
  | { readonly stored: false; readonly code: string };

const whole: Expected = { stored: true, truncated: false };
const damaged: Expected = { stored: true, truncated: true };
const notActivity: Expected = { stored: false, code: 'fit_not_activity' };

/** Every file of the corpus and what the API answers it; a file added to the corpus fails the test until it is here. */
const EXPECTED: Record<string, Expected> = {
  // Activities (corpus README).
  '2013-02-06-12-11-14.fit': whole,
  '2015-10-13-08-43-15.fit': whole,
  '20170518-191602-1740899583.fit': whole,
  '2019-02-17-062644-ELEMNT-297E-195-0.fit': whole,
  'Activity.fit': whole,
  'Edge810-Vector-2013-08-16-15-35-10.fit': whole,
  'activity-large-fenxi2-multisport.fit': whole,
  // An activity with a settings file chained after it.
  'activity-settings.fit': whole,
  'activity-small-fenix2-run.fit': whole,
  'compressed-speed-distance.fit': whole,
  'coros-pace-2-cycling-misaligned-fields.fit': whole,
  'developer-types-sample.fit': whole,
  'elemnt-bolt-no-application-id-inside-developer-data-id.fit': whole,
  'event_timestamp.fit': whole,
  'garmin-edge-500-activity.fit': whole,
  'garmin-edge-820-bike.fit': whole,
  'garmin-fenix-5-bike.fit': whole,
  'garmin-fenix-5-run.fit': whole,
  'garmin-fenix-5-walk.fit': whole,
  'null_compressed_speed_dist.fit': whole,
  'sample-activity-indoor-trainer.fit': whole,
  'sample-activity.fit': whole,
  'sample_mulitple_header.fit': whole,
  // 19 bytes lost (CR before LF): the records around them cannot be read.
  'strava-android-app-201.10-b1218918.fit': damaged,
  // Cut off mid-record: no session, no end, no CRC.
  'nick.fit': damaged,
  // An old device's raw download: a run with compressed timestamp headers, times relative to the device.
  'antfs-dump.63.fit': whole,
  // Broken, but the activity in them is whole or nearly: kept (README, "FIT files").
  'activity-unexpected-eof.fit': damaged,
  'activity-settings-nodata.fit': damaged,
  'activity-settings-corruptheader.fit': damaged,
  'activity-filecrc.fit': whole,
  'activity-activity-filecrc.fit': whole,
  // Not activities.
  'DeveloperData.fit': { stored: false, code: 'fit_no_activity' },
  'MonitoringFile.fit': notActivity,
  'Settings.fit': notActivity,
  'Settings2.fit': notActivity,
  'nametest.FIT': notActivity,
  'WeightScaleMultiUser.fit': notActivity,
  'WeightScaleSingleUser.fit': notActivity,
  'WorkoutCustomTargetValues.fit': notActivity,
  'WorkoutIndividualSteps.fit': notActivity,
  'WorkoutRepeatGreaterThanStep.fit': notActivity,
  'WorkoutRepeatSteps.fit': notActivity,
};

const corpusFiles = readdirSync(CORPUS)
  .filter((name) => /\.fit$/i.test(name))
  .sort();
const read = (name: string) => new Uint8Array(readFileSync(path.join(CORPUS, name)));

type Message = Record<string, unknown>;
type Messages = Record<string, Message[] | undefined>;

/**
 * The file's messages as the Garmin decoder reads them. Where it stops before
 * the sessions (compressed timestamp headers, the Strava file's lost bytes),
 * from the server's pre-pass: the session values compared are still the
 * file's own, as its device wrote them.
 */
function messagesOf(bytes: Uint8Array): Messages {
  const { messages } = new Decoder(Stream.fromByteArray(bytes)).read();
  if ((messages['sessionMesgs']?.length ?? 0) > 0) return messages as Messages;
  const reframed = reframeFit(bytes, Number.MAX_SAFE_INTEGER);
  if (!reframed.ok) return messages as Messages;
  return new Decoder(Stream.fromByteArray(reframed.data)).read({ dataOnly: true }).messages as Messages;
}

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const sum = (sessions: readonly Message[], key: string) =>
  sessions.reduce((total, session) => total + (num(session[key]) ?? 0), 0);

function expectWithin1Percent(actual: number | null, expected: number, what: string): void {
  expect(actual, what).not.toBeNull();
  expect(Math.abs((actual as number) - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(
    Math.abs(expected) * 0.01 + 0.01,
  );
}

let server: TestServer;
const tokens: Record<'activities' | 'refused' | 'made', string> = { activities: '', refused: '', made: '' };
const users: Partial<Record<keyof typeof tokens, User>> = {};

beforeAll(async () => {
  server = await startTestServer({ PACER_RATE_LIMIT_UPLOADS_PER_MINUTE: '0' });
  for (const group of Object.keys(tokens) as (keyof typeof tokens)[]) {
    const user = await makeUser(server.db);
    await server.db.updateTable('users').set({ ftpWatts: FTP_WATTS }).where('id', '=', user.id).execute();
    users[group] = user;
    tokens[group] = (await mintToken(server.db, user, { scopes: ['workout:read', 'workout:write'] })).token;
  }
});
afterAll(async () => {
  await server.stop();
});

async function upload<T = Workout>(token: string, bytes: Uint8Array, fileName: string): Promise<JsonResponse<T>> {
  const form = new FormData();
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), fileName);
  const res = await fetch(`${server.url}/api/workouts/upload-fit`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as T };
}

async function storedWorkouts(user: User | undefined): Promise<number> {
  const row = await server.db
    .selectFrom('workouts')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('userId', '=', user?.id ?? '')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The file's own session values against the workout's summary. */
function expectSessionSummary(workout: Workout, sessions: readonly Message[], records: readonly Message[]): void {
  const starts = sessions.map((session) => (session['startTime'] as Date).getTime());
  expect(workout.startTime).toBe(new Date(Math.min(...starts)).toISOString());
  const sports = new Set(sessions.map((session) => session['sport']));
  expect(workout.sport).toBe(sports.size > 1 ? 'multisport' : String([...sports][0]));
  expectWithin1Percent(workout.elapsedSecs, sum(sessions, 'totalElapsedTime'), 'elapsed');

  const distance = sum(sessions, 'totalDistance');
  const recordsHaveDistance = records.some((record) => (num(record['distance']) ?? 0) > 0);
  if (distance > 0) expectWithin1Percent(workout.distanceMeters, distance, 'distance');
  else if (!recordsHaveDistance)
    expect(workout.distanceMeters, 'distance of a file without a distance sensor').toBeNull();

  const only = sessions.length === 1 ? sessions[0] : undefined;
  if (!only) return;
  const avgHr = num(only['avgHeartRate']);
  if (avgHr !== null && avgHr > 0) expectWithin1Percent(workout.avgHr, avgHr, 'avgHr');
  else if (!records.some((record) => (num(record['heartRate']) ?? 0) > 0)) expect(workout.avgHr).toBeNull();
  const avgPower = num(only['avgPower']);
  if (avgPower !== null && avgPower > 0) expectWithin1Percent(workout.avgPower, avgPower, 'avgPower');
  else if (!records.some((record) => (num(record['power']) ?? 0) > 0)) expect(workout.avgPower).toBeNull();

  const moving = num(only['totalMovingTime']);
  const timer = num(only['totalTimerTime']);
  const withSpeed = records.filter((record) => num(record['speed'] ?? record['enhancedSpeed']) !== null).length;
  if (moving !== null) expectWithin1Percent(workout.movingSecs, moving, 'moving');
  else if (timer !== null && withSpeed * 2 < records.length) {
    // No speed stream (a pool swim, indoor equipment): the timer's time.
    expectWithin1Percent(workout.movingSecs, timer, 'moving (timer)');
  } else if (timer !== null) {
    expect(workout.movingSecs).not.toBeNull();
    expect(workout.movingSecs as number).toBeLessThanOrEqual(timer * 1.01);
  }
}

/** What no summary may say: 0 for a sensor (a 0 bpm heart rate, a 0 W average from no power). */
function expectNoFalseZeros(workout: Workout): void {
  for (const key of ['avgHr', 'maxHr', 'avgPower', 'maxPower', 'normalizedPower', 'avgCadence'] as const) {
    expect(workout[key], `${key} of ${workout.file.fileName}`).not.toBe(0);
  }
  if (workout.normalizedPower === null) expect(workout.trainingStress).toBeNull();
}

describe('the FIT corpus through POST /api/workouts/upload-fit', () => {
  it('names what the API answers for every file in the corpus', () => {
    expect(corpusFiles).toEqual(Object.keys(EXPECTED).sort());
  });

  const stored = corpusFiles.filter((name) => EXPECTED[name]?.stored === true);
  const refused = corpusFiles.filter((name) => EXPECTED[name]?.stored === false);

  it.each(stored)('stores %s (201, then 200 with the same id), its summary matching the file', async (name) => {
    const expected = EXPECTED[name] as Extract<Expected, { stored: true }>;
    const bytes = read(name);
    const first = await upload(tokens.activities, bytes, name);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const again = await upload(tokens.activities, bytes, name);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);

    const workout = first.body;
    expect(workout.truncated).toBe(expected.truncated);
    const messages = messagesOf(bytes);
    const sessions = messages['sessionMesgs'] ?? [];
    const records = messages['recordMesgs'] ?? [];
    if (sessions.length > 0) expectSessionSummary(workout, sessions, records);
    expectNoFalseZeros(workout);
  });

  it.each(refused)('refuses %s with 422 and its code, storing nothing', async (name) => {
    const expected = EXPECTED[name] as Extract<Expected, { stored: false }>;
    const res = await upload<Problem>(tokens.refused, read(name), name);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe(expected.code);
    expect(res.body.errors?.[0]?.path).toBe('file');
    expect(await storedWorkouts(users.refused)).toBe(0);
  });

  it('rescues the cut-off ride (nick.fit): every record before the cut, the summary from them, its streams', async () => {
    const bytes = read('nick.fit');
    // The Garmin decoder stops at the cut ("end of stream") with the records before it.
    const { messages, errors } = new Decoder(Stream.fromByteArray(bytes)).read();
    expect(errors[0]?.message).toContain('end of stream');
    expect(messages['sessionMesgs'] ?? []).toHaveLength(0);
    const records = (messages['recordMesgs'] ?? []) as Message[];
    const times = records.map((record) => (record['timestamp'] as Date).getTime());
    const first = await upload(tokens.made, bytes, 'nick.fit');
    expect(first.status === 201 || first.status === 200).toBe(true);
    const workout = first.body;

    expect(workout.truncated).toBe(true);
    expect(workout.startTime).toBe(new Date(times[0] as number).toISOString());
    expectWithin1Percent(workout.elapsedSecs, ((times.at(-1) as number) - (times[0] as number)) / 1000 + 1, 'elapsed');
    expectWithin1Percent(workout.distanceMeters, num(records.at(-1)?.['distance']) as number, 'distance');
    const heartRates = records.map((record) => num(record['heartRate'])).filter((bpm): bpm is number => (bpm ?? 0) > 0);
    expectWithin1Percent(workout.avgHr, heartRates.reduce((a, b) => a + b, 0) / heartRates.length, 'avgHr');
    // Its power field holds only zeros: no power meter, so no power and no power-based stress.
    expect(records.every((record) => (num(record['power']) ?? 0) === 0)).toBe(true);
    expect(workout.avgPower).toBeNull();
    expect(workout.trainingStress).toBeNull();

    const streams = await call<{ points: number; time: number[] }>(
      server.url,
      'GET',
      `/api/workouts/${workout.id}/streams`,
      { token: tokens.made },
    );
    expect(streams.status).toBe(200);
    expect(streams.body.points).toBe(records.length);
  });

  it('scores a ride whose file has no power by heart rate, never by a false 0 W (training load method)', async () => {
    const user = await makeUser(server.db);
    await server.db
      .updateTable('users')
      .set({ ftpWatts: FTP_WATTS, restingHr: 50, thresholdHr: 170 })
      .where('id', '=', user.id)
      .execute();
    const { token } = await mintToken(server.db, user, { scopes: ['workout:write'] });
    // The COROS session says avg_power 0 and normalized_power 0; no record has power.
    const res = await upload(token, read('coros-pace-2-cycling-misaligned-fields.fit'), 'coros.fit');
    expect(res.status).toBe(201);
    expect([res.body.avgPower, res.body.normalizedPower, res.body.trainingStress]).toEqual([null, null, null]);
    await waitForRecompute(server.db, user.id);
    const day = await server.db
      .selectFrom('dailyTrainingLoad')
      .select(['method', 'tss'])
      .where('userId', '=', user.id)
      .where('date', '=', res.body.localDate)
      .executeTakeFirstOrThrow();
    expect(day.method).toBe('heart_rate');
    expect(day.tss).toBeGreaterThan(0);
  });

  it('reads compressed timestamp headers per the FIT protocol: one record a second, as the session says', async () => {
    const bytes = read('compressed-speed-distance.fit');
    expect(new Decoder(Stream.fromByteArray(bytes)).read().errors[0]?.message).toContain('compressed timestamp');
    const res = await upload(tokens.made, bytes, 'compressed-speed-distance.fit');
    expect(res.status === 201 || res.status === 200).toBe(true);
    const streams = await call<{ time: number[] }>(server.url, 'GET', `/api/workouts/${res.body.id}/streams`, {
      token: tokens.made,
    });
    const { time } = streams.body;
    expect(time.length).toBeGreaterThan(500);
    // Times only go forward, and the last record is within the session's elapsed time.
    expect(time.every((t, i) => i === 0 || t >= (time[i - 1] as number))).toBe(true);
    expect(time.at(-1) as number).toBeLessThanOrEqual((res.body.elapsedSecs as number) + 1);
    expect(time.at(-1) as number).toBeGreaterThan((res.body.elapsedSecs as number) * 0.9);
  });

  it('reads every chained file of sample_mulitple_header.fit', async () => {
    const bytes = read('sample_mulitple_header.fit');
    const res = await upload(tokens.made, bytes, 'sample_mulitple_header.fit');
    expect(res.body.sport).toBe('multisport');
    const sessions = messagesOf(bytes)['sessionMesgs'] ?? [];
    expect(sessions.length).toBe(5);
    expectWithin1Percent(res.body.distanceMeters, sum(sessions, 'totalDistance'), 'distance of all five sessions');
  });

  it('uploads the largest FIT file of the corpus, and the largest damaged one, in about a plain parse each', async () => {
    const sizes = stored.map((name) => [name, read(name).length] as const).sort((a, b) => b[1] - a[1]);
    const largest = sizes[0]?.[0] as string;
    const largestDamaged = sizes.find(([name]) => EXPECTED[name]?.stored === true && EXPECTED[name].truncated)?.[0];
    for (const name of [largest, largestDamaged as string]) {
      const bytes = read(name);
      const parseStart = performance.now();
      new Decoder(Stream.fromByteArray(bytes)).read();
      const parseMs = performance.now() - parseStart;
      // A user of its own, so the upload decodes (a known file would only be relabelled).
      const user = await makeUser(server.db);
      const { token } = await mintToken(server.db, user, { scopes: ['workout:write'] });
      const uploadStart = performance.now();
      const res = await upload(token, bytes, name);
      const uploadMs = performance.now() - uploadStart;
      expect(res.status).toBe(201);
      console.log(
        `${name}: ${bytes.length} bytes; plain @garmin/fitsdk parse ${parseMs.toFixed(0)} ms, HTTP upload end to end ${uploadMs.toFixed(0)} ms`,
      );
    }
  });

  it.each([
    ['a header whose CRC does not match', corruptHeaderCrc, 'fit_corrupt_header'],
    ['a first header without ".FIT"', () => withSignature(read('Activity.fit'), 'GIT'), 'fit_not_fit_file'],
    ['a header and no data', headerOnly, 'fit_no_activity'],
  ])('refuses %s with 422 and its code, storing nothing', async (_what, bytes, code) => {
    const before = await storedWorkouts(users.made);
    const res = await upload<Problem>(tokens.made, bytes(), 'broken.fit');
    expect(res.status).toBe(422);
    expect(res.body.code).toBe(code);
    expect(await storedWorkouts(users.made)).toBe(before);
  });
});

/** A 14-byte header file with its header CRC (bytes 12-13) off by one. */
function corruptHeaderCrc(): Uint8Array {
  const bytes = Uint8Array.from(read('garmin-fenix-5-run.fit'));
  expect(bytes[0]).toBe(14);
  const crc = CrcCalculator.calculateCRC(bytes, 0, 12);
  bytes[12] = (crc + 1) & 0xff;
  bytes[13] = ((crc + 1) >> 8) & 0xff;
  return bytes;
}

function withSignature(bytes: Uint8Array, signature: string): Uint8Array {
  const copy = Uint8Array.from(bytes);
  copy.set(new TextEncoder().encode(signature), 9);
  return copy;
}

/** A real file's 14-byte header, its data size set to 0, and the CRC of nothing. */
function headerOnly(): Uint8Array {
  const bytes = Uint8Array.from(read('garmin-fenix-5-run.fit').subarray(0, 14));
  bytes.fill(0, 4, 8);
  const headerCrc = CrcCalculator.calculateCRC(bytes, 0, 12);
  bytes[12] = headerCrc & 0xff;
  bytes[13] = headerCrc >> 8;
  const crc = CrcCalculator.calculateCRC(bytes, 0, 14);
  return Uint8Array.from([...bytes, crc & 0xff, crc >> 8]);
}

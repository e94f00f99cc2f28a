/**
 * `POST /api/workouts/upload`: FIT, TCX and GPX, each raw or gzip-compressed,
 * told by the content. Every TCX and GPX file of the corpus
 * (test/fixtures/corpus, written by real devices and apps) goes through the
 * real server; each is accepted with a summary checked against values this
 * test reads from the file itself, or refused with its code and nothing
 * stored. Also: gzip (the same workout raw and compressed, a gzip bomb),
 * `upload-fit` with `.fit.gz`, the SDK's `uploadActivity`, the streams of a
 * GPX track.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { createPacerClient, uploadActivity, type Workout, type WorkoutStreams } from '@pacer/client-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { oneHourRide } from '../support/fit-fixtures.ts';
import { asProblem, call, type JsonResponse } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const CORPUS = path.resolve(import.meta.dirname, '../fixtures/corpus');
/** Small enough that a gzip bomb is cheap to build here; every corpus file is well under it. */
const MAX_UPLOAD_BYTES = 2 * 1024 * 1024;

let server: TestServer;
let athlete: User;
let token: string;

beforeAll(async () => {
  server = await startTestServer({
    PACER_RATE_LIMIT_UPLOADS_PER_MINUTE: '0',
    PACER_MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES),
  });
  athlete = await makeUser(server.db, { timeZone: 'Europe/Ljubljana' });
  token = (await mintToken(server.db, athlete, { scopes: ['workout:read', 'workout:write'] })).token;
});
afterAll(async () => {
  await server.stop();
});

async function upload<T = Workout>(
  bytes: Uint8Array,
  fileName: string,
  route: 'upload' | 'upload-fit' = 'upload',
): Promise<JsonResponse<T>> {
  const form = new FormData();
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), fileName);
  const res = await fetch(`${server.url}/api/workouts/${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, headers: res.headers, body: (type.includes('json') ? JSON.parse(text) : text) as T };
}

async function storedWorkouts(): Promise<number> {
  const row = await server.db
    .selectFrom('workouts')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('userId', '=', athlete.id)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Refused with `code` (and `status`), and nothing stored. */
async function expectRefused(bytes: Uint8Array, fileName: string, status: number, code: string): Promise<void> {
  const before = await storedWorkouts();
  const res = await upload(bytes, fileName);
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(asProblem(res.body).code).toBe(code);
  expect(await storedWorkouts()).toBe(before);
}

const corpusFile = (name: string) => readFile(path.join(CORPUS, name));

// What this test reads from the files itself, independently of the server's parsers (regular expressions
// over the text, the haversine formula written out again).
const EARTH_MEAN_RADIUS_METERS = 6_371_008.8;
function greatCircleMeters(a: readonly [number, number], b: readonly [number, number]): number {
  const rad = Math.PI / 180;
  const dLat = (b[0] - a[0]) * rad;
  const dLon = (b[1] - a[1]) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a[0] * rad) * Math.cos(b[0] * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_MEAN_RADIUS_METERS * Math.asin(Math.sqrt(h));
}

interface GpxFacts {
  readonly distance: number;
  readonly elapsed: number;
  readonly firstTime: string;
  readonly timedPoints: number;
  /** Of the point with the earliest time (a file's segments need not be in time order). */
  readonly firstPosition: readonly [number, number];
}

/** Distance along each `trkseg` (not across them) and the span of the points' times. */
function gpxFacts(text: string): GpxFacts {
  let distance = 0;
  const times: number[] = [];
  let firstPosition: [number, number] | undefined;
  let firstTime = Number.POSITIVE_INFINITY;
  for (const segment of text.split(/<trkseg>/).slice(1)) {
    const points = [...segment.matchAll(/<trkpt lat="([-\d.]+)" lon="([-\d.]+)">([\s\S]*?)<\/trkpt>/g)];
    points.forEach((match, i) => {
      const here: [number, number] = [Number(match[1]), Number(match[2])];
      const previous = points[i - 1];
      if (previous) distance += greatCircleMeters([Number(previous[1]), Number(previous[2])], here);
      const time = /<time>([^<]+)<\/time>/.exec(match[3] as string)?.[1];
      if (!time) return;
      times.push(Date.parse(time));
      if (Date.parse(time) < firstTime) {
        firstTime = Date.parse(time);
        firstPosition = here;
      }
    });
  }
  return {
    distance,
    elapsed: (Math.max(...times) - Math.min(...times)) / 1000,
    firstTime: new Date(Math.min(...times)).toISOString(),
    timedPoints: times.length,
    firstPosition: firstPosition as [number, number],
  };
}

interface TcxLapFacts {
  readonly seconds: number;
  readonly meters: number;
  readonly calories: number;
}

/** Each lap's own totals, as the device wrote them. */
function tcxLaps(text: string): TcxLapFacts[] {
  return [...text.matchAll(/<Lap StartTime="[^"]+">([\s\S]*?)<\/Lap>/g)].map((lap) => {
    const body = lap[1] as string;
    const value = (pattern: RegExp) => Number(pattern.exec(body)?.[1]);
    return {
      seconds: value(/^\s*<TotalTimeSeconds>([\d.]+)</),
      meters: value(/<\/TotalTimeSeconds>\s*<DistanceMeters>([\d.]+)</),
      calories: value(/<Calories>(\d+)</),
    };
  });
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

describe('the corpus: every TCX and GPX file, as athletes upload them', () => {
  const refusals: Record<string, string> = {
    // Every point carries 1901-12-13T20:45:52Z (a 32-bit clock's zero): no real times.
    'gpx/Mojstrovka.gpx': 'gpx_no_times',
    'gpx/cerknicko-without-times.gpx': 'gpx_no_times',
    'gpx/route.gpx': 'gpx_no_track',
  };

  it('has the files this test expects', async () => {
    const files = [
      ...(await readdir(path.join(CORPUS, 'tcx'))).map((name) => `tcx/${name}`),
      ...(await readdir(path.join(CORPUS, 'gpx'))).map((name) => `gpx/${name}`),
    ].filter((name) => !name.includes('LICENSE'));
    expect(files.sort()).toEqual(
      [
        'gpx/Mojstrovka.gpx',
        'gpx/cerknicko-jezero.gpx',
        'gpx/cerknicko-without-times.gpx',
        'gpx/korita-zbevnica.gpx',
        'gpx/route.gpx',
        'gpx/track-with-empty-segment.gpx',
        'gpx/track_with_speed.gpx',
        'tcx/no_hr.tcx',
        'tcx/sup_activity_1.tcx',
        'tcx/test.tcx',
      ].sort(),
    );
  });

  for (const [file, code] of Object.entries(refusals)) {
    it(`refuses ${file} with 422 ${code}, storing nothing`, async () => {
      await expectRefused(await corpusFile(file), path.basename(file), 422, code);
    });
  }

  for (const file of [
    'gpx/cerknicko-jezero.gpx',
    'gpx/korita-zbevnica.gpx',
    'gpx/track-with-empty-segment.gpx',
    'gpx/track_with_speed.gpx',
  ]) {
    it(`accepts ${file}: start, elapsed time and distance along the track as the file gives them; 200 and the same id again`, async () => {
      const bytes = await corpusFile(file);
      const facts = gpxFacts(bytes.toString('utf8'));
      const res = await upload(bytes, path.basename(file));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const workout = res.body;
      expect(workout.file.format).toBe('gpx');
      expect(workout.startTime).toBe(facts.firstTime);
      expect(workout.elapsedSecs).toBeCloseTo(facts.elapsed, 3);
      expect(workout.distanceMeters).toBeCloseTo(facts.distance, 0);
      expect(workout.movingSecs).toBeGreaterThan(0);
      expect(workout.movingSecs).toBeLessThanOrEqual(facts.elapsed);
      // No heart rate, power or cadence in these files: null, not 0.
      expect([workout.avgHr, workout.avgPower, workout.avgCadence]).toEqual([null, null, null]);
      expect(workout.laps).toEqual([]);

      const again = await upload(bytes, path.basename(file));
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(workout.id);
    });
  }

  for (const file of ['tcx/test.tcx', 'tcx/no_hr.tcx', 'tcx/sup_activity_1.tcx']) {
    it(`accepts ${file}: sport, laps and totals as the device wrote them; 200 and the same id again`, async () => {
      const bytes = await corpusFile(file);
      const text = bytes.toString('utf8');
      const laps = tcxLaps(text);
      const res = await upload(bytes, path.basename(file));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const workout = res.body;
      expect(workout.file.format).toBe('tcx');
      const sport = /<Activity Sport="(\w+)">/.exec(text)?.[1];
      expect(workout.sport).toBe(sport === 'Running' ? 'running' : 'generic');
      expect(workout.startTime).toBe(new Date(/<Id>([^<]+)<\/Id>/.exec(text)?.[1] as string).toISOString());
      expect(workout.distanceMeters).toBeCloseTo(sum(laps.map((lap) => lap.meters)), 1);
      expect(workout.calories).toBe(sum(laps.map((lap) => lap.calories)));
      expect(workout.elapsedSecs).toBeGreaterThanOrEqual(sum(laps.map((lap) => lap.seconds)) - 1);
      expect(workout.laps).toHaveLength(laps.length);
      workout.laps.forEach((lap, i) => expect(lap.distanceMeters).toBeCloseTo(laps[i]?.meters as number, 1));
      const heartRates = [...text.matchAll(/<HeartRateBpm>\s*<Value>(\d+)</g)].map((match) => Number(match[1]));
      // The laps' maxima are the device's (it samples more often than it writes track points).
      const lapMaxima = [...text.matchAll(/<MaximumHeartRateBpm>\s*<Value>(\d+)</g)].map((match) => Number(match[1]));
      if (heartRates.length === 0) expect([workout.avgHr, workout.maxHr]).toEqual([null, null]);
      else {
        expect(workout.maxHr).toBe(Math.max(...lapMaxima, ...heartRates));
        expect(workout.avgHr).toBeGreaterThanOrEqual(Math.min(...heartRates));
        expect(workout.avgHr).toBeLessThanOrEqual(Math.max(...heartRates));
      }
      const creator = /<Creator[^>]*>\s*<Name>([^<]+)<\/Name>\s*<UnitId>(\d+)</.exec(text);
      expect(workout.device).toEqual({ manufacturer: null, product: creator?.[1], serial: creator?.[2] });

      const again = await upload(bytes, path.basename(file));
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(workout.id);
    });
  }
});

/** `seconds` track points one second apart from `start`, each with these values, as `point(i, time)` writes them. */
function trackPoints(seconds: number, point: (i: number, time: string) => string): string {
  const start = Date.parse('2026-05-01T06:00:00Z');
  return Array.from({ length: seconds }, (_, i) => point(i, new Date(start + i * 1000).toISOString())).join('');
}

describe('sensor channels from the standard extensions', () => {
  it('reads TCX power (ActivityExtension v2 TPX/Watts), heart rate, cadence and the Biking sport', async () => {
    const points = trackPoints(
      120,
      (i, time) =>
        `<Trackpoint><Time>${time}</Time><Position><LatitudeDegrees>${46 + i * 0.0001}</LatitudeDegrees><LongitudeDegrees>14.5</LongitudeDegrees></Position>` +
        `<DistanceMeters>${i * 8}</DistanceMeters><HeartRateBpm><Value>140</Value></HeartRateBpm><Cadence>90</Cadence>` +
        `<Extensions><ns3:TPX><ns3:Speed>8</ns3:Speed><ns3:Watts>${i % 2 === 0 ? 180 : 220}</ns3:Watts></ns3:TPX></Extensions></Trackpoint>`,
    );
    const tcx =
      '<?xml version="1.0" encoding="UTF-8"?><TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2">' +
      `<Activities><Activity Sport="Biking"><Id>2026-05-01T06:00:00Z</Id><Lap StartTime="2026-05-01T06:00:00Z"><Track>${points}</Track></Lap></Activity></Activities></TrainingCenterDatabase>`;
    const res = await upload(new TextEncoder().encode(tcx), 'ride.tcx');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ sport: 'cycling', avgPower: 200, maxPower: 220, avgHr: 140, avgCadence: 90 });
    expect(res.body.elapsedSecs).toBe(119);
    expect(res.body.distanceMeters).toBe(119 * 8);
    expect(res.body.normalizedPower).toBeGreaterThanOrEqual(200);
  });

  it('reads GPX 1.1 heart rate and cadence (Garmin TrackPointExtension) and power, and the track type', async () => {
    const points = trackPoints(
      90,
      (i, time) =>
        `<trkpt lat="${46 + i * 0.00005}" lon="14.5"><ele>${300 + i}</ele><time>${time}</time>` +
        `<extensions><power>250</power><gpxtpx:TrackPointExtension><gpxtpx:hr>150</gpxtpx:hr><gpxtpx:cad>85</gpxtpx:cad></gpxtpx:TrackPointExtension></extensions></trkpt>`,
    );
    const gpx =
      '<?xml version="1.0" encoding="UTF-8"?><gpx version="1.1" creator="StravaGPX" xmlns="http://www.topografix.com/GPX/1/1" xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">' +
      `<trk><name>Climb</name><type>cycling</type><trkseg>${points}</trkseg></trk></gpx>`;
    const res = await upload(new TextEncoder().encode(gpx), 'climb.gpx');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ sport: 'cycling', avgPower: 250, avgHr: 150, maxHr: 150, avgCadence: 85 });
    expect(res.body.device.product).toBe('StravaGPX');
    // 89 steps of 0.00005 degrees of latitude, about 5.56 m each, every second: moving throughout.
    expect(res.body.distanceMeters).toBeCloseTo(greatCircleMeters([46, 14.5], [46 + 89 * 0.00005, 14.5]), 1);
    expect(res.body.movingSecs).toBe(89);
    expect(res.body.ascentMeters).toBe(89);
  });
});

describe('files that are not activities we read', () => {
  const cases: [string, string, string][] = [
    ['an empty file', '', 'activity_file_empty'],
    ['white space only', ' \n\t\n', 'activity_file_empty'],
    ['plain text', 'lat,lon,time\n46.1,14.5,2024-05-01T10:00:00Z\n', 'activity_format_unknown'],
    ['XML that is neither TCX nor GPX', '<?xml version="1.0"?><kml><Document/></kml>', 'activity_format_unknown'],
    ['malformed XML', '<gpx version="1.1"><trk><trkseg><trkpt lat="1" lon="2"></trk></gpx>', 'activity_xml_malformed'],
    [
      'an entity bomb (a DOCTYPE)',
      '<?xml version="1.0"?><!DOCTYPE gpx [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><gpx>&b;</gpx>',
      'activity_xml_malformed',
    ],
    [
      'a TCX course (a plan, no activity)',
      '<TrainingCenterDatabase><Courses><Course><Name>Loop</Name></Course></Courses></TrainingCenterDatabase>',
      'tcx_no_activity',
    ],
  ];
  for (const [what, text, code] of cases) {
    it(`refuses ${what} with 422 ${code}, storing nothing`, async () => {
      await expectRefused(new TextEncoder().encode(text), 'activity.gpx', 422, code);
    });
  }

  it('refuses a GPX with more track points than PACER_FIT_MAX_RECORDS (activity_too_many_records)', async () => {
    const limited = await startTestServer({ PACER_FIT_MAX_RECORDS: '50' }, { database: server.database });
    try {
      // Its own bytes: the corpus test stored the file itself, and known bytes are not decoded again.
      const text = (await corpusFile('gpx/korita-zbevnica.gpx')).toString('utf8');
      const bytes = new TextEncoder().encode(text.replace('GPSBabel', 'GPSBabel (limited)'));
      const form = new FormData();
      form.append('file', new Blob([bytes]), 'korita.gpx');
      const res = await fetch(`${limited.url}/api/workouts/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: form,
      });
      expect(res.status).toBe(422);
      expect(((await res.json()) as { code: string }).code).toBe('activity_too_many_records');
    } finally {
      await limited.stop();
    }
  });
});

describe('gzip', () => {
  it('takes a FIT file gzipped and then raw as one workout (201, then 200 with the same id)', async () => {
    const ride = oneHourRide();
    const zipped = await upload(gzipSync(ride.bytes), 'ride.fit.gz');
    expect(zipped.status, JSON.stringify(zipped.body)).toBe(201);
    expect(zipped.body.file.format).toBe('fit');
    // Keyed and stored as the decompressed file.
    expect(zipped.body.file.sizeBytes).toBe(ride.bytes.length);
    const raw = await upload(ride.bytes, 'ride.fit');
    expect(raw.status).toBe(200);
    expect(raw.body.id).toBe(zipped.body.id);
    expect(raw.body.file.sha256).toBe(zipped.body.file.sha256);
  });

  it('takes a GPX file gzipped and then raw as one workout, and keeps the decompressed file', async () => {
    // A copy with its own bytes: the corpus tests above upload the file itself.
    const text = (await corpusFile('gpx/track-with-empty-segment.gpx')).toString('utf8');
    const bytes = new TextEncoder().encode(text.replace('<name>', '<name>gzip '));
    const zipped = await upload(gzipSync(bytes), 'walk.gpx.gz');
    expect(zipped.status, JSON.stringify(zipped.body)).toBe(201);
    expect(zipped.body.file.format).toBe('gpx');
    const raw = await upload(bytes, 'walk.gpx');
    expect(raw.status).toBe(200);
    expect(raw.body.id).toBe(zipped.body.id);
    const download = await fetch(`${server.url}/api/workouts/${zipped.body.id}/file`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
  });

  it('refuses a gzip bomb with 413 upload_decompressed_too_large, storing nothing', async () => {
    // 64 MiB of zeros compress to about 64 KiB: well under the upload limit, 32 times over it inflated.
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(MAX_UPLOAD_BYTES);
    const started = performance.now();
    await expectRefused(bomb, 'bomb.gpx.gz', 413, 'upload_decompressed_too_large');
    // Inflation stops at the limit: far less time than inflating 64 MiB and parsing it would take.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('refuses corrupt gzip data with 422 upload_gzip_invalid', async () => {
    const zipped = gzipSync(new TextEncoder().encode('<gpx></gpx>'.repeat(100)));
    await expectRefused(zipped.subarray(0, zipped.length - 20), 'cut.gpx.gz', 422, 'upload_gzip_invalid');
  });

  it('upload-fit takes a .fit.gz, and still refuses anything but FIT', async () => {
    const ride = oneHourRide({ serialNumber: 424242 });
    const res = await upload(gzipSync(ride.bytes), 'ride.fit.gz', 'upload-fit');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.file.format).toBe('fit');
    const text = (await corpusFile('gpx/korita-zbevnica.gpx')).toString('utf8');
    const bytes = new TextEncoder().encode(text.replace('GPSBabel', 'GPSBabel (sent as FIT)'));
    const gpx = await upload(bytes, 'korita.gpx', 'upload-fit');
    expect(gpx.status).toBe(422);
    expect(asProblem(gpx.body).code).toBe('fit_not_fit_file');
  });
});

describe('the SDK: uploadActivity', () => {
  it('uploads a path (a .gpx.gz on disk) and the same file as a Buffer: one workout', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pacer-activity-'));
    try {
      const text = (await corpusFile('gpx/track_with_speed.gpx')).toString('utf8');
      const bytes = Buffer.from(text.replace('Serial=1443', 'Serial=sdk'));
      const file = path.join(dir, 'evening.gpx.gz');
      await writeFile(file, gzipSync(bytes));
      const pacer = createPacerClient({ baseUrl: server.url, accessToken: token });
      const fromPath = await uploadActivity(pacer, { file, name: 'Evening walk' });
      expect(fromPath.status).toBe(201);
      const fromBuffer = await uploadActivity(pacer, { file: bytes, fileName: 'evening.gpx' });
      expect(fromBuffer.status).toBe(200);
      if (fromPath.status !== 201 || fromBuffer.status !== 200) return;
      expect(fromBuffer.body.id).toBe(fromPath.body.id);
      expect(fromPath.body.name).toBe('Evening walk');
      expect(fromPath.body.file).toMatchObject({ format: 'gpx', fileName: 'evening.gpx.gz' });
      const fromBlob = await uploadActivity(pacer, { file: new Blob([await corpusFile('tcx/test.tcx')]) });
      expect([200, 201]).toContain(fromBlob.status);
      if (fromBlob.status === 200 || fromBlob.status === 201) expect(fromBlob.body.file.format).toBe('tcx');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('streams of a GPX track', () => {
  it('are the timed track points: time from the start, positions as written, distance along the track', async () => {
    const bytes = await corpusFile('gpx/korita-zbevnica.gpx');
    const facts = gpxFacts(bytes.toString('utf8'));
    const uploaded = await upload(bytes, 'korita.gpx');
    expect([200, 201]).toContain(uploaded.status);
    const res = await call<WorkoutStreams>(server.url, 'GET', `/api/workouts/${uploaded.body.id}/streams`, { token });
    expect(res.status).toBe(200);
    const streams = res.body;
    expect(streams.originalPoints).toBe(facts.timedPoints);
    expect(streams.time[0]).toBe(0);
    expect(streams.time.at(-1)).toBeCloseTo(facts.elapsed, 3);
    expect([streams.latitude?.[0], streams.longitude?.[0]]).toEqual(facts.firstPosition);
    expect(streams.distance?.at(-1)).toBeCloseTo(uploaded.body.distanceMeters as number, 0);
    expect(streams.altitude?.every((value) => value !== null)).toBe(true);
    expect(streams.heartRate).toBeNull();
    expect(streams.speed?.some((value) => value !== null && value > 0)).toBe(true);
  });
});

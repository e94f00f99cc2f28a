/**
 * Issue 18, item 3: crafted FIT files must not stall everyone's uploads.
 * The attack: one token sends 25 MB files of a `file_id`, one record
 * definition and 5 000 000 tiny records, several at once, while another
 * athlete uploads an ordinary file. The defences tested here, each by the
 * attack it stops:
 * - a limit on data messages per file (`PACER_FIT_MAX_RECORDS`), checked
 *   before the decoder builds them: 422 `fit_too_many_records`, long before
 *   the decode timeout;
 * - a limit on decode time (`PACER_FIT_DECODE_TIMEOUT_MS`): 422 `fit_decode_timeout`;
 * - one file per user at a time: the others are refused at once, 429
 *   `fit_decode_in_progress` + `Retry-After`, before their bodies are read;
 * - a decode queue bounded by files and bytes (`PACER_FIT_DECODE_QUEUE_*`):
 *   503 `fit_decode_queue_full` + `Retry-After`;
 * - the first read of a workout's streams decodes within the same bounds.
 * Nothing is stored for a refused file. The time the other athlete waits is
 * a figure, measured by test/bench/hostile-uploads-bench.ts, not asserted here.
 *
 * A held upload is a request whose body stops short of its end until the
 * test lets it finish: its place in the decode queue is taken (the server
 * logs the admission at debug level with the request id) and kept.
 */
import http from 'node:http';
import { Writable } from 'node:stream';
import type { Problem, WorkoutStreams } from '@pacer/client-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { buildFitActivity, oneHourRide, rideSamples, tenHourRide, tinyRecordFlood } from '../support/fit-fixtures.ts';
import { call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait.ts';

const NO_UPLOAD_LIMIT = { PACER_RATE_LIMIT_UPLOADS_PER_MINUTE: '0' };

/** Every log line of the servers started with `logged()`, parsed. */
const logLines: Record<string, unknown>[] = [];
let pending = '';
const capture = new Writable({
  write(chunk: Buffer, _encoding, done) {
    pending += chunk.toString();
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    for (const line of complete.filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

/** A server whose debug lines (the decode queue's admissions) the tests can wait for. */
function logged(env: Record<string, string>): Promise<TestServer> {
  return startTestServer({ ...NO_UPLOAD_LIMIT, PACER_LOG_LEVEL: 'debug', ...env }, { logDestination: capture });
}

async function admitted(requestId: string): Promise<void> {
  await waitFor(
    () =>
      Promise.resolve(
        logLines.some(
          (line) => line['requestId'] === requestId && line['msg'] === 'FIT upload admitted to the decode queue',
        ),
      ),
    `upload ${requestId} to be admitted to the decode queue`,
  );
}

interface Answer<T = Problem> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

async function upload<T = Problem>(server: TestServer, token: string, bytes: Uint8Array): Promise<Answer<T>> {
  const form = new FormData();
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), 'activity.fit');
  const res = await fetch(`${server.url}/api/workouts/upload-fit`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as T };
}

const BOUNDARY = 'pacer-hostile-boundary';

/**
 * An upload whose last bytes are held back until `finish()`. With
 * `declareLength: false` it is sent chunked, without `Content-Length`, so
 * the queue counts it at `PACER_MAX_UPLOAD_BYTES`.
 */
function heldUpload(
  server: TestServer,
  token: string,
  bytes: Uint8Array,
  options: { readonly requestId: string; readonly declareLength?: boolean },
) {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="held.fit"\r\nContent-Type: application/vnd.ant.fit\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const body = Buffer.concat([head, bytes, tail]);
  const cut = body.length - tail.length - 1;
  const request = http.request(`${server.url}/api/workouts/upload-fit`, {
    method: 'POST',
    agent: false,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      'x-request-id': options.requestId,
      ...(options.declareLength === false ? {} : { 'content-length': String(body.length) }),
    },
  });
  const answer = new Promise<{ status: number; body: Problem }>((resolve, reject) => {
    request.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Problem }));
    });
    request.on('error', reject);
  });
  request.write(body.subarray(0, cut));
  return {
    answer,
    async finish() {
      request.end(body.subarray(cut));
      return answer;
    },
  };
}

async function storedWorkouts(server: TestServer, user: User): Promise<number> {
  const rows = await server.db.selectFrom('workouts').select('id').where('userId', '=', user.id).execute();
  return rows.length;
}

/** A small valid activity (about 1 KB: 30 one-second records), distinct per `minute`. */
function smallRide(minute: number): Uint8Array {
  return buildFitActivity({
    startTime: new Date(Date.UTC(2026, 10, 20, 6, minute)),
    sport: 'cycling',
    subSport: 'road',
    samples: rideSamples(30),
    serialNumber: 7_000 + minute,
  }).bytes;
}

/** The crafted file of the issue: 25 MB, 5 000 000 records. */
let flood: Uint8Array;

beforeAll(() => {
  flood = tinyRecordFlood(5_000_000);
});

describe('an athlete sending crafted 25 MB FIT files', () => {
  let server: TestServer;
  let attacker: User;
  let attackerToken: string;
  let athlete: User;
  let athleteToken: string;

  beforeAll(async () => {
    // A decode timeout far below the 18-27 s the decoder needed for this file, far above what refusing it takes.
    server = await logged({ PACER_FIT_DECODE_TIMEOUT_MS: '5000' });
    attacker = await makeUser(server.db);
    attackerToken = (await mintToken(server.db, attacker, { scopes: ['workout:write', 'workout:read'] })).token;
    athlete = await makeUser(server.db);
    athleteToken = (await mintToken(server.db, athlete, { scopes: ['workout:write', 'workout:read'] })).token;
  });
  afterAll(async () => {
    await server.stop();
  });

  it('gets 422 fit_too_many_records for 5 000 000 records, before the decode timeout, and nothing is stored', async () => {
    expect(flood.length).toBe(25_000_036);
    const res = await upload(server, attackerToken, flood);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body.code).toBe('fit_too_many_records');
    expect(res.body.detail).toContain('more than 1,000,000 records');
    expect(res.body.errors).toEqual([{ path: 'file', message: 'more than 1000000 records' }]);
    expect(await storedWorkouts(server, attacker)).toBe(0);
  });

  it('sends five at once: one is read, four are refused at once with 429 and Retry-After, and the other athlete uploads meanwhile', async () => {
    const first = heldUpload(server, attackerToken, flood, { requestId: 'flood-1' });
    await admitted('flood-1');

    // The other four, sent while the first one holds the attacker's place: refused before their bodies are read.
    const others = await Promise.all(Array.from({ length: 4 }, () => upload(server, attackerToken, flood)));
    for (const other of others) {
      expect(other.status).toBe(429);
      expect(other.body.code).toBe('fit_decode_in_progress');
      expect(Number(other.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }

    // Another athlete's ordinary upload goes through while the attack is under way.
    const ride = smallRide(1);
    expect(ride.length).toBeLessThan(2048);
    const theirs = await upload<{ id: string }>(server, athleteToken, ride);
    expect(theirs.status).toBe(201);

    const refused = await first.finish();
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('fit_too_many_records');
    expect(await storedWorkouts(server, attacker)).toBe(0);
    expect(await storedWorkouts(server, athlete)).toBe(1);

    // The place is free again: the attacker's next file is read (and its decode refused, not its turn).
    const next = await upload(server, attackerToken, flood);
    expect(next.body.code).toBe('fit_too_many_records');
  });

  it('cannot read the streams of a workout while its own upload holds its place: 429', async () => {
    const stored = await upload<{ id: string }>(server, attackerToken, smallRide(2));
    expect(stored.status).toBe(201);
    const held = heldUpload(server, attackerToken, smallRide(3), { requestId: 'streams-hold' });
    await admitted('streams-hold');
    const streams = await call<Problem>(server.url, 'GET', `/api/workouts/${stored.body.id}/streams`, {
      token: attackerToken,
    });
    expect(streams.status).toBe(429);
    expect(streams.body.code).toBe('fit_decode_in_progress');
    expect((await held.finish()).status).toBe(201);
    const later = await call<WorkoutStreams>(server.url, 'GET', `/api/workouts/${stored.body.id}/streams`, {
      token: attackerToken,
    });
    expect(later.status).toBe(200);
    expect(later.body.points).toBe(30);
  });
});

describe('a full decode queue', () => {
  it('answers 503 fit_decode_queue_full with Retry-After when PACER_FIT_DECODE_QUEUE_FILES files are in it', async () => {
    const server = await logged({ PACER_FIT_DECODE_QUEUE_FILES: '1' });
    try {
      const first = await makeUser(server.db);
      const second = await makeUser(server.db);
      const firstToken = (await mintToken(server.db, first, { scopes: ['workout:write'] })).token;
      const secondToken = (await mintToken(server.db, second, { scopes: ['workout:write'] })).token;

      const held = heldUpload(server, firstToken, smallRide(10), { requestId: 'files-hold' });
      await admitted('files-hold');
      const refused = await upload(server, secondToken, smallRide(11));
      expect(refused.status).toBe(503);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      expect(refused.body.code).toBe('fit_decode_queue_full');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await storedWorkouts(server, second)).toBe(0);

      expect((await held.finish()).status).toBe(201);
      expect((await upload(server, secondToken, smallRide(11))).status).toBe(201);
    } finally {
      await server.stop();
    }
  });

  it('answers 503 when PACER_FIT_DECODE_QUEUE_BYTES are taken, counting a body without Content-Length at the upload limit', async () => {
    const limit = String(2 * 1024 * 1024);
    const server = await logged({ PACER_MAX_UPLOAD_BYTES: limit, PACER_FIT_DECODE_QUEUE_BYTES: limit });
    try {
      const first = await makeUser(server.db);
      const second = await makeUser(server.db);
      const firstToken = (await mintToken(server.db, first, { scopes: ['workout:write'] })).token;
      const secondToken = (await mintToken(server.db, second, { scopes: ['workout:write'] })).token;

      // A declared 1 MB body leaves room for a small file next to it.
      const declared = heldUpload(server, firstToken, tenHourRide().bytes, { requestId: 'bytes-declared' });
      await admitted('bytes-declared');
      expect((await upload(server, secondToken, smallRide(20))).status).toBe(201);
      expect((await declared.finish()).status).toBe(201);

      // A chunked body may be as large as the limit: it takes all the bytes until it has arrived.
      const chunked = heldUpload(server, firstToken, smallRide(21), {
        requestId: 'bytes-chunked',
        declareLength: false,
      });
      await admitted('bytes-chunked');
      const refused = await upload(server, secondToken, smallRide(22));
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('fit_decode_queue_full');
      expect(refused.headers.get('retry-after')).not.toBeNull();
      expect((await chunked.finish()).status).toBe(201);
      expect(await storedWorkouts(server, second)).toBe(1);
    } finally {
      await server.stop();
    }
  });
});

describe('the decode bounds', () => {
  it('refuses a file that takes longer than PACER_FIT_DECODE_TIMEOUT_MS with 422 fit_decode_timeout, storing nothing', async () => {
    // A 10-hour ride takes over 100 ms to decode; 20 ms is not enough.
    const server = await startTestServer({ ...NO_UPLOAD_LIMIT, PACER_FIT_DECODE_TIMEOUT_MS: '20' });
    try {
      const user = await makeUser(server.db);
      const { token } = await mintToken(server.db, user, { scopes: ['workout:write'] });
      const res = await upload(server, token, tenHourRide().bytes);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('fit_decode_timeout');
      expect(res.body.detail).toContain('took longer than');
      expect(res.body.errors?.[0]?.path).toBe('file');
      expect(await storedWorkouts(server, user)).toBe(0);
    } finally {
      await server.stop();
    }
  });

  it('holds the first read of the streams to the record limit: 422 fit_too_many_records, nothing cached', async () => {
    const server = await startTestServer(NO_UPLOAD_LIMIT);
    // A second API process on the same database whose limit is below the stored file's 3 600 records.
    const strict = await startTestServer({ PACER_FIT_MAX_RECORDS: '1000' }, { database: server.database });
    try {
      const user = await makeUser(server.db);
      const { token } = await mintToken(server.db, user, { scopes: ['workout:write', 'workout:read'] });
      const stored = await upload<{ id: string }>(server, token, oneHourRide().bytes);
      expect(stored.status).toBe(201);
      const res = await call<Problem>(strict.url, 'GET', `/api/workouts/${stored.body.id}/streams`, { token });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('fit_too_many_records');
      const cached = await server.db.selectFrom('workoutStreams').select('workoutId').execute();
      expect(cached).toHaveLength(0);
    } finally {
      await strict.stop();
      await server.stop();
    }
  });
});

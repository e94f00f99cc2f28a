/**
 * PACER_RECORD_TRAFFIC and test/tools/prism-traffic.ts: a real session's REST
 * exchanges are recorded as JSON Lines and checked against openapi.json with
 * Stoplight Prism's own validator, which finds nothing to object to, and does
 * object to an answer broken on purpose (so the first check can fail).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedExchange } from '../../server/src/http/traffic-recorder.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { oneHourRide } from '../support/fit-fixtures.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { readRecording, validateTraffic } from '../tools/prism-traffic.ts';

let server: TestServer;
let token: string;
let dir: string;
let recording: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pacer-traffic-'));
  recording = path.join(dir, 'traffic.jsonl');
  server = await startTestServer({ PACER_RECORD_TRAFFIC: recording });
  const athlete = await makeUser(server.db, { timeZone: 'Europe/Berlin' });
  token = (
    await mintToken(server.db, athlete, {
      scopes: ['health:read', 'health:write', 'planning:read', 'planning:write', 'profile:read', 'workout:write'],
    })
  ).token;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function call(method: string, route: string, body?: unknown): Promise<number> {
  const res = await fetch(`${server.url}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function upload(): Promise<number> {
  const form = new FormData();
  form.append('file', new Blob([Buffer.from(oneHourRide().bytes)]), 'ride.fit');
  form.append('name', 'Recorded ride');
  const res = await fetch(`${server.url}/api/workouts/upload-fit`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  await res.arrayBuffer();
  return res.status;
}

describe('the recorded traffic against openapi.json, with Prism', () => {
  let exchanges: RecordedExchange[];

  beforeAll(async () => {
    const statuses = [
      await call('POST', '/api/wellness', { date: '2026-11-20', hrv: 61, restingHr: 46 }),
      await call('POST', '/api/wellness', { date: '2026-11-20', sleepSecs: 27_000 }),
      await call('GET', '/api/wellness?from=2026-11-01&to=2026-11-30&limit=1'),
      await call('POST', '/api/planned-workouts', { date: '2026-12-01', sport: 'run', title: 'Easy', structure: null }),
      await call('GET', '/api/planned-workouts?from=2026-11-01&to=2026-12-31'),
      await call('GET', '/api/profile'),
      await upload(),
      await call('GET', '/api/planned-workouts/6f1c2a9e-3a1b-4c3d-9e8f-0a1b2c3d4e5f'),
      await call('POST', '/api/wellness', { date: '2026-11-21', hrv: 'high' }),
    ];
    expect(statuses).toEqual([201, 200, 200, 201, 200, 200, 201, 404, 400]);
    exchanges = await readRecording(recording);
  }, 60_000);

  it('records each exchange: method, URL, status, headers, JSON bodies; the upload body and credentials are not kept', async () => {
    expect(
      exchanges.map((exchange) => `${exchange.method} ${exchange.url.split('?')[0]} ${exchange.response.status}`),
    ).toEqual([
      'POST /api/wellness 201',
      'POST /api/wellness 200',
      'GET /api/wellness 200',
      'POST /api/planned-workouts 201',
      'GET /api/planned-workouts 200',
      'GET /api/profile 200',
      'POST /api/workouts/upload-fit 201',
      'GET /api/planned-workouts/6f1c2a9e-3a1b-4c3d-9e8f-0a1b2c3d4e5f 404',
      'POST /api/wellness 400',
    ]);
    const [created] = exchanges;
    expect(created?.request.body).toEqual({ date: '2026-11-20', hrv: 61, restingHr: 46 });
    expect(created?.response.body).toMatchObject({ date: '2026-11-20', hrv: 61, restingHr: 46 });
    expect(created?.response.headers['x-request-id']).toEqual(expect.any(String));
    const uploaded = exchanges[6];
    expect(uploaded?.request.bodySkipped).toBe('not-json');
    expect(uploaded?.response.body).toMatchObject({ name: 'Recorded ride' });
    expect(await readFile(recording, 'utf8')).not.toContain(token);
  });

  it('finds no violation: every answer, and every request the service accepted, is what the document says', async () => {
    const report = await validateTraffic(exchanges);
    expect(report.violations).toEqual([]);
    expect(report).toMatchObject({ exchanges: 9, unrouted: 0 });
    // The deliberately bad wellness body: Prism refuses it too (counted apart, not as a violation).
    expect(report.refusedRequestFindings).toBeGreaterThan(0);
  });

  it('reports an answer broken on purpose: a mistyped body field, a missing required header, a mistyped header', async () => {
    const broken = exchanges.slice(0, 1).map((exchange) => {
      const { 'x-request-id': _dropped, ...headers } = exchange.response.headers;
      return {
        ...exchange,
        response: {
          ...exchange.response,
          headers: { ...headers, 'ratelimit-remaining': 'lots' },
          body: { ...(exchange.response.body as object), hrv: 'high' },
        },
      };
    });
    const report = await validateTraffic(broken);
    const found = report.violations.map(
      (violation) => `${violation.side} ${violation.where} ${violation.path}: ${violation.message}`,
    );
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^output POST \/api\/wellness 201 body\.hrv: /),
        expect.stringMatching(/^output POST \/api\/wellness 201 header: .*required property 'x-request-id'/),
        expect.stringMatching(/^output POST \/api\/wellness 201 header\.ratelimit-remaining: /),
      ]),
    );
  });

  it('reports a request the service accepted but the document refuses', async () => {
    const [created] = exchanges;
    if (!created) throw new Error('nothing recorded');
    const report = await validateTraffic([{ ...created, request: { ...created.request, body: { hrv: 61 } } }]);
    expect(report.violations).toEqual([
      expect.objectContaining({ side: 'input', where: 'POST /api/wellness 201', path: 'body' }),
    ]);
  });
});

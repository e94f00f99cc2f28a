// Webhook ingest (POST /api/webhooks/oauth/{clientId}) against the real server
// and database: unknown client, secret in the header / query / missing / wrong,
// HMAC signatures over the raw bytes (valid, expired, forged, other bytes),
// body limits and content types, the exact acknowledgement, redaction of
// secrets in what is stored, X-Webhook-Id de-duplication (sequential and
// concurrent, per app, unmatched deliveries not taking the id), and secret
// rotation through `npm run pacer -- app:webhook-secret` taking effect at once.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OauthClient, User } from '../../server/src/db/tables.ts';
import { makeUser, makeWebhookApp, mintToken } from '../support/factories.ts';
import { asProblem, call } from '../support/http.ts';
import { runPacer } from '../support/process.ts';
import { startTestServer, TEST_SECRET_KEY, type TestServer } from '../support/test-server.ts';
import {
  deliver,
  deliveryRows,
  findDeliveryRow,
  sign,
  waitForState,
  type DeliverResponse,
  type DeliveryRow,
} from '../support/webhooks.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

interface AppFixture {
  readonly user: User;
  readonly client: OauthClient;
  readonly clientId: string;
  readonly secret: string;
  /** The user's token for reading wellness back through the REST API. */
  readonly readToken: string;
}

/** A user who owns an app with a webhook secret and granted it health:write. */
async function newApp(): Promise<AppFixture> {
  const user = await makeUser(server.db);
  const { client, webhookSecret } = await makeWebhookApp(server.db, user);
  await mintToken(server.db, user, { scopes: ['health:write'], client });
  const readToken = (await mintToken(server.db, user, { scopes: ['health:read'] })).token;
  return { user, client, clientId: client.clientId, secret: webhookSecret, readToken };
}

const wellness = (user: User, date: string, data: Record<string, unknown> = {}) => ({
  event: 'wellness.upsert',
  user: user.id,
  data: { date, ...data },
});

async function wellnessOn(app: AppFixture, date: string): Promise<Record<string, unknown> | undefined> {
  const res = await call<{ items: Record<string, unknown>[] }>(
    server.url,
    'GET',
    `/api/wellness?from=${date}&to=${date}`,
    { token: app.readToken },
  );
  expect(res.status).toBe(200);
  return res.body.items[0];
}

async function storedRow(res: DeliverResponse): Promise<DeliveryRow> {
  expect(res.deliveryId).toMatch(/^[0-9a-f-]{36}$/);
  const row = await findDeliveryRow(server.db, res.deliveryId ?? '');
  if (!row) throw new Error(`delivery ${res.deliveryId} not stored`);
  return row;
}

/** The acknowledgement is exactly the specification's §2.5 body (plus `duplicate` when asked for). */
function expectAck(res: DeliverResponse, secretMatched: boolean, duplicate = false): void {
  expect(res.status).toBe(200);
  const expectedKeys = ['message', 'receivedAt', 'secretMatched', 'status', ...(duplicate ? ['duplicate'] : [])];
  expect(Object.keys(res.body).sort()).toEqual(expectedKeys.sort());
  expect(res.body).toMatchObject({ status: 'success', message: 'Data captured', secretMatched });
  if (duplicate) expect(res.body['duplicate']).toBe(true);
  const receivedAt = String(res.body['receivedAt']);
  expect(receivedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  expect(Math.abs(Date.parse(receivedAt) - Date.now())).toBeLessThan(60_000);
}

async function countAllDeliveries(): Promise<number> {
  const row = await server.db
    .selectFrom('webhookDeliveries')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

describe('POST /api/webhooks/oauth/{clientId}: who is sending', () => {
  it('answers 404 not_found for an unknown client and stores nothing', async () => {
    const before = await countAllDeliveries();
    const res = await call(server.url, 'POST', '/api/webhooks/oauth/no-such-client', {
      body: { event: 'wellness.upsert' },
      headers: { 'x-webhook-secret': 'whatever' },
    });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(asProblem(res.body).code).toBe('not_found');
    expect(res.headers.get('x-webhook-delivery-id')).toBeNull();
    expect(await countAllDeliveries()).toBe(before);
  });

  it('stores a delivery with a wrong secret as rejected (secret_mismatch) and never processes it', async () => {
    const app = await newApp();
    const res = await deliver(server, app.clientId, wellness(app.user, '2026-03-01', { hrv: 99 }), {
      secret: `${app.secret}x`,
    });
    expectAck(res, false);
    const row = await storedRow(res);
    expect(row).toMatchObject({
      clientId: app.clientId,
      state: 'rejected',
      secretMatched: false,
      authMethod: null,
      errorCode: 'secret_mismatch',
      attempts: 0,
      event: 'wellness.upsert',
    });
    expect(row.receivedAt.toISOString()).toBe(res.body['receivedAt']);

    // A matched delivery sent afterwards is processed; the rejected one still is not.
    const later = await deliver(server, app.clientId, wellness(app.user, '2026-03-02', { hrv: 40 }), {
      secret: app.secret,
    });
    expectAck(later, true);
    await waitForState(server.db, later.deliveryId ?? '', ['processed']);
    expect(await wellnessOn(app, '2026-03-02')).toMatchObject({ hrv: 40 });
    expect(await wellnessOn(app, '2026-03-01')).toBeUndefined();
    expect(await findDeliveryRow(server.db, row.id)).toMatchObject({ state: 'rejected', attempts: 0, startedAt: null });
  });

  it('stores a delivery without any secret as rejected and never processes it', async () => {
    const app = await newApp();
    const res = await deliver(server, app.clientId, wellness(app.user, '2026-03-03', { hrv: 77 }));
    expectAck(res, false);
    const row = await storedRow(res);
    expect(row).toMatchObject({ state: 'rejected', secretMatched: false, errorCode: 'secret_mismatch', attempts: 0 });

    const later = await deliver(server, app.clientId, wellness(app.user, '2026-03-04', { hrv: 41 }), {
      secret: app.secret,
    });
    await waitForState(server.db, later.deliveryId ?? '', ['processed']);
    expect(await wellnessOn(app, '2026-03-03')).toBeUndefined();
    expect((await findDeliveryRow(server.db, row.id))?.state).toBe('rejected');
  });

  it('accepts the secret in X-Webhook-Secret and in ?secret=, and stores neither', async () => {
    const app = await newApp();
    const byHeader = await deliver(server, app.clientId, wellness(app.user, '2026-03-05', { hrv: 50 }), {
      secret: app.secret,
      query: { source: 'garmin' },
      headers: { 'x-trace': 'abc' },
    });
    expectAck(byHeader, true);
    const byQuery = await deliver(server, app.clientId, wellness(app.user, '2026-03-06', { hrv: 51 }), {
      query: { secret: app.secret, source: 'garmin' },
    });
    expectAck(byQuery, true);

    const headerRow = await storedRow(byHeader);
    expect(headerRow).toMatchObject({ secretMatched: true, authMethod: 'header' });
    expect(headerRow.headers['x-webhook-secret']).toBe('[redacted]');
    expect(headerRow.headers['x-trace']).toBe('abc');
    expect(headerRow.query).toEqual({ source: 'garmin' });
    expect(headerRow.sourceIp).toBeTruthy();

    const queryRow = await storedRow(byQuery);
    expect(queryRow).toMatchObject({ secretMatched: true, authMethod: 'query' });
    expect(queryRow.query).toEqual({ secret: '[redacted]', source: 'garmin' });

    for (const row of [headerRow, queryRow]) {
      expect(JSON.stringify(row)).not.toContain(app.secret);
      const raw = await sql<{
        text: string;
      }>`select w::text as text from webhook_deliveries w where id = ${row.id}`.execute(server.db);
      expect(raw.rows[0]?.text).not.toContain(app.secret);
    }
    const processed = await Promise.all(
      [byHeader, byQuery].map((res) => waitForState(server.db, res.deliveryId ?? '', ['processed'])),
    );
    expect(processed.map((row) => row.attempts)).toEqual([1, 1]);
    expect(await wellnessOn(app, '2026-03-05')).toMatchObject({ hrv: 50 });
    expect(await wellnessOn(app, '2026-03-06')).toMatchObject({ hrv: 51 });
  });

  it("does not match another app's secret", async () => {
    const app = await newApp();
    const other = await newApp();
    const res = await deliver(server, app.clientId, wellness(app.user, '2026-03-07'), { secret: other.secret });
    expectAck(res, false);
    expect((await storedRow(res)).state).toBe('rejected');
  });
});

describe('signed deliveries (X-Webhook-Timestamp + X-Webhook-Signature)', () => {
  it('accepts a v1 HMAC-SHA256 over timestamp "." raw body', async () => {
    const app = await newApp();
    const res = await deliver(server, app.clientId, wellness(app.user, '2026-04-01', { hrv: 61 }), {
      signWith: app.secret,
    });
    expectAck(res, true);
    const row = await storedRow(res);
    expect(row).toMatchObject({ secretMatched: true, authMethod: 'signature' });
    expect(JSON.stringify(row)).not.toContain(app.secret);
    await waitForState(server.db, row.id, ['processed']);
    expect(await wellnessOn(app, '2026-04-01')).toMatchObject({ hrv: 61 });
  });

  it('refuses a signature whose timestamp is more than 5 minutes old or ahead', async () => {
    const app = await newApp();
    const now = Math.floor(Date.now() / 1000);
    const old = await deliver(server, app.clientId, wellness(app.user, '2026-04-02', { hrv: 62 }), {
      signWith: app.secret,
      timestamp: now - 6 * 60,
    });
    expectAck(old, false);
    const ahead = await deliver(server, app.clientId, wellness(app.user, '2026-04-02', { hrv: 62 }), {
      signWith: app.secret,
      timestamp: now + 6 * 60,
    });
    expectAck(ahead, false);
    for (const res of [old, ahead]) {
      expect(await storedRow(res)).toMatchObject({ state: 'rejected', errorCode: 'secret_mismatch', authMethod: null });
    }
    // Within the window (4 minutes old) it still matches.
    const recent = await deliver(server, app.clientId, wellness(app.user, '2026-04-02', { hrv: 62 }), {
      signWith: app.secret,
      timestamp: now - 4 * 60,
    });
    expectAck(recent, true);
  });

  it('refuses a forged signature, one made with another secret, and one without a timestamp', async () => {
    const app = await newApp();
    const body = wellness(app.user, '2026-04-03');
    const forged = await deliver(server, app.clientId, body, { signature: `v1=${'ab'.repeat(32)}` });
    expectAck(forged, false);
    const otherSecret = await deliver(server, app.clientId, body, { signWith: `${app.secret}-not` });
    expectAck(otherSecret, false);
    const noTimestamp = await fetch(`${server.url}/api/webhooks/oauth/${app.clientId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-webhook-signature': sign(app.secret, '', JSON.stringify(body)),
      },
      body: JSON.stringify(body),
    });
    expect(noTimestamp.status).toBe(200);
    expect(((await noTimestamp.json()) as { secretMatched: boolean }).secretMatched).toBe(false);
    expect((await storedRow(forged)).state).toBe('rejected');
    expect((await storedRow(otherSecret)).state).toBe('rejected');
  });

  it('checks the signature over the raw bytes: the same JSON with other whitespace does not match', async () => {
    const app = await newApp();
    const body = wellness(app.user, '2026-04-04', { hrv: 64 });
    const sentBytes = JSON.stringify(body, null, 2);
    const timestamp = Math.floor(Date.now() / 1000);
    const overOtherBytes = await deliver(server, app.clientId, body, {
      rawBody: sentBytes,
      timestamp,
      signature: sign(app.secret, timestamp, JSON.stringify(body)),
    });
    expectAck(overOtherBytes, false);
    const row = await storedRow(overOtherBytes);
    expect(row.state).toBe('rejected');
    expect(row.body).toBe(sentBytes);

    const overSentBytes = await deliver(server, app.clientId, body, {
      rawBody: sentBytes,
      timestamp,
      signature: sign(app.secret, timestamp, sentBytes),
    });
    expectAck(overSentBytes, true);
    expect((await storedRow(overSentBytes)).body).toBe(sentBytes);
  });
});

describe('what a body may be', () => {
  it('answers 413 for a body over 1 MiB and stores nothing', async () => {
    const app = await newApp();
    const big = JSON.stringify({ event: 'wellness.upsert', pad: 'x'.repeat(1024 * 1024) });
    const res = await deliver(server, app.clientId, undefined, { rawBody: big, secret: app.secret });
    expect(res.status).toBe(413);
    expect(res.body['code']).toBe('payload_too_large');
    expect(res.deliveryId).toBeNull();
    expect(await deliveryRows(server.db, app.clientId)).toEqual([]);

    // Just under the limit is fine.
    const fits = JSON.stringify({ event: 'padding', pad: 'x'.repeat(1024 * 1024 - 100) });
    expectAck(await deliver(server, app.clientId, undefined, { rawBody: fits, secret: app.secret }), true);
  });

  it('answers 400 invalid_json for a body that is not JSON, 415 for another content type, and stores nothing', async () => {
    const app = await newApp();
    const notJson = await deliver(server, app.clientId, undefined, { rawBody: '{"event": ', secret: app.secret });
    expect(notJson.status).toBe(400);
    expect(notJson.body['code']).toBe('invalid_json');
    const text = await deliver(
      server,
      app.clientId,
      { event: 'wellness.upsert' },
      {
        contentType: 'text/plain',
        secret: app.secret,
      },
    );
    expect(text.status).toBe(415);
    expect(text.body['code']).toBe('unsupported_media_type');
    const scalar = await deliver(server, app.clientId, 42, { secret: app.secret });
    expect(scalar.status).toBe(400);
    const string = await deliver(server, app.clientId, 'hello', { secret: app.secret });
    expect(string.status).toBe(400);
    for (const res of [notJson, text, scalar, string]) expect(res.deliveryId).toBeNull();
    expect(await deliveryRows(server.db, app.clientId)).toEqual([]);
  });

  it('accepts an array body and a +json content type', async () => {
    const app = await newApp();
    const array = await deliver(
      server,
      app.clientId,
      [wellness(app.user, '2026-04-10', { hrv: 70 }), wellness(app.user, '2026-04-11', { hrv: 71 })],
      { secret: app.secret },
    );
    expectAck(array, true);
    const row = await storedRow(array);
    expect(row.event).toBeNull();
    await waitForState(server.db, row.id, ['processed']);
    expect(await wellnessOn(app, '2026-04-11')).toMatchObject({ hrv: 71 });

    const vendorType = await deliver(server, app.clientId, wellness(app.user, '2026-04-12'), {
      secret: app.secret,
      contentType: 'application/vnd.sender+json; charset=utf-8',
    });
    expectAck(vendorType, true);
  });
});

describe('X-Webhook-Id', () => {
  it('acknowledges a repeated id with duplicate:true, stores it as ignored and does not process it again', async () => {
    const app = await newApp();
    const webhookId = `evt-${randomUUID()}`;
    const first = await deliver(server, app.clientId, wellness(app.user, '2026-05-01', { hrv: 30 }), {
      secret: app.secret,
      webhookId,
    });
    expectAck(first, true);
    await waitForState(server.db, first.deliveryId ?? '', ['processed']);

    const second = await deliver(server, app.clientId, wellness(app.user, '2026-05-01', { hrv: 31 }), {
      secret: app.secret,
      webhookId,
    });
    expectAck(second, true, true);
    expect(second.deliveryId).not.toBe(first.deliveryId);
    expect(await storedRow(second)).toMatchObject({
      state: 'ignored',
      errorCode: 'duplicate',
      duplicateOf: first.deliveryId,
      webhookId,
      attempts: 0,
    });
    // Another delivery, processed after it, proves the worker had its chance.
    const marker = await deliver(server, app.clientId, wellness(app.user, '2026-05-02', { hrv: 32 }), {
      secret: app.secret,
    });
    await waitForState(server.db, marker.deliveryId ?? '', ['processed']);
    expect(await wellnessOn(app, '2026-05-01')).toMatchObject({ hrv: 30 });
    expect((await findDeliveryRow(server.db, second.deliveryId ?? ''))?.state).toBe('ignored');
    expect((await findDeliveryRow(server.db, first.deliveryId ?? ''))?.attempts).toBe(1);
  });

  it('lets exactly one of 10 concurrent deliveries with the same id through', async () => {
    const app = await newApp();
    const webhookId = `evt-${randomUUID()}`;
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        deliver(server, app.clientId, wellness(app.user, '2026-05-03', { steps: 1000 + index }), {
          secret: app.secret,
          webhookId,
        }),
      ),
    );
    for (const res of responses) expect(res.status).toBe(200);
    const winners = responses.filter((res) => res.body['duplicate'] === undefined);
    expect(winners).toHaveLength(1);
    const winner = winners[0];
    if (!winner) throw new Error('unreachable');
    expectAck(winner, true);
    for (const res of responses) if (res !== winner) expectAck(res, true, true);

    await waitForState(server.db, winner.deliveryId ?? '', ['processed']);
    const rows = await deliveryRows(server.db, app.clientId);
    expect(rows).toHaveLength(10);
    const byState = rows.reduce<Record<string, number>>(
      (counts, row) => ({ ...counts, [row.state]: (counts[row.state] ?? 0) + 1 }),
      {},
    );
    expect(byState).toEqual({ processed: 1, ignored: 9 });
    for (const row of rows) if (row.state === 'ignored') expect(row.duplicateOf).toBe(winner.deliveryId);
    const winnerSteps = JSON.parse((await storedRow(winner)).body) as { data: { steps: number } };
    expect(await wellnessOn(app, '2026-05-03')).toMatchObject({ steps: winnerSteps.data.steps });
  });

  it('is per app: the same id from another app is not a duplicate', async () => {
    const a = await newApp();
    const b = await newApp();
    const webhookId = `evt-${randomUUID()}`;
    const fromA = await deliver(server, a.clientId, wellness(a.user, '2026-05-04', { hrv: 44 }), {
      secret: a.secret,
      webhookId,
    });
    const fromB = await deliver(server, b.clientId, wellness(b.user, '2026-05-04', { hrv: 45 }), {
      secret: b.secret,
      webhookId,
    });
    expectAck(fromA, true);
    expectAck(fromB, true);
    await waitForState(server.db, fromA.deliveryId ?? '', ['processed']);
    await waitForState(server.db, fromB.deliveryId ?? '', ['processed']);
    expect(await wellnessOn(b, '2026-05-04')).toMatchObject({ hrv: 45 });
  });

  it('is not taken by a delivery whose secret did not match', async () => {
    const app = await newApp();
    const webhookId = `evt-${randomUUID()}`;
    const unmatched = await deliver(server, app.clientId, wellness(app.user, '2026-05-05', { hrv: 1 }), {
      secret: 'guess',
      webhookId,
    });
    expectAck(unmatched, false);
    expect(await storedRow(unmatched)).toMatchObject({ state: 'rejected', webhookId, duplicateOf: null });
    const matched = await deliver(server, app.clientId, wellness(app.user, '2026-05-05', { hrv: 55 }), {
      secret: app.secret,
      webhookId,
    });
    expectAck(matched, true);
    await waitForState(server.db, matched.deliveryId ?? '', ['processed']);
    expect(await wellnessOn(app, '2026-05-05')).toMatchObject({ hrv: 55 });
  });
});

describe('secret rotation (npm run pacer -- app:webhook-secret)', () => {
  it('takes effect with the very next request: the old secret stops matching, the new one (and its signature) matches', async () => {
    const app = await newApp();
    const before = await deliver(server, app.clientId, wellness(app.user, '2026-06-01', { hrv: 20 }), {
      secret: app.secret,
    });
    expectAck(before, true);
    const beforeSigned = await deliver(server, app.clientId, wellness(app.user, '2026-06-01', { hrv: 21 }), {
      signWith: app.secret,
    });
    expectAck(beforeSigned, true);

    const rotated = await runPacer(['app:webhook-secret', '--client-id', app.clientId, '--json'], {
      ...process.env,
      DATABASE_URL: server.databaseUrl,
      PACER_BASE_URL: server.config.baseUrl,
      PACER_SECRET_KEY: TEST_SECRET_KEY,
      PACER_LOG_LEVEL: 'silent',
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    const output = JSON.parse(rotated.stdout) as { clientId: string; webhookSecret: string };
    expect(output.clientId).toBe(app.clientId);
    expect(output.webhookSecret).toEqual(expect.any(String));
    expect(output.webhookSecret).not.toBe(app.secret);

    const oldSecret = await deliver(server, app.clientId, wellness(app.user, '2026-06-02', { hrv: 22 }), {
      secret: app.secret,
    });
    expectAck(oldSecret, false);
    expect((await storedRow(oldSecret)).state).toBe('rejected');
    const oldSigned = await deliver(server, app.clientId, wellness(app.user, '2026-06-02', { hrv: 22 }), {
      signWith: app.secret,
    });
    expectAck(oldSigned, false);

    const newSecret = await deliver(server, app.clientId, wellness(app.user, '2026-06-03', { hrv: 23 }), {
      secret: output.webhookSecret,
    });
    expectAck(newSecret, true);
    // The server can check a signature made with the new secret: the CLI sealed it with the shared key.
    const newSigned = await deliver(server, app.clientId, wellness(app.user, '2026-06-04', { hrv: 24 }), {
      signWith: output.webhookSecret,
    });
    expectAck(newSigned, true);
    expect((await storedRow(newSigned)).authMethod).toBe('signature');

    await waitForState(server.db, newSigned.deliveryId ?? '', ['processed']);
    await waitForState(server.db, newSecret.deliveryId ?? '', ['processed']);
    expect(await wellnessOn(app, '2026-06-02')).toBeUndefined();
    expect(await wellnessOn(app, '2026-06-04')).toMatchObject({ hrv: 24 });
  });
});

// The incoming webhook endpoint (POST /api/webhooks/oauth/{clientId}) attacked as anyone on the
// internet can (issue 18): client ids are public, so floods, oversized and deeply nested bodies
// and re-sent signed deliveries come without the secret. Each test is an attack and what stops it:
// rate limits per address and per app decided before the body is read (429 + Retry-After), a
// bounded preview instead of the payload for a delivery whose secret did not match, a cap on an
// app's rejected bytes (oldest dropped first), `json_too_deep` before a body is parsed, a webhook
// log that answers 200 whatever was stored before these defences, and signed re-sends without
// X-Webhook-Id de-duplicated by their signature.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Problem, WebhookDelivery } from '@pacer/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OauthClient, User } from '../../server/src/db/tables.ts';
import { makeUser, makeWebhookApp, mintToken } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { signIn } from '../support/oauth-flow.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { deliver, deliveryRows, findDeliveryRow, sign, waitForState } from '../support/webhooks.ts';

const MIB = 1024 * 1024;
const PREVIEW_BYTES = 4096;

/** The default configuration, as `npm start` runs it. */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

interface AppFixture {
  readonly owner: User;
  readonly client: OauthClient;
  readonly clientId: string;
  readonly secret: string;
}

async function newApp(on: TestServer = server): Promise<AppFixture> {
  const owner = await makeUser(on.db);
  const { client, webhookSecret } = await makeWebhookApp(on.db, owner);
  await mintToken(on.db, owner, { scopes: ['health:write'], client });
  return { owner, client, clientId: client.clientId, secret: webhookSecret };
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** A JSON body of about `bytes` bytes that does not compress (random text). */
function randomJson(bytes: number): string {
  const pad = randomBytes(Math.ceil((bytes * 3) / 4)).toString('base64');
  const head = '{"event":"flood","pad":"';
  return `${head}${pad.slice(0, bytes - head.length - 2)}"}`;
}

function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

async function countDeliveries(on: TestServer, clientId: string): Promise<number> {
  return (await deliveryRows(on.db, clientId)).length;
}

async function databaseBytes(on: TestServer): Promise<number> {
  const { rows } = await sql<{ size: string }>`select pg_database_size(current_database()) as size`.execute(on.db);
  return Number(rows[0]?.size);
}

/** Run `task` for 0..count-1, `concurrency` at a time. */
async function inParallel(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

describe('flooding the endpoint: rate limits decided before the body is read', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({
      PACER_TRUST_PROXY: '1',
      PACER_WEBHOOK_RATE_LIMIT_IP_PER_MINUTE: '3',
      PACER_WEBHOOK_RATE_LIMIT_APP_PER_MINUTE: '5',
    });
  });
  afterAll(async () => {
    await limited?.stop();
  });

  const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });

  it('refuses an address past its window with 429 rate_limited, Retry-After and RateLimit-*, storing nothing', async () => {
    const app = await newApp(limited);
    const other = await newApp(limited);
    for (let index = 0; index < 3; index++) {
      const res = await deliver(limited, app.clientId, { event: 'guess', index }, from('198.51.100.7'));
      expect(res.status).toBe(200);
    }
    const stored = await countDeliveries(limited, app.clientId);
    expect(stored).toBe(3);

    // The fourth from that address, even to another app and even with the right secret, is refused.
    for (const [clientId, secret] of [
      [app.clientId, undefined],
      [other.clientId, other.secret],
    ] as const) {
      const response = await fetch(`${limited.url}/api/webhooks/oauth/${clientId}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-forwarded-for': '198.51.100.7',
          ...(secret ? { 'x-webhook-secret': secret } : {}),
        },
        body: JSON.stringify({ event: 'guess' }),
      });
      expect(response.status).toBe(429);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      const problem = (await response.json()) as Problem;
      expect(problem.code).toBe('rate_limited');
      expect(problem.detail).toContain('from this address');
      const retryAfter = Number(response.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(response.headers.get('ratelimit-limit')).toBe('3');
      expect(response.headers.get('ratelimit-remaining')).toBe('0');
      expect(response.headers.get('x-webhook-delivery-id')).toBeNull();
    }
    expect(await countDeliveries(limited, app.clientId)).toBe(stored);
    expect(await countDeliveries(limited, other.clientId)).toBe(0);

    // Another address is counted apart.
    const elsewhere = await deliver(
      limited,
      other.clientId,
      { event: 'x' },
      { ...from('198.51.100.8'), secret: other.secret },
    );
    expect(elsewhere.status).toBe(200);
  });

  it('refuses a refused address before reading its body: a body over 1 MiB or not JSON gets 429, not 413 or 400', async () => {
    const app = await newApp(limited);
    for (let index = 0; index < 3; index++) {
      expect((await deliver(limited, app.clientId, { index }, from('198.51.100.9'))).status).toBe(200);
    }
    const oversized = await deliver(limited, app.clientId, undefined, {
      ...from('198.51.100.9'),
      rawBody: randomJson(MIB + 1024),
    });
    expect(oversized.status).toBe(429);
    const notJson = await deliver(limited, app.clientId, undefined, { ...from('198.51.100.9'), rawBody: '{"a": ' });
    expect(notJson.status).toBe(429);
    expect(notJson.body['code']).toBe('rate_limited');
  });

  it("refuses an app flooded from many addresses with 429 while other apps and the app's window stay apart", async () => {
    const target = await newApp(limited);
    const bystander = await newApp(limited);
    for (let index = 0; index < 5; index++) {
      const res = await deliver(limited, target.clientId, { index }, from(`203.0.113.${index + 1}`));
      expect(res.status).toBe(200);
    }
    const refused = await deliver(
      limited,
      target.clientId,
      { event: 'x' },
      { ...from('203.0.113.50'), secret: target.secret },
    );
    expect(refused.status).toBe(429);
    expect(refused.body['code']).toBe('rate_limited');
    expect(String(refused.body['detail'])).toContain('to this app');
    expect(await countDeliveries(limited, target.clientId)).toBe(5);

    // The same fresh address still reaches another app, and its answer carries the tightest window.
    const response = await fetch(`${limited.url}/api/webhooks/oauth/${bystander.clientId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-forwarded-for': '203.0.113.51',
        'x-webhook-secret': bystander.secret,
      },
      body: JSON.stringify({ event: 'x' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-limit')).toBe('3');
    expect(response.headers.get('ratelimit-remaining')).toBe('2');
  });
});

describe('filling the disk with deliveries that do not know the secret', () => {
  it('300 unauthenticated 1 MiB POSTs grow the database by under 10 MB: each keeps a 4 KiB preview, its size and hash', async () => {
    const app = await newApp();
    const sent: { body: string; id: string | null }[] = [];
    const before = await databaseBytes(server);
    await inParallel(300, 6, async () => {
      const body = randomJson(MIB - 64);
      const res = await deliver(server, app.clientId, undefined, { rawBody: body });
      expect(res.status).toBe(200);
      expect(res.body['secretMatched']).toBe(false);
      sent.push({ body, id: res.deliveryId });
    });
    const grown = (await databaseBytes(server)) - before;
    expect(grown).toBeLessThan(10 * 1000 * 1000);

    // What is kept of the newest: the start of the text, the size and SHA-256 of what was sent.
    const newest = sent.at(-1);
    if (!newest?.id) throw new Error('no delivery id');
    const row = await findDeliveryRow(server.db, newest.id);
    expect(row).toMatchObject({
      state: 'rejected',
      bodyTruncated: true,
      bodyBytes: Buffer.byteLength(newest.body),
      bodySha256: sha256(newest.body),
    });
    expect(row?.body).toBe(newest.body.slice(0, PREVIEW_BYTES));
  }, 180_000);

  it("keeps an app's rejected deliveries under its byte cap by dropping the oldest, and leaves matched ones whole", async () => {
    const capped = await startTestServer({ PACER_WEBHOOK_REJECTED_BYTES_PER_APP: String(20 * 1024) });
    try {
      const app = await newApp(capped);
      const bigMatched = randomJson(MIB - 64);
      const matched = await deliver(capped, app.clientId, undefined, { rawBody: bigMatched, secret: app.secret });
      expect(matched.body['secretMatched']).toBe(true);

      const rejectedIds: string[] = [];
      for (let index = 0; index < 12; index++) {
        const res = await deliver(capped, app.clientId, undefined, { rawBody: randomJson(64 * 1024) });
        expect(res.status).toBe(200);
        rejectedIds.push(res.deliveryId ?? '');
      }
      const { rows } = await sql<{ id: string; size: number }>`
        select id, pg_column_size(body) + pg_column_size(headers) + pg_column_size(query) as size
        from webhook_deliveries where client_id = ${app.clientId} and state = 'rejected'
        order by received_at desc, id desc`.execute(capped.db);
      // Oldest dropped first: what is left are the newest, in order, within the cap.
      expect(rows.length).toBeGreaterThanOrEqual(2);
      expect(rows.length).toBeLessThan(12);
      expect(rows.map((row) => row.id)).toEqual(rejectedIds.slice(-rows.length).reverse());
      expect(rows.reduce((sum, row) => sum + Number(row.size), 0)).toBeLessThanOrEqual(20 * 1024);

      // The matched delivery is stored as today: the whole body, untouched by the cap.
      const kept = await findDeliveryRow(capped.db, matched.deliveryId ?? '');
      expect(kept?.body).toBe(bigMatched);
      expect(kept).toMatchObject({ bodyTruncated: false, bodyBytes: Buffer.byteLength(bigMatched) });
    } finally {
      await capped.stop();
    }
  });

  it('cuts the preview on a UTF-8 character boundary and shows preview, size and SHA-256 in the portal, not the payload', async () => {
    const app = await newApp();
    // "€" is 3 bytes: the 4096-byte cut falls inside one.
    const body = JSON.stringify({ event: 'wellness.upsert', note: `a${'€'.repeat(3000)}` });
    const rejected = await deliver(server, app.clientId, undefined, { rawBody: body, secret: 'guessed' });
    const matched = await deliver(server, app.clientId, { event: 'hello' }, { secret: app.secret });
    const row = await findDeliveryRow(server.db, rejected.deliveryId ?? '');
    const preview = row?.body ?? '';
    expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(PREVIEW_BYTES);
    expect(Buffer.byteLength(preview)).toBeGreaterThan(PREVIEW_BYTES - 4);
    expect(body.startsWith(preview)).toBe(true);
    expect(preview).not.toContain('\uFFFD');

    const jar = await signIn(server.url, app.owner.email);
    const one = await call<WebhookDelivery>(
      server.url,
      'GET',
      `/api/developer/apps/${app.clientId}/webhooks/${rejected.deliveryId}`,
      { headers: { cookie: jar.header() } },
    );
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      state: 'rejected',
      payload: null,
      payloadPreview: preview,
      payloadBytes: Buffer.byteLength(body),
      payloadSha256: sha256(body),
    });
    const good = await call<WebhookDelivery>(
      server.url,
      'GET',
      `/api/developer/apps/${app.clientId}/webhooks/${matched.deliveryId}`,
      { headers: { cookie: jar.header() } },
    );
    expect(good.body).toMatchObject({
      payload: { event: 'hello' },
      payloadPreview: null,
      payloadBytes: Buffer.byteLength('{"event":"hello"}'),
      payloadSha256: sha256('{"event":"hello"}'),
    });

    const page = await fetch(`${server.url}/developer/apps/${app.clientId}/webhooks`, {
      headers: { cookie: jar.header() },
    });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(sha256(body));
    expect(html).toContain(`of ${Buffer.byteLength(body)} bytes: the secret did not match`);
  });
});

describe('deeply nested JSON', () => {
  it('refuses a webhook body nested 200,000 levels (and 65) with 400 json_too_deep, storing nothing; 64 levels pass', async () => {
    const app = await newApp();
    for (const depth of [200_000, 65]) {
      const res = await deliver(server, app.clientId, undefined, { rawBody: nested(depth), secret: app.secret });
      expect(res.status).toBe(400);
      expect(res.body['code']).toBe('json_too_deep');
      expect(res.deliveryId).toBeNull();
    }
    expect(await countDeliveries(server, app.clientId)).toBe(0);
    const deepest = await deliver(server, app.clientId, undefined, { rawBody: nested(64), secret: app.secret });
    expect(deepest.status).toBe(200);
  });

  it('still answers 200 on the webhook log (page and JSON API) after a 200,000-level payload stored by the old code', async () => {
    const app = await newApp();
    const deep = nested(200_000);
    // As ingest stored it before bodies were measured: the whole text, no size or hash recorded.
    const ids = [randomUUID(), randomUUID()];
    for (const [index, id] of ids.entries()) {
      await sql`
        insert into webhook_deliveries (id, client_id, body, headers, query, secret_matched, auth_method, state, finished_at)
        values (${id}, ${app.clientId}, ${deep}, '{}'::jsonb, '{}'::jsonb, ${index === 1},
          ${index === 1 ? 'header' : null}, ${index === 1 ? 'processed' : 'rejected'}, now())`.execute(server.db);
    }
    const jar = await signIn(server.url, app.owner.email);
    const list = await call<{ items: WebhookDelivery[] }>(
      server.url,
      'GET',
      `/api/developer/apps/${app.clientId}/webhooks`,
      { headers: { cookie: jar.header() } },
    );
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(2);
    for (const item of list.body.items) {
      expect(item).toMatchObject({
        payload: null,
        payloadPreview: deep.slice(0, PREVIEW_BYTES),
        payloadBytes: deep.length,
        payloadSha256: sha256(deep),
      });
    }
    for (const id of ids) {
      const one = await call(server.url, 'GET', `/api/developer/apps/${app.clientId}/webhooks/${id}`, {
        headers: { cookie: jar.header() },
      });
      expect(one.status).toBe(200);
    }
    const page = await fetch(`${server.url}/developer/apps/${app.clientId}/webhooks`, {
      headers: { cookie: jar.header() },
    });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('it nests too deeply to show');
  });
});

describe('re-sending a signed delivery without X-Webhook-Id', () => {
  const wellness = (user: User, date: string, steps: number) => ({
    event: 'wellness.upsert',
    user: user.id,
    data: { date, steps },
  });

  it('answers the re-send duplicate:true, stores it ignored and processes the delivery once', async () => {
    const app = await newApp();
    const raw = JSON.stringify(wellness(app.owner, '2026-07-01', 1000));
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = sign(app.secret, timestamp, raw);
    const send = () =>
      fetch(`${server.url}/api/webhooks/oauth/${app.clientId}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-webhook-timestamp': String(timestamp),
          'x-webhook-signature': signature,
        },
        body: raw,
      });
    const first = await send();
    expect(first.status).toBe(200);
    const firstId = first.headers.get('x-webhook-delivery-id') ?? '';
    expect(await first.json()).not.toHaveProperty('duplicate');
    await waitForState(server.db, firstId, ['processed']);

    const again = await send();
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ secretMatched: true, duplicate: true });
    const againRow = await findDeliveryRow(server.db, again.headers.get('x-webhook-delivery-id') ?? '');
    expect(againRow).toMatchObject({ state: 'ignored', errorCode: 'duplicate', duplicateOf: firstId, attempts: 0 });
    // The claim is the signature's SHA-256, not the signature.
    const claims = await server.db
      .selectFrom('webhookSignatures')
      .select(['signatureSha256', 'deliveryId'])
      .where('clientId', '=', app.clientId)
      .execute();
    expect(claims).toEqual([{ signatureSha256: sha256(signature), deliveryId: firstId }]);
    // Nothing of the re-send reaches the queue: only the first delivery ever had a job.
    const { rows } = await sql<{ jobs: number }>`
      select count(*)::int as jobs from pgboss.job
      where name = 'webhooks.deliver' and data->>'deliveryId' = ${againRow?.id ?? ''}`.execute(server.db);
    expect(rows[0]?.jobs).toBe(0);
    expect((await findDeliveryRow(server.db, firstId))?.attempts).toBe(1);
  });

  it('lets exactly one of 8 concurrent copies of a signed delivery through', async () => {
    const app = await newApp();
    const raw = JSON.stringify(wellness(app.owner, '2026-07-02', 2000));
    const timestamp = Math.floor(Date.now() / 1000);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        deliver(server, app.clientId, undefined, {
          rawBody: raw,
          timestamp,
          signature: sign(app.secret, timestamp, raw),
        }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    expect(answers.filter((answer) => answer.body['duplicate'] === undefined)).toHaveLength(1);
    const states = (await deliveryRows(server.db, app.clientId)).map((row) => row.state);
    expect(states.filter((state) => state === 'ignored')).toHaveLength(7);
  });

  it('keeps the documented behaviour elsewhere: a new timestamp is a new delivery, a plain-secret re-send without id is processed again', async () => {
    const app = await newApp();
    const raw = JSON.stringify(wellness(app.owner, '2026-07-03', 3000));
    const now = Math.floor(Date.now() / 1000);
    const signedNow = await deliver(server, app.clientId, undefined, {
      rawBody: raw,
      signWith: app.secret,
      timestamp: now,
    });
    const signedLater = await deliver(server, app.clientId, undefined, {
      rawBody: raw,
      signWith: app.secret,
      timestamp: now + 1,
    });
    const plain = await deliver(server, app.clientId, undefined, { rawBody: raw, secret: app.secret });
    const plainAgain = await deliver(server, app.clientId, undefined, { rawBody: raw, secret: app.secret });
    for (const res of [signedNow, signedLater, plain, plainAgain]) {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ secretMatched: true });
      expect(res.body).not.toHaveProperty('duplicate');
      await waitForState(server.db, res.deliveryId ?? '', ['processed']);
    }
  });

  it('does not let a forged signature take the claim of the genuine one that follows', async () => {
    const app = await newApp();
    const raw = JSON.stringify(wellness(app.owner, '2026-07-04', 4000));
    const timestamp = Math.floor(Date.now() / 1000);
    const forged = await deliver(server, app.clientId, undefined, {
      rawBody: raw,
      timestamp,
      signature: `v1=${'0'.repeat(64)}`,
    });
    expect(forged.body).toMatchObject({ secretMatched: false });
    const genuine = await deliver(server, app.clientId, undefined, { rawBody: raw, timestamp, signWith: app.secret });
    expect(genuine.body).toMatchObject({ secretMatched: true });
    expect(genuine.body).not.toHaveProperty('duplicate');
    await waitForState(server.db, genuine.deliveryId ?? '', ['processed']);
  });
});

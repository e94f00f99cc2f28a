// The developer-portal side of incoming webhooks (issue 5): the session JSON API of `contract.developer`
// (newest first, state filter with counts, cursor pagination, one delivery, replay with the CSRF header,
// 401/403/404/409), the /developer/apps/{clientId}/webhooks page in Chromium (payload, redacted headers,
// secret match, state filter, Replay, escaping of the attacker-controlled payload) and rotating the
// webhook secret from /developer (shown once; the old secret stops matching at once).
import type { Problem, WebhookAck, WebhookDelivery, WebhookDeliveryState } from '@pacer/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OauthClient, User } from '../../server/src/db/tables.ts';
import { sha256Hex } from '../../server/src/lib/crypto.ts';
import { webhookSignature } from '../../server/src/modules/webhooks/webhook-auth.ts';
import { cardHeaded, csrfCookie, usePortalBrowser } from '../support/browser.ts';
import { makeUser, makeWebhookApp, mintToken } from '../support/factories.ts';
import { call, type JsonResponse } from '../support/http.ts';
import { type CookieJar, signIn } from '../support/oauth-flow.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});
const chromium = usePortalBrowser(() => server.url);

interface DeliverOptions {
  readonly secret?: string;
  /** Appended to the path, e.g. `?secret=...`. */
  readonly search?: string;
  readonly headers?: Record<string, string>;
}

/** POST one webhook; returns the delivery id the server answered with and its acknowledgement. */
async function deliver(
  clientId: string,
  body: unknown,
  options: DeliverOptions = {},
): Promise<{ id: string; ack: WebhookAck }> {
  const res = await call<WebhookAck>(server.url, 'POST', `/api/webhooks/oauth/${clientId}${options.search ?? ''}`, {
    body,
    headers: { ...(options.secret === undefined ? {} : { 'x-webhook-secret': options.secret }), ...options.headers },
  });
  expect(res.status).toBe(200);
  const id = res.headers.get('x-webhook-delivery-id');
  if (!id) throw new Error('no X-Webhook-Delivery-Id');
  return { id, ack: res.body };
}

async function deliveryRow(id: string) {
  return server.db.selectFrom('webhookDeliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Wait (no speed asserted) until the worker has brought the delivery to `state`, after `attempts` attempts. */
async function settled(id: string, state: WebhookDeliveryState, attempts?: number): Promise<void> {
  await expect
    .poll(
      async () => {
        const row = await deliveryRow(id);
        return attempts === undefined ? row.state : `${row.state}/${row.attempts}`;
      },
      { timeout: 20_000, interval: 50 },
    )
    .toBe(attempts === undefined ? state : `${state}/${attempts}`);
}

function wellnessEvent(user: User, date: string, hrv: number) {
  return { event: 'wellness.upsert', user: user.id, data: { date, hrv } };
}

/** The session API as the signed-in browser would call it (`jar` undefined: signed out). */
async function api<T = unknown>(
  jar: CookieJar | undefined,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  return call<T>(server.url, method, path, { headers: { ...(jar ? { cookie: jar.header() } : {}), ...headers } });
}

function csrfOf(jar: CookieJar): Record<string, string> {
  return { 'x-csrf-token': jar.get('pacer_csrf') ?? '' };
}

interface DeliveryList {
  readonly items: WebhookDelivery[];
  readonly nextCursor: string | null;
  readonly counts: Record<string, number>;
}

const listPath = (clientId: string, search = '') => `/api/developer/apps/${clientId}/webhooks${search}`;

interface Scenario {
  readonly developer: User;
  readonly client: OauthClient;
  readonly webhookSecret: string;
  /** Granted the app health:write. */
  readonly athlete: User;
  /** Never granted the app. */
  readonly stranger: User;
  /** In the order sent. */
  readonly processed: string;
  readonly failed: string;
  readonly ignored: string;
  readonly rejected: string;
}

/** One app with a delivery in each settled state: processed, failed (no_grant), ignored, rejected. */
async function scenario(name: string, ignoredBody: unknown = { event: 'sleep.scored', score: 80 }): Promise<Scenario> {
  const developer = await makeUser(server.db);
  const { client, webhookSecret } = await makeWebhookApp(server.db, developer, name);
  const athlete = await makeUser(server.db);
  await mintToken(server.db, athlete, { scopes: ['health:write'], client });
  const stranger = await makeUser(server.db);
  const processed = await deliver(client.clientId, wellnessEvent(athlete, '2026-03-10', 50), {
    secret: webhookSecret,
  });
  const failed = await deliver(client.clientId, wellnessEvent(stranger, '2026-03-11', 61), { secret: webhookSecret });
  const ignored = await deliver(client.clientId, ignoredBody, { secret: webhookSecret });
  const rejected = await deliver(client.clientId, wellnessEvent(athlete, '2026-03-12', 70), {
    secret: 'pwh_not-the-secret',
  });
  await settled(processed.id, 'processed');
  await settled(failed.id, 'failed');
  await settled(ignored.id, 'ignored');
  await settled(rejected.id, 'rejected');
  return {
    developer,
    client,
    webhookSecret,
    athlete,
    stranger,
    processed: processed.id,
    failed: failed.id,
    ignored: ignored.id,
    rejected: rejected.id,
  };
}

describe('session JSON API: GET /api/developer/apps/{clientId}/webhooks', () => {
  it('lists the deliveries newest first with counts per state, filters by state and reads one', async () => {
    const s = await scenario('Sleep Sync');
    const jar = await signIn(server.url, s.developer.email);

    const all = await api<DeliveryList>(jar, 'GET', listPath(s.client.clientId));
    expect(all.status).toBe(200);
    expect(all.body.items.map((item) => item.id)).toEqual([s.rejected, s.ignored, s.failed, s.processed]);
    expect(all.body.counts).toEqual({ processed: 1, failed: 1, ignored: 1, rejected: 1 });
    expect(all.body.nextCursor).toBeNull();

    const failed = await api<DeliveryList>(jar, 'GET', listPath(s.client.clientId, '?state=failed'));
    expect(failed.body.items.map((item) => [item.id, item.state, item.errorCode])).toEqual([
      [s.failed, 'failed', 'no_grant'],
    ]);
    // The counts stay those of every state, for the filter's labels.
    expect(failed.body.counts).toEqual(all.body.counts);
    const none = await api<DeliveryList>(jar, 'GET', listPath(s.client.clientId, '?state=dead_letter'));
    expect(none.body.items).toEqual([]);

    const one = await api<WebhookDelivery>(jar, 'GET', listPath(s.client.clientId, `/${s.processed}`));
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      id: s.processed,
      clientId: s.client.clientId,
      event: 'wellness.upsert',
      payload: wellnessEvent(s.athlete, '2026-03-10', 50),
      secretMatched: true,
      authMethod: 'header',
      state: 'processed',
      attempts: 1,
      replays: 0,
      errorCode: null,
      error: null,
    });
    expect(one.body.headers['x-webhook-secret']).toBe('[redacted]');
    expect(one.body.result).toMatchObject({ applied: [{ date: '2026-03-10', created: true }] });
    expect(JSON.stringify(one.body)).not.toContain(s.webhookSecret);

    const rejected = await api<WebhookDelivery>(jar, 'GET', listPath(s.client.clientId, `/${s.rejected}`));
    expect(rejected.body).toMatchObject({ secretMatched: false, state: 'rejected', errorCode: 'secret_mismatch' });
  });

  it('redacts a secret sent in the query and keeps the other parameters', async () => {
    const developer = await makeUser(server.db);
    const { client, webhookSecret } = await makeWebhookApp(server.db, developer);
    const sent = await deliver(client.clientId, { hello: 'world' }, { search: `?source=ring&secret=${webhookSecret}` });
    expect(sent.ack.secretMatched).toBe(true);
    const jar = await signIn(server.url, developer.email);
    const one = await api<WebhookDelivery>(jar, 'GET', listPath(client.clientId, `/${sent.id}`));
    expect(one.body).toMatchObject({ authMethod: 'query', query: { source: 'ring', secret: '[redacted]' } });
    expect(JSON.stringify(one.body)).not.toContain(webhookSecret);
  });

  it('pages with the cursor, with and without a state filter, and refuses a cursor it did not issue', async () => {
    const developer = await makeUser(server.db);
    const { client, webhookSecret } = await makeWebhookApp(server.db, developer);
    const sent: string[] = [];
    for (let index = 0; index < 5; index++) {
      const secret = index % 2 === 0 ? webhookSecret : 'pwh_wrong';
      sent.push((await deliver(client.clientId, { event: 'test.ping', index }, { secret })).id);
    }
    const jar = await signIn(server.url, developer.email);

    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const search: string = `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res: JsonResponse<DeliveryList> = await api<DeliveryList>(jar, 'GET', listPath(client.clientId, search));
      expect(res.status).toBe(200);
      pages.push(res.body.items.map((item) => item.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(pages.map((ids) => ids.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual([...sent].reverse());

    const first = await api<DeliveryList>(jar, 'GET', listPath(client.clientId, '?state=rejected&limit=1'));
    expect(first.body.items.map((item) => item.id)).toEqual([sent[3]]);
    const second = await api<DeliveryList>(
      jar,
      'GET',
      listPath(client.clientId, `?state=rejected&limit=1&cursor=${first.body.nextCursor ?? ''}`),
    );
    expect(second.body.items.map((item) => item.id)).toEqual([sent[1]]);
    expect(second.body.nextCursor).toBeNull();

    const impossibleDay = Buffer.from(JSON.stringify({ r: '2026-02-30T00:00:00.000000Z', i: sent[0] })).toString(
      'base64url',
    );
    for (const forged of ['not-ours', impossibleDay]) {
      const bad = await api<Problem>(jar, 'GET', listPath(client.clientId, `?cursor=${forged}`));
      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-type')).toContain('application/problem+json');
    }
  });

  it('loses no delivery between pages when several arrive within one millisecond', async () => {
    const developer = await makeUser(server.db);
    const { client } = await makeWebhookApp(server.db, developer);
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) {
      ids.push((await deliver(client.clientId, { index }, { secret: 'pwh_wrong' })).id);
    }
    // PostgreSQL keeps microseconds; a JavaScript Date only milliseconds.
    const micros = ['.123456', '.123400', '.123300'];
    for (const [index, id] of ids.entries()) {
      await sql`UPDATE webhook_deliveries SET received_at = ${`2026-11-20T10:00:00${micros[index]}Z`}::timestamptz
        WHERE id = ${id}`.execute(server.db);
    }
    const jar = await signIn(server.url, developer.email);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const search: string = `?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res: JsonResponse<DeliveryList> = await api<DeliveryList>(jar, 'GET', listPath(client.clientId, search));
      seen.push(...res.body.items.map((item) => item.id));
      cursor = res.body.nextCursor;
    } while (cursor && seen.length < 10);
    expect(seen).toEqual(ids);
  });

  it('answers 401 problem+json without a session', async () => {
    const developer = await makeUser(server.db);
    const { client } = await makeWebhookApp(server.db, developer);
    const list = await api<Problem>(undefined, 'GET', listPath(client.clientId));
    expect(list.status).toBe(401);
    expect(list.headers.get('content-type')).toContain('application/problem+json');
    expect(list.body.status).toBe(401);
    const sent = await deliver(client.clientId, { hello: 'world' }, { secret: 'pwh_wrong' });
    expect((await api(undefined, 'GET', listPath(client.clientId, `/${sent.id}`))).status).toBe(401);
    expect((await api(undefined, 'POST', listPath(client.clientId, `/${sent.id}/replay`))).status).toBe(401);
  });

  it("answers 404 for another developer's app, an unknown app and an unknown delivery", async () => {
    const s = await scenario('Guarded Hooks');
    const intruder = await makeUser(server.db);
    await makeWebhookApp(server.db, intruder, 'Intruder app');
    const jar = await signIn(server.url, intruder.email);
    for (const res of [
      await api<Problem>(jar, 'GET', listPath(s.client.clientId)),
      await api<Problem>(jar, 'GET', listPath(s.client.clientId, `/${s.failed}`)),
      await api<Problem>(jar, 'POST', listPath(s.client.clientId, `/${s.failed}/replay`), csrfOf(jar)),
      await api<Problem>(jar, 'GET', listPath('no-such-client')),
    ]) {
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    expect((await deliveryRow(s.failed)).state).toBe('failed');

    const owner = await signIn(server.url, s.developer.email);
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await api(owner, 'GET', listPath(s.client.clientId, `/${unknown}`))).status).toBe(404);
    expect((await api(owner, 'POST', listPath(s.client.clientId, `/${unknown}/replay`), csrfOf(owner))).status).toBe(
      404,
    );
  });
});

describe('session JSON API: POST .../webhooks/{deliveryId}/replay', () => {
  it('re-processes a failed delivery once the user has granted the app; the data is then visible', async () => {
    const s = await scenario('Replay Hooks');
    const jar = await signIn(server.url, s.developer.email);
    expect((await deliveryRow(s.failed)).errorCode).toBe('no_grant');

    await mintToken(server.db, s.stranger, { scopes: ['health:write'], client: s.client });
    const replay = await api<WebhookDelivery>(jar, 'POST', listPath(s.client.clientId, `/${s.failed}/replay`), {
      ...csrfOf(jar),
    });
    expect(replay.status).toBe(202);
    expect(replay.body).toMatchObject({ id: s.failed, state: 'queued', replays: 1, errorCode: null, error: null });
    await settled(s.failed, 'processed', 2);

    const reader = await mintToken(server.db, s.stranger, { scopes: ['health:read'] });
    const wellness = await call<{ items: { date: string; hrv: number | null }[] }>(
      server.url,
      'GET',
      '/api/wellness?from=2026-03-01&to=2026-03-31',
      { token: reader.token },
    );
    expect(wellness.body.items.map((item) => [item.date, item.hrv])).toEqual([['2026-03-11', 61]]);
    const one = await api<WebhookDelivery>(jar, 'GET', listPath(s.client.clientId, `/${s.failed}`));
    expect(one.body).toMatchObject({ state: 'processed', attempts: 2, replays: 1, errorCode: null });
  });

  it('replays processed and ignored deliveries through the same path', async () => {
    const s = await scenario('Again Hooks');
    const jar = await signIn(server.url, s.developer.email);
    for (const id of [s.processed, s.ignored]) {
      const replay = await api(jar, 'POST', listPath(s.client.clientId, `/${id}/replay`), csrfOf(jar));
      expect(replay.status).toBe(202);
    }
    await settled(s.processed, 'processed', 2);
    await settled(s.ignored, 'ignored', 2);
    expect((await deliveryRow(s.ignored)).errorCode).toBe('unknown_event');
  });

  it('refuses a rejected delivery with 409, and a missing or wrong X-CSRF-Token with 403', async () => {
    const s = await scenario('Refusing Hooks');
    const jar = await signIn(server.url, s.developer.email);

    const rejected = await api<Problem>(jar, 'POST', listPath(s.client.clientId, `/${s.rejected}/replay`), {
      ...csrfOf(jar),
    });
    expect(rejected.status).toBe(409);
    expect(rejected.headers.get('content-type')).toContain('application/problem+json');
    expect(rejected.body.detail).toContain('never processed');
    expect((await deliveryRow(s.rejected)).state).toBe('rejected');

    const path = listPath(s.client.clientId, `/${s.failed}/replay`);
    const attempts: Record<string, string>[] = [{}, { 'x-csrf-token': 'forged-forged-forged-forged-forged-forged' }];
    for (const headers of attempts) {
      const res = await api<Problem>(jar, 'POST', path, headers);
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    const row = await deliveryRow(s.failed);
    expect([row.state, row.replays]).toEqual(['failed', 0]);
  });
});

const pagePath = (clientId: string) => `/developer/apps/${clientId}/webhooks`;

describe('/developer/apps/{clientId}/webhooks in Chromium', () => {
  it('shows every delivery with payload and redacted headers, filters by state and replays a failed one', async () => {
    const xss = '<script>window.pwned = 1</script><img id=injected src=x>';
    const s = await scenario('Browser Hooks', { event: 'note.created', text: xss });

    const { context, page } = await chromium.signedInPage(s.developer, '/developer');
    await cardHeaded(page, 'Browser Hooks').getByRole('link', { name: 'Webhook deliveries' }).click();
    await page.waitForURL(`${server.url}${pagePath(s.client.clientId)}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Browser Hooks');

    const card = (id: string) => page.locator(`#delivery-${id}`);
    expect(await page.locator('.deliveries > li').evaluateAll((items) => items.map((item) => item.id))).toEqual(
      [s.rejected, s.ignored, s.failed, s.processed].map((id) => `delivery-${id}`),
    );

    const processed = card(s.processed);
    expect(await processed.locator('.state').textContent()).toBe('processed');
    expect(await processed.textContent()).toContain('yes (header)');
    await processed.getByText('Payload', { exact: true }).click();
    const payload = processed.locator('pre.payload');
    expect(await payload.isVisible()).toBe(true);
    expect(await payload.textContent()).toBe(JSON.stringify(wellnessEvent(s.athlete, '2026-03-10', 50), null, 2));
    await processed.getByText('Headers', { exact: true }).click();
    expect(await processed.locator('pre.headers').textContent()).toContain('x-webhook-secret: [redacted]');
    expect(await processed.locator('pre.result').textContent()).toContain('"applied"');

    const failed = await card(s.failed).textContent();
    expect(failed).toContain('no_grant');
    expect(failed).toContain('failed');
    const rejected = card(s.rejected);
    expect(await rejected.textContent()).toContain('secret_mismatch');
    expect(await rejected.locator('.facts').textContent()).toMatch(/Secret matched\s*no/);
    expect(await rejected.getByRole('button', { name: 'Replay' }).count()).toBe(0);
    expect(await processed.getByRole('button', { name: 'Replay' }).count()).toBe(1);

    // The payload is the sender's: shown as text, never as markup.
    expect(await card(s.ignored).locator('pre.payload').textContent()).toContain(xss);
    expect(await page.locator('#injected').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    const raw = await (await page.request.get(`${server.url}${pagePath(s.client.clientId)}`)).text();
    expect(raw).toContain('&lt;script&gt;window.pwned = 1&lt;/script&gt;&lt;img id=injected src=x&gt;');
    expect(raw).not.toContain('<script>window.pwned');

    // Filter by state: the links carry the counts.
    const filter = page.getByRole('navigation', { name: 'Filter by state' });
    expect((await filter.getByRole('link').allTextContents()).map((text) => text.trim())).toEqual([
      'All (4)',
      'processed (1)',
      'failed (1)',
      'ignored (1)',
      'rejected (1)',
    ]);
    await filter.getByRole('link', { name: 'failed (1)' }).click();
    await page.waitForURL(`${server.url}${pagePath(s.client.clientId)}?state=failed`);
    expect(await page.locator('.deliveries > li').evaluateAll((items) => items.map((item) => item.id))).toEqual([
      `delivery-${s.failed}`,
    ]);
    expect(await filter.getByRole('link', { name: 'failed (1)' }).getAttribute('aria-current')).toBe('page');

    // The user grants the app; Replay processes the delivery again.
    await mintToken(server.db, s.stranger, { scopes: ['health:write'], client: s.client });
    await card(s.failed).getByRole('button', { name: 'Replay' }).click();
    await page.waitForURL((url) => url.pathname === pagePath(s.client.clientId) && url.search === '?notice=replayed');
    expect(await page.getByRole('status').textContent()).toContain('queued again');
    await expect
      .poll(
        async () => {
          await page.reload();
          return card(s.failed).locator('.state').textContent();
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBe('processed');
    const replayed = await card(s.failed).textContent();
    expect(replayed).not.toContain('no_grant');
    expect(replayed).toContain('replays: 1');

    // A delivery that cannot be replayed: the list again, with the reason, 409.
    const refused = await page.request.post(`${server.url}${pagePath(s.client.clientId)}/${s.rejected}/replay`, {
      form: { _csrf: await csrfCookie(context) },
      maxRedirects: 0,
    });
    expect(refused.status()).toBe(409);
    const refusedHtml = await refused.text();
    expect(refusedHtml).toContain('never processed');
    expect(refusedHtml).toContain(`id="delivery-${s.rejected}"`);
    expect((await deliveryRow(s.rejected)).state).toBe('rejected');

    // Without the form's CSRF token nothing happens.
    const forged = await page.request.post(`${server.url}${pagePath(s.client.clientId)}/${s.processed}/replay`, {
      form: { _csrf: 'forged-value-forged-value-forged-value' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect((await deliveryRow(s.processed)).replays).toBe(0);
  });

  it('pages with "Older" and "Newest" links', async () => {
    const developer = await makeUser(server.db);
    const { client } = await makeWebhookApp(server.db, developer, 'Busy Hooks');
    const sent: string[] = [];
    for (let index = 0; index < 27; index++) {
      sent.push((await deliver(client.clientId, { index }, { secret: 'pwh_wrong' })).id);
    }
    const { page } = await chromium.signedInPage(developer, pagePath(client.clientId));
    const ids = () => page.locator('.deliveries > li').evaluateAll((items) => items.map((item) => item.id));
    expect(await ids()).toEqual(
      sent
        .slice(2)
        .reverse()
        .map((id) => `delivery-${id}`),
    );
    expect(await page.getByRole('link', { name: 'Newest' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Older' }).click();
    await page.waitForURL((url) => url.searchParams.has('cursor'));
    expect(await ids()).toEqual([sent[1], sent[0]].map((id) => `delivery-${id}`));
    expect(await page.getByRole('link', { name: 'Older' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Newest' }).click();
    await page.waitForURL(`${server.url}${pagePath(client.clientId)}`);
    expect((await ids()).length).toBe(25);
  });

  it('redirects a signed-out visitor to /login, and answers 404 for an app that is not yours', async () => {
    const developer = await makeUser(server.db);
    const { client } = await makeWebhookApp(server.db, developer, 'Private Hooks');
    const signedOut = await fetch(`${server.url}${pagePath(client.clientId)}`, { redirect: 'manual' });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toBe(`/login?next=${encodeURIComponent(pagePath(client.clientId))}`);

    const intruder = await makeUser(server.db);
    const jar = await signIn(server.url, intruder.email);
    for (const path of [pagePath(client.clientId), pagePath('no-such-client')]) {
      const res = await fetch(`${server.url}${path}`, { headers: { cookie: jar.header() }, redirect: 'manual' });
      expect(res.status).toBe(404);
      const body = await res.text();
      expect(body).toContain('Not found');
      expect(body).not.toContain('Private Hooks');
    }

    const owner = await signIn(server.url, developer.email);
    for (const search of ['?state=nonsense', '?cursor=not-ours']) {
      const res = await fetch(`${server.url}${pagePath(client.clientId)}${search}`, {
        headers: { cookie: owner.header() },
      });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('role="alert"');
    }
  });
});

describe('rotating the webhook secret on /developer', () => {
  it('shows the new secret once; it matches at once and the old one no longer does', async () => {
    const developer = await makeUser(server.db);
    const { client, webhookSecret: oldSecret } = await makeWebhookApp(server.db, developer, 'Rotating Hooks');
    const { page } = await chromium.signedInPage(developer, '/developer');
    expect(await page.content()).not.toContain(oldSecret);

    await cardHeaded(page, 'Rotating Hooks').getByRole('button', { name: 'Rotate webhook secret' }).click();
    await page.waitForURL(`${server.url}/developer/apps/${client.clientId}/webhook-secret`);
    const newSecret = (await page.locator('#webhook-secret').textContent()) ?? '';
    expect(newSecret).toMatch(/^pwh_/);
    expect(newSecret).not.toBe(oldSecret);
    const row = await server.db
      .selectFrom('oauthClients')
      .select(['webhookSecretHash', 'clientSecretHash'])
      .where('clientId', '=', client.clientId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ webhookSecretHash: sha256Hex(newSecret), clientSecretHash: client.clientSecretHash });

    const fresh = await deliver(client.clientId, { hello: 'new' }, { secret: newSecret });
    expect(fresh.ack.secretMatched).toBe(true);
    const stale = await deliver(client.clientId, { hello: 'old' }, { secret: oldSecret });
    expect(stale.ack.secretMatched).toBe(false);
    const body = JSON.stringify({ hello: 'signed' });
    const timestamp = String(Math.floor(Date.now() / 1000));
    for (const [secret, matched] of [
      [newSecret, true],
      [oldSecret, false],
    ] as const) {
      const res = await call<WebhookAck>(server.url, 'POST', `/api/webhooks/oauth/${client.clientId}`, {
        rawBody: body,
        headers: {
          'x-webhook-timestamp': timestamp,
          'x-webhook-signature': webhookSignature(secret, timestamp, Buffer.from(body)),
        },
      });
      expect(res.body.secretMatched).toBe(matched);
    }
    await settled(fresh.id, 'ignored');
    expect((await deliveryRow(stale.id)).state).toBe('rejected');

    // Never shown again: neither /developer nor the deliveries page carries either secret.
    for (const path of ['/developer', pagePath(client.clientId)]) {
      await page.goto(`${server.url}${path}`);
      const content = await page.content();
      expect(content).not.toContain(newSecret);
      expect(content).not.toContain(oldSecret);
    }
  });

  it("answers 404 for another developer's app and 403 without the CSRF token, changing nothing", async () => {
    const developer = await makeUser(server.db);
    const { client } = await makeWebhookApp(server.db, developer, 'Kept Hooks');
    const intruder = await makeUser(server.db);
    const { context, page } = await chromium.signedInPage(intruder, '/developer');
    const path = `${server.url}/developer/apps/${client.clientId}/webhook-secret`;
    const foreign = await page.request.post(path, { form: { _csrf: await csrfCookie(context) }, maxRedirects: 0 });
    expect(foreign.status()).toBe(404);
    await context.close();

    const own = await chromium.signedInPage(developer, '/developer');
    const forged = await own.page.request.post(path, {
      form: { _csrf: 'forged-value-forged-value-forged-value' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    await own.context.close();

    const row = await server.db
      .selectFrom('oauthClients')
      .select('webhookSecretHash')
      .where('clientId', '=', client.clientId)
      .executeTakeFirstOrThrow();
    expect(row.webhookSecretHash).toBe(client.webhookSecretHash);
  });
});

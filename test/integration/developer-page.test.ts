import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../server/src/lib/crypto.ts';
import { cardHeaded, csrfCookie, usePortalBrowser } from '../support/browser.ts';
import { makeApp, makeUser, mintToken } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});
const chromium = usePortalBrowser(() => server.url);

async function clientRow(clientId: string) {
  return server.db.selectFrom('oauthClients').selectAll().where('clientId', '=', clientId).executeTakeFirst();
}

interface CreateAppInput {
  readonly name: string;
  readonly redirectUris: string;
  readonly scopes?: readonly string[];
  readonly isPublic?: boolean;
}

async function fillCreateForm(page: Page, input: CreateAppInput): Promise<void> {
  await page.getByLabel('Name').fill(input.name);
  await page.getByLabel('Redirect URIs').fill(input.redirectUris);
  for (const scope of input.scopes ?? []) await page.getByRole('checkbox', { name: scope }).check();
  if (input.isPublic) await page.getByRole('radio', { name: /^Public/ }).check();
}

describe('/developer lists the signed-in user’s own apps', () => {
  it('shows name, client id, redirect URIs, scopes and client type, and nobody else’s apps', async () => {
    const owner = await makeUser(server.db);
    const someoneElse = await makeUser(server.db);
    const mine = await makeApp(server.db, owner, 'My Training Log');
    await makeApp(server.db, someoneElse, 'Not Mine');
    // The built-in developer client is not an app of the portal.
    await mintToken(server.db, owner, { scopes: ['health:read'] });

    const { page } = await chromium.signedInPage(owner, '/developer');
    const region = page.getByRole('region', { name: 'Your apps' });
    expect(await region.getByRole('heading', { level: 3 }).allTextContents()).toEqual(['My Training Log']);
    const card = await cardHeaded(page, 'My Training Log').textContent();
    expect(card).toContain(mine.clientId);
    expect(card).toContain('https://app.example.test/callback');
    expect(card).toContain('health:read');
    expect(card).toContain('Confidential');
    expect(card).toContain(`${server.url}/api/webhooks/oauth/${mine.clientId}`);
  });
});

describe('creating an app', () => {
  it('shows the client secret and webhook secret once; the database holds only their hashes', async () => {
    const owner = await makeUser(server.db);
    const { page } = await chromium.signedInPage(owner, '/developer');
    await fillCreateForm(page, {
      name: 'Ride Importer',
      redirectUris: 'https://rides.example.test/callback\nhttp://127.0.0.1:8765/cb',
      scopes: ['workout:write', 'health:read'],
    });
    const [response] = await Promise.all([
      page.waitForResponse(`${server.url}/developer/apps`),
      page.getByRole('button', { name: 'Create app' }).click(),
    ]);
    expect(response.status()).toBe(201);
    expect(response.headers()['cache-control']).toBe('no-store');
    const clientId = (await page.locator('#client-id').textContent()) ?? '';
    const clientSecret = (await page.locator('#client-secret').textContent()) ?? '';
    const webhookSecret = (await page.locator('#webhook-secret').textContent()) ?? '';
    expect(clientSecret).toMatch(/^pcs_/);
    expect(webhookSecret).toMatch(/^pwh_/);

    const row = await clientRow(clientId);
    expect(row).toMatchObject({
      name: 'Ride Importer',
      ownerUserId: owner.id,
      kind: 'app',
      isPublic: false,
      redirectUris: ['https://rides.example.test/callback', 'http://127.0.0.1:8765/cb'],
      clientSecretHash: sha256Hex(clientSecret),
      webhookSecretHash: sha256Hex(webhookSecret),
    });
    expect(row?.scopes.sort()).toEqual(['health:read', 'workout:write']);
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(clientSecret);
    expect(stored).not.toContain(webhookSecret);

    // Never shown again: the portal lists the app without any secret.
    await page.goto(`${server.url}/developer`);
    const portal = (await page.content()) ?? '';
    expect(portal).toContain('Ride Importer');
    expect(portal).toContain(clientId);
    expect(portal).not.toContain(clientSecret);
    expect(portal).not.toContain(webhookSecret);
  });

  it('creates a public app with no client secret and no rotate button', async () => {
    const owner = await makeUser(server.db);
    const { page } = await chromium.signedInPage(owner, '/developer');
    await fillCreateForm(page, { name: 'Phone App', redirectUris: 'http://localhost/cb', isPublic: true });
    await page.getByRole('button', { name: 'Create app' }).click();
    await page.waitForURL(`${server.url}/developer/apps`);
    expect(await page.locator('#client-secret').count()).toBe(0);
    expect(await page.locator('#webhook-secret').textContent()).toMatch(/^pwh_/);
    const row = await clientRow((await page.locator('#client-id').textContent()) ?? '');
    expect(row).toMatchObject({ isPublic: true, clientSecretHash: null });
    // No scope ticked: the app may ask for every scope.
    expect(row?.scopes).toContain('offline_access');

    await page.goto(`${server.url}/developer`);
    const card = cardHeaded(page, 'Phone App');
    expect(await card.textContent()).toContain('Public');
    expect(await card.getByRole('button', { name: 'Rotate client secret' }).count()).toBe(0);
    expect(await card.getByRole('button', { name: 'Delete' }).count()).toBe(1);
  });

  it('re-renders the form with a 400 and the message for an invalid redirect URI, keeping what was typed', async () => {
    const owner = await makeUser(server.db);
    const { page } = await chromium.signedInPage(owner, '/developer');
    await fillCreateForm(page, { name: 'Insecure App', redirectUris: 'http://example.test/callback' });
    const [response] = await Promise.all([
      page.waitForResponse(`${server.url}/developer/apps`),
      page.getByRole('button', { name: 'Create app' }).click(),
    ]);
    expect(response.status()).toBe(400);
    expect(await page.locator('#redirectUris-error').textContent()).toContain('must use https');
    expect(await page.getByRole('alert').first().textContent()).toContain('Please correct the fields below');
    expect(await page.getByLabel('Name').inputValue()).toBe('Insecure App');
    expect(await page.getByLabel('Redirect URIs').inputValue()).toBe('http://example.test/callback');
    const apps = await server.db.selectFrom('oauthClients').select('id').where('ownerUserId', '=', owner.id).execute();
    expect(apps).toEqual([]);
  });

  it('re-renders the form with a 400 when the name is missing', async () => {
    const owner = await makeUser(server.db);
    const { page } = await chromium.signedInPage(owner, '/developer');
    await fillCreateForm(page, { name: '   ', redirectUris: 'https://ok.example.test/cb' });
    const [response] = await Promise.all([
      page.waitForResponse(`${server.url}/developer/apps`),
      page.getByRole('button', { name: 'Create app' }).click(),
    ]);
    expect(response.status()).toBe(400);
    expect(await page.locator('#name-error').textContent()).toContain('1-200 characters');
    expect(await page.getByLabel('Redirect URIs').inputValue()).toBe('https://ok.example.test/cb');
  });
});

describe('managing an app', () => {
  it('rotates the client secret: the new one is shown once and replaces the old hash', async () => {
    const owner = await makeUser(server.db);
    const app = await makeApp(server.db, owner, 'Rotating App');
    const oldHash = app.clientSecretHash;
    expect(oldHash).not.toBeNull();

    const { page } = await chromium.signedInPage(owner, '/developer');
    await cardHeaded(page, 'Rotating App').getByRole('button', { name: 'Rotate client secret' }).click();
    await page.waitForURL(`${server.url}/developer/apps/${app.clientId}/rotate-secret`);
    const secret = (await page.locator('#client-secret').textContent()) ?? '';
    expect(secret).toMatch(/^pcs_/);
    const row = await clientRow(app.clientId);
    expect(row?.clientSecretHash).toBe(sha256Hex(secret));
    expect(row?.clientSecretHash).not.toBe(oldHash);
    expect(row?.webhookSecretHash).toBe(app.webhookSecretHash);

    await page.goto(`${server.url}/developer`);
    expect(await page.content()).not.toContain(secret);
  });

  it('deletes an app: it is gone, with its grants, and its tokens stop working', async () => {
    const owner = await makeUser(server.db);
    const athlete = await makeUser(server.db);
    const app = await makeApp(server.db, owner, 'Doomed App');
    await makeApp(server.db, owner, 'Surviving App');
    const minted = await mintToken(server.db, athlete, { scopes: ['health:write'], client: app });
    const body = { date: '2026-10-05', hrv: 55 };
    expect((await call(server.url, 'POST', '/api/wellness', { token: minted.token, body })).status).toBe(201);

    const { page } = await chromium.signedInPage(owner, '/developer');
    await cardHeaded(page, 'Doomed App').getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(`${server.url}/developer?notice=deleted`);
    expect(await page.getByRole('status').textContent()).toContain('App deleted');
    expect(await cardHeaded(page, 'Doomed App').count()).toBe(0);
    expect(await cardHeaded(page, 'Surviving App').count()).toBe(1);

    expect(await clientRow(app.clientId)).toBeUndefined();
    const grants = await server.db.selectFrom('oauthGrants').select('id').where('id', '=', minted.grantId).execute();
    expect(grants).toEqual([]);
    expect((await call(server.url, 'POST', '/api/wellness', { token: minted.token, body })).status).toBe(401);
  });

  it("answers 404 for another user's app and changes nothing", async () => {
    const owner = await makeUser(server.db);
    const intruder = await makeUser(server.db);
    const app = await makeApp(server.db, owner, 'Guarded App');

    const { context, page } = await chromium.signedInPage(intruder, '/developer');
    const csrf = await csrfCookie(context);
    expect(csrf).not.toBe('');
    for (const action of ['rotate-secret', 'delete']) {
      const res = await page.request.post(`${server.url}/developer/apps/${app.clientId}/${action}`, {
        form: { _csrf: csrf },
        maxRedirects: 0,
      });
      expect(res.status()).toBe(404);
    }
    const row = await clientRow(app.clientId);
    expect(row?.clientSecretHash).toBe(app.clientSecretHash);
    expect(await page.content()).not.toContain('Guarded App');
  });

  it('refuses portal POSTs without the CSRF token', async () => {
    const owner = await makeUser(server.db);
    const app = await makeApp(server.db, owner, 'Csrf App');
    const { page } = await chromium.signedInPage(owner, '/developer');
    const res = await page.request.post(`${server.url}/developer/apps/${app.clientId}/delete`, {
      form: { _csrf: 'forged-value-forged-value-forged-value' },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    expect(await clientRow(app.clientId)).toBeDefined();
  });
});

describe('/developer requires a session', () => {
  it('redirects a signed-out visitor to /login', async () => {
    const res = await fetch(`${server.url}/developer`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/login?next=%2Fdeveloper');

    const { page } = await chromium.newPage();
    await page.goto(`${server.url}/developer`);
    await page.waitForURL(`${server.url}/login?next=%2Fdeveloper`);
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecret, sha256Hex } from '../../server/src/lib/crypto.ts';
import { cardHeaded, csrfCookie, usePortalBrowser } from '../support/browser.ts';
import { makeApp, makeUser, mintToken, TEST_PASSWORD } from '../support/factories.ts';
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

async function postWellness(token: string): Promise<number> {
  const res = await call(server.url, 'POST', '/api/wellness', { token, body: { date: '2026-10-01', hrv: 60 } });
  return res.status;
}

async function grantRow(grantId: string) {
  return server.db.selectFrom('oauthGrants').selectAll().where('id', '=', grantId).executeTakeFirstOrThrow();
}

describe('/settings lists the connected apps', () => {
  it('shows each live grant with plain-language scopes, REST or MCP, connected and last-used times', async () => {
    const developer = await makeUser(server.db);
    const athlete = await makeUser(server.db, { timeZone: 'Europe/Berlin' });
    const restApp = await makeApp(server.db, developer, 'Strava Sync');
    const mcpApp = await makeApp(server.db, developer, 'Coach Assistant');
    const goneApp = await makeApp(server.db, developer, 'Old Revoked App');
    const expiredApp = await makeApp(server.db, developer, 'Long Expired App');
    const rest = await mintToken(server.db, athlete, { scopes: ['health:read', 'health:write'], client: restApp });
    await mintToken(server.db, athlete, {
      scopes: ['workout:read'],
      client: mcpApp,
      resource: server.config.mcpResource,
    });
    const revoked = await mintToken(server.db, athlete, { scopes: ['profile:read'], client: goneApp });
    await server.db
      .updateTable('oauthGrants')
      .set({ revokedAt: new Date() })
      .where('id', '=', revoked.grantId)
      .execute();
    await mintToken(server.db, athlete, { scopes: ['profile:read'], client: expiredApp, expiresInSecs: -60 });
    await server.db
      .updateTable('oauthGrants')
      .set({ lastUsedAt: new Date('2026-11-02T09:30:00Z') })
      .where('id', '=', rest.grantId)
      .execute();
    await mintToken(server.db, athlete, { scopes: ['nutrition:read'] });
    // Someone else's connection never shows up here.
    const stranger = await makeUser(server.db);
    await mintToken(server.db, stranger, {
      scopes: ['health:read'],
      client: await makeApp(server.db, developer, 'Other'),
    });

    const { page } = await chromium.signedInPage(athlete, '/settings');
    const apps = page.getByRole('region', { name: 'Apps' });
    const headings = await apps.getByRole('heading', { level: 3 }).allTextContents();
    expect(headings.sort()).toEqual(['Coach Assistant', 'Strava Sync']);

    const strava = cardHeaded(page, 'Strava Sync');
    const stravaText = await strava.textContent();
    expect(stravaText).toContain('REST API');
    expect(stravaText).toContain('Read your daily wellness metrics');
    expect(stravaText).toContain('Log daily metrics (HRV, sleep, weight)');
    // 09:30 UTC is 10:30 in Berlin: times are shown in the user's own time zone.
    expect(stravaText).toMatch(/Last used\s*Nov 2, 2026, 10:30/);
    await expect(strava.getByRole('button', { name: 'Revoke' }).count()).resolves.toBe(1);

    const coach = await cardHeaded(page, 'Coach Assistant').textContent();
    expect(coach).toContain('MCP (AI assistants)');
    expect(coach).toContain('Read your workouts');
    expect(coach).toMatch(/Last used\s*never/);

    const developerTokens = page.getByRole('region', { name: 'Developer tokens' });
    expect(await developerTokens.getByRole('heading', { level: 3 }).allTextContents()).toEqual(['Developer token']);
    expect(await developerTokens.textContent()).toContain('Read your nutrition logs');
  });

  it('says so when nothing is connected', async () => {
    const athlete = await makeUser(server.db);
    const { page } = await chromium.signedInPage(athlete, '/settings');
    expect(await page.textContent('main')).toContain('No apps are connected to your account.');
    expect(await page.textContent('main')).toContain('You have no active developer tokens.');
  });
});

describe('revoking a connected app', () => {
  it('kills every token of the grant at once: the next REST request gets 401 and the row is gone', async () => {
    const developer = await makeUser(server.db);
    const athlete = await makeUser(server.db);
    const app = await makeApp(server.db, developer, 'Wellness Pusher');
    const minted = await mintToken(server.db, athlete, { scopes: ['health:read', 'health:write'], client: app });
    // A second access token and a refresh token under the same grant die with it.
    const second = generateSecret('pat_');
    await server.db
      .insertInto('oauthAccessTokens')
      .values({
        grantId: minted.grantId,
        tokenHash: sha256Hex(second),
        scopes: ['health:write'],
        resource: null,
        expiresAt: new Date(Date.now() + 3_600_000),
      })
      .execute();
    await server.db
      .insertInto('oauthRefreshTokens')
      .values({
        grantId: minted.grantId,
        tokenHash: sha256Hex(generateSecret('prt_')),
        scopes: ['health:read', 'health:write'],
        resource: null,
        expiresAt: null,
      })
      .execute();
    // An unrelated grant of the same user stays alive.
    const other = await mintToken(server.db, athlete, { scopes: ['health:write'] });
    expect(await postWellness(minted.token)).toBe(201);

    const { page } = await chromium.signedInPage(athlete, '/settings');
    await cardHeaded(page, 'Wellness Pusher').getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(`${server.url}/settings?notice=revoked`);
    expect(await page.getByRole('status').textContent()).toContain('Access revoked');
    expect(await cardHeaded(page, 'Wellness Pusher').count()).toBe(0);

    expect(await postWellness(minted.token)).toBe(401);
    expect(await postWellness(second)).toBe(401);
    expect(await postWellness(other.token)).toBe(200);

    expect((await grantRow(minted.grantId)).revokedAt).toBeInstanceOf(Date);
    const access = await server.db
      .selectFrom('oauthAccessTokens')
      .select('revokedAt')
      .where('grantId', '=', minted.grantId)
      .execute();
    const refresh = await server.db
      .selectFrom('oauthRefreshTokens')
      .select('revokedAt')
      .where('grantId', '=', minted.grantId)
      .execute();
    expect(access).toHaveLength(2);
    expect(refresh).toHaveLength(1);
    for (const row of [...access, ...refresh]) expect(row.revokedAt).toBeInstanceOf(Date);
    expect((await grantRow(other.grantId)).revokedAt).toBeNull();
  });

  it('forgets the stored consent so the app has to ask again', async () => {
    const developer = await makeUser(server.db);
    const athlete = await makeUser(server.db);
    const app = await makeApp(server.db, developer, 'Consented App');
    await mintToken(server.db, athlete, { scopes: ['health:read'], client: app });
    await server.db
      .insertInto('oauthConsents')
      .values({ userId: athlete.id, clientId: app.id, resource: '', scopes: ['health:read'] })
      .execute();

    const { page } = await chromium.signedInPage(athlete, '/settings');
    await cardHeaded(page, 'Consented App').getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(`${server.url}/settings?notice=revoked`);
    const consents = await server.db
      .selectFrom('oauthConsents')
      .selectAll()
      .where('userId', '=', athlete.id)
      .where('clientId', '=', app.id)
      .execute();
    expect(consents).toEqual([]);
  });

  it('revokes a developer token from its own section', async () => {
    const athlete = await makeUser(server.db);
    const minted = await mintToken(server.db, athlete, { scopes: ['health:write'] });
    const { page } = await chromium.signedInPage(athlete, '/settings');
    await page.getByRole('region', { name: 'Developer tokens' }).getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(`${server.url}/settings?notice=revoked`);
    expect(await page.textContent('main')).toContain('You have no active developer tokens.');
    expect(await postWellness(minted.token)).toBe(401);
  });

  it("does not revoke another user's grant: POST with its id answers 404 and the grant stays live", async () => {
    const developer = await makeUser(server.db);
    const victim = await makeUser(server.db);
    const attacker = await makeUser(server.db);
    const app = await makeApp(server.db, developer, 'Victim App');
    const minted = await mintToken(server.db, victim, { scopes: ['health:write'], client: app });

    const { context, page } = await chromium.signedInPage(attacker, '/settings');
    const csrf = await csrfCookie(context);
    expect(csrf).not.toBe('');
    const res = await page.request.post(`${server.url}/settings/grants/${minted.grantId}/revoke`, {
      form: { _csrf: csrf },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(404);
    expect(await res.text()).toContain('Not found');

    const garbage = await page.request.post(`${server.url}/settings/grants/not-a-uuid/revoke`, {
      form: { _csrf: csrf },
      maxRedirects: 0,
    });
    expect(garbage.status()).toBe(404);

    expect((await grantRow(minted.grantId)).revokedAt).toBeNull();
    expect(await postWellness(minted.token)).toBe(201);
  });

  it('refuses a revoke POST without the CSRF token and changes nothing', async () => {
    const athlete = await makeUser(server.db);
    const app = await makeApp(server.db, athlete, 'Csrf Target');
    const minted = await mintToken(server.db, athlete, { scopes: ['health:write'], client: app });
    const { page } = await chromium.signedInPage(athlete, '/settings');
    const res = await page.request.post(`${server.url}/settings/grants/${minted.grantId}/revoke`, {
      form: { _csrf: 'forged-value-forged-value-forged-value' },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    expect((await grantRow(minted.grantId)).revokedAt).toBeNull();
  });
});

describe('/settings requires a session', () => {
  it('redirects a signed-out visitor to /login and back after signing in', async () => {
    const res = await fetch(`${server.url}/settings`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/login?next=%2Fsettings');

    const athlete = await makeUser(server.db);
    const { page } = await chromium.newPage();
    await page.goto(`${server.url}/settings`);
    await page.waitForURL(`${server.url}/login?next=%2Fsettings`);
    await page.getByLabel('Email').fill(athlete.email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/settings`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Connected apps');
  });
});

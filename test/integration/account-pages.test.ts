import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../server/src/lib/crypto.ts';
import { usePortalBrowser } from '../support/browser.ts';
import { makeUser, TEST_PASSWORD } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});
const chromium = usePortalBrowser(() => server.url);

describe('sign-up, sign-in and sign-out pages in a real browser', () => {
  it('signs up, is signed in, signs out, and signs in again', async () => {
    const { context, page } = await chromium.newPage();
    await page.goto(`${server.url}/signup`);
    await page.getByLabel('Name').fill('Ada Runner');
    await page.getByLabel('Email').fill('ada@example.test');
    await page.getByLabel('Password').fill('a long password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(`${server.url}/`);
    expect(await page.textContent('main')).toContain('Signed in as ada@example.test');

    // The cookie holds a random value; the database only its hash.
    const cookies = await context.cookies();
    const session = cookies.find((cookie) => cookie.name === 'pacer_session');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Lax');
    const stored = await server.db.selectFrom('sessions').select('idHash').execute();
    expect(stored.map((row) => row.idHash)).toContain(sha256Hex(session?.value ?? ''));
    expect(stored.map((row) => row.idHash)).not.toContain(session?.value);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${server.url}/login`);
    expect(
      await server.db
        .selectFrom('sessions')
        .select('idHash')
        .where('idHash', '=', sha256Hex(session?.value ?? ''))
        .execute(),
    ).toEqual([]);

    await page.getByLabel('Email').fill('ada@example.test');
    await page.getByLabel('Password').fill('a long password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/`);
    expect(await page.textContent('main')).toContain('Signed in as');
  });

  it('shows an error for a wrong password and returns to `next` after signing in', async () => {
    const user = await makeUser(server.db);
    const { page } = await chromium.newPage();
    await page.goto(`${server.url}/login?next=${encodeURIComponent('/?from=login')}`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill('not the password');
    const [response] = await Promise.all([
      page.waitForResponse(`${server.url}/login`),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(response.status()).toBe(401);
    expect(await page.getByRole('alert').textContent()).toContain('Wrong e-mail or password');
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/?from=login`);
  });

  it('shows field errors on sign-up and keeps what was typed', async () => {
    const { page } = await chromium.newPage();
    await page.goto(`${server.url}/signup`);
    await page.getByLabel('Email').fill('short@example.test');
    await page.getByLabel('Password').evaluate((input: HTMLInputElement) => input.removeAttribute('minlength'));
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForSelector('#password-error');
    expect(await page.textContent('#password-error')).toContain('at least 8 characters');
    expect(await page.getByLabel('Email').inputValue()).toBe('short@example.test');
  });

  it('sends pages with frame-ancestors none and no caching', async () => {
    const res = await fetch(`${server.url}/login`);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});

describe('form protection', () => {
  it('refuses a sign-in POST without the CSRF token (cross-site form)', async () => {
    const user = await makeUser(server.db);
    const res = await fetch(`${server.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: user.email, password: TEST_PASSWORD }),
      redirect: 'manual',
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie') ?? '').not.toContain('pacer_session');
  });

  it('never redirects off-site after sign-in', async () => {
    const user = await makeUser(server.db);
    const form = await fetch(`${server.url}/login`);
    const csrfCookie = /pacer_csrf=([^;]+)/.exec(form.headers.get('set-cookie') ?? '')?.[1] ?? '';
    for (const next of ['//evil.example/', 'https://evil.example/', '/\\evil.example']) {
      const res = await fetch(`${server.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `pacer_csrf=${csrfCookie}` },
        body: new URLSearchParams({ email: user.email, password: TEST_PASSWORD, _csrf: csrfCookie, next }),
        redirect: 'manual',
      });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/');
    }
  });
});

import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { TEST_PASSWORD } from './factories.ts';

/** Debian's Chromium (`.ci/run` installs it); PACER_CHROMIUM overrides the path. */
export function chromiumPath(): string {
  const candidates = [process.env['PACER_CHROMIUM'], '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
    (candidate): candidate is string => typeof candidate === 'string' && candidate.length > 0,
  );
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) throw new Error("Chromium not found: install Debian's `chromium` or set PACER_CHROMIUM");
  return found;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // The closed network of CI machines refuses Chromium's background services.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A page in a browser context of its own. */
export interface BrowserPage {
  readonly context: BrowserContext;
  readonly page: Page;
}

/** The card of one item on a portal page (an app, a grant): the list item headed by exactly `name`. */
export function cardHeaded(page: Page, name: string): Locator {
  return page.getByRole('listitem').filter({ has: page.getByRole('heading', { name, exact: true }) });
}

/** The CSRF cookie the portal set in `context` (what its forms send as `_csrf`); '' when there is none. */
export async function csrfCookie(context: BrowserContext): Promise<string> {
  return (await context.cookies()).find((cookie) => cookie.name === 'pacer_csrf')?.value ?? '';
}

/** Sign in on `page` through the real /login form and land on `path`. */
async function signInOn(
  page: Page,
  baseUrl: string,
  user: { readonly email: string },
  path: string,
  password = TEST_PASSWORD,
): Promise<void> {
  await page.goto(`${baseUrl}/login?next=${encodeURIComponent(path)}`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${baseUrl}${path}`);
}

/** The portal in Chromium, for the tests of one file or `describe` block (see `usePortalBrowser`). */
export interface PortalBrowser {
  /** The launched Chromium, once the fixture's `beforeAll` has run. */
  readonly browser: Browser;
  /** A fresh signed-out context and a page in it. */
  newPage(): Promise<BrowserPage>;
  /** A fresh context signed in as `user` (password TEST_PASSWORD) through the real /login form, landed on `path`. */
  signedInPage(user: { readonly email: string }, path: string): Promise<BrowserPage>;
}

/**
 * The portal-browser fixture: launches Debian's Chromium in `beforeAll` and
 * closes it in `afterAll`; every context `newPage`/`signedInPage` opened is
 * closed after its test (so a failing test leaves none behind). Call it at the
 * top of a test file or inside a `describe`; `baseUrl` is read when a page
 * opens, so it may name a server a `beforeAll` starts:
 *
 *     const chromium = usePortalBrowser(() => server.url);
 *     const { page } = await chromium.signedInPage(user, '/settings');
 */
export function usePortalBrowser(baseUrl: () => string): PortalBrowser {
  let browser: Browser | undefined;
  const opened = new Set<BrowserContext>();
  const launched = (): Browser => {
    if (!browser) throw new Error('the portal browser is used before its beforeAll launched it');
    return browser;
  };

  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterEach(async () => {
    const contexts = [...opened];
    opened.clear();
    await Promise.all(contexts.map((context) => context.close()));
  });
  afterAll(async () => {
    await browser?.close();
  });

  const newPage = async (): Promise<BrowserPage> => {
    const context = await launched().newContext();
    opened.add(context);
    return { context, page: await context.newPage() };
  };

  return {
    get browser() {
      return launched();
    },
    newPage,
    async signedInPage(user, path) {
      const signedIn = await newPage();
      await signInOn(signedIn.page, baseUrl(), user, path);
      return signedIn;
    },
  };
}

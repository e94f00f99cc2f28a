import type { BrowserContext } from 'playwright-core';
import { TEST_PASSWORD } from './factories.ts';

/** How long one page step (load, sign-in, approval, redirect) may take on a busy machine. */
const STEP_TIMEOUT_MS = 30_000;

/**
 * The person's part of an MCP host's sign-in, in Chromium: open the
 * authorization URL the host launched, sign in through the real /login form
 * when the context has no session yet, press Approve on the consent page with
 * what it proposes, and follow the redirect until the browser reaches the
 * host's callback (`isCallback`). Returns the callback URL the browser was
 * sent to.
 */
export async function approveInChromium(
  context: BrowserContext,
  authorizationUrl: string,
  person: { readonly email: string },
  isCallback: (url: URL) => boolean,
): Promise<URL> {
  const page = await context.newPage();
  try {
    await page.goto(authorizationUrl, { timeout: STEP_TIMEOUT_MS });
    if (new URL(page.url()).pathname === '/login') {
      await page.getByLabel('Email').fill(person.email);
      await page.getByLabel('Password').fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname === '/api/oauth/authorize', { timeout: STEP_TIMEOUT_MS });
    }
    await page.getByRole('button', { name: 'Approve' }).click({ timeout: STEP_TIMEOUT_MS });
    // Until the callback page has loaded: closing a page whose navigation had only committed
    // left `page.close()` hanging for a minute and more in about one run in three.
    await page.waitForURL(isCallback, { timeout: STEP_TIMEOUT_MS });
    return new URL(page.url());
  } finally {
    await page.close();
  }
}

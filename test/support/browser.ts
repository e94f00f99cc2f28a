import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

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

/** A fresh browser context signed in through the real /login form, landed on `path`. */
export async function openSignedInPage(
  browser: Browser,
  baseUrl: string,
  user: { readonly email: string },
  path: string,
  password: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${baseUrl}/login?next=${encodeURIComponent(path)}`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${baseUrl}${path}`);
  return { context, page };
}

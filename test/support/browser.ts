import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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

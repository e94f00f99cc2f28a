/**
 * The pages' CSS: one stylesheet, at a URL that carries its content hash, served with a year-long
 * immutable cache header; every page links it and carries no CSS of its own (no <style>, no style
 * attribute), and the Content-Security-Policy allows styles from our own origin only.
 */
import { createHash } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { usePortalBrowser } from '../support/browser.ts';
import { makeApp, makeUser } from '../support/factories.ts';
import { signIn } from '../support/oauth-flow.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const LINK = /<link rel="stylesheet" href="(\/assets\/pacer\.([0-9a-f]{16})\.css)" \/>/;

let server: TestServer;
let admin: User;
let appPath: string;

beforeAll(async () => {
  server = await startTestServer();
  admin = await makeUser(server.db, { admin: true });
  appPath = `/developer/apps/${(await makeApp(server.db, admin, 'Styled app')).clientId}/webhooks`;
});
afterAll(async () => {
  await server.stop();
});

async function stylesheetHref(): Promise<string> {
  const href = LINK.exec(await (await fetch(`${server.url}/login`)).text())?.[1];
  if (!href) throw new Error('/login links no stylesheet');
  return href;
}

describe('the stylesheet', () => {
  it('is served as CSS with a long immutable cache header, under the hash of its content', async () => {
    const href = await stylesheetHref();
    const res = await fetch(`${server.url}${href}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const css = await res.text();
    expect(css).toContain('.page-dashboard');
    expect(href).toBe(`/assets/pacer.${createHash('sha256').update(css).digest('hex').slice(0, 16)}.css`);

    // A browser that asks again anyway (a reload: max-age=0 and the ETag) is answered 304 without the body.
    const etag = res.headers.get('etag');
    expect(etag).toBe(`"${createHash('sha256').update(css).digest('hex')}"`);
    const again = await fetch(`${server.url}${href}`, {
      headers: { 'if-none-match': etag ?? '', 'cache-control': 'max-age=0' },
    });
    expect(again.status).toBe(304);
  });

  it('is not served under another hash', async () => {
    const res = await fetch(`${server.url}/assets/pacer.0123456789abcdef.css`);
    expect(res.status).toBe(404);
  });

  it('is what every page links, and no page carries CSS of its own', async () => {
    const href = await stylesheetHref();
    const jar = await signIn(server.url, admin.email);
    const missing = '/developer/apps/no-such-app/webhooks';
    const paths = ['/', '/login', '/signup', '/settings', '/developer', appPath, '/dashboard', '/admin', missing];
    for (const path of paths) {
      const res = await fetch(`${server.url}${path}`, { headers: { cookie: jar.header() } });
      const page = await res.text();
      expect(res.status, path).toBe(path === missing ? 404 : 200);
      expect(LINK.exec(page)?.[1], path).toBe(href);
      expect(page, path).not.toMatch(/<style|\sstyle=/i);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("style-src 'self'");
      expect(csp, path).not.toContain('unsafe-inline');
    }
  });
});

describe('in Chromium', () => {
  let proxy: Server;
  let proxyUrl: string;
  const chromium = usePortalBrowser(() => proxyUrl);
  const stylesheetRequests: string[] = [];

  // Chromium reaches the server through this proxy, which counts the stylesheet requests that leave the browser.
  beforeAll(async () => {
    const target = new URL(server.url);
    proxy = createServer((req, res) => {
      if (req.url?.startsWith('/assets/')) stylesheetRequests.push(req.url);
      const upstream = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
  });

  it('applies the stylesheet under the page CSP, and fetches it once for page after page', async () => {
    const { page } = await chromium.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
    });
    for (const path of ['/login', '/signup', '/', '/login']) {
      await page.goto(`${proxyUrl}${path}`);
      // 28rem: the body width of pacer.css, so the stylesheet was loaded and applied.
      expect(await page.evaluate(() => getComputedStyle(document.body).maxWidth), path).toBe('448px');
    }
    expect(refused).toEqual([]);
    expect(stylesheetRequests).toEqual([await stylesheetHref()]);
  });
});

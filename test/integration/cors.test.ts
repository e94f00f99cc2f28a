/**
 * CORS for browser integrators (issue 22): `PACER_CORS_ORIGINS` lets pages on
 * the listed origins call the bearer-token REST API and the OAuth endpoints a
 * browser app needs; nothing else on the server answers another origin, and
 * nothing does while the list is empty. Checked over real HTTP (preflights,
 * answers, the pages) and in Chromium, from a page served on a second origin
 * that calls the API with a bearer token.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Profile } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { CORS_PREFLIGHT_MAX_AGE_SECS } from '../../server/src/http/cors.ts';
import { usePortalBrowser } from '../support/browser.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { call, corsPreflight } from '../support/http.ts';
import { issueCode, registerClient, signIn } from '../support/oauth-flow.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const APP_ORIGIN = 'https://app.example';
const OTHER_ORIGIN = 'https://evil.example';

/** The page of a browser app: `callApi` fetch()es and reports what the page could read, or the error it got. */
const SPA_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Browser app</title></head>
<body><script>
window.callApi = async (url, init) => {
  try {
    const res = await fetch(url, init);
    const text = await res.text();
    return {
      ok: true,
      status: res.status,
      requestId: res.headers.get('X-Request-Id'),
      remaining: res.headers.get('RateLimit-Remaining'),
      body: text ? JSON.parse(text) : null,
    };
  } catch (error) {
    return { ok: false, error: error.name + ': ' + error.message };
  }
};
</script></body></html>`;

type PageCall =
  | {
      readonly ok: true;
      readonly status: number;
      readonly requestId: string | null;
      readonly remaining: string | null;
      readonly body: unknown;
    }
  | { readonly ok: false; readonly error: string };

/** A static server for SPA_PAGE on a port of its own: an origin other than the API's. */
async function servePage(): Promise<{ readonly origin: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(SPA_PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

function corsHeadersOf(headers: Headers): string[] {
  const names: string[] = [];
  headers.forEach((_value, name) => {
    if (name.startsWith('access-control-')) names.push(name);
  });
  return names;
}

function listed(headers: Headers, name: string): string[] {
  return (headers.get(name) ?? '').split(',').map((entry) => entry.trim().toLowerCase());
}

let server: TestServer;
let athlete: User;
let token: string;
let allowedPage: Awaited<ReturnType<typeof servePage>>;
let otherPage: Awaited<ReturnType<typeof servePage>>;

beforeAll(async () => {
  allowedPage = await servePage();
  otherPage = await servePage();
  server = await startTestServer({ PACER_CORS_ORIGINS: `${APP_ORIGIN}, ${allowedPage.origin}` });
  athlete = await makeUser(server.db);
  token = (await mintToken(server.db, athlete, { scopes: ['profile:read', 'profile:write'] })).token;
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await allowedPage?.close();
  await otherPage?.close();
});

describe('CORS on the REST API for an allowed origin', () => {
  it('answers a preflight before authentication: 204, this origin, methods, headers, cached, never credentials', async () => {
    const res = await corsPreflight(`${server.url}/api/profile`, {
      origin: APP_ORIGIN,
      method: 'PATCH',
      headers: 'authorization,content-type,idempotency-key,x-request-id,x-pacer-client',
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(listed(res.headers, 'access-control-allow-methods')).toEqual(
      expect.arrayContaining(['get', 'post', 'patch', 'delete']),
    );
    expect(listed(res.headers, 'access-control-allow-headers')).toEqual(
      // x-pacer-client: the SDK names its release on every request, browsers included.
      expect.arrayContaining(['authorization', 'content-type', 'idempotency-key', 'x-request-id', 'x-pacer-client']),
    );
    expect(res.headers.get('access-control-max-age')).toBe(String(CORS_PREFLIGHT_MAX_AGE_SECS));
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(listed(res.headers, 'vary')).toContain('origin');
    expect(await res.text()).toBe('');
  });

  it('sends the origin and the exposed headers on answers, errors included', async () => {
    const ok = await call<Profile>(server.url, 'GET', '/api/profile', { token, headers: { origin: APP_ORIGIN } });
    expect(ok.status).toBe(200);
    expect(ok.body.id).toBe(athlete.id);
    expect(ok.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(ok.headers.get('access-control-allow-credentials')).toBeNull();
    expect(listed(ok.headers, 'vary')).toContain('origin');
    const exposed = listed(ok.headers, 'access-control-expose-headers');
    expect(exposed).toEqual(
      expect.arrayContaining([
        'x-request-id',
        'ratelimit-limit',
        'ratelimit-remaining',
        'ratelimit-reset',
        'retry-after',
        'idempotent-replayed',
        'www-authenticate',
      ]),
    );
    // What is exposed is sent: the page reads the real values.
    expect(ok.headers.get('x-request-id')).toBeTruthy();
    expect(ok.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);

    const unauthorized = await call(server.url, 'GET', '/api/profile', { headers: { origin: APP_ORIGIN } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(unauthorized.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });

  it('answers preflights of the OAuth endpoints a browser app uses, and their errors', async () => {
    for (const path of ['/api/oauth/token', '/api/oauth/revoke', '/api/oauth/userinfo']) {
      const res = await corsPreflight(`${server.url}${path}`, {
        origin: APP_ORIGIN,
        method: path.endsWith('userinfo') ? 'GET' : 'POST',
        headers: 'authorization,content-type',
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin'), path).toBe(APP_ORIGIN);
    }
    const refused = await call<{ error: string }>(server.url, 'POST', '/api/oauth/token', {
      rawBody: 'grant_type=authorization_code&code=nope&client_id=nobody&code_verifier=x',
      contentType: 'application/x-www-form-urlencoded',
      headers: { origin: APP_ORIGIN },
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(typeof refused.body.error).toBe('string');
    expect(refused.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    const me = await call<{ sub: string }>(server.url, 'GET', '/api/oauth/userinfo', {
      token,
      headers: { origin: APP_ORIGIN },
    });
    expect(me.status).toBe(200);
    expect(me.body.sub).toBe(athlete.id);
    expect(me.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
  });
});

describe('no CORS for anything else', () => {
  it('gives another origin no CORS header, preflight or request, and serves the request as before', async () => {
    const preflight = await corsPreflight(`${server.url}/api/profile`, {
      origin: OTHER_ORIGIN,
      method: 'GET',
      headers: 'authorization',
    });
    expect(corsHeadersOf(preflight.headers)).toEqual([]);
    expect(listed(preflight.headers, 'vary')).toContain('origin');
    const res = await call<Profile>(server.url, 'GET', '/api/profile', { token, headers: { origin: OTHER_ORIGIN } });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(athlete.id);
    expect(corsHeadersOf(res.headers)).toEqual([]);
    // A look-alike of an allowed origin is another origin.
    const lookalike = await corsPreflight(`${server.url}/api/profile`, {
      origin: `${APP_ORIGIN}.evil.example`,
      method: 'GET',
    });
    expect(corsHeadersOf(lookalike.headers)).toEqual([]);
  });

  it.each([
    ['GET', '/login'],
    ['GET', '/dashboard'],
    ['GET', '/api/oauth/authorize?response_type=code&client_id=x'],
    ['OPTIONS', '/api/oauth/authorize'],
    ['OPTIONS', '/api/oauth/introspect'],
    ['OPTIONS', '/api/developer/apps/some-app/webhooks'],
    ['OPTIONS', '/api/admin/mcp/stats'],
    ['OPTIONS', '/api/webhooks/oauth/some-app'],
    ['GET', '/healthz'],
    ['GET', '/openapi.json'],
  ])(
    'answers %s %s to an allowed origin without CORS headers (cookie pages, confidential or server-to-server routes)',
    async (method, path) => {
      const res =
        method === 'OPTIONS'
          ? await corsPreflight(`${server.url}${path}`, { origin: APP_ORIGIN, method: 'POST', headers: 'content-type' })
          : await fetch(`${server.url}${path}`, { headers: { origin: APP_ORIGIN }, redirect: 'manual' });
      await res.arrayBuffer();
      expect(corsHeadersOf(res.headers)).toEqual([]);
    },
  );

  it('is off by default: no CORS header for any origin', async () => {
    const off = await startTestServer();
    try {
      const user = await makeUser(off.db);
      const offToken = (await mintToken(off.db, user, { scopes: ['profile:read'] })).token;
      const preflight = await corsPreflight(`${off.url}/api/profile`, {
        origin: APP_ORIGIN,
        method: 'GET',
        headers: 'authorization',
      });
      expect(corsHeadersOf(preflight.headers)).toEqual([]);
      const res = await call(off.url, 'GET', '/api/profile', { token: offToken, headers: { origin: APP_ORIGIN } });
      expect(res.status).toBe(200);
      expect(corsHeadersOf(res.headers)).toEqual([]);
    } finally {
      await off.stop();
    }
  });
});

describe('preflights and rate limits', () => {
  it('does not count preflights against the address window', async () => {
    const limited = await startTestServer({ PACER_CORS_ORIGINS: APP_ORIGIN, PACER_RATE_LIMIT_IP_PER_MINUTE: '3' });
    try {
      const user = await makeUser(limited.db);
      const limitedToken = (await mintToken(limited.db, user, { scopes: ['profile:read'] })).token;
      const read = () =>
        call(limited.url, 'GET', '/api/profile', { token: limitedToken, headers: { origin: APP_ORIGIN } });
      const first = await read();
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-limit')).toBe('3');
      // Far more preflights than the window holds: a browser sends one before each call it has not cached.
      for (let i = 0; i < 10; i += 1) {
        const preflight = await corsPreflight(`${limited.url}/api/profile`, {
          origin: APP_ORIGIN,
          method: 'GET',
          headers: 'authorization',
        });
        expect(preflight.status).toBe(204);
      }
      const second = await read();
      expect(second.status).toBe(200);
      // Unless the minute's window turned over in between, the real call is the window's second.
      if (Number(second.headers.get('ratelimit-reset')) <= Number(first.headers.get('ratelimit-reset')))
        expect(Number(second.headers.get('ratelimit-remaining'))).toBe(
          Number(first.headers.get('ratelimit-remaining')) - 1,
        );
    } finally {
      await limited.stop();
    }
  });
});

describe('a browser app on a second origin, in Chromium', () => {
  const chromium = usePortalBrowser(() => server.url);

  async function pageOn(origin: string) {
    const { page } = await chromium.newPage();
    await page.goto(`${origin}/`);
    return (url: string, init: RequestInit): Promise<PageCall> =>
      page.evaluate(
        ([target, options]) =>
          (window as unknown as { callApi(url: string, init: RequestInit): Promise<PageCall> }).callApi(
            target,
            options,
          ),
        [url, init] as const,
      );
  }

  it('reads and writes through the API with a bearer token, and reads the exposed headers', async () => {
    const callApi = await pageOn(allowedPage.origin);
    const read = await callApi(`${server.url}/api/profile`, { headers: { authorization: `Bearer ${token}` } });
    expect(read).toMatchObject({ ok: true, status: 200, body: { id: athlete.id } });
    // Not CORS-safelisted: the page reads them only because they are exposed.
    expect(read.ok && read.requestId).toMatch(/\S/);
    expect(read.ok && read.remaining).toMatch(/^\d+$/);

    // A write with a JSON body and an Idempotency-Key: a preflight first, then the PATCH.
    const written = await callApi(`${server.url}/api/profile`, {
      method: 'PATCH',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'idempotency-key': `cors-${Date.now()}`,
      },
      body: JSON.stringify({ weight: 71.5 }),
    });
    expect(written).toMatchObject({ ok: true, status: 200, body: { id: athlete.id, weight: 71.5 } });
    const stored = await call<Profile>(server.url, 'GET', '/api/profile', { token });
    expect(stored.body.weight).toBe(71.5);
  });

  it('runs the PKCE code flow as a public client: exchange, userinfo, refresh and revoke from the page', async () => {
    const app = await registerClient(server.db, athlete, {
      isPublic: true,
      name: 'Browser app',
      redirectUri: `${allowedPage.origin}/callback`,
    });
    // The user approves in the portal (first-party cookies); the page receives the code on its redirect URI.
    const jar = await signIn(server.url, athlete.email);
    const { code, verifier } = await issueCode(server.url, jar, app, { scope: 'profile:read' });
    const callApi = await pageOn(allowedPage.origin);
    const form = (fields: Record<string, string>): RequestInit => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    const exchanged = await callApi(
      `${server.url}/api/oauth/token`,
      form({
        grant_type: 'authorization_code',
        code,
        redirect_uri: app.redirectUri,
        client_id: app.clientId,
        code_verifier: verifier,
      }),
    );
    expect(exchanged).toMatchObject({ ok: true, status: 200, body: { token_type: 'Bearer' } });
    const tokens = (exchanged.ok ? exchanged.body : {}) as { access_token: string; refresh_token: string };
    expect(tokens.access_token).toBeTruthy();

    const me = await callApi(`${server.url}/api/oauth/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(me).toMatchObject({ ok: true, status: 200, body: { sub: athlete.id } });

    const refreshed = await callApi(
      `${server.url}/api/oauth/token`,
      form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: app.clientId }),
    );
    expect(refreshed).toMatchObject({ ok: true, status: 200 });
    const next = (refreshed.ok ? refreshed.body : {}) as { access_token: string; refresh_token: string };
    expect(next.access_token).not.toBe(tokens.access_token);

    // Sign-out: revoking the refresh token revokes the grant, its access tokens with it.
    const revoked = await callApi(
      `${server.url}/api/oauth/revoke`,
      form({ token: next.refresh_token, client_id: app.clientId }),
    );
    expect(revoked).toMatchObject({ ok: true, status: 200 });
    const afterRevoke = await call(server.url, 'GET', '/api/profile', { token: next.access_token });
    expect(afterRevoke.status).toBe(401);
  });

  it('is blocked on an origin not on the list: the fetch fails with a TypeError', async () => {
    const callApi = await pageOn(otherPage.origin);
    const read = await callApi(`${server.url}/api/profile`, { headers: { authorization: `Bearer ${token}` } });
    expect(read.ok).toBe(false);
    expect(!read.ok && read.error).toMatch(/^TypeError: /);
    const before = await call<Profile>(server.url, 'GET', '/api/profile', { token });
    const written = await callApi(`${server.url}/api/profile`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ weight: (before.body.weight ?? 70) + 1 }),
    });
    expect(written.ok).toBe(false);
    expect(!written.ok && written.error).toMatch(/^TypeError: /);
    // The preflight was refused, so the write was never sent.
    const after = await call<Profile>(server.url, 'GET', '/api/profile', { token });
    expect(after.body.weight).toBe(before.body.weight);
  });
});

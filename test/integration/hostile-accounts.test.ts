// Attacks on the account pages (issue 18, items 4, 5 and 7): guessing passwords at /login, creating
// accounts in bulk, common passwords, the first sign-up of a fresh deployment, and forged CSRF tokens.
// Covers NIST SP 800-63B §5.1.1.2 (blocklist, length) and §5.2.2 (throttling), OWASP CSRF Prevention
// (signed double-submit), RFC 6265bis §4.1.3.2 (`__Host-` cookies).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { hashLaneLoad } from '../../server/src/lib/crypto.ts';
import { makeUser, TEST_PASSWORD } from '../support/factories.ts';
import { CookieJar, signIn } from '../support/oauth-flow.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { waitFor } from '../support/wait.ts';

const FORM = 'application/x-www-form-urlencoded';

let server: TestServer;
let nextAddress = 1;

/** A fresh client address each call (the server trusts X-Forwarded-For from loopback here). */
function address(): string {
  nextAddress += 1;
  return `198.51.${Math.floor(nextAddress / 250)}.${nextAddress % 250}`;
}

interface Attempt {
  readonly email: string;
  readonly password: string;
  readonly from?: string;
  readonly jar?: CookieJar;
}

/** A browser's sign-in: GET /login for its CSRF token, then POST the form. */
async function attemptLogin(base: string, attempt: Attempt): Promise<Response> {
  const jar = attempt.jar ?? new CookieJar();
  const from = attempt.from ?? address();
  const form = await fetch(`${base}/login`, { headers: { 'x-forwarded-for': from, cookie: jar.header() } });
  jar.store(form);
  const res = await fetch(`${base}/login`, {
    method: 'POST',
    headers: { 'content-type': FORM, cookie: jar.header(), 'x-forwarded-for': from },
    body: new URLSearchParams({ _csrf: jar.get('pacer_csrf') ?? '', email: attempt.email, password: attempt.password }),
    redirect: 'manual',
  });
  jar.store(res);
  return res;
}

async function signUp(base: string, fields: Record<string, string>, from = address()): Promise<Response> {
  const jar = new CookieJar();
  jar.store(await fetch(`${base}/signup`, { headers: { 'x-forwarded-for': from } }));
  return fetch(`${base}/signup`, {
    method: 'POST',
    headers: { 'content-type': FORM, cookie: jar.header(), 'x-forwarded-for': from },
    body: new URLSearchParams({ _csrf: jar.get('pacer_csrf') ?? '', ...fields }),
    redirect: 'manual',
  });
}

/** Let the account's lockout run out, as the clock would (the row is the state every process reads). */
async function endLockout(target: TestServer, key: string): Promise<void> {
  await target.db
    .updateTable('loginThrottles')
    .set({ lockedUntil: new Date(Date.now() - 1000) })
    .where('key', '=', key)
    .execute();
}

/** The page without its per-request parts (the CSRF token). */
const pageText = (text: string) => text.replace(/name="_csrf" value="[^"]*"/, '');

beforeAll(async () => {
  server = await startTestServer({
    PACER_TRUST_PROXY: 'loopback',
    PACER_LOGIN_ACCOUNT_FREE_ATTEMPTS: '5',
    PACER_LOGIN_ADDRESS_FREE_ATTEMPTS: '10',
    PACER_LOGIN_LOCKOUT_SECONDS: '30',
    PACER_LOGIN_LOCKOUT_MAX_SECONDS: '100',
    PACER_SIGNUP_RATE_LIMIT_PER_HOUR: '3',
  });
});
afterAll(async () => {
  await server.stop();
});

describe('an attacker guessing one account’s password from many addresses', () => {
  let victim: User;
  beforeAll(async () => {
    victim = await makeUser(server.db);
  });

  it('gets 401 for the free attempts, then 429 + Retry-After; the right password gets the same 429 during the lockout', async () => {
    for (let i = 0; i < 5; i += 1) {
      expect((await attemptLogin(server.url, { email: victim.email, password: `guess-${i}-guess` })).status).toBe(401);
    }
    const wrong = await attemptLogin(server.url, { email: victim.email, password: 'another guess' });
    const right = await attemptLogin(server.url, { email: victim.email, password: TEST_PASSWORD });
    for (const res of [wrong, right]) {
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(30);
      expect(res.headers.getSetCookie().join()).not.toContain('pacer_session');
    }
    expect(pageText(await right.text())).toBe(pageText(await wrong.text()));
    expect(await server.db.selectFrom('sessions').where('userId', '=', victim.id).execute()).toHaveLength(0);
  });

  it('signs the real user in once the lockout has ended, and forgets the failures', async () => {
    await endLockout(server, `account:${victim.email.toLowerCase()}`);
    expect((await attemptLogin(server.url, { email: victim.email, password: TEST_PASSWORD })).status).toBe(303);
    expect(
      await server.db.selectFrom('loginThrottles').where('key', '=', `account:${victim.email.toLowerCase()}`).execute(),
    ).toHaveLength(0);
  });

  it('doubles each lockout after the free attempts, up to the cap', async () => {
    const user = await makeUser(server.db);
    const key = `account:${user.email.toLowerCase()}`;
    const lockouts: number[] = [];
    for (let i = 0; i < 5; i += 1) await attemptLogin(server.url, { email: user.email, password: `wrong-${i}-wrong` });
    for (let round = 0; round < 4; round += 1) {
      const refused = await attemptLogin(server.url, { email: user.email, password: 'still wrong' });
      expect(refused.status).toBe(429);
      lockouts.push(Number(refused.headers.get('retry-after')));
      await endLockout(server, key);
      // The first attempt after a lockout is heard (401) and starts the next, longer one.
      expect((await attemptLogin(server.url, { email: user.email, password: 'wrong again' })).status).toBe(401);
    }
    expect(lockouts[0]).toBeGreaterThan(25);
    expect(lockouts[1]).toBeGreaterThan(55);
    expect(lockouts[2]).toBeGreaterThan(95);
    expect(lockouts[3]).toBeLessThanOrEqual(100);
  });

  it('cannot lock the real user out of a browser that signed in before (device cookie), nor borrow that cookie for another account', async () => {
    const user = await makeUser(server.db);
    const other = await makeUser(server.db);
    const known = new CookieJar();
    expect((await attemptLogin(server.url, { email: user.email, password: TEST_PASSWORD, jar: known })).status).toBe(
      303,
    );
    const deviceCookie = known.get('pacer_device') ?? '';
    expect(deviceCookie).toMatch(/^[\w-]+\.[\w-]+$/);
    for (const target of [user, other]) {
      for (let i = 0; i < 6; i += 1) await attemptLogin(server.url, { email: target.email, password: `bad-${i}-bad` });
    }
    expect((await attemptLogin(server.url, { email: user.email, password: TEST_PASSWORD })).status).toBe(429);

    const again = new CookieJar();
    again.set('pacer_device', deviceCookie);
    expect((await attemptLogin(server.url, { email: user.email, password: TEST_PASSWORD, jar: again })).status).toBe(
      303,
    );
    const borrowed = new CookieJar();
    borrowed.set('pacer_device', deviceCookie);
    expect(
      (await attemptLogin(server.url, { email: other.email, password: TEST_PASSWORD, jar: borrowed })).status,
    ).toBe(429);
  });
});

describe('an attacker guessing from one address', () => {
  it('is refused before hashing once the address has used its attempts, even with 30 at once', async () => {
    const from = address();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        attemptLogin(server.url, { email: `nobody-${i}@example.test`, password: 'a wrong password', from }),
      ),
    );
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses.filter((status) => status === 401)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    // Another address is not affected.
    const user = await makeUser(server.db);
    expect((await attemptLogin(server.url, { email: user.email, password: TEST_PASSWORD })).status).toBe(303);
  });

  it('gives a successful sign-in its attempt back, so one office address is not locked out by its own users', async () => {
    const from = address();
    const user = await makeUser(server.db);
    for (let i = 0; i < 15; i += 1) {
      expect((await attemptLogin(server.url, { email: user.email, password: TEST_PASSWORD, from })).status).toBe(303);
    }
  });
});

describe('an attacker flooding /login from many addresses at once', () => {
  it('never runs more scrypt hashes at once than the lane allows; the rest wait their turn', async () => {
    let maxActive = 0;
    let sawQueue = false;
    let flooding = true;
    const sample = (async () => {
      while (flooding) {
        const load = hashLaneLoad('shared');
        maxActive = Math.max(maxActive, load.active);
        sawQueue ||= load.pending > 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        attemptLogin(server.url, { email: `flood-${i}@example.test`, password: 'a wrong password' }),
      ),
    );
    flooding = false;
    await sample;
    expect(answers.every((res) => res.status === 401)).toBe(true);
    expect(maxActive).toBeGreaterThan(0);
    expect(maxActive).toBeLessThanOrEqual(hashLaneLoad('shared').concurrency);
    expect(sawQueue).toBe(true);
  });
});

describe('an attacker flooding /login from many addresses at once, while the user signs in from home', () => {
  it('a sign-in from an address the account signed in from before overtakes the flood, even without the device cookie', async () => {
    const home = address();
    const user = await makeUser(server.db);
    // Signed in from home once before; today's browser has no cookies (cleared, or another browser).
    expect((await attemptLogin(server.url, { email: user.email, password: TEST_PASSWORD, from: home })).status).toBe(
      303,
    );
    let floodAnswered = 0;
    const flood = Array.from({ length: 20 }, (_, i) =>
      attemptLogin(server.url, { email: `botnet-${i}@example.test`, password: 'a wrong password' }).then((res) => {
        floodAnswered += 1;
        return res.status;
      }),
    );
    await waitFor(() => Promise.resolve(hashLaneLoad('shared').pending >= 10), 'the flood to queue in the shared lane');
    const real = await attemptLogin(server.url, { email: user.email, password: TEST_PASSWORD, from: home });
    const answeredBefore = floodAnswered;
    expect(real.status).toBe(303);
    expect(await Promise.all(flood)).toEqual(Array.from({ length: 20 }, () => 401));
    // Queued behind the flood it would come after at least the ten hashes waiting when it was sent.
    expect(answeredBefore).toBeLessThan(6);
  });
});

describe('an attacker flooding /login from one address at once', () => {
  it('takes one place at a time in the shared hashing lane, so sign-ins from other addresses never queue behind the flood', async () => {
    const from = address();
    let maxWaiting = 0;
    let flooding = true;
    const sample = (async () => {
      while (flooding) {
        maxWaiting = Math.max(maxWaiting, hashLaneLoad('shared').pending);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const user = await makeUser(server.db);
    const [answers, real] = await Promise.all([
      Promise.all(
        // Fewer than the address's free attempts (10 here): every one is hashed.
        Array.from({ length: 8 }, (_, i) =>
          attemptLogin(server.url, { email: `one-address-${i}@example.test`, password: 'a wrong password', from }),
        ),
      ),
      attemptLogin(server.url, { email: user.email, password: TEST_PASSWORD }),
    ]);
    flooding = false;
    await sample;
    expect(answers.every((res) => res.status === 401)).toBe(true);
    expect(real.status).toBe(303);
    // At most the real user's hash waits behind the flood's one: never the flood's other seven.
    expect(maxWaiting).toBeLessThanOrEqual(1);
  });
});

describe('an attacker creating accounts in bulk from one address', () => {
  it('gets 429 + Retry-After after the hourly sign-up limit; another address still signs up', async () => {
    const from = address();
    for (let i = 0; i < 3; i += 1) {
      const res = await signUp(server.url, { email: `bulk-${i}@example.test`, password: 'a long password' }, from);
      expect(res.status).toBe(303);
    }
    const refused = await signUp(server.url, { email: 'bulk-4@example.test', password: 'a long password' }, from);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.text()).toContain('Too many accounts');
    expect(await server.db.selectFrom('users').where('email', '=', 'bulk-4@example.test').execute()).toHaveLength(0);
    expect((await signUp(server.url, { email: 'bulk-5@example.test', password: 'a long password' })).status).toBe(303);
  });
});

describe('a user picking a common password', () => {
  it.each(['password', '12345678', 'Password1', 'qwertyuiop'])(
    'is refused at sign-up with %j, told it is too common (NIST SP 800-63B §5.1.1.2)',
    async (password) => {
      const email = `common-${randomUUID()}@example.test`;
      const res = await signUp(server.url, { email, password });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('one of the most common passwords');
      expect(await server.db.selectFrom('users').where('email', '=', email).execute()).toHaveLength(0);
    },
  );
});

describe('a stranger signing up first on a fresh deployment', () => {
  let fresh: TestServer;
  beforeAll(async () => {
    fresh = await startTestServer({ PACER_MCP_DCR_OWNER_EMAIL: 'assistants@example.test' });
  });
  afterAll(async () => {
    await fresh.stop();
  });

  it('is a plain user, and dynamic client registration has no owner to hand to them (503, nothing stored)', async () => {
    expect((await signUp(fresh.url, { email: 'first@example.test', password: 'a long password' })).status).toBe(303);
    const first = await fresh.db
      .selectFrom('users')
      .select('role')
      .where('email', '=', 'first@example.test')
      .executeTakeFirstOrThrow();
    expect(first.role).toBe('user');
    const registration = await fetch(`${fresh.url}/api/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Assistant', redirect_uris: ['http://127.0.0.1:5555/callback'] }),
    });
    expect(registration.status).toBe(503);
    expect(await fresh.db.selectFrom('oauthClients').where('kind', '=', 'dcr').execute()).toHaveLength(0);
  });

  it('cannot sign up first with the address PACER_MCP_DCR_OWNER_EMAIL names, to own every registered client (400)', async () => {
    const res = await signUp(fresh.url, { email: 'Assistants@Example.test', password: 'a long password' });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('reserved for this server');
    expect(await fresh.db.selectFrom('users').where('email', 'ilike', 'assistants@example.test').execute()).toEqual([]);
  });

  it('does not take the admin role from an operator-made admin, who keeps it', async () => {
    const admin = await makeUser(fresh.db, { admin: true });
    expect((await signUp(fresh.url, { email: 'second@example.test', password: 'a long password' })).status).toBe(303);
    const roles = await fresh.db.selectFrom('users').select(['email', 'role']).where('role', '=', 'admin').execute();
    expect(roles).toEqual([{ email: admin.email, role: 'admin' }]);
  });
});

describe('an attacker forging CSRF tokens', () => {
  it('cannot sign out a signed-in user with a planted pacer_csrf cookie and a matching field (403)', async () => {
    const user = await makeUser(server.db);
    const jar = await signIn(server.url, user.email);
    const planted = 'planted-planted-planted-planted-planted-planted';
    const res = await fetch(`${server.url}/logout`, {
      method: 'POST',
      headers: { 'content-type': FORM, cookie: `pacer_session=${jar.get('pacer_session')}; pacer_csrf=${planted}` },
      body: new URLSearchParams({ _csrf: planted }),
      redirect: 'manual',
    });
    expect(res.status).toBe(403);
    expect(await server.db.selectFrom('sessions').where('userId', '=', user.id).execute()).toHaveLength(1);
    // The session's own token works.
    const own = await fetch(`${server.url}/logout`, {
      method: 'POST',
      headers: { 'content-type': FORM, cookie: jar.header() },
      body: new URLSearchParams({ _csrf: jar.get('pacer_csrf') ?? '' }),
      redirect: 'manual',
    });
    expect(own.status).toBe(303);
  });

  it("cannot use another session's token, nor a planted X-CSRF-Token on the portal's JSON API (403)", async () => {
    const victim = await signIn(server.url, (await makeUser(server.db)).email);
    const attacker = await signIn(server.url, (await makeUser(server.db)).email);
    const replay = `${server.url}/api/developer/apps/pc_none/webhooks/${randomUUID()}/replay`;
    const planted = 'planted-planted-planted-planted-planted-planted';
    const session = `pacer_session=${victim.get('pacer_session') ?? ''}`;
    const theirs = attacker.get('pacer_csrf') ?? '';
    for (const [cookie, token] of [
      [`${session}; pacer_csrf=${planted}`, planted],
      [`${session}; pacer_csrf=${theirs}`, theirs],
    ] as const) {
      const res = await fetch(replay, { method: 'POST', headers: { cookie, 'x-csrf-token': token } });
      expect(res.status).toBe(403);
    }
    // The victim's own token passes the check (and the app is not found).
    const own = await fetch(replay, {
      method: 'POST',
      headers: { cookie: victim.header(), 'x-csrf-token': victim.get('pacer_csrf') ?? '' },
    });
    expect(own.status).toBe(404);
  });

  it('cannot sign a victim in to the attacker’s account with an invented pre-session token (403)', async () => {
    const user = await makeUser(server.db);
    const invented = 'invented.invented-invented-invented-invented';
    const res = await fetch(`${server.url}/login`, {
      method: 'POST',
      headers: { 'content-type': FORM, cookie: `pacer_csrf=${invented}` },
      body: new URLSearchParams({ _csrf: invented, email: user.email, password: TEST_PASSWORD }),
      redirect: 'manual',
    });
    expect(res.status).toBe(403);
    expect(res.headers.getSetCookie().join()).not.toContain('pacer_session');
  });
});

describe('cookies over https', () => {
  let secure: TestServer;
  beforeAll(async () => {
    secure = await startTestServer({ PACER_BASE_URL: 'https://pacer.example.test' });
  });
  afterAll(async () => {
    await secure.stop();
  });

  it('are __Host- prefixed (Secure, Path=/, no Domain), and a planted unprefixed pacer_csrf is ignored', async () => {
    const user = await makeUser(secure.db);
    const jar = new CookieJar();
    const form = await fetch(`${secure.url}/login`);
    jar.store(form);
    const csrfHeader = form.headers.getSetCookie().find((header) => header.startsWith('__Host-pacer_csrf='));
    expect(csrfHeader).toMatch(/; Path=\/;.*HttpOnly; Secure/);
    expect(csrfHeader).not.toMatch(/Domain=/i);
    const token = jar.get('__Host-pacer_csrf') ?? '';

    const planted = await fetch(`${secure.url}/login`, {
      method: 'POST',
      headers: { 'content-type': FORM, cookie: `pacer_csrf=${token}` },
      body: new URLSearchParams({ _csrf: token, email: user.email, password: TEST_PASSWORD }),
      redirect: 'manual',
    });
    expect(planted.status).toBe(403);

    const res = await fetch(`${secure.url}/login`, {
      method: 'POST',
      headers: { 'content-type': FORM, cookie: jar.header() },
      body: new URLSearchParams({ _csrf: token, email: user.email, password: TEST_PASSWORD }),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    const session = res.headers.getSetCookie().find((header) => header.startsWith('__Host-pacer_session='));
    expect(session).toMatch(/; Path=\/;.*HttpOnly; Secure; SameSite=Lax/);
  });
});

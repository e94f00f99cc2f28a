/**
 * A real user's sign-in time while 50 wrong sign-ins arrive at once (issue 18, item 4).
 * A measurement, not a test: it prints what it measured.
 *
 * Starts the server as `npm start` would (role `all`) from the checkout `PACER_BENCH_REPO` (default:
 * this one), on a fresh database on DATABASE_URL (dropped at the end), with `PACER_TRUST_PROXY=loopback`
 * so each attacker request names its own address in `X-Forwarded-For` (50 addresses: the per-address
 * limit does not stop them; only hashing concurrency is measured). The real user is made with the CLI
 * and signs in once, idle, from "their" browser (keeping its cookies, the device cookie among them).
 *
 * Each round: the real user's sign-in (POST /login, 303) idle, as the reference; then 50 wrong
 * sign-ins (each for its own unknown e-mail, from its own address) sent at once, and 20 ms later the
 * real user's sign-in from the known browser, then from a new browser on the same network (the
 * address it signed in from), then from a new browser on a network it never signed in from. Printed:
 * min/median/max over the rounds of each time, and of its ratio to the idle one.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *   node --experimental-strip-types --disable-warning=ExperimentalWarning --conditions=pacer-source \
 *     test/bench/hostile-login-bench.ts
 *
 * Knobs: PACER_BENCH_REPO, PACER_BENCH_ROUNDS (default 3), PACER_BENCH_ATTACKERS (default 50),
 * PACER_BENCH_ATTACK_ADDRESSES (how many addresses they come from, default one each; 1: the issue's
 * attacker on one machine, whose sign-ins past the address's free attempts are refused unhashed).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { CookieJar } from '../support/cookie-jar.ts';
import { BENCH_REPO, freePort, runPacer, spawnPacer, waitReady } from './bench-checkout.ts';
import { round, sleep, spreadOf } from './bench-support.ts';

const ROUNDS = Number(process.env['PACER_BENCH_ROUNDS'] ?? 3);
const ATTACKERS = Number(process.env['PACER_BENCH_ATTACKERS'] ?? 50);
/** How many addresses the attackers share (default: each its own). */
const ADDRESSES = Number(process.env['PACER_BENCH_ATTACK_ADDRESSES'] ?? ATTACKERS);
const FORM = 'application/x-www-form-urlencoded';

interface PreparedLogin {
  readonly jar: CookieJar;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** GET /login (its CSRF token), ready to POST. */
async function prepareLogin(
  base: string,
  email: string,
  password: string,
  options: { jar?: CookieJar; from?: string },
) {
  const jar = options.jar ?? new CookieJar();
  const extra: Record<string, string> = options.from ? { 'x-forwarded-for': options.from } : {};
  jar.store(await fetch(`${base}/login`, { headers: { ...extra, cookie: jar.header() } }));
  return {
    jar,
    headers: { ...extra, 'content-type': FORM, cookie: jar.header() },
    body: new URLSearchParams({ _csrf: jar.get('pacer_csrf') ?? '', email, password }).toString(),
  } satisfies PreparedLogin;
}

/** POST /login; the milliseconds it took and the status. */
async function postLogin(base: string, login: PreparedLogin): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const res = await fetch(`${base}/login`, {
    method: 'POST',
    headers: login.headers,
    body: login.body,
    redirect: 'manual',
  });
  await res.arrayBuffer();
  login.jar.store(res);
  return { ms: performance.now() - started, status: res.status };
}

/** A fresh set of addresses for each flood, so no flood finds its addresses locked by an earlier one. */
function attackerAddress(round: number, flood: number, index: number): string {
  return `203.${flood}.${113 + round}.${(index % ADDRESSES) + 1}`;
}

async function main(): Promise<void> {
  const adminUrl = process.env['DATABASE_URL'];
  if (!adminUrl) throw new Error('set DATABASE_URL (a PostgreSQL the bench may create a database on)');
  const name = `pacer_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'pacer-login-bench-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: url.toString(),
    PACER_DATA_DIR: dataDir,
    PACER_PORT: String(port),
    PACER_HOST: '127.0.0.1',
    PACER_BASE_URL: base,
    PACER_ROLE: 'all',
    PACER_LOG_LEVEL: 'warn',
    PACER_TRUST_PROXY: 'loopback',
  };
  let server: ChildProcess | undefined;
  try {
    const email = 'runner@example.com';
    const password = randomBytes(12).toString('hex');
    await runPacer(env, ['user:create', '--email', email, '--password', password, '--json']);
    server = spawnPacer(env);
    await waitReady(base, server, { timeoutMs: 60_000 });
    const browser = new CookieJar();
    const first = await postLogin(base, await prepareLogin(base, email, password, { jar: browser }));
    if (first.status !== 303) throw new Error(`the real user could not sign in: ${first.status}`);

    const idle: number[] = [];
    const known: number[] = [];
    const fresh: number[] = [];
    const stranger: number[] = [];
    for (let r = 0; r < ROUNDS; r += 1) {
      const reference = await postLogin(base, await prepareLogin(base, email, password, { jar: browser }));
      idle.push(reference.ms);
      const cases = [
        { target: known, label: 'known browser', jar: () => browser, from: undefined },
        { target: fresh, label: 'new browser  ', jar: () => new CookieJar(), from: undefined },
        // A new browser on a network this account never signed in from: nothing tells it from the attack.
        { target: stranger, label: 'new network  ', jar: () => new CookieJar(), from: `192.0.2.${r + 1}` },
      ];
      for (const [floodIndex, { target, label, jar, from }] of cases.entries()) {
        const attacks = await Promise.all(
          Array.from({ length: ATTACKERS }, (_, i) =>
            prepareLogin(base, `nobody-${r}-${floodIndex}-${i}@example.com`, 'wrong password 1', {
              from: attackerAddress(r, floodIndex, i),
            }),
          ),
        );
        const userLogin = await prepareLogin(base, email, password, { jar: jar(), ...(from ? { from } : {}) });
        const flood = Promise.all(attacks.map((attack) => postLogin(base, attack)));
        await sleep(20);
        const measured = await postLogin(base, userLogin);
        const answers = await flood;
        if (measured.status !== 303) throw new Error(`the real user was refused under attack: ${measured.status}`);
        target.push(measured.ms);
        const statuses = [...new Set(answers.map((answer) => answer.status))].join(',');
        process.stdout.write(
          `round ${r + 1} ${label}: ${round(measured.ms, 1)} ms (idle ${round(reference.ms, 1)} ms; attack answers ${statuses})\n`,
        );
      }
    }
    const line = (label: string, values: number[]) => {
      const ms = spreadOf(values.map((value) => round(value, 1)));
      const ratios = spreadOf(values.map((value, i) => round(value / (idle[i] ?? value), 2)));
      return `${label}: ${ms.min} / ${ms.median} / ${ms.max} ms (ratio to idle ${ratios.min} / ${ratios.median} / ${ratios.max})`;
    };
    process.stdout.write(
      [
        '',
        `Sign-in under ${ATTACKERS} concurrent wrong sign-ins from ${ADDRESSES} address(es), ${BENCH_REPO} (min / median / max over ${ROUNDS} rounds)`,
        line('idle                       ', idle),
        line('under attack, known browser', known),
        line('under attack, new browser  ', fresh),
        line('under attack, new network  ', stranger),
        '',
      ].join('\n'),
    );
  } finally {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server?.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();

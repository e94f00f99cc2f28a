/**
 * Issue 18, item 3, the figure: while one athlete sends 5 crafted 25 MB FIT
 * files at once (a `file_id`, one record definition, 5 000 000 tiny
 * records), how long does another athlete's valid ~1 KB upload take?
 * Target: under 2 s.
 *
 *   node --experimental-strip-types --disable-warning=ExperimentalWarning --conditions=pacer-source \
 *     test/bench/hostile-uploads-bench.ts
 *
 * The server is started as `npm start` starts it (role `all`, default
 * configuration) from the checkout `PACER_BENCH_REPO` (default: this one),
 * on a fresh database on `DATABASE_URL` (required), dropped at the end; the
 * two users and their tokens are made through that checkout's CLI. So
 * `PACER_BENCH_REPO=/work/main` measures the code before the change.
 *
 * Each round (PACER_BENCH_ROUNDS, default 3): the attacker's 5 uploads are
 * sent at once, over 5 connections; once all 5 bodies have been written out
 * (or answered), the other athlete uploads ~1 KB rides one after the other,
 * each timed, until the attack's 5 answers are in (at least one upload). A
 * round's figure is its slowest upload: the first one may slip in while
 * the server is still parsing the crafted bodies, the next ones meet them
 * in the decode queue. The reference is the same upload (other bytes, the
 * same size) with no attack. Printed: min/median/max over the rounds, the
 * ratio of the medians, and what the attack uploads were answered.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { buildFitActivity, rideSamples, tinyRecordFlood } from '../support/fit-fixtures.ts';
import { BENCH_REPO, freePort, runPacer, runPacerJson, spawnPacer, waitReady } from './bench-checkout.ts';
import { round, spreadOf, type Spread } from './bench-support.ts';

const ROUNDS = Number(process.env['PACER_BENCH_ROUNDS'] ?? 3);
const ATTACK_FILES = 5;
/** Longest wait for one round's attack answers (the code before the change needed ~100 s for five). */
const ATTACK_TIMEOUT_MS = 600_000;

const adminUrl = process.env['DATABASE_URL'];
if (!adminUrl) {
  process.stderr.write('hostile-uploads-bench: set DATABASE_URL to a PostgreSQL server it may create a database on\n');
  process.exit(2);
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** A user and a `workout:write` token, through the CLI as an operator makes them. */
async function userWithToken(env: NodeJS.ProcessEnv, prefix: string): Promise<string> {
  const email = `${prefix}-${randomBytes(4).toString('hex')}@example.com`;
  await runPacer(env, ['user:create', `--email=${email}`, `--password=${randomBytes(12).toString('hex')}`, '--json']);
  const token = await runPacerJson<{ access_token: string }>(env, [
    'token:create',
    '--email',
    email,
    '--scope',
    'workout:write',
  ]);
  return token.access_token;
}

interface Upload {
  readonly status: number;
  readonly code: string | undefined;
  readonly ms: number;
}

async function upload(url: string, token: string, bytes: Uint8Array): Promise<Upload> {
  const form = new FormData();
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), 'activity.fit');
  const started = performance.now();
  try {
    const res = await fetch(`${url}/api/workouts/upload-fit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
      signal: AbortSignal.timeout(ATTACK_TIMEOUT_MS),
    });
    const text = await res.text();
    let code: string | undefined;
    try {
      code = (JSON.parse(text) as { code?: string }).code;
    } catch {
      code = undefined;
    }
    return { status: res.status, code, ms: performance.now() - started };
  } catch (error) {
    return { status: 0, code: error instanceof Error ? error.message : String(error), ms: performance.now() - started };
  }
}

const BOUNDARY = 'pacer-bench-boundary';

/** An upload over its own connection: `sent` once its whole body is written out (or it was answered first). */
function attackUpload(url: string, token: string, bytes: Uint8Array): { sent: Promise<void>; answer: Promise<Upload> } {
  const body = Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="crafted.fit"\r\nContent-Type: application/vnd.ant.fit\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
  const started = performance.now();
  const request = http.request(`${url}/api/workouts/upload-fit`, {
    method: 'POST',
    agent: false,
    timeout: ATTACK_TIMEOUT_MS,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      'content-length': String(body.length),
    },
  });
  let markSent: () => void = () => undefined;
  const sent = new Promise<void>((resolve) => (markSent = resolve));
  const answer = new Promise<Upload>((resolve) => {
    const failed = (error: Error) => {
      markSent();
      resolve({ status: 0, code: error.message, ms: performance.now() - started });
    };
    request.on('error', failed);
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('response', (res) => {
      markSent();
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('error', failed);
      res.on('end', () => {
        let code: string | undefined;
        try {
          code = (JSON.parse(text) as { code?: string }).code;
        } catch {
          code = undefined;
        }
        resolve({ status: res.statusCode ?? 0, code, ms: performance.now() - started });
      });
    });
  });
  request.end(body, markSent);
  return { sent, answer };
}

let serial = 5_000;
/** The other athlete's ride: 30 one-second records, about 1 KB, distinct bytes each time (so each one is decoded). */
function smallRide(): Uint8Array {
  serial += 1;
  return buildFitActivity({
    startTime: new Date(Date.UTC(2026, 10, 1) + serial * 60_000),
    sport: 'cycling',
    subSport: 'road',
    samples: rideSamples(30),
    serialNumber: serial,
  }).bytes;
}

const fmt = (spread: Spread) => `min ${spread.min} ms, median ${spread.median} ms, max ${spread.max} ms`;

async function main(): Promise<void> {
  const name = `pacer_bench_hostile_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const databaseUrl = new URL(adminUrl as string);
  databaseUrl.pathname = `/${name}`;
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pacer-hostile-bench-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    DATABASE_URL: databaseUrl.toString(),
    PACER_PORT: String(port),
    PACER_HOST: '127.0.0.1',
    PACER_BASE_URL: `http://127.0.0.1:${port}`,
    PACER_ROLE: 'all',
    PACER_LOG_LEVEL: 'warn',
    // Nothing is written into the checkout (it may be one the bench must not touch).
    PACER_DATA_DIR: dataDir,
    PACER_SECRET_KEY: randomBytes(32).toString('base64'),
  };
  const lines: string[] = [];
  const child = spawnPacer(env, 'pipe');
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - 30));
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve(undefined);
        else child.once('exit', resolve);
      });
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
      rmSync(dataDir, { recursive: true, force: true });
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`hostile-uploads-bench: ${signal}, stopping the server and dropping ${name}\n`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  try {
    await waitReady(url, child, { output: () => lines.join('\n') });
    const attackerToken = await userWithToken(env, 'attacker');
    const athleteToken = await userWithToken(env, 'athlete');
    const flood = tinyRecordFlood(5_000_000);
    const sample = smallRide();
    log(`server: ${BENCH_REPO} (npm start: role all, default limits), database ${name} (dropped at the end)`);
    log(`crafted file: ${flood.length} bytes, 5 000 000 records; the other athlete's file: ${sample.length} bytes`);

    // Warm-up: the first upload starts the decoder worker.
    await upload(url, athleteToken, smallRide());

    const reference: number[] = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      const res = await upload(url, athleteToken, smallRide());
      if (res.status !== 201) throw new Error(`reference upload answered ${res.status} ${res.code ?? ''}`);
      reference.push(round(res.ms, 1));
    }
    log(`reference, no attack (${ROUNDS} rounds): ${fmt(spreadOf(reference))}`);

    const underAttack: number[] = [];
    const attackSpans: number[] = [];
    const attackAnswers: Record<string, number> = {};
    for (let i = 0; i < ROUNDS; i += 1) {
      const started = performance.now();
      const attack = Array.from({ length: ATTACK_FILES }, () => attackUpload(url, attackerToken, flood));
      await Promise.all(attack.map((one) => one.sent));
      const sentAfter = performance.now() - started;
      let attackOver = false;
      const answered = Promise.all(attack.map((one) => one.answer)).finally(() => (attackOver = true));
      const theirs: Upload[] = [];
      do theirs.push(await upload(url, athleteToken, smallRide()));
      while (!attackOver);
      const answers = await answered;
      const res = theirs.reduce((slowest, one) => (one.ms > slowest.ms ? one : slowest));
      attackSpans.push(round(performance.now() - started, 0));
      for (const answer of answers) {
        const key = `${answer.status} ${answer.code ?? ''}`.trim();
        attackAnswers[key] = (attackAnswers[key] ?? 0) + 1;
      }
      log(
        `  round ${i + 1}: attack sent in ${round(sentAfter, 0)} ms; the other athlete's ${theirs.length} upload(s) meanwhile: ${theirs.map((one) => `${one.status} in ${round(one.ms, 1)} ms`).join(', ')}; attack answered ${answers.map((answer) => `${answer.status} ${answer.code ?? ''} (${round(answer.ms / 1000, 1)} s)`).join(', ')}`,
      );
      const failed = theirs.find((one) => one.status !== 201);
      if (failed) throw new Error(`the other athlete's upload answered ${failed.status} ${failed.code ?? ''}`);
      underAttack.push(round(res.ms, 1));
    }
    const attacked = spreadOf(underAttack);
    const idle = spreadOf(reference);
    log(`under attack, slowest upload of each round (${ROUNDS} rounds): ${fmt(attacked)}`);
    log(`ratio of medians (attack / reference): ${round(attacked.median / idle.median, 1)}`);
    log(
      `attack: all ${ATTACK_FILES} answered after ${fmt(spreadOf(attackSpans))}; answers ${JSON.stringify(attackAnswers)}`,
    );
    log(
      `target: the other athlete's upload under 2000 ms: ${attacked.max < 2000 ? 'met' : 'NOT met'} (max ${attacked.max} ms)`,
    );
  } finally {
    await cleanup();
  }
}

await main();

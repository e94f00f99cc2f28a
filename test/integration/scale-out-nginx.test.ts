/**
 * Scale-out behind a real reverse proxy (issue 11; README "Operating at
 * scale"). Debian's nginx, started here from `deploy/nginx.conf`, sits in front
 * of three API processes of the real binary (`PACER_ROLE=api`,
 * `PACER_TRUST_PROXY=1`, `PACER_BASE_URL` = nginx's URL), with two worker
 * processes, all on one PostgreSQL database. For `PACER_SCALE_OUT_SECONDS`
 * (default 60) simulated clients, each connecting from a loopback address of
 * its own so nginx sees distinct peers, send mixed traffic through nginx:
 * REST writes with `Idempotency-Key` that the client retries after a network
 * error, a 5xx, a 409 or a 429, and some of which it sends again after an
 * answer (a client that timed out); FIT uploads; signed webhooks; MCP tool
 * calls. Meanwhile, at a quarter of the run an API process is killed with
 * SIGKILL and replaced on its port; at half, while a noisy client floods
 * reads past its rate limit (so every API process is busy), one is restarted
 * with SIGTERM (rolling restart); at three quarters, a worker is killed with
 * SIGKILL and not replaced.
 *
 * Afterwards:
 * - every write answered 2xx is stored exactly once, with the values sent; a
 *   killed process left no idempotency key claimed (a request with a key is
 *   one transaction), so its clients' retries ran at once; a write every try
 *   of which failed is sent again later, and stored exactly once too;
 * - a re-sent write replays its first answer and applies nothing again;
 * - every webhook delivery ends `processed` (a re-sent one `ignored` as a
 *   duplicate of it), none left in flight, each applied once;
 * - the SIGTERM restart failed no request: no connection error, and no 5xx
 *   from the restarted process, between the signal and its replacement being
 *   ready; and the process drained by itself, before its shutdown timeout;
 * - the per-address rate limit counted each real client address: the noisy one
 *   got 429s, the others none, and the windows, request logs and webhook
 *   `source_ip` name the clients' addresses, never nginx's.
 * - no process logged an error other than PostgreSQL refusing a connection
 *   (the machine's limit, shared with whatever else runs there).
 * A summary table of what was sent and answered is printed either way.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb, createPool, type Db } from '../../server/src/db/database.ts';
import type { User } from '../../server/src/db/tables.ts';
import { makeUser, makeWebhookApp, mintToken } from '../support/factories.ts';
import { webhookDeliveryQueue } from '../../server/src/queue/queues.ts';
import { buildFitActivity, rideSamples } from '../support/fit-fixtures.ts';
import { LoopbackClient, type LoopbackAnswer, type LoopbackRequest } from '../support/loopback-client.ts';
import { startNginx, type Nginx } from '../support/nginx.ts';
import { deliveriesByState, jobsByState } from '../support/queue-state.ts';
import { cloneTemplateDatabase, databaseUrlFor, dropDatabase, freePort } from '../support/test-server.ts';
import { sign } from '../support/webhooks.ts';
import { startPacerProcess, type PacerProcess } from '../support/webhooks-cluster.ts';
import { sleep } from '../support/wait.ts';

/** How long traffic runs; shorten it while working on the test (`PACER_SCALE_OUT_SECONDS=20`). */
const DURATION_MS = Number(process.env['PACER_SCALE_OUT_SECONDS'] ?? '60') * 1000;
/**
 * `PACER_RATE_LIMIT_IP_PER_MINUTE` of the API processes: low enough that the noisy client passes it within
 * one window even on a loaded machine (it must send all its reads inside one minute).
 */
const IP_LIMIT_PER_MINUTE = 1200;
/** What a well-behaved app client sends per minute at most, retries and re-sends included: under half its window. */
const CLIENT_PACE_PER_MINUTE = 500;
/**
 * The webhook sender's pace: with its re-sends about 1,450 a minute, under the webhook endpoint's default
 * per-address and per-app windows (`PACER_WEBHOOK_RATE_LIMIT_*`: 2400 and 6000 a minute), so it gets no 429.
 */
const WEBHOOK_PACE_PER_MINUTE = 1200;
/**
 * The noisy client sends reads as fast as nginx takes them until this many were refused 429. On a loaded machine
 * it may not pass its limit within its first window: then it goes on until it does in a later one, up to
 * NOISY_MAX_READS reads or NOISY_MAX_MS. It stops within a second or two of the first 429 (refusals are quick), so
 * every 429 falls in the window the counters hold at the end.
 */
const NOISY_OVER_LIMIT = 200;
const NOISY_MAX_READS = 5 * IP_LIMIT_PER_MINUTE;
const NOISY_MAX_MS = 240_000;
/** Requests a simulated client has in flight at once. */
const IN_FLIGHT_PER_CLIENT = 6;
/** Tries of one logical request before the client gives up. */
const MAX_TRIES = 8;
/** Every this-many-th acknowledged write is sent again with the same key, as after a client-side timeout. */
const RESEND_EVERY = 5;
/** `PACER_SHUTDOWN_TIMEOUT_MS` (the default): how long a SIGTERM'd process may take to drain. */
const SHUTDOWN_TIMEOUT_MS = 10_000;
/** Least time between the end of one fault (its replacement ready) and the next, and after the last: a share of the run. */
const FAULT_GAP = 0.2;
/** Webhooks a dead worker held come back after their job expires (30 s) and a retry delay. */
const DRAIN_TIMEOUT_MS = 180_000;

const APP_CLIENTS = ['127.0.0.11', '127.0.0.12', '127.0.0.13', '127.0.0.14'] as const;
const WEBHOOK_SENDER = '127.0.0.15';
const NOISY_CLIENT = '127.0.0.16';
const ALL_CLIENTS = [...APP_CLIENTS, WEBHOOK_SENDER, NOISY_CLIENT];
const WEBHOOK_USERS = 4;
const MCP_PROTOCOL_VERSION = '2025-11-25';

type Kind = 'wellness' | 'planned' | 'upload' | 'mcp-write' | 'mcp-read' | 'rest-read' | 'webhook' | 'noisy-read';
/** The mix of one app client's logical requests, cycled. */
const MIX: readonly Kind[] = [
  'wellness',
  'planned',
  'rest-read',
  'mcp-write',
  'wellness',
  'upload',
  'mcp-read',
  'planned',
  'wellness',
  'mcp-write',
];
const WRITE_KINDS: ReadonlySet<Kind> = new Set(['wellness', 'planned', 'upload', 'mcp-write', 'webhook']);

/** One HTTP exchange as the client saw it. */
interface Attempt {
  readonly client: string;
  readonly kind: Kind;
  /** Sent as `X-Request-Id`; nginx's access log records it, so the upstream that served it is known. */
  readonly requestId: string;
  readonly startedAt: number;
  readonly endedAt: number;
  /** The HTTP status; 0 for a refused or reset connection or a timeout. */
  readonly status: number;
  /** The problem's `code` of a refusal (4xx/5xx with a problem body), else ''. */
  readonly code: string;
  readonly error: string | undefined;
  /** A second or later try of one logical request. */
  readonly retry: boolean;
  /** A deliberate re-send of an acknowledged write. */
  readonly resend: boolean;
}

/** One logical request: a write keeps its key (and body) across every try. */
interface Operation {
  readonly client: string;
  readonly kind: Kind;
  /** What identifies the write in the database: a title, a date, a file hash, a webhook id. */
  readonly identity: string;
  readonly key: string | undefined;
  /** The user the data belongs to. */
  readonly userId: string;
  tries: number;
  /** The first 2xx answer. */
  ack: { readonly status: number; readonly text: string; readonly replayed: boolean } | undefined;
  /** Why the client stopped trying without a 2xx. */
  gaveUp: string | undefined;
  /** The answer to the re-send of an acknowledged write. */
  resent:
    | { readonly status: number; readonly text: string; readonly replayed: boolean }
    | { readonly error: string }
    | undefined;
  /** Values the stored row must hold. */
  readonly expected: Record<string, unknown>;
}

interface Sending {
  readonly request: LoopbackRequest;
  readonly verdict: (answer: LoopbackAnswer | Error) => Verdict;
}

type Verdict =
  | { readonly outcome: 'ack' }
  | { readonly outcome: 'retry'; readonly why: string; readonly afterMs?: number }
  | { readonly outcome: 'final'; readonly why: string };

/** A simulated client: its own source address, a pace under its rate-limit window, its own user and tokens. */
interface SimClient {
  readonly name: string;
  readonly address: string;
  readonly http: LoopbackClient;
  readonly user: User;
  readonly restToken: string;
  readonly mcpToken: string;
  /** The client id the developer tokens were issued to (idempotency keys are scoped to it). */
  readonly clientId: string;
  readonly index: number;
  next: number;
  requests: number;
  nextSlot: number;
  readonly intervalMs: number;
}

const processes: PacerProcess[] = [];
const clients: LoopbackClient[] = [];
let nginx: Nginx | undefined;
let database: string | undefined;
let db: Db | undefined;

/** Set while the test runs: keeps what a failure (a timeout included) needs looking into. */
let saveLogs: (() => Promise<void>) | undefined;

afterAll(async () => {
  await saveLogs?.();
  for (const client of clients) client.close();
  await nginx?.stop();
  for (const child of [...processes].reverse()) await child.stop();
  await db?.destroy();
  if (database !== undefined) await dropDatabase(database);
}, 120_000);

/** A date per sequence number, from 2026-01-01 on, so each logical write has its own day. */
function dateOf(n: number): string {
  return new Date(Date.UTC(2026, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
}

function problemCode(text: string): string {
  try {
    const body = JSON.parse(text) as { code?: unknown };
    return typeof body.code === 'string' ? body.code : '';
  } catch {
    return '';
  }
}

function retryAfterMs(answer: LoopbackAnswer): number | undefined {
  const header = answer.headers['retry-after'];
  return typeof header === 'string' && /^\d+$/.test(header) ? Math.min(2000, Number(header) * 1000) : undefined;
}

/** A REST client's reading of an answer: 2xx done; errors, 5xx, 409 and 429 worth another try; other 4xx final. */
function restVerdict(answer: LoopbackAnswer | Error): Verdict {
  if (answer instanceof Error) return { outcome: 'retry', why: `network: ${answer.message}` };
  if (answer.status >= 200 && answer.status < 300) return { outcome: 'ack' };
  const why = `${answer.status} ${problemCode(answer.text)}`.trim();
  if (answer.status >= 500 || answer.status === 409 || answer.status === 429) {
    const afterMs = retryAfterMs(answer);
    return afterMs === undefined ? { outcome: 'retry', why } : { outcome: 'retry', why, afterMs };
  }
  return { outcome: 'final', why };
}

interface ToolAnswer {
  readonly result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[] };
  readonly error?: { code: number; message: string };
}

/** The JSON-RPC answer, from a JSON body or the first SSE `data:` line. */
function toolAnswerOf(text: string): ToolAnswer | undefined {
  const data = text.trimStart().startsWith('{')
    ? text
    : text
        .split('\n')
        .find((line) => line.startsWith('data:'))
        ?.slice('data:'.length);
  if (data === undefined) return undefined;
  try {
    return JSON.parse(data) as ToolAnswer;
  } catch {
    return undefined;
  }
}

function toolErrorCode(answer: ToolAnswer): string {
  try {
    return (JSON.parse(answer.result?.content?.[0]?.text ?? '{}') as { error?: string }).error ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** An MCP host's reading: a tool result done; transport trouble and retryable tool errors tried again. */
function mcpVerdict(answer: LoopbackAnswer | Error): Verdict {
  if (answer instanceof Error || answer.status !== 200) return restVerdict(answer);
  const parsed = toolAnswerOf(answer.text);
  if (!parsed) return { outcome: 'retry', why: 'unreadable MCP answer' };
  if (parsed.error) return { outcome: 'final', why: `JSON-RPC ${parsed.error.code} ${parsed.error.message}` };
  if (parsed.result?.isError === true) {
    const code = toolErrorCode(parsed);
    if (code === 'idempotency_in_progress' || code === 'internal_error' || code === 'rate_limited') {
      return { outcome: 'retry', why: `tool ${code}`, afterMs: 1000 };
    }
    return { outcome: 'final', why: `tool ${code}` };
  }
  return { outcome: 'ack' };
}

function headerOf(answer: LoopbackAnswer, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

async function multipartUpload(bytes: Uint8Array, name: string): Promise<{ body: Uint8Array; contentType: string }> {
  const form = new FormData();
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), 'activity.fit');
  form.append('name', name);
  // The platform's own multipart encoder; the same bytes (boundary included) go out on every try.
  const encoded = new Response(form);
  return { body: new Uint8Array(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type') ?? '' };
}

describe('scale-out behind nginx', () => {
  it(
    'keeps every acknowledged write exactly once, processes every webhook, fails nothing in a rolling restart and rate-limits per real client address',
    async () => {
      database = await cloneTemplateDatabase();
      const databaseUrl = databaseUrlFor(database);
      const pool = createPool({ connectionString: databaseUrl, maxConnections: 4 });
      db = createDb(pool);
      const check = db;

      // --- processes: fixed ports per API slot, so a replacement needs no nginx reload ---
      const nginxPort = await freePort();
      const baseUrl = `http://127.0.0.1:${nginxPort}`;
      const apiPorts = [await freePort(), await freePort(), await freePort()];
      const sharedEnv = {
        // Pools sized so five processes fit beside the rest of the suite under max_connections.
        PACER_DB_POOL_SIZE: '6',
        PACER_QUEUE_POOL_SIZE: '2',
        PACER_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      };
      const apiEnv = (slot: number): Record<string, string> => ({
        ...sharedEnv,
        PACER_PORT: String(apiPorts[slot]),
        PACER_BASE_URL: baseUrl,
        PACER_TRUST_PROXY: '1',
        // One line per request with the client address the process derived.
        PACER_LOG_LEVEL: 'info',
        PACER_RATE_LIMIT_IP_PER_MINUTE: String(IP_LIMIT_PER_MINUTE),
        // Only the per-address window is under test: any 429 is that window's.
        PACER_RATE_LIMIT_PER_MINUTE: '0',
        PACER_RATE_LIMIT_UPLOADS_PER_MINUTE: '0',
        PACER_MCP_RATE_LIMIT_PER_MINUTE: '0',
      });
      const startApi = async (slot: number) => {
        const api = await startPacerProcess('api', databaseUrl, apiEnv(slot));
        processes.push(api);
        return api;
      };
      const startWorker = async () => {
        const worker = await startPacerProcess('worker', databaseUrl, sharedEnv);
        processes.push(worker);
        return worker;
      };
      // One process first (it checks migrations and pg-boss's schema), then the others together.
      const apis: PacerProcess[] = [await startApi(0)];
      apis.push(...(await Promise.all([startApi(1), startApi(2)])));
      const workers = await Promise.all([startWorker(), startWorker()]);
      nginx = await startNginx({ port: nginxPort, upstreamPorts: apiPorts });
      const proxy = nginx;

      // --- users, tokens and clients ---
      const restScopes = ['health:write', 'health:read', 'planning:write', 'planning:read', 'workout:write'] as const;
      const sims: SimClient[] = [];
      for (const [index, address] of APP_CLIENTS.entries()) {
        const user = await makeUser(check);
        const rest = await mintToken(check, user, { scopes: [...restScopes] });
        const mcp = await mintToken(check, user, {
          scopes: ['planning:write', 'profile:read'],
          resource: `${baseUrl}/mcp`,
        });
        const http = new LoopbackClient(baseUrl, address, IN_FLIGHT_PER_CLIENT);
        clients.push(http);
        sims.push({
          name: `c${address.split('.').at(-1) ?? index}`,
          address,
          http,
          user,
          restToken: rest.token,
          mcpToken: mcp.token,
          clientId: rest.clientId,
          index,
          next: 0,
          requests: 0,
          nextSlot: 0,
          intervalMs: 60_000 / CLIENT_PACE_PER_MINUTE,
        });
      }
      const owner = await makeUser(check);
      const { client: webhookApp, webhookSecret } = await makeWebhookApp(check, owner);
      const webhookUsers: User[] = [];
      for (let i = 0; i < WEBHOOK_USERS; i++) {
        const user = await makeUser(check);
        await mintToken(check, user, { scopes: ['health:write'], client: webhookApp });
        webhookUsers.push(user);
      }
      const senderHttp = new LoopbackClient(baseUrl, WEBHOOK_SENDER, IN_FLIGHT_PER_CLIENT);
      clients.push(senderHttp);
      const sender: SimClient = {
        name: 'wh15',
        address: WEBHOOK_SENDER,
        http: senderHttp,
        user: owner,
        restToken: '',
        mcpToken: '',
        clientId: webhookApp.clientId,
        index: APP_CLIENTS.length,
        next: 0,
        requests: 0,
        nextSlot: 0,
        intervalMs: 60_000 / WEBHOOK_PACE_PER_MINUTE,
      };
      const noisyUser = await makeUser(check);
      const noisyToken = (await mintToken(check, noisyUser, { scopes: ['profile:read'] })).token;
      const noisyHttp = new LoopbackClient(baseUrl, NOISY_CLIENT, 16);
      clients.push(noisyHttp);

      // --- the client side ---
      const attempts: Attempt[] = [];
      const operations: Operation[] = [];
      /** How each operation is sent, to send it once more later. */
      const sendings = new Map<Operation, Sending & { readonly sim: SimClient }>();

      /** Wait for the client's next send slot: every try counts against its address window. */
      const pace = async (sim: SimClient) => {
        const now = Date.now();
        const slot = Math.max(now, sim.nextSlot);
        sim.nextSlot = slot + sim.intervalMs;
        if (slot > now) await sleep(slot - now);
      };

      const exchange = async (
        sim: SimClient,
        kind: Kind,
        request: LoopbackRequest,
        flags: { retry: boolean; resend: boolean },
      ): Promise<LoopbackAnswer | Error> => {
        await pace(sim);
        const requestId = `${sim.name}-${sim.requests++}`;
        const startedAt = Date.now();
        try {
          const answer = await sim.http.request({
            ...request,
            headers: { ...request.headers, 'x-request-id': requestId },
          });
          attempts.push({
            client: sim.address,
            kind,
            requestId,
            startedAt,
            endedAt: Date.now(),
            status: answer.status,
            code: answer.status >= 400 ? problemCode(answer.text) : '',
            error: undefined,
            ...flags,
          });
          return answer;
        } catch (error) {
          const message =
            error instanceof Error
              ? `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}`.trim()
              : String(error);
          attempts.push({
            client: sim.address,
            kind,
            requestId,
            startedAt,
            endedAt: Date.now(),
            status: 0,
            code: '',
            error: message,
            ...flags,
          });
          return error instanceof Error ? error : new Error(message);
        }
      };

      /** Try until a 2xx or a definite refusal, at most MAX_TRIES times, with backoff; then maybe send it again. */
      /** Try until a 2xx or a definite refusal, at most MAX_TRIES times, with backoff. */
      const tryUntilAnswered = async (sim: SimClient, operation: Operation, sending: Sending) => {
        let lastWhy = '';
        operation.gaveUp = undefined;
        for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
          const answer = await exchange(sim, operation.kind, sending.request, {
            retry: operation.tries > 0,
            resend: false,
          });
          operation.tries++;
          const judged = sending.verdict(answer);
          if (judged.outcome === 'ack' && !(answer instanceof Error)) {
            operation.ack = {
              status: answer.status,
              text: answer.text,
              replayed: headerOf(answer, 'idempotent-replayed') === 'true',
            };
            return;
          }
          if (judged.outcome === 'final') {
            operation.gaveUp = judged.why;
            return;
          }
          if (judged.outcome === 'retry') {
            lastWhy = judged.why;
            await sleep(judged.afterMs ?? Math.min(2000, 100 * 2 ** attempt));
          }
        }
        operation.gaveUp = lastWhy;
      };

      /** One logical request; an acknowledged write may then be sent again, as by a client that timed out. */
      const perform = async (
        sim: SimClient,
        operation: Operation,
        request: LoopbackRequest,
        verdict: (answer: LoopbackAnswer | Error) => Verdict,
        resend: boolean,
      ) => {
        operations.push(operation);
        sendings.set(operation, { sim, request, verdict });
        await tryUntilAnswered(sim, operation, { request, verdict });
        if (operation.ack === undefined || !resend) return;
        let lastError = '';
        for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
          const answer = await exchange(sim, operation.kind, request, { retry: attempt > 0, resend: true });
          const judged = verdict(answer);
          if (judged.outcome === 'ack' && !(answer instanceof Error)) {
            operation.resent = {
              status: answer.status,
              text: answer.text,
              replayed: headerOf(answer, 'idempotent-replayed') === 'true',
            };
            return;
          }
          lastError = judged.outcome === 'ack' ? 'no answer' : judged.why;
          if (judged.outcome === 'final') break;
          await sleep(Math.min(2000, 100 * 2 ** attempt));
        }
        operation.resent = { error: lastError };
      };

      const restHeaders = (sim: SimClient, key: string) => ({
        authorization: `Bearer ${sim.restToken}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      });
      const mcpRequest = (
        sim: SimClient,
        id: number,
        name: string,
        args: Record<string, unknown>,
      ): LoopbackRequest => ({
        method: 'POST',
        path: '/mcp',
        headers: {
          authorization: `Bearer ${sim.mcpToken}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-protocol-version': MCP_PROTOCOL_VERSION,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
      });
      const newOperation = (
        sim: SimClient,
        kind: Kind,
        identity: string,
        key: string | undefined,
        expected: Record<string, unknown> = {},
        userId = sim.user.id,
      ): Operation => ({
        client: sim.address,
        kind,
        identity,
        key,
        userId,
        tries: 0,
        ack: undefined,
        gaveUp: undefined,
        resent: undefined,
        expected,
      });

      const runOperation = async (sim: SimClient, seq: number) => {
        const kind = MIX[seq % MIX.length] as Kind;
        const resend = WRITE_KINDS.has(kind) && seq % RESEND_EVERY === 0;
        const key = `${kind}-${sim.name}-${seq}`;
        switch (kind) {
          case 'wellness': {
            const body = { date: dateOf(seq), steps: 1000 + seq, restingHr: 40 + (seq % 50) };
            const operation = newOperation(sim, kind, body.date, key, body);
            const request = {
              method: 'POST',
              path: '/api/wellness',
              headers: restHeaders(sim, key),
              body: JSON.stringify(body),
            };
            return perform(sim, operation, request, restVerdict, resend);
          }
          case 'planned': {
            const body = { date: dateOf(seq), sport: 'ride', title: `rest ${key}`, durationSecs: 3600 };
            const operation = newOperation(sim, kind, body.title, key, body);
            const request = {
              method: 'POST',
              path: '/api/planned-workouts',
              headers: restHeaders(sim, key),
              body: JSON.stringify(body),
            };
            return perform(sim, operation, request, restVerdict, resend);
          }
          case 'upload': {
            const fit = buildFitActivity({
              startTime: new Date(Date.UTC(2025, 0, 1) + (sim.index * 100_000 + seq) * 3_600_000),
              sport: 'cycling',
              subSport: 'road',
              samples: rideSamples(180),
            });
            const sha = createHash('sha256').update(fit.bytes).digest('hex');
            const form = await multipartUpload(fit.bytes, `fit ${key}`);
            const operation = newOperation(sim, kind, sha, key, { name: `fit ${key}` });
            const request = {
              method: 'POST',
              path: '/api/workouts/upload-fit',
              headers: {
                authorization: `Bearer ${sim.restToken}`,
                'content-type': form.contentType,
                'idempotency-key': key,
              },
              body: form.body,
            };
            return perform(sim, operation, request, restVerdict, resend);
          }
          case 'mcp-write': {
            const args = { date: dateOf(seq), sport: 'run', title: `mcp ${key}`, durationSecs: 2700 };
            const operation = newOperation(sim, kind, args.title, key, args);
            return perform(
              sim,
              operation,
              mcpRequest(sim, seq, 'create_planned_workout', { ...args, idempotency_key: key }),
              mcpVerdict,
              resend,
            );
          }
          case 'mcp-read':
            return perform(
              sim,
              newOperation(sim, kind, '', undefined),
              mcpRequest(sim, seq, 'get_profile', {}),
              mcpVerdict,
              false,
            );
          case 'rest-read': {
            const request = {
              method: 'GET',
              path: `/api/planned-workouts?from=${dateOf(Math.max(0, seq - 30))}&to=${dateOf(seq)}`,
              headers: { authorization: `Bearer ${sim.restToken}` },
            };
            return perform(sim, newOperation(sim, kind, '', undefined), request, restVerdict, false);
          }
          default:
            throw new Error(`no operation ${kind}`);
        }
      };

      const runWebhook = async (seq: number) => {
        const user = webhookUsers[seq % WEBHOOK_USERS] as User;
        const data = { date: dateOf(Math.floor(seq / WEBHOOK_USERS)), steps: seq, restingHr: 40 + (seq % 50) };
        const raw = JSON.stringify({ event: 'wellness.upsert', user: user.id, data });
        const timestamp = Math.floor(Date.now() / 1000);
        const webhookId = `wh-${seq}`;
        const operation = newOperation(sender, 'webhook', webhookId, undefined, data, user.id);
        const request = {
          method: 'POST',
          path: `/api/webhooks/oauth/${webhookApp.clientId}`,
          headers: {
            'content-type': 'application/json',
            'x-webhook-id': webhookId,
            'x-webhook-timestamp': String(timestamp),
            'x-webhook-signature': sign(webhookSecret, timestamp, raw),
          },
          body: raw,
        };
        const verdict = (answer: LoopbackAnswer | Error): Verdict =>
          !(answer instanceof Error) && answer.status === 200 ? { outcome: 'ack' } : restVerdict(answer);
        return perform(sender, operation, request, verdict, seq % RESEND_EVERY === 0);
      };

      const noisyStatuses = new Map<number, number>();
      const noisyBurst = async () => {
        let sent = 0;
        const deadline = Date.now() + NOISY_MAX_MS;
        const loop = async () => {
          while ((noisyStatuses.get(429) ?? 0) < NOISY_OVER_LIMIT && sent < NOISY_MAX_READS && Date.now() < deadline) {
            sent++;
            const requestId = `n16-${sent}`;
            const startedAt = Date.now();
            let status: number;
            let code = '';
            let error: string | undefined;
            try {
              const answer = await noisyHttp.request({
                headers: { authorization: `Bearer ${noisyToken}`, 'x-request-id': requestId },
                method: 'GET',
                path: '/api/profile',
              });
              status = answer.status;
              if (status >= 400) code = problemCode(answer.text);
            } catch (failure) {
              status = 0;
              error = failure instanceof Error ? failure.message : String(failure);
            }
            noisyStatuses.set(status, (noisyStatuses.get(status) ?? 0) + 1);
            const endedAt = Date.now();
            attempts.push({
              client: NOISY_CLIENT,
              kind: 'noisy-read',
              requestId,
              startedAt,
              endedAt,
              status,
              code,
              error,
              retry: false,
              resend: false,
            });
          }
        };
        await Promise.all(Array.from({ length: 16 }, loop));
      };

      // --- run: traffic, and the faults at fixed points of it ---
      // On a loaded machine a replacement can take many seconds to start: each fault waits for its point of the
      // run and for a gap after the previous one, and traffic runs until a while after the last, so every fault
      // and its aftermath happen under traffic, with windows that do not overlap.
      const t0 = Date.now();
      let lastFaultDone = t0;
      const at = (fraction: number) =>
        sleep(
          Math.max(0, t0 + fraction * DURATION_MS - Date.now(), lastFaultDone + FAULT_GAP * DURATION_MS - Date.now()),
        );
      let trafficOn = true;
      const loopsOf = (sim: SimClient, run: (seq: number) => Promise<void>) =>
        Array.from({ length: IN_FLIGHT_PER_CLIENT }, async () => {
          while (trafficOn) await run(sim.next++);
        });
      const traffic = Promise.all([
        ...sims.flatMap((sim) => loopsOf(sim, (seq) => runOperation(sim, seq))),
        ...loopsOf(sender, runWebhook),
      ]);
      // A failed loop must not leave an unhandled rejection while the faults below run; `await traffic` reports it.
      traffic.catch(() => undefined);

      const events: Record<string, number> = {};
      saveLogs = async () => {
        // PACER_SCALE_OUT_LOG_DIR: nginx's logs, each process's output and every try, for looking into a failure.
        const logDir = process.env['PACER_SCALE_OUT_LOG_DIR'];
        if (logDir === undefined || logDir === '') return;
        await mkdir(logDir, { recursive: true });
        await writeFile(path.join(logDir, 'nginx-access.log'), await proxy.accessLog());
        await writeFile(path.join(logDir, 'nginx-error.log'), await proxy.errorLog());
        for (const [index, child] of processes.entries()) {
          await writeFile(path.join(logDir, `${index}-${child.role}-${child.child.pid ?? 0}.log`), child.output());
        }
        const relative = (attempt: Attempt) => ({
          ...attempt,
          startedAt: attempt.startedAt - t0,
          endedAt: attempt.endedAt - t0,
        });
        await writeFile(path.join(logDir, 'attempts.json'), JSON.stringify(attempts.map(relative), null, 1));
        const unfinished = operations.filter((operation) => operation.ack === undefined);
        await writeFile(
          path.join(logDir, 'events.json'),
          JSON.stringify({ t0, now: Date.now() - t0, events, apiPorts, nginxPort, unfinished }, null, 1),
        );
      };
      /** pg-boss jobs being worked on, by queue (a killed worker's stay `active` until their heartbeat or expiry). */
      const activeJobs = async (): Promise<Record<string, number>> => {
        const { rows } = await sql<{ name: string; count: number }>`
          SELECT name, count(*)::int AS count FROM pgboss.job WHERE state = 'active' GROUP BY name
        `.execute(check);
        return Object.fromEntries(rows.map((row) => [row.name, row.count]));
      };
      await at(0.25);
      const killedApi = apis[0] as PacerProcess;
      events['apiSigkill'] = Date.now();
      await killedApi.kill();
      apis[0] = await startApi(0);
      events['apiSigkillReplacementReady'] = Date.now();
      lastFaultDone = Date.now();

      // The rolling restart under a flood of reads: every API process has requests in flight and nginx keeps
      // its keep-alive connections to them busy, the case a drain has to get right.
      await at(0.5);
      events['noisyBurstStart'] = Date.now();
      const noisy = noisyBurst().then(() => (events['noisyBurstEnd'] = Date.now()));
      const floodDeadline = Date.now() + 10_000;
      while (attempts.filter((attempt) => attempt.kind === 'noisy-read').length < 100 && Date.now() < floodDeadline) {
        await sleep(10);
      }
      const drainedApi = apis[1] as PacerProcess;
      events['apiSigterm'] = Date.now();
      await drainedApi.stop(30_000);
      events['apiSigtermExited'] = Date.now();
      const sigtermExit = { code: drainedApi.child.exitCode, signal: drainedApi.child.signalCode };
      apis[1] = await startApi(1);
      events['apiSigtermReplacementReady'] = Date.now();
      lastFaultDone = Date.now();

      // The worker is killed while jobs run (when there are any within a few seconds): the other must take them over.
      await at(0.75);
      const jobsDeadline = Date.now() + 5000;
      let activeAtWorkerKill = await activeJobs();
      while (Object.keys(activeAtWorkerKill).length === 0 && Date.now() < jobsDeadline) {
        await sleep(20);
        activeAtWorkerKill = await activeJobs();
      }
      events['workerSigkill'] = Date.now();
      await workers[0].kill();
      lastFaultDone = Date.now();

      // The surviving worker takes over under live traffic.
      await at(1);
      trafficOn = false;
      await traffic;
      await noisy;
      events['trafficEnd'] = Date.now();

      // --- drain: every matched delivery settles (the dead worker's come back after their job expires) ---
      const deliveryStates = () => deliveriesByState(check, webhookApp.clientId);
      const unsettled = ['received', 'queued', 'processing', 'retrying'];
      const drainDeadline = Date.now() + DRAIN_TIMEOUT_MS;
      let states = await deliveryStates();
      while (unsettled.some((state) => (states[state] ?? 0) > 0) && Date.now() < drainDeadline) {
        await sleep(250);
        states = await deliveryStates();
      }
      events['webhooksDrained'] = Date.now();

      // --- writes no try of which was answered 2xx (the client gave up): it comes back later ---
      const idempotencyKeyOf = (operation: Operation) =>
        operation.kind === 'mcp-write' ? `mcp:create_planned_workout:${operation.key ?? ''}` : (operation.key ?? '');
      const storedCount = async (operation: Operation): Promise<number> => {
        if (operation.kind === 'planned' || operation.kind === 'mcp-write') {
          const rows = await check
            .selectFrom('plannedWorkouts')
            .select('id')
            .where('title', '=', operation.identity)
            .execute();
          return rows.length;
        }
        if (operation.kind === 'upload') {
          const rows = await check
            .selectFrom('workouts')
            .select('id')
            .where('userId', '=', operation.userId)
            .where('fileSha256', '=', operation.identity)
            .execute();
          return rows.length;
        }
        const rows = await check
          .selectFrom('wellness')
          .select(['steps'])
          .where('userId', '=', operation.userId)
          .where('date', '=', String(operation.expected['date']))
          .execute();
        return rows.filter((row) => row.steps === operation.expected['steps']).length;
      };
      const keyStateOf = async (operation: Operation): Promise<string> => {
        if (operation.key === undefined) return 'none';
        const row = await check
          .selectFrom('idempotencyKeys')
          .select(['state'])
          .where('userId', '=', operation.userId)
          .where('key', '=', idempotencyKeyOf(operation))
          .executeTakeFirst();
        return row?.state ?? 'absent';
      };
      const unanswered = operations.filter(
        (operation) => WRITE_KINDS.has(operation.kind) && operation.ack === undefined,
      );
      const unansweredAtEnd: Record<string, unknown>[] = [];
      for (const operation of unanswered) {
        unansweredAtEnd.push({
          client: operation.client,
          kind: operation.kind,
          identity: operation.identity,
          tries: operation.tries,
          lastAnswer: operation.gaveUp,
          storedRows: await storedCount(operation),
          key: await keyStateOf(operation),
        });
      }
      // A request with a key is one transaction (`runIdempotent`): a process that died mid-request left
      // no claimed key behind, so no retry had to wait out a lease. None may be left `in_progress`.
      const keysLeftInProgress = await check
        .selectFrom('idempotencyKeys')
        .select(['key'])
        .where('state', '=', 'in_progress')
        .where(
          'userId',
          'in',
          sims.map((sim) => sim.user.id),
        )
        .execute();
      // A write its client gave up on (every try failed) is sent once more, as a real client would later.
      for (const operation of unanswered) {
        const sending = sendings.get(operation);
        if (sending) await tryUntilAnswered(sending.sim, operation, sending);
      }
      const sentAgain = unanswered.map((operation) => ({
        kind: operation.kind,
        identity: operation.identity,
        status: operation.ack?.status ?? operation.gaveUp,
        replayed: operation.ack?.replayed,
      }));

      // --- what nginx saw ---
      const accessLines = (await proxy.accessLog()).split('\n').filter((line) => line.length > 0);
      const byRequestId = new Map<
        string,
        { upstream: string; upstreamStatus: string; status: number; remote: string }
      >();
      const remoteAddresses = new Set<string>();
      for (const line of accessLines) {
        const match =
          /^(\S+) \[[^\]]*\] "[^"]*" (\d+) .* upstream=(\S+(?:, \S+)*) ustatus=(\S+(?:, \S+)*) .*rid=(\S+)$/.exec(line);
        if (!match) continue;
        const [, remote = '', status = '0', upstream = '', upstreamStatus = '', rid = ''] = match;
        remoteAddresses.add(remote);
        byRequestId.set(rid, { upstream, upstreamStatus, status: Number(status), remote });
      }
      const nginxErrors = await proxy.errorLog();
      const errorKinds: Record<string, number> = {};
      for (const line of nginxErrors.split('\n')) {
        const what = /\[(?:error|warn)\] \d+#\d+: \*\d+ ([^,(]+)/.exec(line)?.[1]?.trim();
        if (what) errorKinds[what] = (errorKinds[what] ?? 0) + 1;
      }

      // --- the faults' windows, and which failed tries fall in them ---
      const failed = (attempt: Attempt) => attempt.status === 0 || attempt.status >= 500;
      const overlaps = (attempt: Attempt, from: number, to: number) =>
        attempt.startedAt <= to && attempt.endedAt >= from;
      const sigtermFrom = events['apiSigterm'] ?? 0;
      const sigtermTo = events['apiSigtermReplacementReady'] ?? 0;
      const failedInSigterm = attempts.filter(
        (attempt) => failed(attempt) && overlaps(attempt, sigtermFrom, sigtermTo),
      );
      // The restart's doing: a connection error at the client, or nginx's own 502/503/504 after it had sent the try
      // to the restarted process (a refused, reset or cut connection). A 500 is an answer of the application, and
      // its cause is in the processes' error logs (checked below), whichever process gave it.
      const failedBySigterm = failedInSigterm.filter(
        (attempt) =>
          attempt.status === 0 ||
          (attempt.status >= 502 &&
            attempt.status <= 504 &&
            byRequestId.get(attempt.requestId)?.upstream.includes(`:${apiPorts[1]}`) !== false),
      );
      /** The process that answered a try: the last upstream nginx tried for it. */
      const answeredBy = (attempt: Attempt, port: number | undefined) =>
        byRequestId.get(attempt.requestId)?.upstream.split(', ').at(-1) === `127.0.0.1:${port}`;
      const inFlightAtSigterm = attempts.filter(
        (attempt) =>
          attempt.startedAt < sigtermFrom && attempt.endedAt > sigtermFrom && answeredBy(attempt, apiPorts[1]),
      );
      const servedByDrainingAfterSignal = attempts.filter(
        (attempt) =>
          attempt.startedAt >= sigtermFrom &&
          attempt.startedAt <= (events['apiSigtermExited'] ?? 0) &&
          answeredBy(attempt, apiPorts[1]),
      );
      // What the draining process itself logged between the signal and its exit.
      const drainLog = drainedApi.output().split('\n');
      const signalLine = drainLog.findIndex((line) => line.includes('"msg":"shutting down"'));
      const answeredWhileDraining: Record<string, number> = {};
      for (const line of signalLine < 0 ? [] : drainLog.slice(signalLine + 1)) {
        if (!line.includes('"clientIp"')) continue;
        const status = String((JSON.parse(line) as { res?: { statusCode?: number } }).res?.statusCode ?? '-');
        answeredWhileDraining[status] = (answeredWhileDraining[status] ?? 0) + 1;
      }
      const sigkillFrom = events['apiSigkill'] ?? 0;
      const sigkillTo = events['apiSigkillReplacementReady'] ?? 0;
      const failedInSigkill = attempts.filter(
        (attempt) => failed(attempt) && overlaps(attempt, sigkillFrom, sigkillTo),
      );
      const failedElsewhere = attempts.filter(
        (attempt) =>
          failed(attempt) && !overlaps(attempt, sigkillFrom, sigkillTo) && !overlaps(attempt, sigtermFrom, sigtermTo),
      );

      // --- the database: every acknowledged write exactly once ---
      const problems: string[] = [];
      const acked = operations.filter((operation) => WRITE_KINDS.has(operation.kind) && operation.ack !== undefined);
      const unacked = operations.filter((operation) => WRITE_KINDS.has(operation.kind) && operation.ack === undefined);
      const userIds = sims.map((sim) => sim.user.id);

      const plannedRows = await check
        .selectFrom('plannedWorkouts')
        .select(['id', 'userId', 'title', 'date', 'sport', 'durationSecs'])
        .where('userId', 'in', userIds)
        .execute();
      const plannedByTitle = new Map<string, typeof plannedRows>();
      for (const row of plannedRows) plannedByTitle.set(row.title, [...(plannedByTitle.get(row.title) ?? []), row]);
      const wellnessRows = await check
        .selectFrom('wellness')
        .select(['userId', 'date', 'steps', 'restingHr'])
        .select(sql<boolean>`updated_at = created_at`.as('writtenOnce'))
        .where('userId', 'in', [...userIds, ...webhookUsers.map((user) => user.id)])
        .execute();
      const wellnessByDay = new Map(wellnessRows.map((row) => [`${row.userId}/${row.date}`, row]));
      const workoutRows = await check
        .selectFrom('workouts')
        .select(['id', 'userId', 'fileSha256', 'name'])
        .where('userId', 'in', userIds)
        .execute();
      const workoutsBySha = new Map<string, typeof workoutRows>();
      for (const row of workoutRows)
        workoutsBySha.set(row.fileSha256, [...(workoutsBySha.get(row.fileSha256) ?? []), row]);

      const idOfAck = (operation: Operation): unknown => {
        const text = operation.ack?.text ?? '';
        if (operation.kind === 'mcp-write') return toolAnswerOf(text)?.result?.structuredContent?.['id'];
        return (JSON.parse(text) as { id?: unknown }).id;
      };
      for (const operation of acked) {
        const label = `${operation.kind} ${operation.identity} (${operation.client}, ${operation.tries} tries)`;
        switch (operation.kind) {
          case 'wellness':
          case 'webhook': {
            const row = wellnessByDay.get(`${operation.userId}/${String(operation.expected['date'])}`);
            if (!row) problems.push(`${label}: acknowledged, not stored`);
            else if (row.steps !== operation.expected['steps'] || row.restingHr !== operation.expected['restingHr'])
              problems.push(`${label}: stored ${JSON.stringify(row)}, sent ${JSON.stringify(operation.expected)}`);
            else if (!row.writtenOnce) problems.push(`${label}: written more than once (updated_at moved)`);
            if (operation.kind === 'wellness' && operation.ack?.status !== 201)
              problems.push(`${label}: answered ${operation.ack?.status ?? '-'}, not 201: the day existed already`);
            break;
          }
          case 'planned':
          case 'mcp-write': {
            const rows = plannedByTitle.get(operation.identity) ?? [];
            if (rows.length !== 1) problems.push(`${label}: ${rows.length} rows stored`);
            else if (rows[0]?.id !== idOfAck(operation))
              problems.push(`${label}: stored id ${rows[0]?.id ?? '-'} is not the acknowledged one`);
            break;
          }
          case 'upload': {
            const rows = workoutsBySha.get(operation.identity) ?? [];
            if (rows.length !== 1) problems.push(`${label}: ${rows.length} workouts stored`);
            else if (rows[0]?.id !== idOfAck(operation))
              problems.push(`${label}: stored id is not the acknowledged one`);
            if (operation.ack?.status !== 201)
              problems.push(`${label}: answered ${operation.ack?.status ?? '-'}, not 201`);
            break;
          }
          default:
            break;
        }
      }
      // Nothing stored that no client asked for, and nothing stored twice.
      const titlesSent = new Set(
        operations
          .filter((operation) => operation.kind === 'planned' || operation.kind === 'mcp-write')
          .map((operation) => operation.identity),
      );
      for (const [title, rows] of plannedByTitle) {
        if (!titlesSent.has(title)) problems.push(`planned workout "${title}" stored, never sent`);
        if (rows.length > 1) problems.push(`planned workout "${title}" stored ${rows.length} times`);
      }
      for (const [sha, rows] of workoutsBySha)
        if (rows.length > 1) problems.push(`workout ${sha} stored ${rows.length} times`);

      // A write no try of which was acknowledged: stored at most once.
      const keyRows = await check
        .selectFrom('idempotencyKeys')
        .select(['userId', 'key', 'state', 'leaseExpiresAt', 'createdAt'])
        .where('userId', 'in', userIds)
        .execute();
      const keyState = new Map(keyRows.map((row) => [`${row.userId}/${row.key}`, row]));
      const keyOf = (operation: Operation) => `${operation.userId}/${idempotencyKeyOf(operation)}`;
      const unackedDetails: { kind: Kind; identity: string; why: string | undefined; stored: number; key: string }[] =
        [];
      for (const operation of unacked) {
        let stored = 0;
        if (operation.kind === 'planned' || operation.kind === 'mcp-write')
          stored = plannedByTitle.get(operation.identity)?.length ?? 0;
        else if (operation.kind === 'upload') stored = workoutsBySha.get(operation.identity)?.length ?? 0;
        else if (operation.kind === 'wellness')
          stored = wellnessByDay.has(`${operation.userId}/${operation.identity}`) ? 1 : 0;
        const key = operation.key === undefined ? 'none' : (keyState.get(keyOf(operation))?.state ?? 'absent');
        unackedDetails.push({ kind: operation.kind, identity: operation.identity, why: operation.gaveUp, stored, key });
        if (stored > 1) problems.push(`unacknowledged ${operation.kind} ${operation.identity} stored ${stored} times`);
        if (stored === 1 && key !== 'in_progress')
          problems.push(`unacknowledged ${operation.kind} ${operation.identity} stored, key ${key}`);
      }
      for (const operation of acked) {
        if (operation.key === undefined) continue;
        const state = keyState.get(keyOf(operation))?.state;
        if (state !== 'completed')
          problems.push(`${operation.kind} ${operation.identity}: acknowledged, key ${state ?? 'absent'}`);
      }

      // Re-sent writes: the first answer again, marked as a replay on REST, nothing applied twice (checked above).
      const resent = acked.filter((operation) => operation.resent !== undefined);
      for (const operation of resent) {
        const again = operation.resent;
        const first = operation.ack;
        if (!again || !first) continue;
        const label = `re-sent ${operation.kind} ${operation.identity}`;
        if ('error' in again) {
          problems.push(`${label}: no answer (${again.error})`);
        } else if (operation.kind === 'mcp-write') {
          const a = toolAnswerOf(first.text)?.result;
          const b = toolAnswerOf(again.text)?.result;
          if (JSON.stringify(a) !== JSON.stringify(b)) problems.push(`${label}: tool result differs from the first`);
        } else if (operation.kind === 'webhook') {
          const body = JSON.parse(again.text) as { duplicate?: boolean };
          if (again.status !== 200 || body.duplicate !== true)
            problems.push(`${label}: answered ${again.status} ${again.text}`);
        } else if (again.status !== first.status || again.text !== first.text || !again.replayed) {
          problems.push(
            `${label}: answered ${again.status} (replayed: ${String(again.replayed)}), first ${first.status}`,
          );
        }
      }

      // --- webhooks: each id's first delivery processed, re-sends ignored as its duplicates, nothing in flight ---
      const deliveries = await check
        .selectFrom('webhookDeliveries')
        .select(['id', 'state', 'webhookId', 'duplicateOf', 'secretMatched', 'sourceIp', 'attempts', 'errorCode'])
        .where('clientId', '=', webhookApp.clientId)
        .execute();
      const holders = new Map<string, (typeof deliveries)[number]>();
      for (const row of deliveries) {
        if (row.state === 'ignored') {
          if (row.duplicateOf === null) problems.push(`delivery ${row.id} ignored without the delivery it repeats`);
          continue;
        }
        if (row.state !== 'processed')
          problems.push(`delivery ${row.id} (${row.webhookId ?? '-'}) is ${row.state} ${row.errorCode ?? ''}`);
        if (row.webhookId !== null) {
          if (holders.has(row.webhookId)) problems.push(`webhook id ${row.webhookId} processed twice`);
          holders.set(row.webhookId, row);
        }
      }
      for (const operation of acked.filter((operation) => operation.kind === 'webhook')) {
        if (!holders.has(operation.identity))
          problems.push(`webhook ${operation.identity}: acknowledged, no processed delivery`);
        const body = JSON.parse(operation.ack?.text ?? '{}') as { secretMatched?: boolean };
        if (body.secretMatched !== true) problems.push(`webhook ${operation.identity}: secret did not match`);
      }
      const webhookSources = new Set(deliveries.map((row) => row.sourceIp));
      const deliveryAttempts: Record<number, number> = {};
      for (const row of deliveries) deliveryAttempts[row.attempts] = (deliveryAttempts[row.attempts] ?? 0) + 1;

      // --- rate limits: per real client address ---
      const { rows: windows } = await sql<{ key: string; count: number }>`
        SELECT key, count FROM rate_limit_counters WHERE key LIKE 'rest:ip:%' ORDER BY key
      `.execute(check);
      // Refusals by the per-address window (`rate_limited`). A retried upload may also meet its own first try still
      // decoding (429 `fit_decode_in_progress`, one file per user at a time): the client waits and sends it again.
      const tooMany = new Map<string, number>();
      const otherTooMany: Record<string, number> = {};
      for (const attempt of attempts) {
        if (attempt.status !== 429) continue;
        if (attempt.code === 'rate_limited') tooMany.set(attempt.client, (tooMany.get(attempt.client) ?? 0) + 1);
        else
          otherTooMany[`${attempt.kind} ${attempt.code}`] = (otherTooMany[`${attempt.kind} ${attempt.code}`] ?? 0) + 1;
      }
      // --- what the processes logged: the client addresses they derived, and their errors ---
      const loggedClientIps = new Set<string>();
      const serverErrors: Record<string, number> = {};
      for (const child of processes) {
        for (const line of child.output().split('\n')) {
          if (!line.startsWith('{')) continue;
          let entry: { level?: number; msg?: string; req?: { clientIp?: string }; err?: { message?: string } };
          try {
            entry = JSON.parse(line) as typeof entry;
          } catch {
            continue;
          }
          if (entry.req?.clientIp !== undefined) loggedClientIps.add(entry.req.clientIp);
          // pino-http's own line for a 5xx only repeats the error logged with its cause.
          if ((entry.level ?? 0) < 50 || entry.err?.message?.startsWith('failed with status code') === true) continue;
          const what = `${child.role}: ${entry.err?.message ?? entry.msg ?? 'error'}`;
          serverErrors[what] = (serverErrors[what] ?? 0) + 1;
        }
      }
      // PostgreSQL refusing connections is the machine's doing (max_connections shared with whatever else runs on
      // it), not the service's, and so is a new connection to it not set up within the pool's connect timeout on a
      // machine with many times more runnable processes than cores: the client retries those 500s. Any other
      // error is a finding.
      const machineLimits = ['sorry, too many clients already', 'Connection terminated due to connection timeout'];
      const unexpectedErrors = Object.fromEntries(
        Object.entries(serverErrors).filter(([what]) => !machineLimits.some((limit) => what.includes(limit))),
      );

      // --- the summary ---
      const kinds: Kind[] = [
        'wellness',
        'planned',
        'upload',
        'mcp-write',
        'mcp-read',
        'rest-read',
        'webhook',
        'noisy-read',
      ];
      const table = kinds.map((kind) => {
        const ops = operations.filter((operation) => operation.kind === kind);
        const tries = attempts.filter((attempt) => attempt.kind === kind);
        const byStatus: Record<string, number> = {};
        for (const attempt of tries) {
          const label = attempt.status === 0 ? 'conn' : String(attempt.status);
          byStatus[label] = (byStatus[label] ?? 0) + 1;
        }
        return {
          kind,
          logical: ops.length,
          requests: tries.length,
          retries: tries.filter((attempt) => attempt.retry && !attempt.resend).length,
          acked2xx: ops.filter((operation) => operation.ack !== undefined).length,
          ackWasReplay: ops.filter((operation) => operation.ack?.replayed === true).length,
          resent: ops.filter((operation) => operation.resent !== undefined).length,
          gaveUp: ops.filter((operation) => operation.gaveUp !== undefined).length,
          statuses: Object.entries(byStatus)
            .sort()
            .map(([status, count]) => `${status}:${count}`)
            .join(' '),
        };
      });
      const rel = (name: string) => ((events[name] ?? t0) - t0) / 1000;
      console.log(`\nscale-out behind nginx: ${DURATION_MS / 1000} s of traffic, 3 API + 2 worker processes\n`);
      // One line to compare runs by: every try sent, the writes among them, and what failed where.
      const writeTries = attempts.filter((attempt) => WRITE_KINDS.has(attempt.kind));
      console.log(
        `scale-out counts: requests=${attempts.length} writes=${writeTries.length} ` +
          `writesAcked=${acked.length} failedTries=${attempts.filter(failed).length} ` +
          `(sigkillWindow=${failedInSigkill.length} sigtermWindow=${failedInSigterm.length} ` +
          `bySigterm=${failedBySigterm.length} elsewhere=${failedElsewhere.length}) ` +
          `sigtermDrainMs=${(events['apiSigtermExited'] ?? 0) - sigtermFrom} unacked=${unackedDetails.length}\n`,
      );
      console.table(table);
      console.table(
        [...ALL_CLIENTS].map((address) => ({
          client: address,
          requests: attempts.filter((attempt) => attempt.client === address).length,
          '429s': tooMany.get(address) ?? 0,
          window: windows.find((row) => row.key === `rest:ip:${address}`)?.count ?? '-',
        })),
      );
      console.log(
        JSON.stringify(
          {
            timeline_s: Object.fromEntries(Object.keys(events).map((name) => [name, rel(name)])),
            sigterm: {
              exit: sigtermExit,
              drainMs: (events['apiSigtermExited'] ?? 0) - sigtermFrom,
              answeredWhileDraining,
              inFlightAtSignal: inFlightAtSigterm.map((attempt) => attempt.status),
              servedByDrainingProcessAfterSignal: servedByDrainingAfterSignal.length,
              failedTriesInWindow: failedInSigterm.map((attempt) => ({
                kind: attempt.kind,
                status: attempt.status,
                error: attempt.error,
                via: byRequestId.get(attempt.requestId),
              })),
            },
            sigkill: {
              failedTriesInWindow: failedInSigkill.length,
              failedByStatus: countBy(
                failedInSigkill.map((attempt) =>
                  attempt.status === 0 ? (attempt.error ?? 'conn') : String(attempt.status),
                ),
              ),
            },
            failedTriesOutsideFaultWindows: failedElsewhere.map((attempt) => ({
              t: (attempt.startedAt - t0) / 1000,
              kind: attempt.kind,
              status: attempt.status,
              error: attempt.error,
              via: byRequestId.get(attempt.requestId),
            })),
            unansweredWhenTrafficStopped: unansweredAtEnd,
            sentAgainLater: sentAgain,
            keysLeftInProgress: keysLeftInProgress.map((row) => row.key),
            unacknowledgedInTheEnd: unackedDetails,
            worker: {
              activeJobsAtKill: activeAtWorkerKill,
              queuesAfterDrain: {
                [webhookDeliveryQueue.name]: await jobsByState(check, webhookDeliveryQueue.name),
              },
              derivedChangesLeft: (
                await check
                  .selectFrom('derivedChanges')
                  .select((eb) => eb.fn.countAll<number>().as('n'))
                  .executeTakeFirstOrThrow()
              ).n,
            },
            webhooks: {
              states,
              deliveryAttempts,
              sourceIps: [...webhookSources],
              drainedSecondsAfterTraffic: ((events['webhooksDrained'] ?? 0) - (events['trafficEnd'] ?? 0)) / 1000,
            },
            rateLimitWindows: windows,
            noisyStatuses: Object.fromEntries(noisyStatuses),
            nginx: { peers: [...remoteAddresses].sort(), errorLog: errorKinds, accessLines: accessLines.length },
            requestLogClientIps: [...loggedClientIps].sort(),
            serverErrors,
            problems: problems.slice(0, 50),
          },
          null,
          2,
        ),
      );

      await saveLogs?.();
      saveLogs = undefined;

      // --- the verdict: each property on its own, so one run reports every one that broke ---
      expect.soft(problems).toEqual([]);
      // Every logical write got its 2xx in the end.
      expect.soft(unackedDetails).toEqual([]);
      // No key was left claimed by a killed process: its claim went with its transaction.
      expect.soft(keysLeftInProgress).toEqual([]);
      // No process logged an error (a deadlock, a failed job): what the client retried past must not be a bug.
      expect.soft(unexpectedErrors).toEqual({});
      // Reads were answered too (nginx retries a GET on another process by itself).
      expect
        .soft(operations.filter((operation) => !WRITE_KINDS.has(operation.kind) && operation.ack === undefined))
        .toEqual([]);
      // The rolling restart: nothing failed between the signal and the replacement being ready, and the
      // process drained by itself (in-flight requests done, keep-alive connections closed) instead of running
      // into its shutdown timeout, where the connections still open are cut whatever is in flight on them.
      expect.soft(failedBySigterm).toEqual([]);
      expect.soft(sigtermExit).toEqual({ code: 0, signal: null });
      expect.soft((events['apiSigtermExited'] ?? 0) - sigtermFrom).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
      expect
        .soft(states)
        .toEqual(
          Object.fromEntries(Object.entries(states).filter(([state]) => state === 'processed' || state === 'ignored')),
        );
      // Rate limits: only the noisy client was refused, by exactly the surplus over its window.
      expect.soft(Object.fromEntries([...tooMany].filter(([address]) => address !== NOISY_CLIENT))).toEqual({});
      // Any other 429 is an upload's retry meeting its first try still decoding, never a read or another write.
      expect.soft(Object.keys(otherTooMany).filter((key) => key !== 'upload fit_decode_in_progress')).toEqual([]);
      // Each counted request past the limit was refused (a request that failed before it was counted is not in the window).
      const noisyWindow = windows.find((row) => row.key === `rest:ip:${NOISY_CLIENT}`)?.count ?? 0;
      expect.soft(noisyStatuses.get(429) ?? 0).toBeGreaterThan(0);
      expect.soft(noisyStatuses.get(429)).toBe(noisyWindow - IP_LIMIT_PER_MINUTE);
      expect
        .soft(windows.map((row) => row.key).sort())
        .toEqual([...APP_CLIENTS, NOISY_CLIENT].map((address) => `rest:ip:${address}`).sort());
      expect.soft([...webhookSources]).toEqual([WEBHOOK_SENDER]);
      expect.soft([...loggedClientIps].sort()).toEqual([...ALL_CLIENTS].sort());
      expect.soft([...remoteAddresses].sort()).toEqual([...ALL_CLIENTS].sort());
    },
    DURATION_MS + 420_000,
  );
});

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

/**
 * Rolling restarts behind Debian's nginx, started from `deploy/nginx.conf`
 * (issue 23; README "Operating at scale"): two API processes of the real
 * binary, restarted one after the other with SIGTERM, again and again, while
 * clients send POSTs through nginx in bursts. The bursts matter: a burst makes
 * nginx open new connections to the API processes and fill its keep-alive
 * cache, the lull after it leaves most of those connections idle, and the next
 * burst reuses them. That is where a restart can fail a POST: nginx writes a
 * request onto a kept-alive connection the process is closing, or onto a new
 * connection still waiting in the closing listener's accept queue, and nginx
 * never sends a POST again once it went out (502).
 *
 * Every try of every POST (each with an Idempotency-Key) must be answered 2xx
 * and stored once, each restarted process must exit 0 by itself before its
 * shutdown timeout, and nginx must have logged no upstream error but refused
 * connections and the resets it sent once more (`@resend_keyed_write`).
 * Before each restart the test waits, as an operator should, until nginx
 * sends the previous replacement traffic again.
 */
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb, createPool, type Db } from '../../server/src/db/database.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { LoopbackClient } from '../support/loopback-client.ts';
import { startNginx, type Nginx } from '../support/nginx.ts';
import { cloneTemplateDatabase, databaseUrlFor, dropDatabase, freePort } from '../support/test-server.ts';
import { startPacerProcess, type PacerProcess } from '../support/webhooks-cluster.ts';
import { sleep } from '../support/wait.ts';

/** SIGTERM restarts, alternating between the two API processes (`PACER_ROLLING_RESTARTS` overrides). */
const RESTARTS = Number(process.env['PACER_ROLLING_RESTARTS'] ?? '6');
/** The API processes' `PACER_SHUTDOWN_TIMEOUT_MS` (the default). */
const SHUTDOWN_TIMEOUT_MS = 10_000;
/** Client addresses; each sends its POSTs over its own kept-alive connections to nginx. */
const CLIENTS = ['127.0.0.21', '127.0.0.22', '127.0.0.23', '127.0.0.24'] as const;
/** POSTs a client has in flight during a burst, and during a lull. */
const BURST_IN_FLIGHT = 8;
const LULL_IN_FLIGHT = 1;
/** A burst, then a lull long enough for nginx's spare connections to sit idle past a second. */
const BURST_MS = 400;
const LULL_MS = 1_600;

interface Try {
  readonly requestId: string;
  readonly startedAt: number;
  readonly endedAt: number;
  /** 0: the connection to nginx failed. */
  readonly status: number;
  readonly error: string | undefined;
}

const processes: PacerProcess[] = [];
const clients: LoopbackClient[] = [];
let nginx: Nginx | undefined;
let database: string | undefined;
let db: Db | undefined;

afterAll(async () => {
  for (const client of clients) client.close();
  await nginx?.stop();
  for (const child of processes) await child.stop();
  await db?.destroy();
  if (database !== undefined) await dropDatabase(database);
}, 120_000);

describe('rolling restarts behind nginx', () => {
  it(
    'answers every POST 2xx while the API processes are restarted one by one with SIGTERM under bursty traffic',
    async () => {
      database = await cloneTemplateDatabase();
      const databaseUrl = databaseUrlFor(database);
      db = createDb(createPool({ connectionString: databaseUrl, maxConnections: 2 }));
      const nginxPort = await freePort();
      const apiPorts = [await freePort(), await freePort()];
      const apiEnv = (slot: number): Record<string, string> => ({
        PACER_PORT: String(apiPorts[slot]),
        PACER_BASE_URL: `http://127.0.0.1:${nginxPort}`,
        PACER_TRUST_PROXY: '1',
        PACER_DB_POOL_SIZE: '6',
        PACER_QUEUE_POOL_SIZE: '2',
        PACER_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
        PACER_RATE_LIMIT_PER_MINUTE: '0',
        PACER_RATE_LIMIT_IP_PER_MINUTE: '0',
      });
      const startApi = async (slot: number) => {
        const api = await startPacerProcess('api', databaseUrl, apiEnv(slot));
        processes.push(api);
        return api;
      };
      const apis = [await startApi(0)];
      apis.push(await startApi(1));
      nginx = await startNginx({ port: nginxPort, upstreamPorts: apiPorts });
      const proxy = nginx;

      const senders = await Promise.all(
        CLIENTS.map(async (address) => {
          const user = await makeUser(db as Db);
          const { token } = await mintToken(db as Db, user, { scopes: ['health:write'] });
          const http = new LoopbackClient(proxy.url, address, BURST_IN_FLIGHT);
          clients.push(http);
          return { address, userId: user.id, token, http, sent: 0 };
        }),
      );

      const tries: Try[] = [];
      let inFlightAllowed = BURST_IN_FLIGHT;
      let running = true;
      const postLoop = async (sender: (typeof senders)[number], lane: number) => {
        while (running) {
          if (lane >= inFlightAllowed) {
            await sleep(20);
            continue;
          }
          const seq = sender.sent++;
          const requestId = `${sender.address}-${seq}`;
          const date = new Date(Date.UTC(2020, 0, 1) + seq * 86_400_000).toISOString().slice(0, 10);
          const startedAt = Date.now();
          try {
            const answer = await sender.http.request({
              method: 'POST',
              path: '/api/wellness',
              headers: {
                authorization: `Bearer ${sender.token}`,
                'content-type': 'application/json',
                'idempotency-key': requestId,
                'x-request-id': requestId,
              },
              body: JSON.stringify({ date, steps: seq }),
            });
            tries.push({ requestId, startedAt, endedAt: Date.now(), status: answer.status, error: undefined });
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            tries.push({ requestId, startedAt, endedAt: Date.now(), status: 0, error: message });
          }
        }
      };
      const traffic = Promise.all(
        senders.flatMap((sender) => Array.from({ length: BURST_IN_FLIGHT }, (_, lane) => postLoop(sender, lane))),
      );
      const rhythm = (async () => {
        while (running) {
          inFlightAllowed = BURST_IN_FLIGHT;
          await sleep(BURST_MS);
          inFlightAllowed = LULL_IN_FLIGHT;
          await sleep(LULL_MS);
        }
      })();

      const t0 = Date.now();
      const restarts: { slot: number; signalAt: number; drainMs: number; exit: unknown }[] = [];
      await sleep(3_000);
      for (let restart = 0; restart < RESTARTS; restart++) {
        const slot = restart % 2;
        const draining = apis[slot] as PacerProcess;
        const signalAt = Date.now();
        await draining.stop(30_000);
        restarts.push({
          slot,
          signalAt: signalAt - t0,
          drainMs: Date.now() - signalAt,
          exit: { code: draining.child.exitCode, signal: draining.child.signalCode },
        });
        const accessLinesBefore = (await proxy.accessLog()).split('\n').length;
        apis[slot] = await startApi(slot);
        // As an operator would: the next restart waits until nginx has the replacement back in rotation (a request
        // answered through it). Until then nginx sends it one probe at a time, and restarting the other process
        // meanwhile leaves nginx no upstream to send to ("no live upstreams", a 502 for every request).
        const backDeadline = Date.now() + 60_000;
        const servedBy = `upstream=127.0.0.1:${apiPorts[slot]} ustatus=2`;
        while (
          !(await proxy.accessLog())
            .split('\n')
            .slice(accessLinesBefore)
            .some((line) => line.includes(servedBy))
        ) {
          if (Date.now() > backDeadline) throw new Error(`nginx sent nothing to the replacement on ${apiPorts[slot]}`);
          await sleep(100);
        }
        // Traffic on both again (nginx retries the slot after fail_timeout), through a lull and a burst or two.
        await sleep(2 * (BURST_MS + LULL_MS) + 500);
      }
      running = false;
      await Promise.all([traffic, rhythm]);

      const failed = tries.filter((attempt) => attempt.status < 200 || attempt.status >= 300);
      // nginx's upstream errors: a refused connection (the port closed) is tried on the other process, which is
      // safe for a POST; a reset one is what the example config's @resend_keyed_write sends once more (every POST
      // here carries an Idempotency-Key). Anything else is a finding.
      const upstreamErrors = (await proxy.errorLog()).split('\n').filter((line) => /\[(error|warn)\]/.test(line));
      const refused =
        /(connect\(\) failed \(111: Connection refused\)|upstream server temporarily disabled) while connecting/;
      const reset =
        /(\(104: Connection reset by peer\)|upstream prematurely closed connection|upstream server temporarily disabled) while reading response header/;
      const resent = upstreamErrors.filter((line) => reset.test(line) && !line.includes('temporarily disabled'));
      const nginxErrors = upstreamErrors.filter((line) => !refused.test(line) && !reset.test(line));
      // Each acknowledged POST is its own day: stored once, and never written a second time (a resent copy replays).
      const stored = await db
        .selectFrom('wellness')
        .select((eb) => [eb.fn.countAll<number>().as('rows')])
        .select(sql<number>`count(*) filter (where updated_at <> created_at)::int`.as('rewritten'))
        .where(
          'userId',
          'in',
          senders.map((sender) => sender.userId),
        )
        .executeTakeFirstOrThrow();
      const byStatus: Record<string, number> = {};
      for (const attempt of tries) byStatus[attempt.status] = (byStatus[attempt.status] ?? 0) + 1;
      console.log(
        JSON.stringify(
          {
            rollingRestarts: {
              posts: tries.length,
              byStatus,
              failed: failed.map((attempt) => ({ ...attempt, startedAt: attempt.startedAt - t0 })),
              restarts,
              t0: new Date(t0).toISOString(),
              resentAfterReset: resent.length,
              resets: resent.slice(0, 10).map((line) => line.slice(0, 120)),
              stored,
              nginxErrors: nginxErrors.slice(0, 20),
              apiPorts,
              // When something failed: every upstream error, short (time, nginx worker, what, upstream).
              upstreamErrors:
                failed.length === 0
                  ? []
                  : upstreamErrors.map((line) =>
                      [
                        / (\d\d:\d\d:\d\d) /.exec(line)?.[1],
                        / (\d+)#/.exec(line)?.[1],
                        /\*\d+ ([^,]+?) while/.exec(line)?.[1],
                        /upstream: "([^"]+)"/.exec(line)?.[1],
                      ].join(' '),
                    ),
            },
          },
          null,
          1,
        ),
      );

      expect.soft(failed).toEqual([]);
      expect.soft({ rows: Number(stored.rows), rewritten: stored.rewritten }).toEqual({
        rows: tries.length - failed.length,
        rewritten: 0,
      });
      expect.soft(nginxErrors).toEqual([]);
      for (const restart of restarts) {
        expect.soft(restart.exit).toEqual({ code: 0, signal: null });
        expect.soft(restart.drainMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
      }
      expect(tries.length).toBeGreaterThan(RESTARTS * 100);
    },
    RESTARTS * 60_000 + 60_000,
  );
});

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PgBoss } from 'pg-boss';
import type { Config } from './config.ts';

export { openDatabase, type DatabaseRuntime } from './db/open-database.ts';
import { openDatabase, type DatabaseRuntime } from './db/open-database.ts';
import { createApp } from './http/app.ts';
import { type Drainer, trackConnections } from './http/drain.ts';
import { applyIdleTimeout, httpServerOptions } from './http/timeouts.ts';
import type { Logger } from './logger.ts';
import { StartupError } from './startup-error.ts';
import { installSchedules, migrateQueues, QueuesNotReady, startBoss, startWorkers } from './queue/boss.ts';
import { ASYNC_JOB_RUNNERS, jobHandlers } from './job-handlers.ts';
import { SecretBox } from './lib/secret-box.ts';
import { startWebhookWorkers } from './modules/webhooks/webhook.worker.ts';
import { startAsyncJobWorkers } from './modules/async-jobs/async-job.worker.ts';
import { type DerivedDrainer, startDerivedDrainer } from './modules/derived/derived-drainer.ts';
import { checkMcpManifest } from './mcp/manifest.ts';
import { McpExecutionRecorder } from './modules/mcp-audit/mcp-audit.service.ts';
import { openReadRouter, primaryOnly, type ReadRouter } from './db/read-replica.ts';

/**
 * `node:http` taken as the CommonJS module it is: an ESM `import` of it builds
 * its namespace by reading every export, and its `WebSocket`, `CloseEvent` and
 * `MessageEvent` getters load Node's fetch implementation (undici), some 13 MB
 * of a process that never makes a request of its own (docs/design.md §2 "Memory").
 */
const { createServer } = process.getBuiltinModule('node:http');

export interface Runtime {
  readonly config: Config;
  readonly database: DatabaseRuntime;
  readonly boss: PgBoss;
  /** Where the API listens; undefined for worker-only processes. */
  readonly url: string | undefined;
  /** The derived-data drainer; undefined for API-only processes. */
  readonly derived: DerivedDrainer | undefined;
  /** Where the API's reads go (the replica's, with PACER_DATABASE_READ_URL); the primary only in a worker. */
  readonly reads: ReadRouter;
  stop(): Promise<void>;
}

/** Why `listen` failed, in the operator's terms (PACER_PORT and PACER_HOST are what they set). */
function listenFailure(error: Error, port: number, host: string): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `port ${port} on ${host}`;
  switch (code) {
    case 'EADDRINUSE':
      return new StartupError(
        'port_unavailable',
        `${where} is already in use`,
        'Stop the program that listens there or set PACER_PORT to a free port',
        { cause: error },
      );
    case 'EACCES':
      return new StartupError(
        'port_unavailable',
        `not allowed to listen on ${where} (ports below 1024 need root or CAP_NET_BIND_SERVICE)`,
        'Set PACER_PORT to 1024 or above',
        { cause: error },
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(
        'port_unavailable',
        `cannot listen on ${where} (${code}: ${host} is not an address of this machine)`,
        'Set PACER_HOST to one of its addresses (127.0.0.1 for this machine only, 0.0.0.0 for all)',
        { cause: error },
      );
    default:
      return error;
  }
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => reject(listenFailure(error, port, host));
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * pg-boss for this process. A worker that migrates on start brings the queue
 * schema and the queues up to date itself. An API process writes nothing at
 * start-up (it may run on a read-only role, e.g. against a replica for its
 * reads): it only checks that they are, and migrates them only when they are
 * not and PACER_MIGRATE_ON_START allows it (the first process on a new database).
 */
async function startQueue(config: Config, database: DatabaseRuntime, logger: Logger): Promise<PgBoss> {
  const runsWorkers = config.role !== 'api';
  const options = {
    connectionString: database.url,
    sessionConnectionString: database.sessionUrl,
    logger,
    maintenance: runsWorkers,
    poolSize: config.queuePoolSize,
  };
  if (runsWorkers) return startBoss({ ...options, migrate: config.migrateOnStart });
  try {
    return await startBoss({ ...options, migrate: false });
  } catch (error) {
    if (!(error instanceof QueuesNotReady) || !config.migrateOnStart) throw error;
  }
  await migrateQueues({ connectionString: database.sessionUrl, logger });
  return startBoss({ ...options, migrate: false });
}

/**
 * Start the service in its role: `api` serves HTTP, `worker` runs queue
 * workers and schedules, `all` both. `stop()` drains in order: stop taking
 * requests and let in-flight ones finish, stop workers gracefully, then close
 * the pool and the embedded database.
 */
export async function startRuntime(config: Config, logger: Logger): Promise<Runtime> {
  const database = await openDatabase(config, logger, { migrate: config.migrateOnStart });
  let secretBox: SecretBox;
  try {
    secretBox = await SecretBox.load(config);
  } catch (error) {
    await database.close();
    throw error;
  }
  const runsWorkers = config.role !== 'api';
  const runsApi = config.role !== 'worker';
  let boss: PgBoss;
  let derived: DerivedDrainer | undefined;
  try {
    boss = await startQueue(config, database, logger);
    if (runsWorkers) {
      await startWorkers(
        boss,
        jobHandlers({ db: database.db, boss, webhookRetentionDays: config.webhooks.retentionDays }),
        logger,
      );
      await startWebhookWorkers(boss, { db: database.db, logger });
      await startAsyncJobWorkers(boss, { db: database.db, config, logger, runners: ASYNC_JOB_RUNNERS });
      await installSchedules(boss);
      derived = startDerivedDrainer({ db: database.db, logger, pollMs: config.derivedPollMs });
    }
  } catch (error) {
    await database.close();
    throw error;
  }

  let server: Server | undefined;
  let drainer: Drainer | undefined;
  let url: string | undefined;
  let reads = primaryOnly(database.db);
  const mcpRecorder = new McpExecutionRecorder(database.db, logger);
  if (runsApi) {
    try {
      if (config.mcp.enabled) await checkMcpManifest(logger);
      reads = await openReadRouter({ config, primary: database.db, primaryPool: database.pool, logger });
      const app = createApp({ config, db: database.db, reads, boss, logger, secretBox, mcpRecorder });
      server = createServer(httpServerOptions(config), app);
      applyIdleTimeout(server);
      drainer = trackConnections(server);
      const address = await listen(server, config.port, config.host);
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      url = `http://${host}:${address.port}`;
    } catch (error) {
      // Nothing was served yet; workers may have taken a job, so let it finish as on a normal stop.
      await derived?.stop();
      await mcpRecorder.close();
      await boss.stop({ graceful: true, timeout: config.shutdownTimeoutMs, close: true });
      await reads.close();
      await database.close();
      throw error;
    }
  }

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      // In-flight answers finish; a proxy's kept-alive connections are handed back (drain.ts).
      await drainer?.drain(config.shutdownTimeoutMs);
      await derived?.stop();
      await mcpRecorder.close();
      await boss.stop({ graceful: true, timeout: config.shutdownTimeoutMs, close: true });
      await reads.close();
      await database.close();
    })();
    return stopping;
  };
  return { config, database, boss, url, derived, reads, stop };
}

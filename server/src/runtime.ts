import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PgBoss } from 'pg-boss';
import type { Config } from './config.ts';

export { openDatabase, type DatabaseRuntime } from './db/open-database.ts';
import { openDatabase, type DatabaseRuntime } from './db/open-database.ts';
import { createApp } from './http/app.ts';
import type { Logger } from './logger.ts';
import { installSchedules, startBoss, startWorkers } from './queue/boss.ts';
import { jobHandlers } from './queue/handlers.ts';
import { SecretBox } from './lib/secret-box.ts';
import { startWebhookWorkers } from './modules/webhooks/webhook.worker.ts';
import { startAsyncJobWorkers } from './modules/async-jobs/async-job.worker.ts';
import { startRecomputeWorkers } from './modules/analytics/recompute.worker.ts';
import { checkMcpManifest } from './mcp/manifest.ts';
import { McpExecutionRecorder } from './modules/mcp-audit/mcp-audit.service.ts';

export interface Runtime {
  readonly config: Config;
  readonly database: DatabaseRuntime;
  readonly boss: PgBoss;
  /** Where the API listens; undefined for worker-only processes. */
  readonly url: string | undefined;
  stop(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Start the service in its role: `api` serves HTTP, `worker` runs queue
 * workers and schedules, `all` both. `stop()` drains in order: stop taking
 * requests and let in-flight ones finish, stop workers gracefully, then close
 * the pool and the embedded database.
 */
export async function startRuntime(config: Config, logger: Logger): Promise<Runtime> {
  const database = await openDatabase(config, logger);
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
  try {
    boss = await startBoss({
      connectionString: database.url,
      logger,
      maintenance: runsWorkers,
      poolSize: config.queuePoolSize,
    });
    if (runsWorkers) {
      await startWorkers(
        boss,
        jobHandlers({ db: database.db, boss, webhookRetentionDays: config.webhooks.retentionDays }),
        logger,
      );
      await startWebhookWorkers(boss, { db: database.db, logger });
      await startAsyncJobWorkers(boss, { db: database.db, config, logger });
      await startRecomputeWorkers(boss, { db: database.db, logger });
      await installSchedules(boss);
    }
  } catch (error) {
    await database.close();
    throw error;
  }

  let server: Server | undefined;
  let url: string | undefined;
  const mcpRecorder = new McpExecutionRecorder(database.db, logger);
  if (runsApi) {
    if (config.mcp.enabled) await checkMcpManifest(logger);
    const app = createApp({ config, db: database.db, boss, logger, secretBox, mcpRecorder });
    server = createServer(app);
    server.keepAliveTimeout = 65_000;
    const address = await listen(server, config.port, config.host);
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    url = `http://${host}:${address.port}`;
  }

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      if (server) {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const timer = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
        await closed;
        clearTimeout(timer);
      }
      await mcpRecorder.close();
      await boss.stop({ graceful: true, timeout: config.shutdownTimeoutMs, close: true });
      await database.close();
    })();
    return stopping;
  };
  return { config, database, boss, url, stop };
}

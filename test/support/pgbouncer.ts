/**
 * A real PgBouncer (Debian's package; `.ci/run` installs it) started by a test
 * in front of the test PostgreSQL, on a loopback port and a temporary
 * directory of its own, so it never touches the machine's PgBouncer (if one
 * runs, on 6432). PgBouncer refuses to run as root: started by root, it runs
 * as the `postgres` OS user.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { exited, untilListening } from './process.ts';

/** Debian's pgbouncer (`/usr/sbin` is not on every user's PATH); PACER_PGBOUNCER overrides the path. */
export function pgbouncerPath(): string | undefined {
  const fromPath = (process.env['PATH'] ?? '')
    .split(path.delimiter)
    .filter((dir) => dir.length > 0)
    .map((dir) => path.join(dir, 'pgbouncer'));
  const candidates = [process.env['PACER_PGBOUNCER'], '/usr/sbin/pgbouncer', ...fromPath].filter(
    (candidate): candidate is string => typeof candidate === 'string' && candidate.length > 0,
  );
  return candidates.find((candidate) => existsSync(candidate));
}

export interface StartPgBouncerOptions {
  /** The loopback port PgBouncer listens on. */
  readonly port: number;
  /** The PostgreSQL it pools for: any database there is reachable through it under the same name. */
  readonly serverUrl: string;
  /** `pool_mode`: `transaction` is what the README's pooler section is about. */
  readonly poolMode: 'transaction' | 'session';
  /** Server connections per database and user: small, so that client connections really share them. */
  readonly defaultPoolSize: number;
  /** Client connections it accepts in all. */
  readonly maxClientConn: number;
}

export interface PgBouncer {
  readonly port: number;
  /** `serverUrl` with PgBouncer's host and port, for `database`. */
  urlFor(database: string): string;
  log(): Promise<string>;
  stop(): Promise<void>;
}

/** The `postgres` OS user's ids, for a root caller. */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const passwd = await readFile('/etc/passwd', 'utf8');
  const line = passwd.split('\n').find((entry) => entry.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined)
    throw new Error('pgbouncer cannot run as root and there is no postgres user');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Start PgBouncer in the foreground with a generated ini (auth_type trust:
 * the test PostgreSQL's own pg_hba decides) and wait until it accepts
 * connections.
 */
export async function startPgBouncer(options: StartPgBouncerOptions): Promise<PgBouncer> {
  const program = pgbouncerPath();
  if (program === undefined)
    throw new Error("pgbouncer not found: install Debian's `pgbouncer` or set PACER_PGBOUNCER");
  const server = new URL(options.serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pacer-pgbouncer-'));
  await chmod(dir, 0o755);
  const ini = [
    '[databases]',
    `* = host=${server.hostname} port=${server.port || '5432'}${server.password ? ` password=${decodeURIComponent(server.password)}` : ''}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${options.port}`,
    // No Unix socket: it would go to /tmp/.s.PGSQL.<port>, shared with whatever else runs here.
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${dir}/userlist.txt`,
    `pool_mode = ${options.poolMode}`,
    `max_client_conn = ${options.maxClientConn}`,
    `default_pool_size = ${options.defaultPoolSize}`,
    // node-postgres sends none of these, but psql and others may.
    'ignore_startup_parameters = extra_float_digits,options',
    // SHOW STATS / SHOW POOLS on the `pgbouncer` console database, for the test to see the multiplexing.
    `stats_users = ${user}`,
    `logfile = ${dir}/pgbouncer.log`,
    `pidfile = ${dir}/pgbouncer.pid`,
    '',
  ].join('\n');
  await writeFile(path.join(dir, 'pgbouncer.ini'), ini);
  await writeFile(path.join(dir, 'userlist.txt'), `"${user}" ""\n`);
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? await postgresUser() : undefined;
  if (ids) {
    for (const name of ['', 'pgbouncer.ini', 'userlist.txt']) await chown(path.join(dir, name), ids.uid, ids.gid);
  }
  const child: ChildProcess = spawn(program, [path.join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(ids ? { uid: ids.uid, gid: ids.gid } : {}),
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const gone = exited(child);
  const bouncer: PgBouncer = {
    port: options.port,
    urlFor(database) {
      const url = new URL(options.serverUrl);
      url.hostname = '127.0.0.1';
      url.port = String(options.port);
      url.pathname = `/${database}`;
      return url.toString();
    },
    async log() {
      const file = await readFile(path.join(dir, 'pgbouncer.log'), 'utf8').catch(() => '');
      return `${file}${output}`;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        // SIGINT: "safe shutdown", after the clients' transactions end; SIGTERM would cut them.
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await gone;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  await untilListening('pgbouncer', child, options.port, bouncer);
  return bouncer;
}

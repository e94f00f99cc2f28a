import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { appendFile, chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.ts';

const run = promisify(execFile);

/**
 * A real PostgreSQL primary and a streaming replica of it (`initdb`, then
 * `pg_basebackup -R`), each on a loopback port of its own, in a temporary
 * directory, apart from the machine's PostgreSQL. As root the programs run as
 * the `postgres` OS user (PostgreSQL refuses to run as root).
 */
export interface StreamingReplica {
  /** The database every URL names: created on the primary, streamed to the replica. */
  readonly database: string;
  readonly primaryUrl: string;
  readonly replicaUrl: string;
  /** Stop the replica (`pg_ctl stop -m fast`: its sessions are ended). */
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  /** `recovery_min_apply_delay` on the replica, applied by a reload: it replays each commit this late. */
  delayReplay(ms: number): Promise<void>;
  /** Stop both servers and remove their directory. */
  destroy(): Promise<void>;
}

/** The PostgreSQL programs, newest version first: Debian's `/usr/lib/postgresql/<version>/bin`. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = path.join(root, version, 'bin');
    if (['initdb', 'pg_ctl', 'pg_basebackup', 'postgres'].every((name) => existsSync(path.join(bin, name)))) return bin;
  }
  return undefined;
}

const isRoot = process.getuid?.() === 0;

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  return { uid, gid };
}

export async function startStreamingReplica(bin: string): Promise<StreamingReplica> {
  // As root, a directory the postgres user can reach: /tmp, not a TMPDIR that may be root's own.
  const dir = await mkdtemp(path.join(isRoot ? '/tmp' : os.tmpdir(), 'pacer-replica-'));
  if (isRoot) {
    const { uid, gid } = await postgresUser();
    await chown(dir, uid, gid);
  }
  const pg = async (program: string, args: readonly string[]) => {
    const command = path.join(bin, program);
    const [file, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, [...args]];
    return run(file, argv, { timeout: 120_000 });
  };
  const primaryDir = path.join(dir, 'primary');
  const replicaDir = path.join(dir, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const database = 'pacer';
  const ctl = (dataDir: string, action: string, ...extra: string[]) =>
    pg('pg_ctl', ['-D', dataDir, '-l', `${dataDir}.log`, '-w', '-t', '60', ...extra, action]);
  const destroy = async () => {
    for (const dataDir of [replicaDir, primaryDir]) {
      if (existsSync(path.join(dataDir, 'postmaster.pid'))) {
        await ctl(dataDir, 'stop', '-m', 'immediate').catch(() => undefined);
      }
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await pg('initdb', ['-D', primaryDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    // initdb's pg_hba.conf with trust lets loopback connections in, replication ones included.
    await appendFile(
      path.join(primaryDir, 'postgresql.conf'),
      [
        `listen_addresses = '127.0.0.1'`,
        `port = ${primaryPort}`,
        `unix_socket_directories = '${dir}'`,
        'wal_level = replica',
        'max_wal_senders = 4',
        'max_connections = 80',
        'shared_buffers = 32MB',
        // A test cluster: durability is not what is tested, speed on a busy machine is.
        'fsync = off',
        // Statement counts per server: which one served a read.
        `shared_preload_libraries = 'pg_stat_statements'`,
        '',
      ].join('\n'),
    );
    await ctl(primaryDir, 'start');
    await pg('psql', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-c',
      `create database ${database}`,
    ]);
    await pg('psql', [
      ...['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-d', database],
      ...['-c', 'create extension pg_stat_statements'],
    ]);
    await pg('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres'],
      ...['-D', replicaDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
    ]);
    // The copied postgresql.conf names the primary's port; the last setting of a name wins.
    await appendFile(path.join(replicaDir, 'postgresql.conf'), `port = ${replicaPort}\n`);
    await ctl(replicaDir, 'start');
  } catch (error) {
    await destroy();
    throw error;
  }
  const url = (port: number) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    database,
    primaryUrl: url(primaryPort),
    replicaUrl: url(replicaPort),
    stopReplica: async () => {
      await ctl(replicaDir, 'stop', '-m', 'fast');
    },
    startReplica: async () => {
      await ctl(replicaDir, 'start');
    },
    delayReplay: async (ms) => {
      await appendFile(path.join(replicaDir, 'postgresql.conf'), `recovery_min_apply_delay = '${ms}ms'\n`);
      await ctl(replicaDir, 'reload');
    },
    destroy,
  };
}

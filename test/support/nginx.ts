/**
 * A real nginx (Debian's package; `.ci/run` installs it) started by a test
 * from `deploy/nginx.conf`, the annotated example deployment, on loopback
 * ports and a temporary directory of its own, so it runs as root and as any
 * other user and never touches the machine's nginx.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { exited, ROOT, untilListening } from './process.ts';

export const DEPLOY_NGINX_CONF = path.join(ROOT, 'deploy/nginx.conf');

/** Debian's nginx (`/usr/sbin` is not on every user's PATH); PACER_NGINX overrides the path. */
export function nginxPath(): string {
  const fromPath = (process.env['PATH'] ?? '')
    .split(path.delimiter)
    .filter((dir) => dir.length > 0)
    .map((dir) => path.join(dir, 'nginx'));
  const candidates = [process.env['PACER_NGINX'], '/usr/sbin/nginx', ...fromPath].filter(
    (candidate): candidate is string => typeof candidate === 'string' && candidate.length > 0,
  );
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) throw new Error("nginx not found: install Debian's `nginx-light` or set PACER_NGINX");
  return found;
}

export interface NginxConfigOptions {
  /** The loopback port nginx listens on. */
  readonly port: number;
  /** The API processes' ports, in place of the example's `server 127.0.0.1:300N` lines. */
  readonly upstreamPorts: readonly number[];
  /** Where logs and temporary files go, in place of /var/log/nginx and /var/lib/nginx. */
  readonly dir: string;
  /** nginx started as root: its workers stay root (they must write `dir`, which only root can). */
  readonly asRoot: boolean;
}

function replaceOnce(text: string, pattern: RegExp, replacement: string, what: string): string {
  if (!pattern.test(text)) throw new Error(`deploy/nginx.conf no longer has ${what} (${String(pattern)})`);
  return text.replace(pattern, replacement);
}

/**
 * The example deployment with this test's ports and paths. Only the lines the
 * example marks as site-specific change; a line gone missing fails loudly
 * rather than leaving nginx on port 80 or the real log directory.
 */
export function renderNginxConfig(template: string, options: NginxConfigOptions): string {
  let text = template;
  text = replaceOnce(
    text,
    /^(\s*)user\s+[^;]+;/m,
    options.asRoot ? '$1user root;' : '$1# user: not root, so nginx runs as whoever started it',
    'a `user` line',
  );
  text = replaceOnce(text, /^(\s*)listen\s+80;/m, `$1listen 127.0.0.1:${options.port};`, 'a `listen 80;` line');
  const servers = [...text.matchAll(/^(\s*)server\s+127\.0\.0\.1:\d+(\s[^;]*)?;\s*$/gm)];
  if (servers.length === 0) throw new Error('deploy/nginx.conf has no `server 127.0.0.1:PORT` upstream lines');
  const indent = servers[0]?.[1] ?? '    ';
  const parameters = servers[0]?.[2] ?? '';
  const upstream = options.upstreamPorts.map((port) => `${indent}server 127.0.0.1:${port}${parameters};`).join('\n');
  let replaced = false;
  text = text.replace(/^(\s*)server\s+127\.0\.0\.1:\d+(\s[^;]*)?;\s*\n/gm, () => {
    if (replaced) return '';
    replaced = true;
    return `${upstream}\n`;
  });
  if (!text.includes('/var/log/nginx/') || !text.includes('/var/lib/nginx/')) {
    throw new Error('deploy/nginx.conf no longer keeps its logs in /var/log/nginx and temp files in /var/lib/nginx');
  }
  text = text.replaceAll('/var/log/nginx/', `${options.dir}/`).replaceAll('/var/lib/nginx/', `${options.dir}/`);
  return text;
}

export interface Nginx {
  /** `http://127.0.0.1:<port>`: what clients (and PACER_BASE_URL) use. */
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  readonly child: ChildProcess;
  /** The access log so far (the example's `pacer` format). */
  accessLog(): Promise<string>;
  /** nginx's error log so far. */
  errorLog(): Promise<string>;
  /** Fast shutdown (SIGTERM to the master, which stops its workers), then the directory is removed. */
  stop(): Promise<void>;
}

export interface StartNginxOptions {
  readonly port: number;
  readonly upstreamPorts: readonly number[];
  /** The template; `deploy/nginx.conf` by default. */
  readonly template?: string;
}

/**
 * Start nginx in the foreground (`daemon off`) from the example config,
 * rewritten for `options`, and wait until it accepts connections. The
 * master's pid file and every log live in the temporary directory.
 */
export async function startNginx(options: StartNginxOptions): Promise<Nginx> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pacer-nginx-'));
  // The workers of a root master run as root here too, but keep the directory readable for a reader of the logs.
  await chmod(dir, 0o755);
  const asRoot = process.getuid?.() === 0;
  const template = options.template ?? (await readFile(DEPLOY_NGINX_CONF, 'utf8'));
  const config = renderNginxConfig(template, { port: options.port, upstreamPorts: options.upstreamPorts, dir, asRoot });
  const configPath = path.join(dir, 'nginx.conf');
  await writeFile(configPath, config);

  const child = spawn(
    nginxPath(),
    // -e: the error log before the config is read (Debian's compiled-in one is stderr, others' a file in /var/log).
    [
      '-p',
      `${dir}/`,
      '-c',
      configPath,
      '-e',
      path.join(dir, 'startup-error.log'),
      '-g',
      `daemon off; pid ${dir}/nginx.pid;`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const gone = exited(child);
  const readLog = async (name: string) => {
    try {
      return await readFile(path.join(dir, name), 'utf8');
    } catch {
      return '';
    }
  };
  const nginx: Nginx = {
    url: `http://127.0.0.1:${options.port}`,
    port: options.port,
    dir,
    child,
    accessLog: () => readLog('pacer-access.log'),
    errorLog: async () => `${await readLog('startup-error.log')}${await readLog('pacer-error.log')}${output}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await gone;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  await untilListening('nginx', child, options.port, { log: () => nginx.errorLog(), stop: () => nginx.stop() });
  return nginx;
}

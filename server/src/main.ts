import { findCommand, usage } from './cli/commands.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { AppError } from './errors.ts';
import { createLogger, servingLogDestination, type Logger } from './logger.ts';
import type { Runtime } from './runtime.ts';
import { describeFailure, StartupError } from './startup-error.ts';

/**
 * A failure is one line on stderr naming cause and fix, never a stack trace:
 * the operator acts on it. The stack goes to the debug log (stdout, like
 * every log line) for whoever debugs Pacer itself.
 */
function reportFailure(error: unknown, prefix: string, logger: Logger): void {
  logger.debug({ err: error }, prefix);
  process.stderr.write(`${prefix}: ${describeFailure(error)}\n`);
}

/**
 * The one binary: `start` serves (in the role PACER_ROLE says), everything
 * else is an operator command (`npm run pacer -- <command>`). Returns the
 * exit code, or -1 while serving.
 */
async function start(config: Config): Promise<number> {
  const logDestination = servingLogDestination();
  const logger = createLogger(config.logLevel, logDestination);
  const startedAt = performance.now();
  let runtime: Runtime;
  try {
    // Loaded here, not at the top: operator commands need none of the HTTP app.
    const { startRuntime } = await import('./runtime.ts');
    runtime = await startRuntime(config, logger);
  } catch (error) {
    reportFailure(error, 'Pacer did not start', logger);
    return 1;
  }
  logger.info(
    {
      role: config.role,
      baseUrl: config.baseUrl,
      listening: runtime.url,
      docs: `${config.baseUrl}/docs`,
      mcp: `${config.baseUrl}/mcp`,
      data: config.databaseUrl ? 'DATABASE_URL' : config.dataDir,
      postgresCluster: runtime.database.embedded?.clusterDir,
      postgresBinaries: runtime.database.embedded?.binDir,
      startupMs: Math.round(performance.now() - startedAt),
    },
    'Pacer is ready',
  );
  // The line an operator (or a supervisor, or a test) waits for goes out now, not with the next gathered write.
  logDestination.flushSync();
  let signalled = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal }, 'shutting down');
    runtime.stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  return -1;
}

/** `Invalid configuration:\n  A: …\n  B: …` as one line: `Invalid configuration: A: …; B: …`. */
function oneLineConfigError(message: string): string {
  const [title = '', ...issues] = message.split('\n').map((line) => line.trim());
  return `${title} ${issues.filter(Boolean).join('; ')}`.trim();
}

async function main(argv: readonly string[]): Promise<number> {
  const [name = 'start', ...args] = argv;
  if (name === 'help' || name === '--help') {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${oneLineConfigError(error.message)}\n`);
      return 2;
    }
    throw error;
  }
  if (name === 'start') return start(config);
  const command = findCommand(name);
  if (!command) {
    process.stderr.write(`Unknown command "${name}".\n\n${usage()}\n`);
    return 2;
  }
  // Operator commands log only problems; their output is the result.
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  try {
    await command.run({ config, logger, args, out: (text) => process.stdout.write(`${text}\n`) });
    // A command may report a partial failure (e.g. import) through process.exitCode.
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof StartupError) {
      reportFailure(error, `Pacer could not run ${name}`, logger);
      return 1;
    }
    if (error instanceof AppError) {
      const fields = (error.errors ?? []).map((entry) => `  ${entry.path}: ${entry.message}`);
      process.stderr.write(`${[error.message, ...fields].join('\n')}\n`);
      return 1;
    }
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${error.message}\n\n${usage()}\n`);
      return 2;
    }
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

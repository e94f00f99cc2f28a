import { findCommand, usage } from './cli/commands.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { AppError } from './errors.ts';
import { createLogger } from './logger.ts';

/**
 * The one binary: `start` serves (in the role PACER_ROLE says), everything
 * else is an operator command (`npm run pacer -- <command>`).
 */
async function start(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const startedAt = performance.now();
  // Loaded here, not at the top: operator commands need none of the HTTP app.
  const { startRuntime } = await import('./runtime.ts');
  const runtime = await startRuntime(config, logger);
  logger.info(
    {
      role: config.role,
      baseUrl: config.baseUrl,
      listening: runtime.url,
      docs: `${config.baseUrl}/docs`,
      mcp: `${config.baseUrl}/mcp`,
      data: config.databaseUrl ? 'DATABASE_URL' : config.dataDir,
      startupMs: Math.round(performance.now() - startedAt),
    },
    'Pacer is ready',
  );
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
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (name === 'start') {
    await start(config);
    return -1;
  }
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

import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Paths that may carry secrets. pino replaces them before a line is written,
 * so a token or password never reaches a log even when a whole request or
 * object is logged by mistake.
 */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-webhook-secret"]',
  'res.headers["set-cookie"]',
  'password',
  'token',
  'accessToken',
  'refreshToken',
  'clientSecret',
  'webhookSecret',
  '*.password',
  '*.token',
  '*.clientSecret',
];

/** JSON lines on stdout; `destination` lets tests read what would be written. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'pacer' }, redact: { paths: REDACT, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Where the serving process (`start`) logs: stdout, its lines gathered into writes
 * of about 4 KB (pino's `minLength`), and what is gathered is written at
 * least every 100 ms (`periodicFlush`): a busy process makes one write to
 * stdout per dozen or so lines instead of one per line (the per-request
 * line's write was about 4% of a request's CPU, mostly the system call),
 * while a quiet one still shows a line within a tenth of a second. pino
 * writes out what is gathered when the process exits (its exit hook for
 * asynchronous destinations); a process killed with SIGKILL loses at most
 * that last tenth of a second. Operator commands keep `createLogger`'s
 * immediate lines: their few warnings belong before their output.
 */
export function servingLogDestination(): ReturnType<typeof pino.destination> {
  return pino.destination({ dest: 1, minLength: 4096, periodicFlush: 100, sync: false });
}

/**
 * The logger of the per-request line (request-context.ts): same level,
 * base and destination as `logger`, without the redaction pass. That line
 * is built field by field from values that carry no secret (id, method,
 * path without the query string, client address, status, time), and
 * redaction walked every path of REDACT over it on every request.
 */
export function requestLineLogger(logger: Logger): Logger {
  const destination = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym];
  return pino({ level: logger.level, base: { service: 'pacer' } }, destination);
}

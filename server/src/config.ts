import os from 'node:os';
import path from 'node:path';
import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { isParsableConnectionUrl, redactConnectionUrl } from './db/connection-url.ts';

/** Environment flags are written `true`/`false` (also `1`/`0`, `yes`/`no`). */
const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .default(fallback ? 'true' : 'false')
    .transform((value) => value === 'true' || value === '1' || value === 'yes');

const seconds = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
const perMinute = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
const csv = z
  .string()
  .default('')
  .transform((value) =>
    value
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0),
  );

/**
 * `PACER_TRUST_PROXY`, with Express's `trust proxy` semantics: a hop count
 * (`1`: one proxy in front, its `X-Forwarded-For` entry is the client) or a
 * comma list of proxy addresses, CIDRs and Express's names `loopback`,
 * `linklocal`, `uniquelocal`. `true` (trust every hop) is refused: then any
 * client could name its own address by sending `X-Forwarded-For`.
 */
const trustProxy = z
  .string()
  .default('false')
  .transform((value, ctx): TrustProxy => {
    const text = value.trim();
    if (['false', '0', 'no', 'off'].includes(text)) return false;
    if (/^\d+$/.test(text)) return Number(text);
    if (['true', 'yes', 'on'].includes(text)) {
      ctx.addIssue({
        code: 'custom',
        message:
          'trusting every hop lets any client choose its address; give the number of proxies in front (e.g. 1) or their addresses',
      });
      return z.NEVER;
    }
    const entries = text
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0);
    try {
      proxyAddr.compile(entries);
    } catch (error) {
      ctx.addIssue({
        code: 'custom',
        message: `expected a hop count or a list of proxy addresses/CIDRs (${error instanceof Error ? error.message : String(error)})`,
      });
      return z.NEVER;
    }
    return entries;
  });

/**
 * `PACER_CORS_ORIGINS`: the browser origins allowed to call the bearer-token
 * REST API (http/cors.ts), each `scheme://host[:port]` and nothing more. Kept
 * as the browser sends them in `Origin` (lower-case host, no default port), so
 * the allowlist is an exact comparison. `*` is refused: the issue asks for an
 * allowlist, and an operator who names the apps knows which ones can read a
 * user's data from a page.
 */
const corsOrigins = z
  .string()
  .default('')
  .transform((value, ctx): string[] => {
    const origins: string[] = [];
    for (const entry of value.split(',').map((part) => part.trim())) {
      if (entry.length === 0) continue;
      const origin = exactOrigin(entry);
      if (origin === undefined) {
        ctx.addIssue({
          code: 'custom',
          message:
            entry === '*'
              ? 'list the allowed origins (e.g. https://app.example.com); `*` is not accepted'
              : `${JSON.stringify(entry)} is not an origin: expected http(s)://host[:port], with no path, query or credentials`,
        });
        return z.NEVER;
      }
      if (!origins.includes(origin)) origins.push(origin);
    }
    return origins;
  });

/** `entry` as the `Origin` header a browser would send for it; undefined unless it is only a scheme, host and port. */
function exactOrigin(entry: string): string | undefined {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') return undefined;
  if (/[?#]/.test(entry)) return undefined;
  // No path: nothing after the authority but, at most, one `/` (`new URL` normalises `/a/..` to `/`).
  const afterScheme = entry.slice(entry.indexOf('//') + 2);
  const slash = afterScheme.indexOf('/');
  if (slash !== -1 && slash !== afterScheme.length - 1) return undefined;
  return url.origin;
}

/** An optional `postgres://` URL setting; `notUrl` says what else it may be. */
function connectionUrl(notUrl: string) {
  return z
    .string()
    .regex(/^postgres(ql)?:\/\//, { error: notUrl, abort: true })
    .refine(isParsableConnectionUrl, {
      error: 'is not a valid URL (check the host and port, and percent-encode special characters in the password)',
    })
    .optional();
}

/** Off, a hop count, or the proxies' addresses/CIDRs (Express `trust proxy`). */
export type TrustProxy = false | number | readonly string[];

const EnvSchema = z.object({
  PACER_PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  PACER_HOST: z.string().min(1).default('127.0.0.1'),
  PACER_TRUST_PROXY: trustProxy,
  PACER_CORS_ORIGINS: corsOrigins,
  PACER_BASE_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .refine((value) => value === undefined || !/[?#]/.test(value), 'must not have a query or fragment'),
  DATABASE_URL: connectionUrl(
    'must be a postgres:// URL (postgres://user:password@host:5432/database), or unset for the embedded PostgreSQL',
  ),
  // A direct (or session-mode) connection for what needs a session of its own: see Config.databaseSessionUrl.
  PACER_DATABASE_SESSION_URL: connectionUrl(
    'must be a postgres:// URL (postgres://user:password@host:5432/database), or unset to use DATABASE_URL',
  ),
  PACER_MIGRATE_ON_START: flag(true),
  // A streaming replica the REST GET routes and MCP read tools read from (db/read-replica.ts); unset: all on DATABASE_URL.
  PACER_DATABASE_READ_URL: connectionUrl('must be a postgres:// URL of a read replica, or unset'),
  // After a caller's write, its reads stay on the primary this long (read-your-writes).
  PACER_READ_YOUR_WRITES_MS: z.coerce.number().int().min(0).max(3_600_000).default(5000),
  // Past this replay lag the replica is left out of reads until it catches up.
  PACER_READ_MAX_LAG_MS: z.coerce.number().int().min(100).max(3_600_000).default(2000),
  PACER_DATA_DIR: z.string().min(1).default('./.pacer'),
  PACER_ROLE: z.enum(['all', 'api', 'worker']).default('all'),
  PACER_DB_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(20),
  PACER_DB_PREPARED_STATEMENTS: flag(true),
  PACER_QUEUE_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(5),
  // 0 or 2..256; 1 would be one partition holding every row, only the overhead.
  PACER_PARTITIONS: z.coerce
    .number()
    .int()
    .min(0)
    .max(256)
    .refine((count) => count !== 1, { error: 'must be 0 (no partitions) or from 2 to 256' })
    .default(0),
  // How often a worker looks for change records to recompute derived data from (modules/derived/derived-drainer.ts).
  PACER_DERIVED_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(200),
  PACER_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PACER_ACCESS_TOKEN_TTL: z.coerce.number().int().min(60).default(3600),
  PACER_REFRESH_TOKEN_TTL: seconds(7_776_000),
  PACER_MAX_UPLOAD_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(25 * 1024 * 1024),
  // FIT decoding (docs/design.md §3 "Sync resources"): what one process holds and spends on uploaded files.
  PACER_FIT_DECODE_QUEUE_FILES: z.coerce.number().int().min(1).default(8),
  PACER_FIT_DECODE_QUEUE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(100 * 1024 * 1024),
  PACER_FIT_MAX_RECORDS: z.coerce.number().int().min(1).default(1_000_000),
  // Decoder worker threads per process (unset: one per CPU but one, at most 2); files beyond them wait their turn.
  PACER_FIT_DECODE_WORKERS: z.coerce.number().int().min(1).max(64).optional(),
  PACER_FIT_DECODE_TIMEOUT_MS: z.coerce.number().int().min(1).default(15_000),
  PACER_RATE_LIMIT_PER_MINUTE: perMinute(600),
  PACER_RATE_LIMIT_IP_PER_MINUTE: perMinute(1200),
  PACER_RATE_LIMIT_UPLOADS_PER_MINUTE: perMinute(30),
  PACER_DCR_RATE_LIMIT_PER_HOUR: z.coerce.number().int().min(0).default(20),
  PACER_SIGNUP_RATE_LIMIT_PER_HOUR: z.coerce.number().int().min(0).default(10),
  PACER_LOGIN_ACCOUNT_FREE_ATTEMPTS: z.coerce.number().int().min(0).default(5),
  PACER_LOGIN_ADDRESS_FREE_ATTEMPTS: z.coerce.number().int().min(0).default(20),
  PACER_LOGIN_LOCKOUT_SECONDS: z.coerce.number().int().min(1).default(30),
  PACER_LOGIN_LOCKOUT_MAX_SECONDS: z.coerce.number().int().min(1).default(900),
  PACER_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  // How long a request's body may take to arrive, from its headers (http/timeouts.ts): else 408.
  PACER_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),
  // The same for `POST /api/workouts/upload-fit`: 25 MiB in 300 s needs about 0.7 Mbit/s of uplink.
  PACER_UPLOAD_TIMEOUT_MS: z.coerce.number().int().min(1000).default(300_000),
  // Check every REST answer against the contract before sending it (the test suite does; see http/response-check.ts).
  PACER_CHECK_RESPONSES: flag(false),
  // Append every REST exchange to this JSON Lines file (tests only; see http/traffic-recorder.ts).
  PACER_RECORD_TRAFFIC: z.string().min(1).optional(),
  PACER_MCP_ENABLED: flag(true),
  PACER_MCP_READ_ENABLED: flag(true),
  PACER_MCP_WRITE_ENABLED: flag(true),
  PACER_MCP_ASYNC_ENABLED: flag(true),
  PACER_MCP_EXECUTION_ENABLED: flag(true),
  PACER_MCP_CLIENT_ALLOWLIST: csv,
  PACER_MCP_ALLOWED_ORIGINS: csv,
  PACER_MCP_RATE_LIMIT_PER_MINUTE: perMinute(300),
  // Failed authentications on /mcp per client address per minute before the address gets 429 (mcp-auth.ts).
  PACER_MCP_AUTH_FAILURES_PER_MINUTE: perMinute(60),
  PACER_MCP_DCR_ENABLED: flag(true),
  PACER_MCP_DCR_OWNER_USER_ID: z.uuid().optional(),
  PACER_MCP_DCR_OWNER_EMAIL: z.email().optional(),
  // At least 32 characters (e.g. `openssl rand -base64 32`); unset: a key file in PACER_DATA_DIR.
  PACER_SECRET_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  PACER_WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  PACER_WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(6),
  PACER_WEBHOOK_RETRY_DELAY_SECONDS: z.coerce.number().int().min(1).max(3600).default(5),
  // Incoming webhook requests per client address and per app (client id) per minute, matched or not.
  PACER_WEBHOOK_RATE_LIMIT_IP_PER_MINUTE: perMinute(2400),
  PACER_WEBHOOK_RATE_LIMIT_APP_PER_MINUTE: perMinute(6000),
  // What an app's rejected deliveries (secret did not match) may occupy in all; the oldest go first. 0 = no cap.
  PACER_WEBHOOK_REJECTED_BYTES_PER_APP: z.coerce
    .number()
    .int()
    .min(0)
    .default(1024 * 1024),
});

export interface Config {
  readonly port: number;
  readonly host: string;
  /** Issuer and REST resource identifier: no trailing slash. */
  readonly baseUrl: string;
  /** The MCP resource identifier, `{baseUrl}/mcp`. */
  readonly mcpResource: string;
  /** Unset: an embedded PostgreSQL under `dataDir` is used. */
  /**
   * Connections per process: the request/service pool and pg-boss's own
   * pool. A worker also holds one LISTEN connection. The README's "Operating
   * at scale" budgets them against `max_connections`.
   */
  readonly dbPoolSize: number;
  /**
   * Hot queries as named prepared statements (db/database.ts). Off for a
   * transaction-mode pooler (PgBouncer `pool_mode=transaction`): a named
   * statement lives on one server connection, which the pooler may swap
   * between transactions.
   */
  readonly dbPreparedStatements: boolean;
  readonly queuePoolSize: number;
  /**
   * Hash partitions for the large user tables (wellness, nutrition, workouts
   * with files and streams, planned workouts, webhook deliveries), made by the
   * migration that creates them (20261128T0101_user_partitions.ts); 0: plain
   * tables. Counts only when that migration runs: on a new database, or at
   * the upgrade that brings it.
   */
  readonly partitions: number;
  /**
   * Interval of the derived-data drainer's poll: also the window in which a
   * burst of one user's writes coalesces into one recompute.
   */
  readonly derivedPollMs: number;
  /** Which peers' `X-Forwarded-For` names the client (Express `trust proxy`); `false`: none. */
  readonly trustProxy: TrustProxy;
  /**
   * Browser origins (exact, as sent in `Origin`) that may call the bearer-token
   * REST API across origins (http/cors.ts); empty: CORS is off.
   */
  readonly corsOrigins: readonly string[];
  readonly databaseUrl: string | undefined;
  /**
   * Reads from a streaming replica (db/read-replica.ts, README "Operating at
   * scale"); `url` undefined: every read goes to the primary.
   */
  readonly readReplica: {
    readonly url: string | undefined;
    /** A caller's reads stay on the primary this long after its last write. */
    readonly readYourWritesMs: number;
    /** Replay lag past which reads leave the replica. */
    readonly maxLagMs: number;
  };
  /**
   * `PACER_DATABASE_SESSION_URL`: where Pacer opens connections that need a
   * server session of their own, which a transaction-mode pooler
   * (PgBouncer `pool_mode=transaction`) does not keep between transactions:
   * pg-boss's LISTEN connection (a worker's) and the migrations (`migrate`,
   * and start-up migration). Undefined: `databaseUrl` (or the embedded
   * database) serves these too.
   */
  readonly databaseSessionUrl: string | undefined;
  /**
   * `PACER_MIGRATE_ON_START`: `start` brings the schema and the queues up to
   * date first. Off, `start` only checks that they are, and fails at once if
   * not; `npm run pacer -- migrate` migrates.
   */
  readonly migrateOnStart: boolean;
  readonly dataDir: string;
  readonly role: 'all' | 'api' | 'worker';
  readonly logLevel: z.infer<typeof EnvSchema>['PACER_LOG_LEVEL'];
  readonly accessTokenTtlSecs: number;
  /** 0 = refresh tokens never expire. */
  readonly refreshTokenTtlSecs: number;
  readonly maxUploadBytes: number;
  /** Bounds on FIT decoding in this process (modules/workouts/fit-decode-queue.ts). */
  readonly fitDecoding: {
    /** Files admitted at once: being received, waiting for a decoder, or decoding. */
    readonly maxQueuedFiles: number;
    /** Their bytes together (each counted at its declared size until its body has arrived). */
    readonly maxQueuedBytes: number;
    /** Data messages (records, laps, events, …) a file may hold. */
    readonly maxRecords: number;
    /** Time one decode may take in a worker. */
    readonly timeoutMs: number;
    /**
     * Decoder worker threads (modules/workouts/fit-decoder.pool.ts): files
     * decoded at once, the rest of the admitted ones waiting for a worker.
     * Each holds its own V8 heap while it decodes (about 45 MB for a 10-hour
     * ride), so this bounds the process's peak memory under concurrent uploads.
     */
    readonly workers: number;
  };
  /** Requests per window; 0 = off. */
  readonly rateLimits: {
    readonly perToken: number;
    readonly perIp: number;
    readonly uploads: number;
    /** Dynamic client registrations per IP per hour (RFC 7591 endpoint). */
    readonly dcrRegistrationsPerHour: number;
    /** Sign-ups (`POST /signup`) per client address per hour. */
    readonly signupsPerHour: number;
  };
  /** Sign-in throttling (modules/accounts/login.service.ts). */
  readonly login: {
    /** Attempts per account before it locks; 0 = no per-account limit. */
    readonly accountFreeAttempts: number;
    /** Attempts per client address before it locks; 0 = no per-address limit. */
    readonly addressFreeAttempts: number;
    /** The first lockout; each further attempt counted past the free ones doubles it. */
    readonly lockoutSecs: number;
    /** No lockout is longer than this. */
    readonly maxLockoutSecs: number;
  };
  readonly shutdownTimeoutMs: number;
  /** A request body must have arrived this long after its headers, else 408 (http/timeouts.ts). */
  readonly requestTimeoutMs: number;
  /** The same for a FIT upload. */
  readonly uploadTimeoutMs: number;
  /** Answers that disagree with the contract fail with 500 instead of going out (tests). */
  readonly checkResponses: boolean;
  /** Where every REST exchange is appended as JSON Lines, for a contract tester (tests); `undefined`: nowhere. */
  readonly recordTraffic: string | undefined;
  readonly secureCookies: boolean;
  /**
   * Key material for secrets the server must read back (webhook secrets, to
   * check HMAC signatures). `undefined`: `secret.key` in `dataDir`, created on first use.
   */
  readonly secretKey: string | undefined;
  readonly webhooks: {
    /** Deliveries older than this are purged. */
    readonly retentionDays: number;
    /** Processing attempts of a delivery before it is dead-lettered (transient errors only). */
    readonly maxAttempts: number;
    /** First retry delay; doubles per attempt (with jitter, pg-boss `retryBackoff`). */
    readonly retryDelaySecs: number;
    /** Requests to the webhook endpoint per client address per minute; 0 = off. */
    readonly rateLimitPerIp: number;
    /** Requests to one app's webhook endpoint per minute, from anywhere; 0 = off. */
    readonly rateLimitPerApp: number;
    /** Stored bytes of an app's rejected deliveries, oldest dropped first; 0 = no cap. */
    readonly rejectedBytesPerApp: number;
  };
  readonly mcp: {
    readonly enabled: boolean;
    readonly readEnabled: boolean;
    readonly writeEnabled: boolean;
    readonly asyncEnabled: boolean;
    readonly executionEnabled: boolean;
    readonly clientAllowlist: readonly string[];
    /** Browser origins besides the base URL's that may call `/mcp` (`Origin` header). */
    readonly allowedOrigins: readonly string[];
    /** Tool calls per access token per minute; 0 = off. */
    readonly rateLimitPerMinute: number;
    /** Failed authentications (401) per client address per minute, then 429 for the address; 0 = off. */
    readonly authFailuresPerMinute: number;
    readonly dcrEnabled: boolean;
    readonly dcrOwnerUserId: string | undefined;
    readonly dcrOwnerEmail: string | undefined;
  };
}

/**
 * One decoder worker per CPU but one (left to the event loop and a local
 * PostgreSQL), and at most 2: a third decoding worker adds its heap to the
 * peak of concurrent uploads (issue 20: 4 concurrent 10-hour uploads within
 * 250 MB) for throughput that only a process taking many uploads at once
 * needs, and it can set PACER_FIT_DECODE_WORKERS.
 */
function defaultDecodeWorkers(): number {
  return Math.min(2, Math.max(1, os.availableParallelism() - 1));
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Parse the `PACER_*` environment once. Nothing else in the server reads
 * `process.env`. A wrong value throws a `ConfigError` that names each variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "not set" (the usual shell idiom `VAR= cmd`).
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? 'environment');
      // DATABASE_URL may hold a password: the message goes to stderr and logs.
      const value =
        (name === 'DATABASE_URL' || name === 'PACER_DATABASE_SESSION_URL' || name === 'PACER_DATABASE_READ_URL') &&
        env[name] !== undefined
          ? redactConnectionUrl(env[name])
          : env[name];
      return `  ${name}${value === undefined ? '' : `=${JSON.stringify(value)}`}: ${issue.message}`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (e.PACER_FIT_DECODE_QUEUE_BYTES < e.PACER_MAX_UPLOAD_BYTES) {
    throw new ConfigError(
      `Invalid configuration:\n  PACER_FIT_DECODE_QUEUE_BYTES=${JSON.stringify(String(e.PACER_FIT_DECODE_QUEUE_BYTES))}: must be at least PACER_MAX_UPLOAD_BYTES (${e.PACER_MAX_UPLOAD_BYTES}), or a file of the largest size accepted could never be decoded`,
    );
  }
  if (e.PACER_DATABASE_SESSION_URL !== undefined && e.DATABASE_URL === undefined) {
    throw new ConfigError(
      'Invalid configuration:\n  PACER_DATABASE_SESSION_URL: needs DATABASE_URL too (the embedded PostgreSQL has no pooler in front of it)',
    );
  }
  const baseUrl = (e.PACER_BASE_URL ?? `http://localhost:${e.PACER_PORT}`).replace(/\/+$/, '');
  return deepFreeze({
    port: e.PACER_PORT,
    host: e.PACER_HOST,
    baseUrl,
    mcpResource: `${baseUrl}/mcp`,
    trustProxy: e.PACER_TRUST_PROXY,
    corsOrigins: e.PACER_CORS_ORIGINS,
    dbPoolSize: e.PACER_DB_POOL_SIZE,
    dbPreparedStatements: e.PACER_DB_PREPARED_STATEMENTS,
    queuePoolSize: e.PACER_QUEUE_POOL_SIZE,
    partitions: e.PACER_PARTITIONS,
    derivedPollMs: e.PACER_DERIVED_POLL_MS,
    databaseUrl: e.DATABASE_URL,
    databaseSessionUrl: e.PACER_DATABASE_SESSION_URL,
    migrateOnStart: e.PACER_MIGRATE_ON_START,
    readReplica: {
      url: e.PACER_DATABASE_READ_URL,
      readYourWritesMs: e.PACER_READ_YOUR_WRITES_MS,
      maxLagMs: e.PACER_READ_MAX_LAG_MS,
    },
    dataDir: path.resolve(e.PACER_DATA_DIR),
    role: e.PACER_ROLE,
    logLevel: e.PACER_LOG_LEVEL,
    accessTokenTtlSecs: e.PACER_ACCESS_TOKEN_TTL,
    refreshTokenTtlSecs: e.PACER_REFRESH_TOKEN_TTL,
    maxUploadBytes: e.PACER_MAX_UPLOAD_BYTES,
    fitDecoding: {
      maxQueuedFiles: e.PACER_FIT_DECODE_QUEUE_FILES,
      maxQueuedBytes: e.PACER_FIT_DECODE_QUEUE_BYTES,
      maxRecords: e.PACER_FIT_MAX_RECORDS,
      timeoutMs: e.PACER_FIT_DECODE_TIMEOUT_MS,
      workers: e.PACER_FIT_DECODE_WORKERS ?? defaultDecodeWorkers(),
    },
    rateLimits: {
      perToken: e.PACER_RATE_LIMIT_PER_MINUTE,
      perIp: e.PACER_RATE_LIMIT_IP_PER_MINUTE,
      uploads: e.PACER_RATE_LIMIT_UPLOADS_PER_MINUTE,
      dcrRegistrationsPerHour: e.PACER_DCR_RATE_LIMIT_PER_HOUR,
      signupsPerHour: e.PACER_SIGNUP_RATE_LIMIT_PER_HOUR,
    },
    login: {
      accountFreeAttempts: e.PACER_LOGIN_ACCOUNT_FREE_ATTEMPTS,
      addressFreeAttempts: e.PACER_LOGIN_ADDRESS_FREE_ATTEMPTS,
      lockoutSecs: e.PACER_LOGIN_LOCKOUT_SECONDS,
      maxLockoutSecs: Math.max(e.PACER_LOGIN_LOCKOUT_MAX_SECONDS, e.PACER_LOGIN_LOCKOUT_SECONDS),
    },
    shutdownTimeoutMs: e.PACER_SHUTDOWN_TIMEOUT_MS,
    requestTimeoutMs: e.PACER_REQUEST_TIMEOUT_MS,
    uploadTimeoutMs: e.PACER_UPLOAD_TIMEOUT_MS,
    checkResponses: e.PACER_CHECK_RESPONSES,
    recordTraffic: e.PACER_RECORD_TRAFFIC,
    secureCookies: baseUrl.startsWith('https://'),
    mcp: {
      enabled: e.PACER_MCP_ENABLED,
      readEnabled: e.PACER_MCP_READ_ENABLED,
      writeEnabled: e.PACER_MCP_WRITE_ENABLED,
      asyncEnabled: e.PACER_MCP_ASYNC_ENABLED,
      executionEnabled: e.PACER_MCP_EXECUTION_ENABLED,
      clientAllowlist: e.PACER_MCP_CLIENT_ALLOWLIST,
      allowedOrigins: e.PACER_MCP_ALLOWED_ORIGINS.map((origin) => origin.replace(/\/+$/, '')),
      rateLimitPerMinute: e.PACER_MCP_RATE_LIMIT_PER_MINUTE,
      authFailuresPerMinute: e.PACER_MCP_AUTH_FAILURES_PER_MINUTE,
      dcrEnabled: e.PACER_MCP_DCR_ENABLED,
      dcrOwnerUserId: e.PACER_MCP_DCR_OWNER_USER_ID,
      dcrOwnerEmail: e.PACER_MCP_DCR_OWNER_EMAIL,
    },
    secretKey: e.PACER_SECRET_KEY,
    webhooks: {
      retentionDays: e.PACER_WEBHOOK_RETENTION_DAYS,
      maxAttempts: e.PACER_WEBHOOK_MAX_ATTEMPTS,
      retryDelaySecs: e.PACER_WEBHOOK_RETRY_DELAY_SECONDS,
      rateLimitPerIp: e.PACER_WEBHOOK_RATE_LIMIT_IP_PER_MINUTE,
      rateLimitPerApp: e.PACER_WEBHOOK_RATE_LIMIT_APP_PER_MINUTE,
      rejectedBytesPerApp: e.PACER_WEBHOOK_REJECTED_BYTES_PER_APP,
    },
  });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

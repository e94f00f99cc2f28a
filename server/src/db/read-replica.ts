import pg from 'pg';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { type ConnectionSource, createDb, type Db, type SourceClient } from './database.ts';

/**
 * - `off`: no `PACER_DATABASE_READ_URL`, every read goes to the primary;
 * - `starting`: not sampled yet;
 * - `ok`: reachable and within `PACER_READ_MAX_LAG_MS`: reads go there;
 * - `lagging`: reachable, but its replay is further behind (or unknown);
 * - `unreachable`: the last connection or sample failed.
 */
export type ReplicaState = 'off' | 'starting' | 'ok' | 'lagging' | 'unreachable';

export interface ReplicaStatus {
  readonly state: ReplicaState;
  /** Replay lag at the last sample, in ms (0 when it has replayed all it received); null when unknown. */
  readonly lagMs: number | null;
}

/** Opening a replica connection must fail fast: a read waiting on it would rather go to the primary. */
export const REPLICA_CONNECT_TIMEOUT_MS = 1000;
/** How often the replica's lag and reachability are sampled (not per request). */
export const REPLICA_SAMPLE_INTERVAL_MS = 1000;

/**
 * Where reads go (docs/design.md §2 "Reads from a replica"). With a replica, a
 * read goes there unless its caller wrote within the read-your-writes window
 * (`msSinceWrite`, from the bearer lookup) or the replica is not `ok`. Writes,
 * OAuth, idempotency and anything inside a transaction never ask: they use the
 * primary handle they are given.
 */
export interface ReadRouter {
  /** The primary. */
  readonly primary: Db;
  /** True when a replica is configured: writes must then be noted for read-your-writes. */
  readonly replicated: boolean;
  /** The handle a read goes through for a caller whose grant last wrote `msSinceWrite` ago (null: never). */
  readDbFor(msSinceWrite: number | null): Db;
  status(): ReplicaStatus;
  close(): Promise<void>;
}

/** No replica: every read on the primary. */
export function primaryOnly(primary: Db): ReadRouter {
  return {
    primary,
    replicated: false,
    readDbFor: () => primary,
    status: () => ({ state: 'off', lagMs: null }),
    close: () => Promise.resolve(),
  };
}

interface ReplicaOptions {
  readonly config: Config;
  readonly primary: Db;
  readonly primaryPool: pg.Pool;
  readonly logger: Logger;
}

/**
 * Lag as monitoring usually measures it on a standby: the age of the last
 * replayed transaction, except when everything received has been replayed
 * (then 0: an idle primary sends nothing, and the age would grow without any
 * lag). Null (unknown) before the standby has replayed anything.
 */
const LAG_SAMPLE = `select case
    when not pg_is_in_recovery() then 0
    when pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() then 0
    else extract(epoch from (now() - pg_last_xact_replay_timestamp())) * 1000
  end::float8 as "lagMs"`;

class ReplicaRouter implements ReadRouter {
  readonly primary: Db;
  readonly replicated = true;
  private readonly replicaPool: pg.Pool;
  private readonly replicaDb: Db;
  private readonly timer: NodeJS.Timeout;
  private state: ReplicaState = 'starting';
  private lagMs: number | null = null;
  private sampling: Promise<void> | undefined;
  private readonly options: ReplicaOptions;

  constructor(options: ReplicaOptions & { readonly url: string }) {
    this.options = options;
    this.primary = options.primary;
    this.replicaPool = new pg.Pool({
      connectionString: options.url,
      max: options.config.dbPoolSize,
      application_name: 'pacer-read',
      connectionTimeoutMillis: REPLICA_CONNECT_TIMEOUT_MS,
    });
    // A replica that stops or restarts ends its connections: each is dropped from the pool, and
    // the next sample or checkout finds out whether the replica is back.
    this.replicaPool.on('error', (error) => this.leave('unreachable', error));
    this.replicaDb = createDb(this.failingOver(), { preparedStatements: options.config.dbPreparedStatements });
    this.timer = setInterval(() => void this.sample(), REPLICA_SAMPLE_INTERVAL_MS);
    this.timer.unref();
  }

  readDbFor(msSinceWrite: number | null): Db {
    if (this.state !== 'ok') return this.primary;
    const window = this.options.config.readReplica.readYourWritesMs;
    if (msSinceWrite !== null && msSinceWrite < window) return this.primary;
    return this.replicaDb;
  }

  status(): ReplicaStatus {
    return { state: this.state, lagMs: this.lagMs };
  }

  /** One sample of reachability and lag; overlapping calls share it. */
  sample(): Promise<void> {
    this.sampling ??= this.takeSample().finally(() => (this.sampling = undefined));
    return this.sampling;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.sampling;
    await this.replicaPool.end();
  }

  private async takeSample(): Promise<void> {
    let timeout: NodeJS.Timeout | undefined;
    try {
      // Bounded as a connection is: a replica that accepts but never answers is as good as gone.
      const answer = new Promise<never>((_, reject) => {
        timeout = setTimeout(
          () => reject(new Error(`no answer within ${REPLICA_CONNECT_TIMEOUT_MS} ms`)),
          REPLICA_CONNECT_TIMEOUT_MS,
        );
      });
      const { rows } = await Promise.race([this.replicaPool.query<{ lagMs: number | null }>(LAG_SAMPLE), answer]);
      const lagMs = rows[0]?.lagMs ?? null;
      this.lagMs = lagMs === null ? null : Math.round(lagMs);
      if (lagMs !== null && lagMs <= this.options.config.readReplica.maxLagMs) this.enter('ok');
      else this.leave('lagging');
    } catch (error) {
      this.lagMs = null;
      this.leave('unreachable', error);
    } finally {
      clearTimeout(timeout);
    }
  }

  private enter(state: 'ok'): void {
    if (this.state === state) return;
    this.options.logger.info({ replica: state, lagMs: this.lagMs }, 'reads go to the replica');
    this.state = state;
  }

  private leave(state: 'lagging' | 'unreachable', error?: unknown): void {
    if (this.state === state) return;
    // The error's message and code only: pg hangs the whole client on a pool's errors.
    const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
    this.options.logger.warn(
      { replica: state, lagMs: this.lagMs, error: error === undefined ? undefined : { message, code } },
      'reads go to the primary until the replica is back',
    );
    this.state = state;
  }

  /**
   * The replica's connections, or the primary's when a new replica connection
   * fails (refused, or no answer within REPLICA_CONNECT_TIMEOUT_MS): the read
   * that asked runs on the primary, and so do the next ones, until a sample
   * finds the replica back.
   */
  private failingOver(): ConnectionSource {
    const { primaryPool } = this.options;
    // One wrapper per replica connection, kept as long as it (database.ts keeps its own per client).
    const wrappers = new WeakMap<pg.PoolClient, SourceClient>();
    return {
      options: this.replicaPool.options,
      connect: async () => {
        if (this.state !== 'ok') return primaryPool.connect();
        let client: pg.PoolClient;
        try {
          client = await this.replicaPool.connect();
        } catch (error) {
          this.leave('unreachable', error);
          return primaryPool.connect();
        }
        let wrapper = wrappers.get(client);
        if (!wrapper) {
          // pg-pool listens for a connection's errors only while it is idle: one that ends while
          // checked out (a read being retried on the primary) would otherwise throw in the process.
          client.on('error', (error) => this.leave('unreachable', error));
          wrapper = this.retryingOnPrimary(client);
          wrappers.set(client, wrapper);
        }
        return wrapper;
      },
      end: () => Promise.resolve(),
    };
  }

  /**
   * A replica connection whose statement, should the connection be lost under
   * it (the replica stopping ends its sessions), runs again on the primary:
   * reads in flight when a replica goes away still answer. Not inside a
   * transaction, whose earlier statements ran on the lost connection.
   */
  private retryingOnPrimary(client: pg.PoolClient): SourceClient {
    const { primaryPool } = this.options;
    let inTransaction = false;
    const query = async (config: unknown, values?: unknown) => {
      const text = typeof config === 'string' ? config : (config as { text?: unknown }).text;
      if (typeof text !== 'string') return client.query(config as pg.Submittable);
      const start = text.trimStart().slice(0, 8).toLowerCase();
      if (start.startsWith('begin') || start.startsWith('start')) inTransaction = true;
      else if (start.startsWith('commit') || start.startsWith('rollback')) inTransaction = false;
      try {
        return await client.query(config as pg.QueryConfig, values as unknown[]);
      } catch (error) {
        if (inTransaction || !isConnectionLoss(error)) throw error;
        this.leave('unreachable', error);
        const primary = await primaryPool.connect();
        try {
          return await primary.query(config as pg.QueryConfig, values as unknown[]);
        } finally {
          primary.release();
        }
      }
    };
    return {
      query: query as unknown as pg.PoolClient['query'],
      release: (destroy?: boolean | Error) => client.release(destroy),
    };
  }
}

/**
 * The connection, not the statement, failed: the server ended the session
 * (SQLSTATE class 57P: shutdown or crash), the connection broke (class 08),
 * or the socket closed under the client.
 */
function isConnectionLoss(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (/^57P0[123]$/.test(code) || code.startsWith('08'))) return true;
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNREFUSED') return true;
  return (
    typeof message === 'string' &&
    /Connection terminated|not queryable|Client has encountered a connection error/i.test(message)
  );
}

/**
 * The reads router of an API process: the replica's when
 * `PACER_DATABASE_READ_URL` is set (sampled once before the first request, so
 * `/readyz` and the first reads know its state), else the primary only. A
 * replica down at start-up does not stop the start: reads go to the primary.
 */
export async function openReadRouter(options: ReplicaOptions): Promise<ReadRouter> {
  const url = options.config.readReplica.url;
  if (url === undefined) return primaryOnly(options.primary);
  const router = new ReplicaRouter({ ...options, url });
  await router.sample();
  return router;
}

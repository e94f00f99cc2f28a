import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';

/**
 * A unit of work: one connection and one transaction that every query of a
 * piece of work runs in, whichever repository or service makes it, so that
 * the work commits as a whole or not at all. An idempotent request is one:
 * its key is claimed, its writes are made and its response is stored in the
 * same transaction (idempotency.middleware.ts, mcp/execute.ts). A process
 * that dies mid-request leaves nothing behind: PostgreSQL rolls the
 * transaction back, the key is free again, and a retry runs the request
 * once (with separate transactions, a write could commit while its key
 * stayed unfinished, and a retry after the lease applied it twice).
 *
 * Queries reach it through the pool wrapper of `createDb` (database.ts): in
 * the async context of `run`, a query on that database's pool handle is made
 * on the unit's connection. A transaction opened there (`inTransaction`,
 * `db.transaction()`) becomes a savepoint of the unit: its rollback undoes
 * only its own statements, and its commit makes them part of the unit.
 * Transactions in one unit must nest, never run side by side; one that ends
 * out of order is refused with an error rather than mixing up savepoints.
 */
export interface UnitOfWork {
  /** Run `work` with the unit as its database connection (for every query it makes, however deep). */
  run<T>(work: () => T): T;
  /** Commit and give the connection back; throws when PostgreSQL rolled back instead. */
  commit(): Promise<void>;
  /** Undo everything and give the connection back. Never throws; safe after commit or a failed commit. */
  rollback(): Promise<void>;
}

interface OpenUnit {
  readonly pool: pg.Pool;
  readonly client: pg.PoolClient;
  /** Savepoints open, innermost last. */
  readonly savepoints: string[];
  nextSavepoint: number;
  closed: boolean;
}

const current = new AsyncLocalStorage<OpenUnit>();

/** Begin a unit of work on a connection of `pool`. */
export async function openUnitOfWork(pool: pg.Pool): Promise<UnitOfWork> {
  const client = await pool.connect();
  try {
    await client.query('begin');
  } catch (error) {
    client.release(error as Error);
    throw error;
  }
  const unit: OpenUnit = { pool, client, savepoints: [], nextSavepoint: 0, closed: false };
  const close = (destroy?: Error) => client.release(destroy);
  return {
    run: (work) => current.run(unit, work),
    async commit() {
      if (unit.closed) throw new Error('unit of work already closed');
      // Closed from here on: a query its context still makes goes to the pool, never onto this
      // connection behind the COMMIT (it would run outside the transaction, or after the release).
      unit.closed = true;
      let result: pg.QueryResult;
      try {
        result = await client.query('commit');
      } catch (error) {
        close(error as Error);
        throw error;
      }
      close();
      // PostgreSQL answers COMMIT with ROLLBACK when a statement of the transaction failed.
      if (result.command === 'ROLLBACK')
        throw new Error('the unit of work was rolled back: one of its statements failed');
    },
    async rollback() {
      if (unit.closed) return;
      unit.closed = true;
      try {
        await client.query('rollback');
        close();
      } catch (error) {
        close(error as Error);
      }
    },
  };
}

/**
 * The connection `pool` hands out in the current async context: the open
 * unit's (as a client whose BEGIN/COMMIT/ROLLBACK are savepoints and whose
 * release keeps the connection), or undefined outside a unit of that pool.
 * Once a unit has ended, what its context still runs gets pool connections
 * again, as any other work.
 */
export function unitClientFor(pool: pg.Pool): pg.PoolClient | undefined {
  const unit = current.getStore();
  if (!unit || unit.pool !== pool || unit.closed) return undefined;
  return unitClient(unit);
}

/** Whether the current async context is inside an open unit of work. */
export function insideUnitOfWork(): boolean {
  const unit = current.getStore();
  return unit !== undefined && !unit.closed;
}

/**
 * Run `work` outside any unit of work: for work that outlives the request
 * or serves several (a batch writer whose timer a request happened to start
 * must not write other requests' records into that request's transaction).
 */
export function outsideUnitOfWork<T>(work: () => T): T {
  return current.exit(work);
}

/** Kysely opens a transaction with `begin` or `start transaction …` (postgres-driver.js). */
const BEGIN = /^\s*(begin|start transaction)\b/i;
const COMMIT = /^\s*commit\s*$/i;
const ROLLBACK = /^\s*rollback\s*$/i;

function unitClient(unit: OpenUnit): pg.PoolClient {
  let savepoint: string | undefined;
  const endSavepoint = async (command: 'commit' | 'rollback'): Promise<pg.QueryResult> => {
    if (savepoint === undefined || unit.savepoints.at(-1) !== savepoint) {
      throw new Error('transactions in a unit of work must nest: this one ends while another is open inside it');
    }
    const name = savepoint;
    if (command === 'rollback') await unit.client.query(`rollback to savepoint ${name}`);
    const result = await unit.client.query(`release savepoint ${name}`);
    unit.savepoints.pop();
    savepoint = undefined;
    return result;
  };
  const query = (textOrConfig: unknown, values?: unknown): unknown => {
    if (unit.closed) return Promise.reject(new Error('a query was made after its unit of work had ended'));
    if (typeof textOrConfig === 'string') {
      if (BEGIN.test(textOrConfig)) {
        if (savepoint !== undefined) return Promise.reject(new Error('this connection already has a transaction'));
        savepoint = `unit_${unit.nextSavepoint++}`;
        unit.savepoints.push(savepoint);
        return unit.client.query(`savepoint ${savepoint}`);
      }
      if (COMMIT.test(textOrConfig)) return endSavepoint('commit');
      if (ROLLBACK.test(textOrConfig)) return endSavepoint('rollback');
    }
    return (unit.client.query as (...args: unknown[]) => unknown)(textOrConfig, values);
  };
  // The client's own methods, but queries go through the savepoint mapping and release keeps the connection.
  return Object.assign(Object.create(unit.client) as pg.PoolClient, {
    query,
    release: () => undefined,
  });
}

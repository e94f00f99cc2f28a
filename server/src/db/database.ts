import { createHash } from 'node:crypto';
import {
  CamelCasePlugin,
  CompiledQuery,
  Kysely,
  PostgresDialect,
  sql,
  type PostgresPool,
  type PostgresPoolClient,
  type RawBuilder,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import type { Database } from './tables.ts';

export type { Database } from './tables.ts';
export type Db = Kysely<Database>;
/** A handle repositories accept: the pool or a transaction. */
export type DbOrTrx = Kysely<Database> | Transaction<Database>;

// `date` columns are calendar dates, not instants: keep them as `YYYY-MM-DD`
// strings instead of letting pg turn them into local-midnight Date objects.
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);
// int8 (count(*), bigserial) fits in a double for every number we produce.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface CreatePoolOptions {
  readonly connectionString: string;
  readonly maxConnections?: number;
  readonly applicationName?: string;
}

export function createPool(options: CreatePoolOptions): pg.Pool {
  return new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 20,
    application_name: options.applicationName ?? 'pacer',
  });
}

/**
 * Hot queries run as named prepared statements: PostgreSQL then plans them
 * once per connection instead of on every call (planning the bearer-token
 * join cost more than running it). A repository opts a query in by ending it
 * with `preparedStatement('name')`; only queries whose SQL text is the same on
 * every call should, so the number of statements per connection stays small.
 * With `preparedStatements: false` (`PACER_DB_PREPARED_STATEMENTS`, for a
 * transaction-mode pooler, whose server connections change under a client
 * between transactions) the marker stays a comment and the query is sent
 * unnamed, like any other.
 */
const PREPARED_PREFIX = '/* prepared:';
/** label -> the SQL text it was first seen with, and the statement name. */
const statements = new Map<string, { text: string; name: string }>();

/** SQL text -> its statement name, for the texts seen (a few dozen constant statements). */
const namesByText = new Map<string, string>();

/** The prepared statement name of SQL text ending in a `preparedStatement` marker; undefined for any other text. */
function statementNameOf(text: string): string | undefined {
  if (!text.endsWith(' */')) return undefined;
  const seen = namesByText.get(text);
  if (seen !== undefined) return seen;
  const name = nameOf(text);
  // Only constant texts carry a marker, so the map stays small; the guard is for a misuse.
  if (name !== undefined && namesByText.size < 1000) namesByText.set(text, name);
  return name;
}

function nameOf(text: string): string | undefined {
  const start = text.lastIndexOf(PREPARED_PREFIX);
  if (start < 0) return undefined;
  const label = text.slice(start + PREPARED_PREFIX.length, -3);
  const known = statements.get(label);
  if (known?.text === text) return known.name;
  // A label meant for one constant statement; should it ever cover a second
  // text, the hash keeps the names apart (PostgreSQL requires unique names).
  const name = `${label}_${createHash('sha1').update(text).digest('hex').slice(0, 12)}`;
  if (!known) statements.set(label, { text, name });
  return name;
}

export function preparedStatement(name: string): RawBuilder<unknown> {
  return sql.raw(preparedStatementMarker(name));
}

/** The text `preparedStatement` adds, for SQL written outside Kysely (pg-boss's). */
export function preparedStatementMarker(name: string): string {
  if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`bad prepared statement name ${name}`);
  return `${PREPARED_PREFIX}${name} */`;
}

/**
 * A query whose SQL text is the same on every call, only its values change:
 * built and compiled once (Kysely's builder, plugins and compiler run once),
 * then each call binds its own values to the compiled text. `build` receives
 * the handle and one placeholder per value, must use each placeholder as a
 * value exactly once, and returns the compiled query.
 */
export function precompiled<A extends readonly unknown[], R>(
  arity: A['length'],
  build: (db: DbOrTrx, ...values: A) => CompiledQuery<R>,
): (db: DbOrTrx, ...values: A) => CompiledQuery<R> {
  let compiled: { readonly sql: string; readonly slots: readonly number[] } | undefined;
  return (db, ...values) => {
    if (!compiled) {
      const placeholders = Array.from({ length: arity }, (_, index) => ({ placeholder: index }));
      const query = build(db, ...(placeholders as unknown as A));
      const slots = query.parameters.map((parameter) => placeholders.indexOf(parameter as { placeholder: number }));
      if (slots.includes(-1) || new Set(slots).size !== arity || slots.length !== arity) {
        throw new Error(`precompiled: each of the ${arity} values must be one parameter of the query`);
      }
      compiled = { sql: query.sql, slots };
    }
    const { sql: text, slots } = compiled;
    return CompiledQuery.raw(
      text,
      slots.map((slot) => values[slot]),
    );
  };
}

/** What Kysely sees of one pooled connection: its queries go out named when their text carries a marker. */
function namingClient(client: SourceClient): PostgresPoolClient {
  const query = (textOrCursor: unknown, parameters?: readonly unknown[]) => {
    if (typeof textOrCursor !== 'string') return client.query(textOrCursor as pg.Submittable);
    const name = statementNameOf(textOrCursor);
    const values = parameters ? [...parameters] : [];
    return name ? client.query({ name, text: textOrCursor, values }) : client.query(textOrCursor, values);
  };
  return {
    // One implementation for both of Kysely's overloads (SQL text, or a cursor).
    query: query as unknown as PostgresPoolClient['query'],
    release: (destroy?: boolean) => client.release(destroy),
  };
}

/**
 * Where a Kysely handle takes its connections: a pg pool, or a source that
 * picks one of two pools per checkout (read-replica.ts).
 */
export interface ConnectionSource {
  readonly options: object;
  connect(): Promise<SourceClient>;
  end(): Promise<void>;
}

/** What Kysely and the statement naming use of a pooled connection. */
export type SourceClient = Pick<pg.PoolClient, 'query' | 'release'>;

function withPreparedStatements(pool: ConnectionSource): PostgresPool {
  // One wrapper per pooled connection, kept as long as the connection: Kysely keeps its own
  // connection object per client it is handed, so a new wrapper on every checkout would make it
  // build (and the garbage collector drop) a connection object on every query.
  const wrappers = new WeakMap<SourceClient, PostgresPoolClient>();
  return {
    options: pool.options,
    end: () => pool.end(),
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = namingClient(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
  };
}

export interface CreateDbOptions {
  /** Send `preparedStatement`-marked queries as named statements (`PACER_DB_PREPARED_STATEMENTS`, default true). */
  readonly preparedStatements?: boolean;
}

export function createDb(pool: ConnectionSource, options: CreateDbOptions = {}): Db {
  const db = new Kysely<Database>({
    // Without prepared statements Kysely gets the pool itself: every query goes out unnamed.
    dialect: new PostgresDialect({ pool: options.preparedStatements === false ? pool : withPreparedStatements(pool) }),
    // maintainNestedObjectKeys: stored raw JSON keeps the caller's keys as sent.
    plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true })],
  });
  return db;
}

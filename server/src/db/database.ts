import { CamelCasePlugin, Kysely, PostgresDialect, type Transaction } from 'kysely';
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

export interface CreateDbOptions {
  readonly connectionString: string;
  readonly maxConnections?: number;
  readonly applicationName?: string;
}

export function createPool(options: CreateDbOptions): pg.Pool {
  return new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 20,
    application_name: options.applicationName ?? 'pacer',
  });
}

export function createDb(pool: pg.Pool): Db {
  return new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    // maintainNestedObjectKeys: stored raw JSON keeps the caller's keys as sent.
    plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true })],
  });
}

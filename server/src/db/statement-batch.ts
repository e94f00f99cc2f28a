import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { type DbOrTrx, poolOf, statementNameOf } from './database.ts';

/** A statement as Kysely compiles it: SQL text (ending in a `preparedStatement` marker, or not) and its values. */
export interface BatchStatement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

export interface BatchResult {
  readonly rows: Record<string, unknown>[];
}

/** The parts of node-postgres's connection a query writes its protocol messages to (what its own Query uses). */
interface WireConnection {
  readonly stream: { cork?: () => void; uncork?: () => void };
  readonly parsedStatements: Record<string, string>;
  readonly submittedNamedStatements: Record<string, string>;
  parse(message: { text: string; name: string; types: readonly number[] }): void;
  bind(message: { statement: string; portal: string; values: readonly unknown[] }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string }): void;
  sync(): void;
}

interface RowDescription {
  readonly fields: unknown[];
}

interface DataRow {
  readonly fields: unknown[];
}

/** node-postgres's row parser (`pg.Result`): the same type parsers as every other query. */
interface RowParser {
  rows: Record<string, unknown>[];
  addFields(fields: unknown[]): void;
  parseRow(fields: unknown[]): Record<string, unknown>;
}
const ResultParser = (pg as unknown as { Result: new () => RowParser }).Result;
const { utils } = pg as unknown as { utils: { prepareValue(value: unknown): unknown } };
const prepareValue = (value: unknown) => utils.prepareValue(value);

/**
 * Several statements sent as one message train with a single Sync: one
 * write, one round trip, and PostgreSQL runs them as one implicit
 * transaction (protocol §55.2.3, "Extended Query": without BEGIN, the
 * statements up to Sync commit together, and an error in any of them rolls
 * all of them back and skips the rest). A node-postgres "submittable", like
 * its own Query, answering the message handlers the client calls.
 */
class StatementTrain {
  readonly #statements: readonly { name: string; text: string; values: unknown[] }[];
  /** Public and writable as node-postgres expects of a submittable (it wraps it for query timeouts). */
  callback: (error: Error | undefined, results?: BatchResult[]) => void;
  readonly #results: BatchResult[] = [];
  /** Named statements this train parses: known to the connection only once the train succeeded. */
  readonly #parsing: { name: string; text: string }[] = [];
  #parser: RowParser | undefined;
  #failure: Error | undefined;
  #connection: WireConnection | undefined;

  constructor(
    statements: readonly BatchStatement[],
    callback: (error: Error | undefined, results?: BatchResult[]) => void,
  ) {
    // Values are turned into wire text before anything is written, so a value that cannot be
    // serialised fails the call instead of leaving half a train on the connection.
    this.#statements = statements.map((statement) => ({
      name: statementNameOf(statement.sql) ?? '',
      text: statement.sql,
      values: statement.parameters.map((value) => prepareValue(value)),
    }));
    this.callback = callback;
  }

  submit(connection: WireConnection): Error | null {
    this.#connection = connection;
    for (const { name, text } of this.#statements) {
      const known = connection.parsedStatements[name] ?? connection.submittedNamedStatements[name];
      if (name !== '' && known !== undefined && known !== text)
        return new Error(`prepared statement ${name} was used for a different statement`);
    }
    connection.stream.cork?.();
    try {
      for (const { name, text, values } of this.#statements) {
        const known = name !== '' && (connection.parsedStatements[name] ?? connection.submittedNamedStatements[name]);
        if (!known) {
          connection.parse({ text, name, types: [] });
          if (name !== '') {
            connection.submittedNamedStatements[name] = text;
            this.#parsing.push({ name, text });
          }
        }
        connection.bind({ statement: name, portal: '', values });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '' });
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: RowDescription): void {
    this.#parser = new ResultParser();
    this.#parser.addFields(message.fields);
  }

  handleDataRow(message: DataRow): void {
    if (this.#failure || !this.#parser) return;
    try {
      this.#parser.rows.push(this.#parser.parseRow(message.fields));
    } catch (error) {
      this.#failure = error as Error;
    }
  }

  handleCommandComplete(): void {
    this.#results.push({ rows: this.#parser?.rows ?? [] });
    this.#parser = undefined;
  }

  handleEmptyQuery(): void {
    this.handleCommandComplete();
  }

  handleError(error: Error): void {
    // The client forgets a failed query at once; which of this train's statements PostgreSQL
    // parsed before the error is unknown, so none of them counts as known (the caller also
    // drops the connection, see runStatementTrain).
    this.#forgetParsing();
    this.callback(error);
  }

  handleReadyForQuery(): void {
    if (this.#failure) {
      this.#forgetParsing();
      this.callback(this.#failure);
      return;
    }
    const connection = this.#connection;
    for (const { name, text } of this.#parsing) {
      if (!connection) break;
      connection.parsedStatements[name] = text;
      delete connection.submittedNamedStatements[name];
    }
    this.callback(undefined, this.#results);
  }

  handlePortalSuspended(): void {
    // Every Execute asks for all rows: never suspended.
  }

  handleCopyInResponse(connection: { sendCopyFail(message: string): void }): void {
    connection.sendCopyFail('COPY is not supported in a statement train');
  }

  handleCopyData(): void {
    // no COPY
  }

  #forgetParsing(): void {
    for (const { name } of this.#parsing) delete this.#connection?.submittedNamedStatements[name];
  }
}

/**
 * Run `statements` as one transaction, in order, and return each one's rows.
 * On a pool handle: in one round trip (see StatementTrain), on a connection
 * of the pool; a connection whose train failed is dropped, not returned to
 * the pool, as it may hold statements the train parsed that this process
 * does not know of. Inside a transaction: one after the other on its
 * connection, as part of it.
 * Kysely's plugins do not see a train's rows, so each statement names its
 * columns as the caller wants them (camelCase).
 */
export async function runAtomically(db: DbOrTrx, statements: readonly BatchStatement[]): Promise<BatchResult[]> {
  const pool = db.isTransaction ? undefined : poolOf(db);
  if (!pool) {
    const run = async (trx: DbOrTrx) => {
      const results: BatchResult[] = [];
      for (const statement of statements) {
        const { rows } = await trx.executeQuery<Record<string, unknown>>(
          CompiledQuery.raw(statement.sql, [...statement.parameters]),
        );
        results.push({ rows: [...rows] });
      }
      return results;
    };
    return db.isTransaction ? run(db) : db.transaction().execute(run);
  }
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    return await new Promise<BatchResult[]>((resolve, reject) => {
      const train = new StatementTrain(statements, (error, results) =>
        error ? reject(error) : resolve(results ?? []),
      );
      void client.query(train as unknown as pg.Submittable);
    });
  } catch (error) {
    failed = error as Error;
    throw error;
  } finally {
    client.release(failed);
  }
}

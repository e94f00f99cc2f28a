import type { Transaction } from 'kysely';
import type { Database, DbOrTrx } from './database.ts';

/**
 * Run `work` in a transaction: a new one on a pool handle, or the caller's
 * when `db` already is one (Kysely cannot nest), so a service that needs a
 * transaction also composes into a larger one, e.g. a webhook delivery that
 * applies its events and records its outcome atomically.
 */
export function inTransaction<T>(db: DbOrTrx, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Transaction<Database>);
  return db.transaction().execute(work);
}

import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';

/**
 * Take the transaction-scoped advisory lock on the user's derived data
 * (released at commit or rollback), or answer false at once when another
 * run, in any process, holds it. Transaction-scoped, so it also works through
 * a transaction-mode pooler.
 */
export async function tryLockUserForRecompute(trx: DbOrTrx, userId: string): Promise<boolean> {
  const { rows } = await sql<{ locked: boolean }>`
    select pg_try_advisory_xact_lock(hashtextextended(${`recompute:${userId}`}, 0)) as locked`.execute(trx);
  return rows[0]?.locked === true;
}

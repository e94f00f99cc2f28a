import type { Db } from '../../db/database.ts';
import { deleteTokensExpiredBefore } from '../oauth/token.repository.ts';
import { deleteSessionsExpiredBefore } from './session.repository.ts';

/** Delete sessions and tokens that expired more than `graceDays` days ago. */
export async function purgeExpired(db: Db, graceDays: number): Promise<{ sessions: number; tokens: number }> {
  const before = new Date(Date.now() - graceDays * 86_400_000);
  return db.transaction().execute(async (trx) => ({
    sessions: await deleteSessionsExpiredBefore(trx, before),
    tokens: await deleteTokensExpiredBefore(trx, before),
  }));
}

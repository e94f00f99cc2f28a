import type { DbOrTrx } from '../../db/database.ts';
import type { User } from '../../db/tables.ts';

/**
 * The user's row, locked until the caller's transaction ends: a profile
 * patch is checked against the merged result (heart-rate order, birth date
 * in the new time zone), so two concurrent patches must not both check
 * against the same old row.
 */
export async function findUserForUpdate(db: DbOrTrx, userId: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', userId).forUpdate().executeTakeFirst();
}

import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';
import type { User } from '../../db/tables.ts';

export async function insertSession(db: DbOrTrx, idHash: string, userId: string, expiresAt: Date): Promise<void> {
  await db.insertInto('sessions').values({ idHash, userId, expiresAt }).execute();
}

/** The active user behind a live session, if any. */
export async function findSessionUser(db: DbOrTrx, idHash: string): Promise<User | undefined> {
  return db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.userId')
    .selectAll('users')
    .where('sessions.idHash', '=', idHash)
    .where('sessions.expiresAt', '>', sql<Date>`now()`)
    .where('users.active', '=', true)
    .executeTakeFirst();
}

export async function deleteSession(db: DbOrTrx, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('idHash', '=', idHash).execute();
}

export async function deleteSessionsExpiredBefore(db: DbOrTrx, before: Date): Promise<number> {
  const result = await db.deleteFrom('sessions').where('expiresAt', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';
import type { NewUser, User, UserUpdate } from '../../db/tables.ts';

export async function insertUser(db: DbOrTrx, user: NewUser): Promise<User> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

export async function findUserById(db: DbOrTrx, id: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findUserByEmail(db: DbOrTrx, email: string): Promise<User | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export async function findFirstAdmin(db: DbOrTrx): Promise<User | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('role', '=', 'admin')
    .where('active', '=', true)
    .orderBy('createdAt')
    .limit(1)
    .executeTakeFirst();
}

export async function updateUser(db: DbOrTrx, id: string, update: UserUpdate): Promise<User | undefined> {
  return db
    .updateTable('users')
    .set({ ...update, updatedAt: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Serialises account creation, so two sign-ups with one e-mail address (any
 * letter case) cannot both pass the "already registered?" check: the
 * caller's transaction holds the lock until it commits.
 */
export async function lockUserCreation(db: DbOrTrx): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('pacer.users.create'))`.execute(db);
}

import type { Db } from '../../db/database.ts';
import type { User } from '../../db/tables.ts';
import { generateSecret, sha256Hex } from '../../lib/crypto.ts';
import { deleteSession, findSessionUser, insertSession } from './session.repository.ts';

/** Sessions last 14 days; signing in again starts a new one. */
export const SESSION_TTL_MS = 14 * 24 * 60 * 60 * 1000;

/** Start a session; the returned value goes into the cookie and is stored only as a hash. */
export async function startSession(db: Db, userId: string): Promise<{ token: string; expiresAt: Date }> {
  const token = generateSecret('ps_');
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await insertSession(db, sha256Hex(token), userId, expiresAt);
  return { token, expiresAt };
}

export async function resolveSession(db: Db, token: string): Promise<User | undefined> {
  return findSessionUser(db, sha256Hex(token));
}

export async function endSession(db: Db, token: string): Promise<void> {
  await deleteSession(db, sha256Hex(token));
}

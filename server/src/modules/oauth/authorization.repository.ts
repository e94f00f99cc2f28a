import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';

export interface AuthorizationCodeInsert {
  readonly codeHash: string;
  readonly clientId: string;
  readonly userId: string;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  readonly resource: string | null;
  readonly codeChallenge: string;
  readonly codeChallengeMethod: string;
  readonly expiresAt: Date;
}

export async function insertAuthorizationCode(db: DbOrTrx, code: AuthorizationCodeInsert): Promise<void> {
  await db
    .insertInto('oauthAuthorizationCodes')
    .values({ ...code, scopes: [...code.scopes] })
    .execute();
}

export async function findAuthorizationCodeByHash(db: DbOrTrx, codeHash: string) {
  return db
    .selectFrom('oauthAuthorizationCodes as a')
    .innerJoin('oauthClients as c', 'c.id', 'a.clientId')
    .selectAll('a')
    .select('c.clientId as publicClientId')
    .where('a.codeHash', '=', codeHash)
    .executeTakeFirst();
}

/** Marks the code used; true only for the one caller that consumed it (single use under races). */
export async function consumeAuthorizationCode(db: DbOrTrx, id: string): Promise<boolean> {
  const result = await db
    .updateTable('oauthAuthorizationCodes')
    .set({ consumedAt: sql`now()` })
    .where('id', '=', id)
    .where('consumedAt', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function linkAuthorizationCodeToGrant(db: DbOrTrx, id: string, grantId: string): Promise<void> {
  await db.updateTable('oauthAuthorizationCodes').set({ grantId }).where('id', '=', id).execute();
}

export async function findConsent(db: DbOrTrx, userId: string, clientId: string, resource: string) {
  return db
    .selectFrom('oauthConsents')
    .selectAll()
    .where('userId', '=', userId)
    .where('clientId', '=', clientId)
    .where('resource', '=', resource)
    .executeTakeFirst();
}

/**
 * Remember what the user approved on the consent page for a client and
 * resource: the latest decision replaces the earlier one (it may be narrower).
 */
export async function replaceConsent(
  db: DbOrTrx,
  consent: { userId: string; clientId: string; resource: string; scopes: readonly string[] },
): Promise<void> {
  await db
    .insertInto('oauthConsents')
    .values({ ...consent, scopes: [...consent.scopes] })
    .onConflict((oc) =>
      oc.columns(['userId', 'clientId', 'resource']).doUpdateSet({
        scopes: [...consent.scopes],
        updatedAt: sql`now()`,
      }),
    )
    .execute();
}

import type { Insertable } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';
import type { OauthClient, OauthClientsTable } from '../../db/tables.ts';

export async function insertClient(db: DbOrTrx, client: Insertable<OauthClientsTable>): Promise<OauthClient> {
  return db.insertInto('oauthClients').values(client).returningAll().executeTakeFirstOrThrow();
}

export async function findClientByClientId(db: DbOrTrx, clientId: string): Promise<OauthClient | undefined> {
  return db.selectFrom('oauthClients').selectAll().where('clientId', '=', clientId).executeTakeFirst();
}

export async function findDeveloperClient(db: DbOrTrx, ownerUserId: string): Promise<OauthClient | undefined> {
  return db
    .selectFrom('oauthClients')
    .selectAll()
    .where('ownerUserId', '=', ownerUserId)
    .where('kind', '=', 'developer')
    .executeTakeFirst();
}

/** Insert the user's developer client unless another caller just did. */
export async function insertDeveloperClientIfMissing(
  db: DbOrTrx,
  client: Insertable<OauthClientsTable>,
): Promise<void> {
  await db
    .insertInto('oauthClients')
    .values(client)
    .onConflict((oc) => oc.column('ownerUserId').where('kind', '=', 'developer').doNothing())
    .execute();
}

export async function listClients(db: DbOrTrx, kinds: readonly OauthClient['kind'][]): Promise<OauthClient[]> {
  return db.selectFrom('oauthClients').selectAll().where('kind', 'in', kinds).orderBy('createdAt').execute();
}

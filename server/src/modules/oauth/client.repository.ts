import { type Insertable, sql } from 'kysely';
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

export interface OwnedClientKey {
  readonly ownerUserId: string;
  /** Public client id. */
  readonly clientId: string;
}

export async function listClientsOwnedBy(
  db: DbOrTrx,
  ownerUserId: string,
  kinds: readonly OauthClient['kind'][],
): Promise<OauthClient[]> {
  return db
    .selectFrom('oauthClients')
    .selectAll()
    .where('ownerUserId', '=', ownerUserId)
    .where('kind', 'in', kinds)
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
}

export async function findClientOwnedBy(
  db: DbOrTrx,
  key: OwnedClientKey,
  kinds: readonly OauthClient['kind'][],
): Promise<OauthClient | undefined> {
  return db
    .selectFrom('oauthClients')
    .selectAll()
    .where('clientId', '=', key.clientId)
    .where('ownerUserId', '=', key.ownerUserId)
    .where('kind', 'in', kinds)
    .executeTakeFirst();
}

/** Replace the stored secret hash of a confidential client; false when no such client. */
export async function updateClientSecretHash(db: DbOrTrx, id: string, clientSecretHash: string): Promise<boolean> {
  const result = await db
    .updateTable('oauthClients')
    .set({ clientSecretHash, updatedAt: sql<Date>`now()` })
    .where('id', '=', id)
    .where('isPublic', '=', false)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Delete an owned client (its grants, tokens, codes and consents cascade); false when none matched. */
export async function deleteClientOwnedBy(
  db: DbOrTrx,
  key: OwnedClientKey,
  kinds: readonly OauthClient['kind'][],
): Promise<boolean> {
  const result = await db
    .deleteFrom('oauthClients')
    .where('clientId', '=', key.clientId)
    .where('ownerUserId', '=', key.ownerUserId)
    .where('kind', 'in', kinds)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The shared DCR client of a registration key (`registrationKeyOf`: client name and redirect-URI set). */
export async function findDcrClientByRegistrationKey(
  db: DbOrTrx,
  registrationKey: string,
): Promise<OauthClient | undefined> {
  return db
    .selectFrom('oauthClients')
    .selectAll()
    .where('kind', '=', 'dcr')
    .where('registrationKey', '=', registrationKey)
    .executeTakeFirst();
}

/**
 * Insert a DCR client unless one with the same registration key exists (the
 * partial unique index decides, so concurrent identical registrations create
 * one client). `undefined` when another registration got there first.
 */
export async function insertDcrClientIfMissing(
  db: DbOrTrx,
  client: Insertable<OauthClientsTable> & { readonly kind: 'dcr'; readonly registrationKey: string },
): Promise<OauthClient | undefined> {
  return db
    .insertInto('oauthClients')
    .values(client)
    .onConflict((oc) => oc.column('registrationKey').where('kind', '=', 'dcr').doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Append redirect URIs the client does not list yet, atomically (concurrent appends keep each other's). */
export async function appendRedirectUris(db: DbOrTrx, id: string, uris: readonly string[]): Promise<OauthClient> {
  return db
    .updateTable('oauthClients')
    .set({
      redirectUris: sql<string[]>`redirect_uris || array(
        SELECT u FROM unnest(${[...uris]}::text[]) WITH ORDINALITY AS t (u, n)
        WHERE NOT (u = ANY (redirect_uris)) ORDER BY n
      )`,
      updatedAt: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateWebhookSecret(
  db: DbOrTrx,
  id: string,
  secret: { readonly hash: string; readonly sealed: string },
): Promise<boolean> {
  const result = await db
    .updateTable('oauthClients')
    .set({ webhookSecretHash: secret.hash, webhookSecretSealed: secret.sealed, updatedAt: new Date() })
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';
import type { ClientKind } from '../../db/tables.ts';

/** A grant as the settings page shows it, with the client it was given to. */
export interface UserGrantRow {
  readonly grantId: string;
  readonly clientKind: ClientKind;
  readonly clientName: string;
  /** Public client id. */
  readonly clientId: string;
  readonly scopes: string[];
  readonly resource: string | null;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

/**
 * The user's grants that still work: not revoked, and holding at least one
 * token that can still be used (an unexpired access token, or a refresh token
 * that is neither rotated nor expired).
 */
export async function listLiveGrantsOfUser(
  db: DbOrTrx,
  userId: string,
  kinds: readonly ClientKind[],
): Promise<UserGrantRow[]> {
  return db
    .selectFrom('oauthGrants as g')
    .innerJoin('oauthClients as c', 'c.id', 'g.clientId')
    .select([
      'g.id as grantId',
      'c.kind as clientKind',
      'c.name as clientName',
      'c.clientId',
      'g.scopes',
      'g.resource',
      'g.createdAt',
      'g.lastUsedAt',
    ])
    .where('g.userId', '=', userId)
    .where('g.revokedAt', 'is', null)
    .where('c.kind', 'in', kinds)
    .where((eb) =>
      eb.or([
        eb.exists(
          eb
            .selectFrom('oauthAccessTokens as t')
            .select(sql.lit(1).as('one'))
            .whereRef('t.grantId', '=', 'g.id')
            .where('t.revokedAt', 'is', null)
            .where('t.expiresAt', '>', sql<Date>`now()`),
        ),
        eb.exists(
          eb
            .selectFrom('oauthRefreshTokens as r')
            .select(sql.lit(1).as('one'))
            .whereRef('r.grantId', '=', 'g.id')
            .where('r.revokedAt', 'is', null)
            .where('r.rotatedAt', 'is', null)
            .where((inner) =>
              inner.or([inner('r.expiresAt', 'is', null), inner('r.expiresAt', '>', sql<Date>`now()`)]),
            ),
        ),
      ]),
    )
    .orderBy('g.createdAt', 'desc')
    .orderBy('g.id')
    .execute();
}

export interface GrantOfUser {
  readonly id: string;
  /** Internal id of the client (oauth_clients.id). */
  readonly clientId: string;
}

/** The grant, only when it belongs to `userId`; locked until the transaction ends. */
export async function lockGrantOfUser(
  db: DbOrTrx,
  options: { readonly userId: string; readonly grantId: string },
): Promise<GrantOfUser | undefined> {
  return db
    .selectFrom('oauthGrants')
    .select(['id', 'clientId'])
    .where('id', '=', options.grantId)
    .where('userId', '=', options.userId)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * The user's other unrevoked grants to the same app: one per resource (REST,
 * MCP), since a re-authorization for the same resource takes its grant over
 * (`grantForCode` in token-endpoint.service.ts), and any left from before
 * that. The developer client is excluded: each developer token has a grant
 * of its own and is revoked alone.
 */
export async function findSiblingGrantIds(
  db: DbOrTrx,
  options: { readonly userId: string; readonly grantId: string; readonly clientId: string },
): Promise<string[]> {
  const rows = await db
    .selectFrom('oauthGrants as g')
    .innerJoin('oauthClients as c', 'c.id', 'g.clientId')
    .select('g.id')
    .where('g.userId', '=', options.userId)
    .where('g.clientId', '=', options.clientId)
    .where('g.id', '!=', options.grantId)
    .where('g.revokedAt', 'is', null)
    .where('c.kind', '!=', 'developer')
    .execute();
  return rows.map((row) => row.id);
}

/** Forget what the user approved for a client, so the next authorization asks again. */
export async function deleteConsentsOfClient(
  db: DbOrTrx,
  options: { readonly userId: string; readonly clientId: string },
): Promise<void> {
  await db
    .deleteFrom('oauthConsents')
    .where('userId', '=', options.userId)
    .where('clientId', '=', options.clientId)
    .execute();
}

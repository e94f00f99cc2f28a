import { CompiledQuery } from 'kysely';
import { preparedStatement, type DbOrTrx } from '../../db/database.ts';

export interface GrantInsert {
  readonly clientId: string;
  readonly userId: string;
  readonly scopes: readonly string[];
  readonly resource: string | null;
}

export async function insertGrant(db: DbOrTrx, grant: GrantInsert): Promise<string> {
  const row = await db
    .insertInto('oauthGrants')
    .values({ ...grant, scopes: [...grant.scopes] })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export interface AccessTokenInsert {
  readonly grantId: string;
  readonly tokenHash: string;
  readonly scopes: readonly string[];
  readonly resource: string | null;
  readonly expiresAt: Date;
}

export async function insertAccessToken(db: DbOrTrx, token: AccessTokenInsert): Promise<void> {
  await db
    .insertInto('oauthAccessTokens')
    .values({ ...token, scopes: [...token.scopes] })
    .execute();
}

/** Everything the bearer check needs, in one indexed lookup. */
export interface AccessTokenRecord {
  readonly tokenId: string;
  readonly grantId: string;
  readonly scopes: string[];
  readonly resource: string | null;
  readonly expiresAt: Date;
  readonly tokenRevokedAt: Date | null;
  readonly grantRevokedAt: Date | null;
  readonly clientId: string;
  readonly userId: string;
  readonly userActive: boolean;
  readonly userRole: 'user' | 'admin';
  readonly userTimeZone: string;
}

function accessTokenLookup(db: DbOrTrx, tokenHash: string) {
  return (
    db
      .selectFrom('oauthAccessTokens as t')
      .innerJoin('oauthGrants as g', 'g.id', 't.grantId')
      .innerJoin('oauthClients as c', 'c.id', 'g.clientId')
      .innerJoin('users as u', 'u.id', 'g.userId')
      .select([
        't.id as tokenId',
        't.grantId',
        't.scopes',
        't.resource',
        't.expiresAt',
        't.revokedAt as tokenRevokedAt',
        'g.revokedAt as grantRevokedAt',
        'c.clientId',
        'u.id as userId',
        'u.active as userActive',
        'u.role as userRole',
        'u.timeZone as userTimeZone',
      ])
      .where('t.tokenHash', '=', tokenHash)
      // Runs on every authenticated request: plan it once per connection.
      .modifyEnd(preparedStatement('find_access_token'))
  );
}

/** The lookup's SQL never changes, only its one parameter: compile it once. */
let compiledLookup: CompiledQuery<AccessTokenRecord> | undefined;

export async function findAccessTokenByHash(db: DbOrTrx, tokenHash: string): Promise<AccessTokenRecord | undefined> {
  compiledLookup ??= accessTokenLookup(db, '').compile();
  const result = await db.executeQuery<AccessTokenRecord>(CompiledQuery.raw(compiledLookup.sql, [tokenHash]));
  return result.rows[0];
}

export async function deleteTokensExpiredBefore(db: DbOrTrx, before: Date): Promise<number> {
  const access = await db.deleteFrom('oauthAccessTokens').where('expiresAt', '<', before).executeTakeFirst();
  const refresh = await db
    .deleteFrom('oauthRefreshTokens')
    .where('expiresAt', 'is not', null)
    .where('expiresAt', '<', before)
    .executeTakeFirst();
  return Number(access.numDeletedRows) + Number(refresh.numDeletedRows);
}

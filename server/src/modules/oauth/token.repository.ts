import { sql } from 'kysely';
import { type Db, precompiled, preparedStatement, type DbOrTrx } from '../../db/database.ts';
import { counterHits, type CounterHit, hitsInOrder } from '../rate-limit/rate-limit.repository.ts';
import type { UserRole } from '../../db/tables.ts';

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

export interface GrantKey {
  /** Internal id of the client (oauth_clients.id). */
  readonly clientId: string;
  readonly userId: string;
  /** The resources that count as the same one (REST: no resource and the base URL). */
  readonly resources: readonly (string | null)[];
}

/**
 * Serialize code exchanges of one user, client and resource until the
 * transaction ends, so two at once cannot both find no grant and insert one each.
 */
export async function lockGrantKey(db: DbOrTrx, key: GrantKey): Promise<void> {
  const name = `oauth-grant:${key.clientId}:${key.userId}:${key.resources.map((entry) => entry ?? '').join(' ')}`;
  await sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(db);
}

/** Unrevoked grants of a user to a client for a resource, newest first. */
export async function findUnrevokedGrantIds(db: DbOrTrx, key: GrantKey): Promise<string[]> {
  const named = key.resources.filter((entry): entry is string => entry !== null);
  const rows = await db
    .selectFrom('oauthGrants')
    .select('id')
    .where('clientId', '=', key.clientId)
    .where('userId', '=', key.userId)
    .where('revokedAt', 'is', null)
    .where((eb) => {
      const matches = named.length > 0 ? [eb('resource', 'in', named)] : [];
      if (key.resources.includes(null)) matches.push(eb('resource', 'is', null));
      return eb.or(matches);
    })
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .forUpdate()
    .execute();
  return rows.map((row) => row.id);
}

/** The grant's scopes, its row share-locked until the transaction ends (a takeover waits for it). */
export async function lockGrantScopes(db: DbOrTrx, grantId: string): Promise<string[]> {
  const row = await db
    .selectFrom('oauthGrants')
    .select('scopes')
    .where('id', '=', grantId)
    .forShare()
    .executeTakeFirstOrThrow();
  return row.scopes;
}

/**
 * A new authorization of the same user, client and resource takes over the
 * grant: it now holds `scopes`, and its tokens that can still be used keep
 * only the ones among them (a narrower approval takes effect at once; a
 * wider one does not widen tokens issued before it). Only tokens holding a
 * scope outside `scopes` are written: a takeover that narrows nothing
 * touches no token row.
 */
export async function replaceGrantScopes(db: DbOrTrx, grantId: string, scopes: readonly string[]): Promise<void> {
  const approved = sql`${[...scopes]}::text[]`;
  const kept = sql<string[]>`array(select s from unnest(scopes) as s where s = any(${approved}))`;
  const holdsMore = sql<boolean>`not (scopes <@ ${approved})`;
  await db
    .updateTable('oauthGrants')
    .set({ scopes: [...scopes] })
    .where('id', '=', grantId)
    .execute();
  await db
    .updateTable('oauthAccessTokens')
    .set({ scopes: kept })
    .where('grantId', '=', grantId)
    .where('revokedAt', 'is', null)
    .where('expiresAt', '>', sql<Date>`now()`)
    .where(holdsMore)
    .execute();
  // Rotated refresh tokens can only revoke the grant if presented again: their scopes no longer matter.
  await db
    .updateTable('oauthRefreshTokens')
    .set({ scopes: kept })
    .where('grantId', '=', grantId)
    .where('revokedAt', 'is', null)
    .where('rotatedAt', 'is', null)
    .where(holdsMore)
    .execute();
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
  readonly userRole: UserRole;
  readonly userTimeZone: string;
  readonly userFeatureFlags: { readonly nutrition?: boolean };
  /** Milliseconds since one of the grant's tokens last wrote, by the database's clock; null if none has (or no replica). */
  readonly msSinceWrite: number | null;
}

function accessTokenSelect(db: DbOrTrx, tokenHash: string) {
  return db
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
      'u.featureFlags as userFeatureFlags',
      // The database's clock on both sides: API hosts' clocks may differ from it and from each other.
      sql<number | null>`(extract(epoch from (clock_timestamp() - g.last_write_at)) * 1000)::float8`.as('msSinceWrite'),
    ])
    .where('t.tokenHash', '=', tokenHash);
}

/** The lookup's SQL never changes, only its one parameter: compiled once, planned once per connection. */
const accessTokenLookup = precompiled(1, (db: DbOrTrx, tokenHash: string) =>
  accessTokenSelect(db, tokenHash).modifyEnd(preparedStatement('find_access_token')).compile(),
);

export async function findAccessTokenByHash(db: DbOrTrx, tokenHash: string): Promise<AccessTokenRecord | undefined> {
  const result = await db.executeQuery<AccessTokenRecord>(accessTokenLookup(db, tokenHash));
  return result.rows[0];
}

export interface CountedAccessTokenLookup {
  /** Undefined when no token has this hash. */
  readonly record: AccessTokenRecord | undefined;
  /** One per key, in the order of the keys; none when nothing was counted (`knownTokenOnly`). */
  readonly hits: CounterHit[];
}

/** The counted lookup's one row: the token's columns (null for an unknown token) and the hits (null when none was counted). */
type CountedLookupRow = { readonly hits: (CounterHit & { readonly key: string })[] | null } & {
  readonly [K in keyof AccessTokenRecord]: AccessTokenRecord[K] | null;
};

/** Every key of the record: the counted lookup names them itself (`token.x as "x"`), camelCase as the caller reads them. */
const RECORD_KEYS = [
  'tokenId',
  'grantId',
  'scopes',
  'resource',
  'expiresAt',
  'tokenRevokedAt',
  'grantRevokedAt',
  'clientId',
  'userId',
  'userActive',
  'userRole',
  'userTimeZone',
  'userFeatureFlags',
  'msSinceWrite',
] as const satisfies readonly (keyof AccessTokenRecord)[];
// A key added to the record and not to the list fails here.
const _everyKeyListed: Exclude<keyof AccessTokenRecord, (typeof RECORD_KEYS)[number]> extends never ? true : never =
  true;

/**
 * Every REST request with a token, and every MCP tool call, both counts its
 * rate-limit windows and looks the token up: one statement does both (the
 * counting is the rate-limit module's own SQL, `counterHits`, as a CTE), so
 * a request pays one round trip and one pool connection for them. One row
 * comes back: the token's columns (null for an unknown token) and the hits
 * as one JSON array, so the token's columns are parsed once, not once per
 * key. With `knownTokenOnly`, an unknown token counts nothing and its hits
 * are null (MCP: a flood of random tokens writes no counters).
 *
 * Its commit does not wait for the WAL to reach disk (`synchronous_commit`
 * off for this statement's own transaction only): it writes nothing but
 * rate-limit counters, which a PostgreSQL crash may set back by the hits
 * of its last fraction of a second (up to 3 × `wal_writer_delay`, 600 ms by
 * default) without harm, and the flush was a disk wait on
 * every request. It always runs alone in its own implicit transaction on
 * a pool handle (never a caller's transaction), so no other write shares
 * the relaxed commit.
 */
const countedAccessTokenLookup = precompiled(
  4,
  (db: DbOrTrx, tokenHash: string, keys: readonly string[], windowSecs: number, knownTokenOnly: boolean) =>
    sql<CountedLookupRow>`with token as (${accessTokenSelect(db, tokenHash)}),
      hits as (${counterHits(keys, windowSecs, sql<boolean>`(${knownTokenOnly}::boolean is false or exists (select from token))`)})
      select ${sql.join(RECORD_KEYS.map((key) => sql`${sql.ref(`token.${key}`)} as ${sql.raw(`"${key}"`)}`))},
        (select json_agg(json_build_object('key', key, 'count', count, 'resetSecs', reset_secs)) from hits) as hits
      from (select set_config('synchronous_commit', 'off', true)) as relaxed_commit left join token on true
      ${preparedStatement('find_access_token_counting')}`.compile(db),
);

export interface TokenCounting {
  readonly keys: readonly string[];
  readonly windowSecs: number;
  /** Count only when a token has this hash (none: every presented token counts). */
  readonly knownTokenOnly?: boolean;
}

/** `findAccessTokenByHash` that also counts one hit against each of `keys` (at least one). */
export async function findAccessTokenCountingHits(
  db: Db,
  tokenHash: string,
  counting: TokenCounting,
): Promise<CountedAccessTokenLookup> {
  if (counting.keys.length === 0) throw new Error('findAccessTokenCountingHits needs a key to count');
  // Its relaxed commit must not cover other writes (see countedAccessTokenLookup).
  if (db.isTransaction) throw new Error('the counted token lookup runs in a transaction of its own');
  const { rows } = await db.executeQuery(
    countedAccessTokenLookup(db, tokenHash, counting.keys, counting.windowSecs, counting.knownTokenOnly === true),
  );
  const row = rows[0];
  if (!row) throw new Error('the counted token lookup returned no row');
  // No hits: an unknown token that counted nothing.
  if (row.hits === null) return { record: undefined, hits: [] };
  const hits = hitsInOrder(counting.keys, row.hits);
  if (row.tokenId === null) return { record: undefined, hits };
  const { hits: _hits, ...record } = row;
  return { record: record as AccessTokenRecord, hits };
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

export interface RefreshTokenInsert {
  readonly grantId: string;
  readonly tokenHash: string;
  readonly scopes: readonly string[];
  readonly resource: string | null;
  readonly expiresAt: Date | null;
}

export async function insertRefreshToken(db: DbOrTrx, token: RefreshTokenInsert): Promise<string> {
  const row = await db
    .insertInto('oauthRefreshTokens')
    .values({ ...token, scopes: [...token.scopes] })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function linkAccessTokenToRefreshToken(db: DbOrTrx, accessTokenHash: string, refreshTokenId: string) {
  await db.updateTable('oauthAccessTokens').set({ refreshTokenId }).where('tokenHash', '=', accessTokenHash).execute();
}

export async function findRefreshTokenByHash(db: DbOrTrx, tokenHash: string) {
  return db
    .selectFrom('oauthRefreshTokens as r')
    .innerJoin('oauthGrants as g', 'g.id', 'r.grantId')
    .innerJoin('oauthClients as c', 'c.id', 'g.clientId')
    .innerJoin('users as u', 'u.id', 'g.userId')
    .selectAll('r')
    .select([
      'g.userId',
      'g.revokedAt as grantRevokedAt',
      'g.resource as grantResource',
      'c.id as clientUuid',
      'c.clientId as publicClientId',
      'u.active as userActive',
    ])
    .where('r.tokenHash', '=', tokenHash)
    .executeTakeFirst();
}

/** Rotation: true only for the one caller that retired this token (concurrent refreshes: one wins). */
export async function retireRefreshToken(db: DbOrTrx, id: string): Promise<boolean> {
  const result = await db
    .updateTable('oauthRefreshTokens')
    .set({ rotatedAt: new Date() })
    .where('id', '=', id)
    .where('rotatedAt', 'is', null)
    .where('revokedAt', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function setRefreshTokenReplacement(db: DbOrTrx, id: string, replacedBy: string): Promise<void> {
  await db.updateTable('oauthRefreshTokens').set({ replacedBy }).where('id', '=', id).execute();
}

/**
 * Revoke a grant and every access and refresh token issued under it.
 * `reason` is kept with the grant (`refresh_reuse` is counted by the MCP stats;
 * `replaced`: a newer grant of the same user, client and resource took over).
 */
export async function revokeGrantChain(
  db: DbOrTrx,
  grantId: string,
  reason?: 'refresh_reuse' | 'replaced',
): Promise<void> {
  const now = new Date();
  await db
    .updateTable('oauthGrants')
    .set({ revokedAt: now, revokedReason: reason ?? null })
    .where('id', '=', grantId)
    .where('revokedAt', 'is', null)
    .execute();
  await db
    .updateTable('oauthAccessTokens')
    .set({ revokedAt: now })
    .where('grantId', '=', grantId)
    .where('revokedAt', 'is', null)
    .execute();
  await db
    .updateTable('oauthRefreshTokens')
    .set({ revokedAt: now })
    .where('grantId', '=', grantId)
    .where('revokedAt', 'is', null)
    .execute();
}

/** What revocation and introspection read of a token, whichever table it is in. */
const TOKEN_COLUMNS = ['grantId', 'scopes', 'resource', 'expiresAt', 'createdAt', 'revokedAt'] as const;

/** The grant behind a token: its state, user and owning client. */
async function findGrantContext(db: DbOrTrx, grantId: string) {
  return db
    .selectFrom('oauthGrants as g')
    .innerJoin('oauthClients as c', 'c.id', 'g.clientId')
    .innerJoin('users as u', 'u.id', 'g.userId')
    .select(['g.revokedAt as grantRevokedAt', 'g.userId', 'c.clientId as publicClientId', 'u.active as userActive'])
    .where('g.id', '=', grantId)
    .executeTakeFirst();
}

/** The grant and owning client of an access or refresh token, by hash (revocation, introspection). */
export async function findTokenByHash(db: DbOrTrx, tokenHash: string) {
  const access = await db
    .selectFrom('oauthAccessTokens')
    .select(TOKEN_COLUMNS)
    .where('tokenHash', '=', tokenHash)
    .executeTakeFirst();
  const refresh = access
    ? undefined
    : await db
        .selectFrom('oauthRefreshTokens')
        .select([...TOKEN_COLUMNS, 'rotatedAt'])
        .where('tokenHash', '=', tokenHash)
        .executeTakeFirst();
  const token = access
    ? { kind: 'access_token' as const, ...access, rotatedAt: null }
    : refresh && { kind: 'refresh_token' as const, ...refresh };
  if (!token) return undefined;
  const grant = await findGrantContext(db, token.grantId);
  return grant && { ...token, ...grant };
}

/** Record that a grant was used, at most once a minute (the /settings page shows it). */
/** Record that one of the grant's tokens has just written (read-your-writes, db/read-replica.ts). */
export async function markGrantWrite(db: DbOrTrx, grantId: string): Promise<void> {
  await db
    .updateTable('oauthGrants')
    .set({ lastWriteAt: sql<Date>`clock_timestamp()` })
    .where('id', '=', grantId)
    .modifyEnd(preparedStatement('mark_grant_write'))
    .execute();
}

export async function touchGrant(db: DbOrTrx, grantId: string): Promise<void> {
  await db
    .updateTable('oauthGrants')
    .set({ lastUsedAt: new Date() })
    .where('id', '=', grantId)
    .where((eb) => eb.or([eb('lastUsedAt', 'is', null), eb('lastUsedAt', '<', new Date(Date.now() - 60_000))]))
    .execute();
}

import { AsyncLocalStorage } from 'node:async_hooks';
import OAuth2Server, {
  InvalidClientError,
  InvalidGrantError,
  InvalidScopeError,
  OAuthError,
  type AuthorizationCode,
  type Client,
  type RefreshToken,
  type Token,
  type User,
} from '@node-oauth/oauth2-server';
import type { Config } from '../../config.ts';
import type { Db, DbOrTrx } from '../../db/database.ts';
import { generateSecret, sha256Hex } from '../../lib/crypto.ts';
import {
  consumeAuthorizationCode,
  findAuthorizationCodeByHash,
  linkAuthorizationCodeToGrant,
} from './authorization.repository.ts';
import { clientSecretMatches, readClientCredentials } from './client-auth.ts';
import { findClientByClientId } from './client.repository.ts';
import { OAuthProtocolError } from './oauth-errors.ts';
import { normalizeResource } from './resource.ts';
import {
  findAccessTokenByHash,
  findRefreshTokenByHash,
  findUnrevokedGrantIds,
  type GrantInsert,
  insertAccessToken,
  insertGrant,
  insertRefreshToken,
  linkAccessTokenToRefreshToken,
  lockGrantKey,
  lockGrantScopes,
  replaceGrantScopes,
  retireRefreshToken,
  revokeGrantChain,
  setRefreshTokenReplacement,
} from './token.repository.ts';
import { ACCESS_TOKEN_PREFIX } from './token.service.ts';

export const REFRESH_TOKEN_PREFIX = 'prt_';

type CodeRow = NonNullable<Awaited<ReturnType<typeof findAuthorizationCodeByHash>>>;
type RefreshRow = NonNullable<Awaited<ReturnType<typeof findRefreshTokenByHash>>>;

/**
 * What one token request carries into the model: @node-oauth/oauth2-server's
 * model hooks do not see the request, so the request body (for `resource` and
 * `redirect_uri`) and the rows found along the way travel in AsyncLocalStorage.
 */
interface TokenRequestContext {
  readonly body: Readonly<Record<string, string>>;
  code?: CodeRow;
  refresh?: RefreshRow;
}

const context = new AsyncLocalStorage<TokenRequestContext>();

function current(): TokenRequestContext {
  const value = context.getStore();
  if (!value) throw new Error('token model used outside a token request');
  return value;
}

/**
 * RFC 8707 §2.2: a `resource` on the token request (code exchange or
 * refresh) must name the grant's resource. Compared in the normalised form
 * the grant was stored in, so `{base}/mcp/` names the `{base}/mcp` grant.
 */
function checkRequestedResource(grantResource: string | null, config: Config): void {
  const raw = current().body['resource'];
  if (raw === undefined) return;
  const requested = normalizeResource(raw);
  const sameRest = grantResource === null && requested === config.baseUrl;
  if (requested !== grantResource && !sameRest) {
    throw new OAuthError('The resource does not match the one this grant was issued for.', {
      code: 400,
      name: 'invalid_target',
    });
  }
}

interface PacerClient extends Client {
  readonly uuid: string;
}

/** Client authentication (RFC 6749 §2.3): confidential clients must present their secret, public ones none. */
function clientModel(db: Db) {
  return {
    async getClient(clientId: string, clientSecret: string | undefined): Promise<PacerClient | undefined> {
      const client = await findClientByClientId(db, clientId);
      if (!client || client.kind === 'developer') return undefined;
      if (client.isPublic) {
        if (clientSecret) return undefined;
      } else if (!clientSecretMatches(client, clientSecret)) {
        return undefined;
      }
      return {
        id: client.clientId,
        uuid: client.id,
        grants: ['authorization_code', 'refresh_token'],
        redirectUris: client.redirectUris,
      };
    },
  };
}

/** The `authorization_code` grant (RFC 6749 §4.1.3): look the code up, then consume it. */
function authorizationCodeModel(db: Db, config: Config) {
  return {
    async getAuthorizationCode(code: string): Promise<AuthorizationCode | undefined> {
      const row = await findAuthorizationCodeByHash(db, sha256Hex(code));
      if (!row) return undefined;
      if (row.consumedAt) {
        // RFC 6749 §4.1.2: a code used twice revokes what it was exchanged for.
        if (row.grantId) await revokeGrantChain(db, row.grantId);
        return undefined;
      }
      // RFC 6749 §4.1.3: redirect_uri must be identical to the authorization request's.
      if (current().body['redirect_uri'] !== row.redirectUri) {
        throw new InvalidGrantError('Invalid grant: redirect_uri does not match the authorization request');
      }
      checkRequestedResource(row.resource, config);
      current().code = row;
      return {
        authorizationCode: code,
        expiresAt: row.expiresAt,
        redirectUri: row.redirectUri,
        scope: row.scopes,
        client: { id: row.publicClientId, grants: [] },
        user: { id: row.userId },
        codeChallenge: row.codeChallenge,
        codeChallengeMethod: row.codeChallengeMethod,
      };
    },

    async revokeAuthorizationCode(): Promise<boolean> {
      const row = current().code;
      return row ? consumeAuthorizationCode(db, row.id) : false;
    },
  };
}

/** The `refresh_token` grant (RFC 6749 §6): look the token up, then retire it (rotation). */
function refreshTokenModel(db: Db, config: Config) {
  return {
    async getRefreshToken(refreshToken: string): Promise<RefreshToken | undefined> {
      const row = await findRefreshTokenByHash(db, sha256Hex(refreshToken));
      if (!row || row.revokedAt || row.grantRevokedAt || !row.userActive) return undefined;
      if (row.rotatedAt) {
        // A rotated token came back: it leaked. Revoke the whole grant chain (docs/design.md §3).
        await revokeGrantChain(db, row.grantId, 'refresh_reuse');
        return undefined;
      }
      checkRequestedResource(row.grantResource, config);
      // RFC 6749 §6: scope may only narrow. Checked here, before the library
      // retires the token, so a refused scope does not burn the refresh token.
      const requested = current().body['scope'];
      if (requested !== undefined) {
        const extra = requested.split(' ').filter((scope) => scope.length > 0 && !row.scopes.includes(scope));
        if (extra.length > 0) throw new InvalidScopeError(`Invalid scope: not granted: ${extra.join(' ')}`);
      }
      current().refresh = row;
      return {
        refreshToken,
        ...(row.expiresAt ? { refreshTokenExpiresAt: row.expiresAt } : {}),
        scope: row.scopes,
        client: { id: row.publicClientId, grants: [] },
        user: { id: row.userId },
      };
    },

    /** Rotation: only one of several concurrent refreshes of one token retires it. */
    async revokeToken(): Promise<boolean> {
      const row = current().refresh;
      return row ? retireRefreshToken(db, row.id) : false;
    },
  };
}

/** Bearer tokens: the library's check and the new tokens' values. */
function accessTokenModel(db: Db) {
  return {
    /** The library's bearer check (we authenticate requests in bearer-auth.ts; this keeps the model whole). */
    async getAccessToken(accessToken: string): Promise<Token | undefined> {
      const row = await findAccessTokenByHash(db, sha256Hex(accessToken));
      if (!row || row.tokenRevokedAt || row.grantRevokedAt || !row.userActive) return undefined;
      return {
        accessToken,
        accessTokenExpiresAt: row.expiresAt,
        scope: row.scopes,
        client: { id: row.clientId, grants: [] },
        user: { id: row.userId },
      };
    },

    generateAccessToken: () => Promise.resolve(generateSecret(ACCESS_TOKEN_PREFIX)),
    generateRefreshToken: () => Promise.resolve(generateSecret(REFRESH_TOKEN_PREFIX)),
  };
}

/**
 * The grant a code's tokens go under: one per user, client and resource
 * (docs/design.md §3 "OAuth 2.0 authorization server"). A new authorization of the same three (a
 * step-up, the same host on another device) takes over the existing grant
 * with the scopes approved now (RFC 6749 §3.3: the token carries what was
 * granted), so the user sees one connected app, and the tokens the host
 * already holds keep working with no more than those scopes. Earlier
 * duplicates of the grant are revoked (`replaced`).
 */
async function grantForCode(trx: DbOrTrx, config: Config, grant: GrantInsert): Promise<string> {
  const rest = grant.resource === null || grant.resource === config.baseUrl;
  const key = {
    clientId: grant.clientId,
    userId: grant.userId,
    resources: rest ? [null, config.baseUrl] : [grant.resource],
  };
  await lockGrantKey(trx, key);
  const [current, ...older] = await findUnrevokedGrantIds(trx, key);
  if (current === undefined) return insertGrant(trx, grant);
  await replaceGrantScopes(trx, current, grant.scopes);
  for (const id of older) await revokeGrantChain(trx, id, 'replaced');
  return current;
}

/**
 * The rows one issued token pair needs, in one transaction: the grant (new for
 * a code, the refresh token's for a refresh), the access token, and the
 * rotating refresh token linked to the one it replaces.
 */
async function storeIssuedTokens(
  db: Db,
  config: Config,
  issued: { readonly token: Token; readonly client: PacerClient; readonly user: User },
): Promise<string[]> {
  const ctx = current();
  const { token } = issued;
  let scopes = token.scope ?? [];
  const resource = ctx.code ? ctx.code.resource : (ctx.refresh?.resource ?? null);
  // Every grant gets a rotating refresh token, MCP grants too, with or
  // without `offline_access` (docs/design.md §3 "Scopes"): MCP hosts do not ask
  // for it, and without one their users would approve again every hour.
  const refreshExpiresAt =
    config.refreshTokenTtlSecs > 0 ? new Date(Date.now() + config.refreshTokenTtlSecs * 1000) : null;
  await db.transaction().execute(async (trx) => {
    let grantId: string;
    if (ctx.code) {
      grantId = await grantForCode(trx, config, {
        clientId: issued.client.uuid,
        userId: String(issued.user['id']),
        scopes,
        resource,
      });
      await linkAuthorizationCodeToGrant(trx, ctx.code.id, grantId);
    } else if (ctx.refresh) {
      grantId = ctx.refresh.grantId;
      // Never more than the grant holds now: a new authorization that narrowed
      // the grant while this refresh ran (its lock waits for ours, or ours for it).
      const granted = await lockGrantScopes(trx, grantId);
      scopes = scopes.filter((scope) => granted.includes(scope));
    } else {
      throw new Error('saveToken without a code or refresh token');
    }
    const accessTokenHash = sha256Hex(token.accessToken);
    await insertAccessToken(trx, {
      grantId,
      tokenHash: accessTokenHash,
      scopes,
      resource,
      expiresAt: token.accessTokenExpiresAt ?? new Date(Date.now() + config.accessTokenTtlSecs * 1000),
    });
    if (token.refreshToken) {
      const refreshId = await insertRefreshToken(trx, {
        grantId,
        tokenHash: sha256Hex(token.refreshToken),
        scopes,
        resource,
        expiresAt: refreshExpiresAt,
      });
      await linkAccessTokenToRefreshToken(trx, accessTokenHash, refreshId);
      if (ctx.refresh) await setRefreshTokenReplacement(trx, ctx.refresh.id, refreshId);
    }
  });
  return scopes;
}

function tokenStorageModel(db: Db, config: Config) {
  return {
    async saveToken(token: Token, client: Client, user: User): Promise<Token> {
      const scopes = await storeIssuedTokens(db, config, { token, client: client as PacerClient, user });
      // A clean object: anything extra here would reach the client.
      return {
        accessToken: token.accessToken,
        ...(token.accessTokenExpiresAt ? { accessTokenExpiresAt: token.accessTokenExpiresAt } : {}),
        ...(token.refreshToken ? { refreshToken: token.refreshToken } : {}),
        scope: scopes,
        client,
        user,
      };
    },
  };
}

/** The @node-oauth/oauth2-server model: one group of hooks per concern. */
function createModel(db: Db, config: Config) {
  return {
    ...clientModel(db),
    ...authorizationCodeModel(db, config),
    ...refreshTokenModel(db, config),
    ...accessTokenModel(db),
    ...tokenStorageModel(db, config),
  };
}

export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly refresh_token?: string;
  readonly scope: string;
  readonly refresh_token_expires_in?: number;
}

export interface TokenEndpoint {
  /** Run one token request (RFC 6749 §3.2); throws `OAuthProtocolError` for every refusal. */
  exchange(body: Readonly<Record<string, string>>, authorization: string | undefined): Promise<TokenResponse>;
}

/** The token endpoint on @node-oauth/oauth2-server with our Kysely model. */
export function createTokenEndpoint(db: Db, config: Config): TokenEndpoint {
  const server = new OAuth2Server({
    model: createModel(db, config),
    accessTokenLifetime: config.accessTokenTtlSecs,
    // The library needs a number; 0 ("no limit") is applied in saveToken.
    refreshTokenLifetime: config.refreshTokenTtlSecs > 0 ? config.refreshTokenTtlSecs : 10 * 365 * 86_400,
    // Public clients authenticate with PKCE alone; confidential ones are checked in getClient.
    requireClientAuthentication: { authorization_code: false, refresh_token: false },
    alwaysIssueNewRefreshToken: true,
  });
  return {
    async exchange(body, authorization) {
      const grantType = body['grant_type'];
      if (!grantType) throw new OAuthProtocolError('invalid_request', 'grant_type is required');
      if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
        throw new OAuthProtocolError('unsupported_grant_type', `grant_type ${grantType} is not supported`);
      }
      // RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64
      // (strict clients send `pc%5F…`). The library's parser does not decode
      // them, so decode here and hand the library the same fields in the body.
      const fields: Record<string, string> = { ...body };
      const basic = authorization && /^basic /i.test(authorization);
      if (basic) {
        const credentials = readClientCredentials(authorization, body);
        if (!credentials || (body['client_id'] !== undefined && body['client_id'] !== credentials.clientId)) {
          throw new OAuthProtocolError('invalid_request', 'client_id differs from the Basic credentials');
        }
        fields['client_id'] = credentials.clientId;
        if (credentials.clientSecret !== undefined) fields['client_secret'] = credentials.clientSecret;
      }
      const request = new OAuth2Server.Request({
        method: 'POST',
        query: {},
        // The library reads only form bodies; JSON bodies were flattened to the same fields
        // (type-is also wants to see a body length).
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': String(Buffer.byteLength(new URLSearchParams(fields).toString())),
          ...(authorization && !basic ? { authorization } : {}),
        },
        body: fields,
      });
      const response = new OAuth2Server.Response({ headers: {} });
      try {
        const token = await context.run({ body: fields }, () => server.token(request, response));
        const refreshToken = typeof token.refreshToken === 'string' ? token.refreshToken : undefined;
        return {
          access_token: token.accessToken,
          token_type: 'Bearer',
          // Exactly the configured lifetime (the library would count down from its own clock).
          expires_in: config.accessTokenTtlSecs,
          ...(refreshToken ? { refresh_token: refreshToken } : {}),
          scope: (token.scope ?? []).join(' '),
          ...(refreshToken && config.refreshTokenTtlSecs > 0
            ? { refresh_token_expires_in: config.refreshTokenTtlSecs }
            : {}),
        };
      } catch (error) {
        if (error instanceof InvalidClientError) {
          // RFC 6749 §5.2: failed client authentication is a 401 with a challenge.
          throw new OAuthProtocolError('invalid_client', error.message, 401);
        }
        if (error instanceof OAuthError && error.code < 500) {
          throw new OAuthProtocolError(error.name, error.message, error.code);
        }
        // A ServerError wraps our own failure: rethrow that (logged as a bug by the caller).
        const inner = error instanceof OAuthError ? (error as OAuthError & { inner?: unknown }).inner : undefined;
        throw inner ?? error;
      }
    },
  };
}

import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { OauthClient } from '../../db/tables.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { findUserById } from '../accounts/user.repository.ts';
import { findTokenByHash, revokeGrantChain } from './token.repository.ts';

/**
 * RFC 7009 §2.1: revoke a token the calling client holds. Revoking either the
 * access or the refresh token revokes the whole grant chain (docs/design.md §3).
 * An unknown token, or one issued to another client, changes nothing and
 * still answers 200 (§2.2), so the endpoint tells a caller nothing.
 */
export async function revokeToken(db: Db, client: OauthClient, token: string): Promise<void> {
  const found = await findTokenByHash(db, sha256Hex(token));
  if (!found || found.publicClientId !== client.clientId) return;
  await db.transaction().execute((trx) => revokeGrantChain(trx, found.grantId));
}

export type IntrospectionResponse =
  | { readonly active: false }
  | {
      readonly active: true;
      readonly scope: string;
      readonly client_id: string;
      readonly sub: string;
      readonly token_type: 'Bearer' | 'refresh_token';
      readonly exp?: number;
      readonly iat: number;
      readonly iss: string;
      readonly aud: string;
    };

/** RFC 7662 §2.2: `{active: false}` only for unknown, expired, revoked or rotated tokens. */
export async function introspectToken(db: Db, config: Config, token: string): Promise<IntrospectionResponse> {
  const found = await findTokenByHash(db, sha256Hex(token));
  const now = Date.now();
  if (
    !found ||
    found.revokedAt ||
    found.grantRevokedAt ||
    found.rotatedAt ||
    !found.userActive ||
    (found.expiresAt && found.expiresAt.getTime() <= now)
  ) {
    return { active: false };
  }
  return {
    active: true,
    scope: found.scopes.join(' '),
    client_id: found.publicClientId,
    sub: found.userId,
    token_type: found.kind === 'access_token' ? 'Bearer' : 'refresh_token',
    ...(found.expiresAt ? { exp: Math.floor(found.expiresAt.getTime() / 1000) } : {}),
    iat: Math.floor(found.createdAt.getTime() / 1000),
    iss: config.baseUrl,
    aud: found.resource ?? config.baseUrl,
  };
}

/** OpenID-style userinfo: `sub` always; e-mail and name only with `profile:read`. */
export async function userInfo(
  db: Db,
  principal: { userId: string; scopes: readonly string[] },
): Promise<{ sub: string; email?: string; name?: string | null }> {
  const user = await findUserById(db, principal.userId);
  if (!user) return { sub: principal.userId };
  if (!principal.scopes.includes('profile:read')) return { sub: user.id };
  return { sub: user.id, email: user.email, name: user.name };
}

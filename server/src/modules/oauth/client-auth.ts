import type { DbOrTrx } from '../../db/database.ts';
import type { OauthClient } from '../../db/tables.ts';
import { safeEqual, sha256Hex } from '../../lib/crypto.ts';
import { findClientByClientId } from './client.repository.ts';
import { OAuthProtocolError } from './oauth-errors.ts';

export interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string | undefined;
}

/**
 * Client credentials from `Authorization: Basic` (RFC 6749 §2.3.1: id and
 * secret form-urlencoded, then base64) or from the body (`client_secret_post`,
 * or `client_id` alone for public clients). Both at once is an error.
 */
export function readClientCredentials(
  authorization: string | undefined,
  body: Readonly<Record<string, string>>,
): ClientCredentials | undefined {
  if (authorization && /^basic /i.test(authorization)) {
    if (body['client_secret'] !== undefined) {
      throw new OAuthProtocolError('invalid_request', 'use one client authentication method, not two');
    }
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthProtocolError('invalid_client', 'malformed Basic credentials', 401);
    try {
      return {
        clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
        clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
      };
    } catch {
      throw new OAuthProtocolError('invalid_client', 'malformed Basic credentials', 401);
    }
  }
  const clientId = body['client_id'];
  return clientId ? { clientId, clientSecret: body['client_secret'] } : undefined;
}

export interface AuthenticateClientOptions {
  /** Public clients (no secret) may call this endpoint with their client_id alone. */
  readonly allowPublic: boolean;
}

/**
 * Whether a confidential client presented its own secret: compared as
 * SHA-256 hashes (only the hash is stored), in constant time. The one secret
 * check of both client authentication paths (this module's and the token
 * endpoint's, token-endpoint.service.ts).
 */
export function clientSecretMatches(client: OauthClient, secret: string | undefined): boolean {
  return !!secret && !!client.clientSecretHash && safeEqual(sha256Hex(secret), client.clientSecretHash);
}

/** The calling client, or a 401 `invalid_client`. Secrets are compared by hash in constant time. */
export async function authenticateClient(
  db: DbOrTrx,
  credentials: ClientCredentials | undefined,
  options: AuthenticateClientOptions,
): Promise<OauthClient> {
  const refuse = () => new OAuthProtocolError('invalid_client', 'client authentication failed', 401);
  if (!credentials) throw refuse();
  const client = await findClientByClientId(db, credentials.clientId);
  if (!client || client.kind === 'developer') throw refuse();
  if (client.isPublic) {
    if (!options.allowPublic || credentials.clientSecret !== undefined) throw refuse();
    return client;
  }
  if (!clientSecretMatches(client, credentials.clientSecret)) throw refuse();
  return client;
}

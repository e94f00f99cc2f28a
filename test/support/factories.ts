import { randomBytes } from 'node:crypto';
import type { Scope } from '@pacer/contract';
import type { Db } from '../../server/src/db/database.ts';
import type { OauthClient, User } from '../../server/src/db/tables.ts';
import { generateSecret, sha256Hex } from '../../server/src/lib/crypto.ts';
import { createUser } from '../../server/src/modules/accounts/user.service.ts';
import { createApp, ensureDeveloperClient } from '../../server/src/modules/oauth/client.service.ts';
import { findClientByClientId } from '../../server/src/modules/oauth/client.repository.ts';
import { insertAccessToken, insertGrant } from '../../server/src/modules/oauth/token.repository.ts';
import { testSecretBox } from './test-server.ts';

export const TEST_PASSWORD = 'correct horse battery';

export interface UserFactoryOptions {
  readonly email?: string;
  readonly name?: string;
  readonly timeZone?: string;
  readonly admin?: boolean;
}

/** A real account through the real service (scrypt hash and all). */
export async function makeUser(db: Db, options: UserFactoryOptions = {}): Promise<User> {
  return createUser(db, {
    email: options.email ?? `athlete-${randomBytes(4).toString('hex')}@example.test`,
    password: TEST_PASSWORD,
    name: options.name,
    timeZone: options.timeZone,
    admin: options.admin,
  });
}

/** A registered third-party app owned by `owner`. */
export async function makeApp(db: Db, owner: User, name = 'Test app'): Promise<OauthClient> {
  return (await makeWebhookApp(db, owner, name)).client;
}

/** An app with its webhook secret (the plain value exists only here, as for a real developer). */
export async function makeWebhookApp(
  db: Db,
  owner: User,
  name = 'Webhook app',
): Promise<{ readonly client: OauthClient; readonly webhookSecret: string }> {
  const created = await createApp(db, {
    name,
    redirectUris: ['https://app.example.test/callback'],
    scopes: [],
    isPublic: false,
    ownerEmail: owner.email,
    secretBox: testSecretBox,
  });
  const client = await findClientByClientId(db, created.clientId);
  if (!client) throw new Error('app vanished');
  return { client, webhookSecret: created.webhookSecret };
}

export interface TokenFactoryOptions {
  readonly scopes: readonly Scope[];
  /** `null` (default): a REST token; a URL binds it to that resource. */
  readonly resource?: string | null;
  /** Seconds until expiry; negative for an already expired token. */
  readonly expiresInSecs?: number;
  /** The app the token is issued to; the user's developer client by default. */
  readonly client?: OauthClient;
}

export interface MintedToken {
  readonly token: string;
  readonly grantId: string;
  readonly clientId: string;
}

/** An access token stored exactly as the server stores tokens (SHA-256 only). */
export async function mintToken(db: Db, user: User, options: TokenFactoryOptions): Promise<MintedToken> {
  const client = options.client ?? (await ensureDeveloperClient(db, user.id));
  const token = generateSecret('pat_');
  const resource = options.resource ?? null;
  const grantId = await insertGrant(db, { clientId: client.id, userId: user.id, scopes: options.scopes, resource });
  await insertAccessToken(db, {
    grantId,
    tokenHash: sha256Hex(token),
    scopes: options.scopes,
    resource,
    expiresAt: new Date(Date.now() + (options.expiresInSecs ?? 3600) * 1000),
  });
  return { token, grantId, clientId: client.clientId };
}

export const ALL_DATA_SCOPES: Scope[] = ['health:read', 'health:write', 'nutrition:read', 'nutrition:write'];

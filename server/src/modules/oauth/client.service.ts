import { SCOPES, type Scope, USER_SCOPES } from '@pacer/contract';
import type { Db, DbOrTrx } from '../../db/database.ts';
import type { OauthClient, User } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import { generateSecret, sha256Hex } from '../../lib/crypto.ts';
import { findFirstAdmin, findUserByEmail, findUserById } from '../accounts/user.repository.ts';
import {
  deleteClientOwnedBy,
  findClientByClientId,
  findClientOwnedBy,
  findDeveloperClient,
  insertClient,
  insertDeveloperClientIfMissing,
  listClients,
  listClientsOwnedBy,
  updateClientSecretHash,
  updateWebhookSecret,
} from './client.repository.ts';
import { redirectUriProblem } from './redirect-uri.ts';
import type { SecretBox } from '../../lib/secret-box.ts';

export interface CreateAppOptions {
  readonly name: string;
  readonly redirectUris: readonly string[];
  /** Scopes the app may ask for; all known scopes when empty. */
  readonly scopes: readonly string[];
  readonly isPublic: boolean;
  /** Owner's user id (the developer portal); takes precedence over `ownerEmail`. */
  readonly ownerUserId?: string | undefined;
  /** Owner's e-mail; the first admin when neither this nor `ownerUserId` is given. */
  readonly ownerEmail?: string | undefined;
  /** Seals the webhook secret so HMAC signatures can be checked (lib/secret-box.ts). */
  readonly secretBox: SecretBox;
}

export interface CreatedApp {
  readonly clientId: string;
  /** Shown once; only its hash is stored. Absent for public clients. */
  readonly clientSecret: string | undefined;
  /** Shown once; stored as a hash (and sealed with the server's key, for signatures). */
  readonly webhookSecret: string;
  readonly name: string;
  readonly redirectUris: readonly string[];
  readonly scopes: readonly string[];
  readonly isPublic: boolean;
  readonly ownerUserId: string;
}

export function parseScopes(values: readonly string[]): Scope[] {
  const scopes = values.flatMap((value) => value.split(/\s+/)).filter((value) => value.length > 0);
  const unknown = scopes.filter((scope) => !(SCOPES as readonly string[]).includes(scope));
  if (unknown.length > 0) {
    throw new AppError('validation_failed', `Unknown scope: ${unknown.join(', ')}`, {
      errors: unknown.map((scope) => ({ path: 'scope', message: `unknown scope "${scope}"` })),
    });
  }
  return [...new Set(scopes)] as Scope[];
}

export async function createApp(db: Db, options: CreateAppOptions): Promise<CreatedApp> {
  const name = options.name.trim();
  if (name.length === 0 || name.length > 200) throw AppError.validation('name', 'must be 1-200 characters');
  const redirectUris = options.redirectUris.flatMap((uri) => uri.split(/\s+/)).filter((uri) => uri.length > 0);
  if (redirectUris.length === 0) throw AppError.validation('redirectUris', 'at least one redirect URI is required');
  if (redirectUris.length > 10) throw AppError.validation('redirectUris', 'at most 10 redirect URIs');
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw AppError.validation('redirectUris', `${uri} ${problem}`);
  }
  const requested = parseScopes(options.scopes);
  // Administrator-only scopes are registered only when asked for.
  const scopes = requested.length > 0 ? requested : [...USER_SCOPES];

  const owner = await findOwner(db, options);
  const clientSecret = options.isPublic ? undefined : generateSecret('pcs_');
  const webhookSecret = generateSecret('pwh_');
  const client = await insertClient(db, {
    clientId: generateClientId(),
    clientSecretHash: clientSecret ? sha256Hex(clientSecret) : null,
    name,
    ownerUserId: owner.id,
    kind: 'app',
    isPublic: options.isPublic,
    redirectUris: [...new Set(redirectUris)],
    scopes,
    webhookSecretHash: sha256Hex(webhookSecret),
    webhookSecretSealed: options.secretBox.seal(webhookSecret),
  });
  return {
    clientId: client.clientId,
    clientSecret,
    webhookSecret,
    name: client.name,
    redirectUris: client.redirectUris,
    scopes: client.scopes,
    isPublic: client.isPublic,
    ownerUserId: owner.id,
  };
}

async function findOwner(db: Db, options: CreateAppOptions): Promise<User> {
  if (options.ownerUserId) {
    const user = await findUserById(db, options.ownerUserId);
    if (!user) throw new AppError('not_found', `No user with id ${options.ownerUserId}.`);
    return user;
  }
  if (options.ownerEmail) {
    const user = await findUserByEmail(db, options.ownerEmail);
    if (!user) throw new AppError('not_found', `No user with e-mail ${options.ownerEmail}.`);
    return user;
  }
  const admin = await findFirstAdmin(db);
  if (!admin) {
    throw new AppError(
      'not_found',
      'No admin exists yet: create one with `npm run pacer -- user:create --admin --email E --password P`, or name the owner with --owner EMAIL.',
    );
  }
  return admin;
}

export function generateClientId(): string {
  return generateSecret('pc_').slice(0, 27);
}

/**
 * The user's built-in developer client: developer tokens (CLI `token:create`
 * and the developer portal) are issued to it. Created on first use.
 */
export async function ensureDeveloperClient(db: DbOrTrx, userId: string): Promise<OauthClient> {
  const existing = await findDeveloperClient(db, userId);
  if (existing) return existing;
  await insertDeveloperClientIfMissing(db, {
    clientId: generateClientId(),
    clientSecretHash: null,
    name: 'Developer tokens',
    ownerUserId: userId,
    kind: 'developer',
    isPublic: true,
    redirectUris: [],
    scopes: [...SCOPES],
  });
  const created = await findDeveloperClient(db, userId);
  if (!created) throw new Error('developer client vanished after insert');
  return created;
}

export async function listApps(db: Db): Promise<OauthClient[]> {
  return listClients(db, ['app', 'dcr']);
}

/** Identifies one app of one owner: every developer-portal action is scoped by both. */
export interface OwnedAppOptions {
  readonly ownerUserId: string;
  /** Public client id. */
  readonly clientId: string;
}

/** The apps a user registered (not their developer client, not DCR clients), oldest first. */
export async function listAppsOwnedBy(db: Db, ownerUserId: string): Promise<OauthClient[]> {
  return listClientsOwnedBy(db, ownerUserId, ['app']);
}

export interface RotatedClientSecret {
  readonly clientId: string;
  readonly name: string;
  /** Shown once; only its hash is stored, so the old secret stops matching at once. */
  readonly clientSecret: string;
}

/**
 * Give a confidential app a new client secret. Another owner's app is "not
 * found"; a public client has no secret to rotate (RFC 6749 §2.1).
 */
export async function rotateClientSecret(db: Db, options: OwnedAppOptions): Promise<RotatedClientSecret> {
  const client = await findClientOwnedBy(db, options, ['app']);
  if (!client) throw new AppError('not_found', 'No such app.');
  if (client.isPublic) throw new AppError('conflict', 'A public client has no client secret to rotate.');
  const clientSecret = generateSecret('pcs_');
  if (!(await updateClientSecretHash(db, client.id, sha256Hex(clientSecret)))) {
    throw new AppError('not_found', 'No such app.');
  }
  return { clientId: client.clientId, name: client.name, clientSecret };
}

export interface RotatedWebhookSecret {
  readonly clientId: string;
  readonly name: string;
  /** Shown once; the previous secret (and signatures made with it) stop matching at once. */
  readonly webhookSecret: string;
}

/**
 * Give an app a new webhook secret. `ownerUserId` scopes it to the owner's
 * apps (developer portal); without it any app or DCR client (operator CLI).
 */
export async function rotateWebhookSecret(
  db: Db,
  secretBox: SecretBox,
  options: { readonly clientId: string; readonly ownerUserId?: string | undefined },
): Promise<RotatedWebhookSecret> {
  const client =
    options.ownerUserId === undefined
      ? await findClientByClientId(db, options.clientId)
      : await findClientOwnedBy(db, { ownerUserId: options.ownerUserId, clientId: options.clientId }, ['app']);
  if (!client || client.kind === 'developer')
    throw new AppError('not_found', `No app with client id ${options.clientId}.`);
  const webhookSecret = generateSecret('pwh_');
  const updated = await updateWebhookSecret(db, client.id, {
    hash: sha256Hex(webhookSecret),
    sealed: secretBox.seal(webhookSecret),
  });
  if (!updated) throw new AppError('not_found', `No app with client id ${options.clientId}.`);
  return { clientId: client.clientId, name: client.name, webhookSecret };
}

/** Delete an app of the owner; its grants and tokens go with it (foreign keys cascade). */
export async function deleteApp(db: Db, options: OwnedAppOptions): Promise<void> {
  if (!(await deleteClientOwnedBy(db, options, ['app']))) throw new AppError('not_found', 'No such app.');
}

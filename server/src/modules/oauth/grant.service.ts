import type { Db } from '../../db/database.ts';
import { AppError } from '../../errors.ts';
import {
  deleteConsentsOfClient,
  findSiblingGrantIds,
  listLiveGrantsOfUser,
  lockGrantOfUser,
  type UserGrantRow,
} from './grant.repository.ts';
import { revokeGrantChain } from './token.repository.ts';
import { UUID_PATTERN } from '../../lib/cursor.ts';

/** One grant a user has given: to a third-party app, or for a developer token. */
export interface ConnectedGrant {
  readonly grantId: string;
  readonly appName: string;
  /** Public client id. */
  readonly clientId: string;
  readonly scopes: readonly string[];
  /** `null` when the grant was issued without a resource indicator. */
  readonly resource: string | null;
  readonly connectedAt: Date;
  /** `null` when no token of the grant has been used yet. */
  readonly lastUsedAt: Date | null;
}

export interface ConnectedApps {
  /** Grants to third-party apps (registered or dynamically registered clients). */
  readonly apps: readonly ConnectedGrant[];
  /** Grants behind the user's own developer tokens. */
  readonly developerTokens: readonly ConnectedGrant[];
}

function toConnectedGrant(row: UserGrantRow): ConnectedGrant {
  return {
    grantId: row.grantId,
    appName: row.clientName,
    clientId: row.clientId,
    scopes: row.scopes,
    resource: row.resource,
    connectedAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
  };
}

/** What the user has connected and can still revoke, newest first. */
export async function listConnectedApps(db: Db, userId: string): Promise<ConnectedApps> {
  const rows = await listLiveGrantsOfUser(db, userId, ['app', 'dcr', 'developer']);
  return {
    apps: rows.filter((row) => row.clientKind !== 'developer').map(toConnectedGrant),
    developerTokens: rows.filter((row) => row.clientKind === 'developer').map(toConnectedGrant),
  };
}

export interface ServedResources {
  /** The REST resource identifier, the base URL. */
  readonly rest: string;
  /** The MCP resource identifier, `{base}/mcp`. */
  readonly mcp: string;
}

/**
 * Where a grant's tokens are accepted (RFC 8707 resource binding, docs/design.md
 * §3): no resource or the base URL means REST, `{base}/mcp` means MCP.
 */
export function surfaceOf(resource: string | null, resources: ServedResources): 'rest' | 'mcp' | 'other' {
  if (resource === null || resource === resources.rest) return 'rest';
  if (resource === resources.mcp) return 'mcp';
  return 'other';
}

export interface RevokeGrantOptions {
  readonly userId: string;
  readonly grantId: string;
}

/**
 * Revoke a grant the user gave: the grant and every access and refresh token
 * issued under it stop working at once (one transaction), with the user's
 * other grants to the same app (not for developer tokens), and the stored
 * consent for that client is forgotten so a new authorization asks again.
 * Another user's grant is "not found", never revoked. Revoking an already
 * revoked grant of the user's own succeeds (a double-submitted form).
 */
export async function revokeGrant(db: Db, options: RevokeGrantOptions): Promise<void> {
  const notFound = () => new AppError('not_found', 'No such connected app.');
  if (!UUID_PATTERN.test(options.grantId)) throw notFound();
  await db.transaction().execute(async (trx) => {
    const grant = await lockGrantOfUser(trx, options);
    if (!grant) throw notFound();
    await revokeGrantChain(trx, grant.id);
    // Revoking an app stops all of its access: earlier grants of the same app go too.
    for (const sibling of await findSiblingGrantIds(trx, { ...options, clientId: grant.clientId })) {
      await revokeGrantChain(trx, sibling);
    }
    await deleteConsentsOfClient(trx, { userId: options.userId, clientId: grant.clientId });
  });
}

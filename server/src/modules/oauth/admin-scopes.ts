import { ADMIN_SCOPES } from '@pacer/contract';
import type { User } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import { AuthorizationRedirectError, type AuthorizationRequest } from './authorization.service.ts';
import { OAuthProtocolError } from './oauth-errors.ts';

/** The administrator-only scopes among `scopes` (docs/design.md §3 "Scopes"). */
function adminScopesIn(scopes: readonly string[]): string[] {
  return scopes.filter((scope) => (ADMIN_SCOPES as readonly string[]).includes(scope));
}

/**
 * An authorization request for an administrator-only scope by a user who is
 * not an admin ends on the client's redirect URI with `invalid_scope`
 * (RFC 6749 §4.1.2.1), before any consent page: the user cannot grant it.
 */
export function refuseAdminScopesForUser(request: AuthorizationRequest, user: Pick<User, 'role'>): void {
  const asked = adminScopesIn(request.scopes);
  if (asked.length === 0 || user.role === 'admin') return;
  throw new AuthorizationRedirectError(
    request.redirectUri,
    request.state,
    new OAuthProtocolError('invalid_scope', `${asked.join(' ')} is granted only to administrators`),
  );
}

/** `token:create`: an administrator-only scope for someone else is refused (403 `forbidden`). */
export function refuseAdminScopesForDeveloperToken(
  scopes: readonly string[],
  user: Pick<User, 'role' | 'email'>,
): void {
  const asked = adminScopesIn(scopes);
  if (asked.length === 0 || user.role === 'admin') return;
  throw new AppError('forbidden', `${asked.join(' ')} is granted only to administrators; ${user.email} is not one.`, {
    errors: [{ path: 'scope', message: `${asked.join(' ')} needs an administrator` }],
  });
}

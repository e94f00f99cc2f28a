import { ADMIN_SCOPES } from '@pacer/contract';
import type { RequestHandler } from 'express';
import { AppError } from '../errors.ts';
import { checkAccessToken } from '../modules/oauth/token.service.ts';
import {
  admitPrincipal,
  BEARER,
  type BearerAuthDeps,
  bearerChallenge,
  type ChallengeOptions,
  INVALID_TOKEN_REASONS,
} from './bearer-auth.ts';

const NOT_ADMIN = 'This endpoint is for administrators only.';

/**
 * Administrator routes (contract metadata `admin`): an admin user's bearer
 * token, or else an admin's portal session (`loadSession` must run first).
 * A token is checked as on REST: one bound to the MCP endpoint is refused
 * like an invalid one (RFC 8707 audience), and it must carry `admin:read`
 * (else 403 `insufficient_scope`, RFC 6750 §3.1), so an admin's token issued
 * to some app for their training data cannot read the server's statistics.
 * Anyone authenticated but not an admin gets 403 `forbidden`.
 */
export function requireAdmin(deps: BearerAuthDeps): RequestHandler {
  const resourceMetadataUrl = `${deps.config.baseUrl}/.well-known/oauth-protected-resource`;
  const restResource = deps.config.baseUrl;
  /** RFC 6750 §3: the challenge names the error only when a token was sent. */
  const challenge = (error?: ChallengeOptions['error'], description?: string) => ({
    'WWW-Authenticate': bearerChallenge({
      resourceMetadataUrl,
      scopes: [],
      ...(error ? { error, ...(description ? { description } : {}) } : {}),
    }),
  });
  const invalidToken = (message: string) =>
    new AppError('invalid_token', message, { headers: challenge('invalid_token', message) });

  return (req, res, next) => {
    const header = req.headers.authorization;
    if (header === undefined) {
      const user = res.locals.sessionUser;
      if (!user) {
        next(
          new AppError('unauthorized', 'Sign in as an administrator, or send an admin user’s bearer token.', {
            headers: challenge(),
          }),
        );
        return;
      }
      if (user.role !== 'admin') {
        next(new AppError('forbidden', NOT_ADMIN));
        return;
      }
      next();
      return;
    }
    const match = BEARER.exec(header);
    if (!match) {
      const message = 'The Authorization header is not `Bearer <token>`.';
      next(new AppError('validation_failed', message, { headers: challenge('invalid_request', message) }));
      return;
    }
    checkAccessToken(deps.db, match[1] as string).then(
      (check) => {
        if (!check.ok) {
          next(invalidToken(INVALID_TOKEN_REASONS[check.reason]));
          return;
        }
        const { principal } = check;
        if (principal.resource !== null && principal.resource !== restResource) {
          next(invalidToken(`This token is bound to ${principal.resource} and cannot be used on the REST API.`));
          return;
        }
        if (principal.role !== 'admin') {
          next(new AppError('forbidden', NOT_ADMIN));
          return;
        }
        const missing = ADMIN_SCOPES.filter((scope) => !principal.scopes.includes(scope));
        if (missing.length > 0) {
          const message = `The token lacks the scope ${missing.join(', ')}.`;
          next(
            new AppError('insufficient_scope', message, {
              headers: {
                'WWW-Authenticate': bearerChallenge({
                  resourceMetadataUrl,
                  scopes: ADMIN_SCOPES,
                  error: 'insufficient_scope',
                  description: `requires ${ADMIN_SCOPES.join(' ')}`,
                }),
              },
            }),
          );
          return;
        }
        admitPrincipal(deps, res, principal);
        next();
      },
      (error: unknown) => next(error),
    );
  };
}

import type { RouteMetadata } from '@pacer/contract';
import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Actor } from '../lib/actor.ts';
import { noteGrantUse, type TokenCheck, type TokenPrincipal } from '../modules/oauth/token.service.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's own augmentation point
  namespace Express {
    interface Locals {
      principal?: TokenPrincipal;
      requestId?: string;
    }
  }
}

/** RFC 6750 §2.1: `Bearer` followed by a b64token. */
export const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** Why a presented token was refused, as every surface words it. */
export const INVALID_TOKEN_REASONS = {
  unknown: 'The access token is not recognised.',
  expired: 'The access token has expired.',
  revoked: 'The access token has been revoked.',
  inactive_user: 'The account behind this token is deactivated.',
} as const;

function quote(value: string): string {
  return `"${value.replace(/["\\]/g, '')}"`;
}

export interface ChallengeOptions {
  readonly resourceMetadataUrl: string;
  readonly scopes: readonly string[];
  readonly error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope';
  readonly description?: string;
}

/** `WWW-Authenticate` per RFC 6750 §3 with RFC 9728 §5.1's `resource_metadata`. */
export function bearerChallenge(options: ChallengeOptions): string {
  const params = [`resource_metadata=${quote(options.resourceMetadataUrl)}`];
  if (options.scopes.length > 0) params.push(`scope=${quote(options.scopes.join(' '))}`);
  if (options.error) params.push(`error=${quote(options.error)}`);
  if (options.description) params.push(`error_description=${quote(options.description)}`);
  return `Bearer ${params.join(', ')}`;
}

export interface BearerAuthDeps {
  readonly config: Config;
  readonly db: Db;
  readonly logger: Logger;
}

/** How the presented token is looked up: `checkAccessToken`, or a statement that also counts rate limits. */
export type TokenLookup = (token: string) => Promise<TokenCheck>;

/** A REST authentication step: `lookup` is called at most once, with the token of a well-formed header. */
export type BearerAuthenticator = (req: Request, res: Response, next: NextFunction, lookup: TokenLookup) => void;

/** The scopes a REST route's contract metadata requires; undefined for a route that takes no token. */
export function routeScopesOf(req: Request): readonly string[] | undefined {
  return (req as { tsRestRoute?: { metadata?: RouteMetadata } }).tsRestRoute?.metadata?.auth?.scopes;
}

/**
 * Authenticates REST routes whose contract metadata names scopes. A token
 * bound to another resource (the MCP endpoint, RFC 8707) is refused here
 * like an invalid one; a token without a needed scope gets 403.
 */
export function restBearerAuth(deps: BearerAuthDeps): BearerAuthenticator {
  const resourceMetadataUrl = `${deps.config.baseUrl}/.well-known/oauth-protected-resource`;
  const restResource = deps.config.baseUrl;
  return (req, res, next, lookup) => {
    const scopes = routeScopesOf(req);
    if (!scopes) {
      next();
      return;
    }
    const fail = (
      code: 'unauthorized' | 'invalid_token' | 'validation_failed',
      message: string,
      error?: ChallengeOptions['error'],
    ) => {
      next(
        new AppError(code, message, {
          headers: {
            'WWW-Authenticate': bearerChallenge({
              resourceMetadataUrl,
              scopes,
              ...(error ? { error, description: message } : {}),
            }),
          },
        }),
      );
    };
    const header = req.headers.authorization;
    if (!header) {
      fail('unauthorized', 'This endpoint needs an access token: send `Authorization: Bearer <token>`.');
      return;
    }
    const match = BEARER.exec(header);
    if (!match) {
      fail('validation_failed', 'The Authorization header is not `Bearer <token>`.', 'invalid_request');
      return;
    }
    lookup(match[1] as string).then(
      (check) => {
        if (!check.ok) {
          fail('invalid_token', INVALID_TOKEN_REASONS[check.reason], 'invalid_token');
          return;
        }
        const { principal } = check;
        if (principal.resource !== null && principal.resource !== restResource) {
          fail(
            'invalid_token',
            `This token is bound to ${principal.resource} and cannot be used on the REST API.`,
            'invalid_token',
          );
          return;
        }
        const missing = scopes.filter((scope) => !principal.scopes.includes(scope));
        if (missing.length > 0) {
          next(
            new AppError('insufficient_scope', `The token lacks the scope ${missing.join(', ')}.`, {
              headers: {
                'WWW-Authenticate': bearerChallenge({
                  resourceMetadataUrl,
                  scopes,
                  error: 'insufficient_scope',
                  description: `requires ${scopes.join(' ')}`,
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

/** Let `principal` through: the handler finds it in `res.locals`, and the grant's last use is noted in the background. */
export function admitPrincipal(
  deps: Pick<BearerAuthDeps, 'db' | 'logger'>,
  res: { locals: Express.Locals },
  principal: TokenPrincipal,
): void {
  res.locals.principal = principal;
  noteGrantUse(deps.db, principal.grantId, deps.logger);
}

/** The actor the services act for on a token's request: its user, zone, app and scopes. */
export function actorOfPrincipal(principal: TokenPrincipal): Actor {
  return {
    userId: principal.userId,
    timeZone: principal.timeZone,
    source: principal.clientId,
    scopes: principal.scopes,
  };
}

/** The actor of an authenticated route's request (see `principalOf`). */
export function actorOf(res: { locals: Express.Locals }): Actor {
  return actorOfPrincipal(principalOf(res));
}

/** The authenticated principal of a route whose metadata requires auth. */
export function principalOf(res: { locals: Express.Locals }): TokenPrincipal {
  const principal = res.locals.principal;
  if (!principal) throw new Error('route reached without authentication: its contract metadata names no scopes');
  return principal;
}

import express, { type ErrorRequestHandler, type RequestHandler, type Response, Router } from 'express';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import {
  approveAuthorization,
  AuthorizationRedirectError,
  checkAuthorizationRequest,
  denialRedirectUrl,
  errorRedirectUrl,
  hasConsent,
  tickedScopesOf,
  type AuthorizeParams,
} from '../../modules/oauth/authorization.service.ts';
import { authenticateClient, readClientCredentials } from '../../modules/oauth/client-auth.ts';
import { OAuthProtocolError, UntrustedAuthorizationRequestError } from '../../modules/oauth/oauth-errors.ts';
import { introspectToken, revokeToken, userInfo } from '../../modules/oauth/revocation.service.ts';
import { createTokenEndpoint } from '../../modules/oauth/token-endpoint.service.ts';
import { checkAccessToken } from '../../modules/oauth/token.service.ts';
import { bearerChallenge } from '../bearer-auth.ts';
import { loadSession, pageHeaders } from '../pages/account.pages.ts';
import { consentPage, GRANTED_SCOPE_FIELD, untrustedRequestPage } from '../pages/consent.page.ts';
import { csrfTokenFor, requireCsrf } from '../pages/csrf.ts';
import { refuseAdminScopesForUser } from '../../modules/oauth/admin-scopes.ts';
import { oauthBody } from './oauth-body.ts';

export interface OAuthRouterDeps {
  readonly config: Config;
  readonly db: Db;
  readonly logger: Logger;
}

/** RFC 6749 §5.1 and RFC 7009/7662: token responses and errors are never cached. */
function noStore(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
}

function bodyOf(res: Response): Record<string, string> {
  return res.locals.oauthBody ?? {};
}

/** Errors of the authorization request answered as a page or a redirect; false for any other error. */
function answerAuthorizeError(config: Config, res: Response, error: unknown): boolean {
  if (error instanceof UntrustedAuthorizationRequestError) {
    res.status(400).type('html').send(untrustedRequestPage(error.message));
    return true;
  }
  if (error instanceof AuthorizationRedirectError) {
    res.redirect(303, errorRedirectUrl(config, error));
    return true;
  }
  return false;
}

/** RFC 6749 §4.1.1: the authorization request; signs the user in, then asks for consent. */
function showAuthorization(deps: OAuthRouterDeps): RequestHandler {
  const { config, db } = deps;
  const secure = config.secureCookies;
  return async (req, res) => {
    const params: AuthorizeParams = req.query;
    try {
      const request = await checkAuthorizationRequest(db, config, params);
      const user = res.locals.sessionUser;
      if (!user) {
        if (request.prompt === 'none') {
          throw new AuthorizationRedirectError(
            request.redirectUri,
            request.state,
            new OAuthProtocolError('login_required', 'the user is not signed in'),
          );
        }
        res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
        return;
      }
      refuseAdminScopesForUser(request, user);
      if (await hasConsent(db, config, user.id, request)) {
        res.redirect(303, await approveAuthorization(db, config, user.id, request));
        return;
      }
      if (request.prompt === 'none') {
        throw new AuthorizationRedirectError(
          request.redirectUri,
          request.state,
          new OAuthProtocolError(
            'consent_required',
            'the user has not approved these scopes, or this client is asked each time (RFC 8252 §8.6)',
          ),
        );
      }
      res.setHeader('Cache-Control', 'no-store');
      res.type('html').send(consentPage(request, csrfTokenFor(req, res, secure), config.mcpResource));
    } catch (error) {
      if (!answerAuthorizeError(config, res, error)) throw error;
    }
  };
}

/** A form field sent once (a string), several times (an array) or not at all (a browser's unticked checkboxes). */
function formValues(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}

/**
 * The consent form's answer: approve the ticked scopes, or deny. The hidden
 * fields repeat the authorization request, which is checked again.
 */
function decideAuthorization(deps: OAuthRouterDeps): RequestHandler {
  const { config, db } = deps;
  return async (req, res) => {
    const params = req.body as Record<string, unknown>;
    const user = res.locals.sessionUser;
    try {
      const request = await checkAuthorizationRequest(db, config, params);
      if (!user) {
        res.redirect(
          303,
          `/login?next=${encodeURIComponent(`/api/oauth/authorize?${new URLSearchParams(params as Record<string, string>).toString()}`)}`,
        );
        return;
      }
      if (params['decision'] === 'approve') {
        refuseAdminScopesForUser(request, user);
        const granted = tickedScopesOf(request, formValues(params[GRANTED_SCOPE_FIELD]));
        if (granted.length === 0) {
          // Nothing ticked is not taken as a denial: the page comes back saying why, the choices as they were.
          res.setHeader('Cache-Control', 'no-store');
          res
            .status(400)
            .type('html')
            .send(
              consentPage(request, csrfTokenFor(req, res, config.secureCookies), config.mcpResource, {
                ticked: [],
                error: 'Tick at least one permission to approve, or choose Deny.',
              }),
            );
          return;
        }
        res.redirect(303, await approveAuthorization(db, config, user.id, request, granted));
      } else {
        res.redirect(303, denialRedirectUrl(config, request));
      }
    } catch (error) {
      if (!answerAuthorizeError(config, res, error)) throw error;
    }
  };
}

/** RFC 6749 §3.2 / §4.1.3 / §6. */
function issueToken(deps: OAuthRouterDeps): RequestHandler {
  const tokenEndpoint = createTokenEndpoint(deps.db, deps.config);
  return async (req, res) => {
    noStore(res);
    const token = await tokenEndpoint.exchange(bodyOf(res), req.headers.authorization);
    res.status(200).json(token);
  };
}

/** RFC 7009. */
function revoke(deps: OAuthRouterDeps): RequestHandler {
  const { db } = deps;
  return async (req, res) => {
    noStore(res);
    const body = bodyOf(res);
    const client = await authenticateClient(db, readClientCredentials(req.headers.authorization, body), {
      allowPublic: true,
    });
    const token = body['token'];
    if (!token) throw new OAuthProtocolError('invalid_request', 'token is required');
    await revokeToken(db, client, token);
    res.status(200).end();
  };
}

/** RFC 7662: for confidential clients (resource servers and apps). */
function introspect(deps: OAuthRouterDeps): RequestHandler {
  const { config, db } = deps;
  return async (req, res) => {
    noStore(res);
    const body = bodyOf(res);
    await authenticateClient(db, readClientCredentials(req.headers.authorization, body), { allowPublic: false });
    const token = body['token'];
    if (!token) throw new OAuthProtocolError('invalid_request', 'token is required');
    res.status(200).json(await introspectToken(db, config, token));
  };
}

/** Who the token's user is: `sub`, plus e-mail and name with `profile:read`. */
function userinfo(deps: OAuthRouterDeps): RequestHandler {
  const { config, db } = deps;
  return async (req, res) => {
    noStore(res);
    const resourceMetadataUrl = `${config.baseUrl}/.well-known/oauth-protected-resource`;
    const match = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
    const check = match ? await checkAccessToken(db, match[1] as string) : undefined;
    const usable = check?.ok && (check.principal.resource === null || check.principal.resource === config.baseUrl);
    if (!check || !check.ok || !usable) {
      res.setHeader(
        'WWW-Authenticate',
        bearerChallenge({
          resourceMetadataUrl,
          scopes: [],
          ...(match ? { error: 'invalid_token' as const, description: 'the access token is not valid here' } : {}),
        }),
      );
      res.status(401).json({
        error: match ? 'invalid_token' : 'invalid_request',
        error_description: 'a valid access token is required',
      });
      return;
    }
    res.json(await userInfo(db, check.principal));
  };
}

/** OAuth errors as RFC 6749 §5.2 JSON; the authorization page's other errors go on to the page handler. */
function oauthErrors(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (!(error instanceof OAuthProtocolError)) {
      if (req.path === '/api/oauth/authorize') {
        next(error);
        return;
      }
      logger.error({ err: error, requestId: res.locals.requestId }, 'unhandled error');
      noStore(res);
      res.status(500).json({ error: 'server_error', error_description: 'unexpected error' });
      return;
    }
    noStore(res);
    if (error.error === 'invalid_client') res.setHeader('WWW-Authenticate', 'Basic realm="pacer"');
    res.status(error.status).json(error.toResponseObject());
  };
}

/**
 * The authorization server's endpoints (docs/design.md §3): authorize (login and
 * consent pages), token, revoke, introspect, userinfo.
 */
export function oauthRouter(deps: OAuthRouterDeps): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb' });
  // The authorization endpoint is a page: page headers and the session, on this path only.
  router.use('/api/oauth/authorize', pageHeaders, loadSession(deps));
  router.get('/api/oauth/authorize', showAuthorization(deps));
  router.post('/api/oauth/authorize', form, requireCsrf(), decideAuthorization(deps));
  router.post('/api/oauth/token', oauthBody, issueToken(deps));
  router.post('/api/oauth/revoke', oauthBody, revoke(deps));
  router.post('/api/oauth/introspect', oauthBody, introspect(deps));
  router.get('/api/oauth/userinfo', userinfo(deps));
  router.use('/api/oauth', oauthErrors(deps.logger));
  return router;
}

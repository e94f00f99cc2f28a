// The developer portal's JSON API (`/api/developer/...`): its caller is the portal
// session, and its writes need the double-submit CSRF header.
import type { RequestHandler } from 'express';
import type { User } from '../db/tables.ts';
import { AppError } from '../errors.ts';
import { csrfTokenMatches, secureOf } from './pages/csrf.ts';

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The developer portal's JSON API: the signed-in session (loaded by `loadSession`) is the caller. */
export const requireSessionApi: RequestHandler = (_req, res, next) => {
  if (res.locals.sessionUser) {
    next();
    return;
  }
  next(new AppError('unauthorized', 'Sign in to the developer portal first: this API uses its session cookie.'));
};

export function sessionUserOf(locals: Record<string, unknown>): User {
  const user = locals['sessionUser'] as User | undefined;
  if (!user) throw new AppError('unauthorized', 'Sign in to the developer portal first.');
  return user;
}

/**
 * CSRF for the JSON API's writes: `X-CSRF-Token` must be the session's token
 * (pages/csrf.ts), which the portal's pages leave in the `pacer_csrf` cookie.
 */
export const requireCsrfHeader: RequestHandler = (req, _res, next) => {
  if (csrfTokenMatches(req, headerValue(req.headers['x-csrf-token']), secureOf(req))) {
    next();
    return;
  }
  next(new AppError('forbidden', 'Send the `pacer_csrf` cookie value in the `X-CSRF-Token` header.'));
};

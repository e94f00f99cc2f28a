// The developer portal's JSON API (`/api/developer/...`): its caller is the portal
// session, and its writes need the double-submit CSRF header.
import type { RequestHandler } from 'express';
import type { User } from '../db/tables.ts';
import { AppError } from '../errors.ts';
import { safeEqual } from '../lib/crypto.ts';
import { CSRF_COOKIE, readCookie } from './pages/cookies.ts';

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

/** Double-submit CSRF for the JSON API's writes: `X-CSRF-Token` must equal the `pacer_csrf` cookie. */
export const requireCsrfHeader: RequestHandler = (req, _res, next) => {
  const cookie = readCookie(req, CSRF_COOKIE);
  const header = headerValue(req.headers['x-csrf-token']);
  if (cookie && header && safeEqual(cookie, header)) {
    next();
    return;
  }
  next(new AppError('forbidden', 'Send the `pacer_csrf` cookie value in the `X-CSRF-Token` header.'));
};

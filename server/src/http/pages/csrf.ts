import { randomBytes } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { sendMessagePage } from './html.ts';
import { safeEqual } from '../../lib/crypto.ts';
import { CSRF_COOKIE, readCookie, setCookie } from './cookies.ts';

/**
 * CSRF protection for our HTML forms: the double-submit cookie pattern
 * (OWASP CSRF Prevention Cheat Sheet). A random value lives in an HttpOnly,
 * SameSite=Lax cookie and in a hidden form field; a POST must carry both,
 * equal. Nothing is stored server-side, so it works across processes.
 */
export function csrfTokenFor(req: Request, res: Response, secure: boolean): string {
  const existing = readCookie(req, CSRF_COOKIE);
  if (existing && /^[\w-]{32,}$/.test(existing)) return existing;
  const token = randomBytes(32).toString('base64url');
  setCookie(res, CSRF_COOKIE, token, { secure });
  return token;
}

/** A POST without the matching token gets a 403 "form expired" page. */
export function requireCsrf(): RequestHandler {
  return (req, res, next) => {
    const cookie = readCookie(req, CSRF_COOKIE);
    const field = (req.body as Record<string, unknown> | undefined)?.['_csrf'];
    if (cookie && typeof field === 'string' && safeEqual(cookie, field)) {
      next();
      return;
    }
    sendMessagePage(res, 403, {
      title: 'Form expired',
      heading: 'This form has expired',
      message: 'Go back, reload the page and try again.',
    });
  };
}

import { randomBytes } from 'node:crypto';
import type { Express, Request, RequestHandler, Response } from 'express';
import { hmacSha256, safeEqual } from '../../lib/crypto.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { sendMessagePage } from './html.ts';
import { CSRF_COOKIE, readCookie, SESSION_COOKIE, setCookie } from './cookies.ts';

/**
 * CSRF protection for our HTML forms and the portal's JSON API: a token
 * bound to the browser's session (OWASP CSRF Prevention Cheat Sheet, "Signed
 * Double-Submit Cookie"), keyed by the server's secret (`SecretBox.macKey('csrf')`).
 *
 * - Signed in: the token is HMAC(key, session id). It can only be read from a
 *   page we served to that session; a cookie planted by someone else (with a
 *   field to match) proves nothing, as the check never trusts the cookie.
 * - Before sign-in (login, sign-up, the consent page's redirect to login):
 *   there is no session yet, so the token binds a pre-session nonce:
 *   `nonce.HMAC(key, nonce)`, kept in the `pacer_csrf` cookie, and a POST must
 *   carry the cookie and an equal field. A value we did not mint fails.
 *
 * The token is also put in the `pacer_csrf` cookie (HttpOnly), so the JSON
 * API's `X-CSRF-Token` stays "the value of the `pacer_csrf` cookie" for scripts
 * that read it from their jar. Nothing is stored server-side: every process
 * with the same secret key agrees.
 */
const KEY_SETTING = 'pacer csrf key';
const SECURE_SETTING = 'pacer secure cookies';

/**
 * Give the app its CSRF key and whether its cookies are `__Host-`/Secure
 * (config.secureCookies), once in createApp: the checks have only the request.
 */
export function configureCsrf(app: Express, secretBox: SecretBox, secureCookies: boolean): void {
  app.set(KEY_SETTING, secretBox.macKey('csrf'));
  app.set(SECURE_SETTING, secureCookies);
}

export function secureOf(req: Request): boolean {
  return req.app.get(SECURE_SETTING) === true;
}

function keyOf(req: Request): Buffer {
  const key: unknown = req.app.get(KEY_SETTING);
  if (!Buffer.isBuffer(key)) throw new Error('the CSRF key is not set (useCsrfKey)');
  return key;
}

function sessionToken(key: Buffer, session: string): string {
  return hmacSha256(key, `session:${session}`);
}

function preSessionToken(key: Buffer, nonce: string): string {
  return `${nonce}.${hmacSha256(key, `pre-session:${nonce}`)}`;
}

function isPreSessionToken(key: Buffer, value: string): boolean {
  const [nonce, mac, ...rest] = value.split('.');
  return Boolean(nonce && mac && rest.length === 0 && safeEqual(value, preSessionToken(key, nonce)));
}

/** The token for the page being rendered (setting the cookie when it changed). */
export function csrfTokenFor(req: Request, res: Response, secure: boolean): string {
  const key = keyOf(req);
  const session = readCookie(req, SESSION_COOKIE, secure);
  const existing = readCookie(req, CSRF_COOKIE, secure);
  let token: string;
  if (session) token = sessionToken(key, session);
  else if (existing && isPreSessionToken(key, existing)) token = existing;
  else token = preSessionToken(key, randomBytes(24).toString('base64url'));
  if (existing !== token) setCookie(res, CSRF_COOKIE, token, { secure });
  return token;
}

/** The token a sign-in should leave in the browser: bound to the session it starts. */
export function setSessionCsrfCookie(req: Request, res: Response, session: string, secure: boolean): void {
  setCookie(res, CSRF_COOKIE, sessionToken(keyOf(req), session), { secure });
}

/** Whether `candidate` (a form field or header) is this browser's token. */
export function csrfTokenMatches(req: Request, candidate: unknown, secure: boolean): boolean {
  if (typeof candidate !== 'string' || candidate.length === 0) return false;
  const key = keyOf(req);
  const session = readCookie(req, SESSION_COOKIE, secure);
  if (session) return safeEqual(candidate, sessionToken(key, session));
  const cookie = readCookie(req, CSRF_COOKIE, secure);
  return cookie !== undefined && safeEqual(cookie, candidate) && isPreSessionToken(key, candidate);
}

/** A POST without the matching token gets a 403 "form expired" page. */
export function requireCsrf(): RequestHandler {
  return (req, res, next) => {
    const field = (req.body as Record<string, unknown> | undefined)?.['_csrf'];
    if (csrfTokenMatches(req, field, secureOf(req))) {
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

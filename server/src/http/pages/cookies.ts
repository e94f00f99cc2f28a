import { parse } from 'cookie';
import type { Request, Response } from 'express';

export const SESSION_COOKIE = 'pacer_session';
export const CSRF_COOKIE = 'pacer_csrf';
/** A browser that signed in to an account before (modules/accounts/login.service.ts). */
export const DEVICE_COOKIE = 'pacer_device';

/**
 * The name a cookie has on the wire. Over HTTPS every Pacer cookie carries the
 * `__Host-` prefix (RFC 6265bis §4.1.3.2): the browser then accepts it only
 * with `Secure`, `Path=/` and no `Domain`, so a sibling subdomain or a
 * plain-HTTP page cannot plant or overwrite it.
 */
export function cookieName(name: string, secure: boolean): string {
  return secure ? `__Host-${name}` : name;
}

export function readCookie(req: Request, name: string, secure: boolean): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  return parse(header)[cookieName(name, secure)];
}

export interface CookieOptions {
  readonly secure: boolean;
  readonly maxAgeMs?: number;
}

/** Every Pacer cookie: HttpOnly, SameSite=Lax, Path=/, no Domain; Secure and `__Host-` over HTTPS. */
export function setCookie(res: Response, name: string, value: string, options: CookieOptions): void {
  res.cookie(cookieName(name, options.secure), value, {
    httpOnly: true,
    sameSite: 'lax',
    secure: options.secure,
    path: '/',
    ...(options.maxAgeMs === undefined ? {} : { maxAge: options.maxAgeMs }),
  });
}

export function clearCookie(res: Response, name: string, secure: boolean): void {
  res.clearCookie(cookieName(name, secure), { httpOnly: true, sameSite: 'lax', secure, path: '/' });
}

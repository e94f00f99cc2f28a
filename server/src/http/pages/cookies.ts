import { parse } from 'cookie';
import type { Request, Response } from 'express';

export const SESSION_COOKIE = 'pacer_session';
export const CSRF_COOKIE = 'pacer_csrf';

export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  return parse(header)[name];
}

export interface CookieOptions {
  readonly secure: boolean;
  readonly maxAgeMs?: number;
}

/** Every Pacer cookie: HttpOnly, SameSite=Lax, Secure when served over HTTPS. */
export function setCookie(res: Response, name: string, value: string, options: CookieOptions): void {
  res.cookie(name, value, {
    httpOnly: true,
    sameSite: 'lax',
    secure: options.secure,
    path: '/',
    ...(options.maxAgeMs === undefined ? {} : { maxAge: options.maxAgeMs }),
  });
}

export function clearCookie(res: Response, name: string, secure: boolean): void {
  res.clearCookie(name, { httpOnly: true, sameSite: 'lax', secure, path: '/' });
}

import type { Request, Response } from 'express';
import type { User } from '../../db/tables.ts';

/**
 * The signed-in user of a page request (`loadSession` ran before), or
 * `undefined` after answering with a 303 to `/login?next=<returnTo>`: this
 * page, or for a form POST the page the form is on.
 */
export function signedInUserOr303(req: Request, res: Response, returnTo: string = req.originalUrl): User | undefined {
  const user = res.locals.sessionUser;
  if (user) return user;
  res.redirect(303, `/login?next=${encodeURIComponent(returnTo)}`);
  return undefined;
}

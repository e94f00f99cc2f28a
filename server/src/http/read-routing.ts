import type { RequestHandler, Response } from 'express';
import type { Db } from '../db/database.ts';
import type { ReadRouter } from '../db/read-replica.ts';
import type { Logger } from '../logger.ts';
import { noteGrantWrite } from '../modules/oauth/token.service.ts';
import { principalOf } from './bearer-auth.ts';

/**
 * The handle a GET route's service reads through: the replica, unless the
 * caller's grant wrote within the read-your-writes window or the replica is
 * not usable (db/read-replica.ts). The counterpart of `writeDepsOf`.
 */
export function readDbOf(res: { locals: Express.Locals }, deps: { readonly reads: ReadRouter }): Db {
  return deps.reads.readDbFor(principalOf(res).msSinceWrite);
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * With a replica, a REST write by a token is noted on its grant before the
 * answer goes out (`res.end` is held until the note is committed), so the
 * caller's next read, on whichever API process, already sees it and goes to
 * the primary. Refused writes (4xx/5xx) stored nothing and are not noted.
 * Without a replica this layer does nothing.
 */
export function noteWrites(deps: { readonly reads: ReadRouter; readonly logger: Logger }): RequestHandler {
  return (req, res, next) => {
    const principal = res.locals.principal;
    if (!deps.reads.replicated || !principal || !WRITE_METHODS.has(req.method)) {
      next();
      return;
    }
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    let noted = false;
    res.end = ((...args: unknown[]) => {
      if (noted || res.statusCode >= 400) return end(...args);
      noted = true;
      void noteGrantWrite(deps.reads.primary, principal.grantId)
        .catch((error: unknown) =>
          deps.logger.warn(
            { err: error, requestId: res.locals.requestId },
            'could not note a write for read-your-writes',
          ),
        )
        .finally(() => end(...args));
      return res;
    }) as Response['end'];
    next();
  };
}

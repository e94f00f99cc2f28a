import type { Db } from '../db/database.ts';
import { purgeExpired } from '../modules/accounts/maintenance.service.ts';
import { bindHandler } from './boss.ts';
import { purgeExpiredQueue } from './queues.ts';

/** Which service handles which queue. */
export function jobHandlers(deps: { readonly db: Db }) {
  return [
    bindHandler(purgeExpiredQueue, async (payload, context) => {
      const removed = await purgeExpired(deps.db, payload.graceDays);
      context.logger.info(removed, 'purged expired rows');
    }),
  ];
}

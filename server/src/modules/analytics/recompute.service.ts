import type { Db } from '../../db/database.ts';
import { type LoadAndRecoveryOutcome, recomputeLoadAndRecovery } from './analytics.service.ts';
import { findRecomputeRequest, settleRecomputeRequest } from './recompute.repository.ts';
import { recomputeFuel } from '../fuel/fuel.service.ts';
import { refreshRecommendations } from '../recommendations/refresh-recommendations.service.ts';

/**
 * Serve the user's pending recompute request: derived data from its date on,
 * then the recommendations the new numbers call for, written in one
 * transaction with the request's settlement, so a worker that dies half-way
 * leaves the old results and the request in place for the retry. A write
 * that arrives meanwhile changes the request, which then stays for the job
 * that write queued.
 */
export async function recomputeUser(
  db: Db,
  userId: string,
  now = new Date(),
): Promise<LoadAndRecoveryOutcome | undefined> {
  const request = await findRecomputeRequest(db, userId);
  if (!request) return undefined;
  return db.transaction().execute(async (trx) => {
    const outcome = await recomputeLoadAndRecovery(trx, userId, request.fromDate, now);
    await recomputeFuel(trx, userId, request.fromDate, now);
    await refreshRecommendations(trx, userId, now);
    await settleRecomputeRequest(trx, userId, request.requestedAt);
    return outcome;
  });
}

import type { Db } from '../../db/database.ts';
import { type LoadAndRecoveryOutcome, recomputeLoadAndRecovery } from './analytics.service.ts';
import { lockUserForRecompute, settleRecomputeRequest, takeRecomputeRequest } from './recompute.repository.ts';
import { recomputeFuel } from './fuel.service.ts';
import { refreshRecommendations } from './refresh-recommendations.service.ts';

/** A run serves the request again when writes keep arriving, at most this often. */
const MAX_ROUNDS = 3;

/**
 * Serve the user's pending recompute request: derived data from its date on,
 * then the recommendations the new numbers call for, written in one
 * transaction with the request's settlement, so a worker that dies half-way
 * leaves the old results and the request in place for the retry. A write
 * that lands during a run changes the request, which is then served again
 * here: that write's job may have been folded into this one (one queued job
 * per user), so nothing else would pick it up.
 */
export async function recomputeUser(
  db: Db,
  userId: string,
  now = new Date(),
): Promise<LoadAndRecoveryOutcome | undefined> {
  let outcome: LoadAndRecoveryOutcome | undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const served = await serveRequest(db, userId, now);
    if (!served) break;
    outcome = served.outcome;
    if (served.settled) break;
  }
  return outcome;
}

async function serveRequest(
  db: Db,
  userId: string,
  now: Date,
): Promise<{ readonly outcome: LoadAndRecoveryOutcome; readonly settled: boolean } | undefined> {
  const request = await takeRecomputeRequest(db, userId);
  if (!request) return undefined;
  return db.transaction().execute(async (trx) => {
    // One recompute per user at a time, in any process: a second waits here, then reads fresh data.
    await lockUserForRecompute(trx, userId);
    const outcome = await recomputeLoadAndRecovery(trx, userId, request.fromDate, now);
    await recomputeFuel(trx, userId, request.fromDate, now);
    await refreshRecommendations(trx, userId, now);
    const settled = await settleRecomputeRequest(trx, userId, request.requestedAt);
    return { outcome, settled };
  });
}

import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import type { Db } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import { DRAIN_BATCH, listUsersToRecompute, recomputeUser } from './recompute.service.ts';

export interface DerivedDrainerOptions {
  readonly db: Db;
  readonly logger: Logger;
  /** PACER_DERIVED_POLL_MS: the pause between passes that found less than a full batch. */
  readonly pollMs: number;
}

export interface DerivedDrainer {
  /** Runs that served change records since start, one per user and pass (a burst of writes is one). */
  readonly runs: number;
  /** Stop polling; the run in flight finishes first. */
  stop(): Promise<void>;
}

/**
 * Users recomputed at once by one process: a run spends most of its time on
 * round trips, so a few side by side keep many users' lag down while holding
 * only that many pool connections.
 */
const RUNS_AT_ONCE = 4;

/** A user whose run failed waits this long before the next attempt, doubling per failure up to the max. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 120_000;

/**
 * The worker role's derived-data loop (docs/design.md §3 "Derived data"):
 * poll for users with change records, and recompute each in one run that
 * consumes all of that user's records. Polling rather than LISTEN, so it
 * works through a transaction-mode pooler; the poll interval is also the
 * window in which a burst of writes coalesces. Several processes may drain
 * at once: a user held by one is skipped by the others (`recomputeUser`).
 */
export function startDerivedDrainer(options: DerivedDrainerOptions): DerivedDrainer {
  const logger = options.logger.child({ worker: 'derived' });
  const stopping = new AbortController();
  const failures = new Map<string, { readonly count: number; readonly retryAt: number }>();
  const runsAtOnce = pLimit(RUNS_AT_ONCE);
  let runs = 0;

  async function recompute(userId: string): Promise<boolean> {
    try {
      const run = await recomputeUser(options.db, userId);
      failures.delete(userId);
      if (!run) return false;
      runs += 1;
      logger.debug(run, 'derived data recomputed');
      return true;
    } catch (error) {
      // The run rolled back: its change records stay, and the user is tried again after a pause.
      const count = (failures.get(userId)?.count ?? 0) + 1;
      const delay = Math.min(RETRY_FIRST_MS * 2 ** (count - 1), RETRY_MAX_MS);
      failures.set(userId, { count, retryAt: Date.now() + delay });
      logger.error({ err: error, userId, attempt: count }, 'recompute failed; it will be retried');
      return false;
    }
  }

  /** One pass; true when another should follow at once (a full batch, some of it served). */
  async function pass(): Promise<boolean> {
    const now = Date.now();
    const waiting = [...failures].filter(([, failure]) => failure.retryAt > now).map(([userId]) => userId);
    const users = await listUsersToRecompute(options.db, waiting);
    const outcomes = await Promise.all(
      users.map((userId) => runsAtOnce(async () => !stopping.signal.aborted && (await recompute(userId)))),
    );
    return users.length === DRAIN_BATCH && outcomes.includes(true);
  }

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      let again = false;
      try {
        again = await pass();
      } catch (error) {
        logger.error({ err: error }, 'looking for derived-data changes failed');
      }
      if (!again) await sleep(options.pollMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  })();

  return {
    get runs() {
      return runs;
    },
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}

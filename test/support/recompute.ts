import { expect, vi } from 'vitest';
import type { Db } from '../../server/src/db/database.ts';

/**
 * Derived data (training load, recovery, fuel, recommendations) is recomputed
 * in the background: wait until the user's change records have been served
 * (gone: a run deletes them in the transaction that stores its numbers),
 * observing state rather than sleeping. `check` may add a condition that must
 * hold too.
 */
export async function waitForRecompute(
  db: Db,
  userId: string,
  check: () => Promise<void> = () => Promise.resolve(),
  timeoutMs = 30_000,
): Promise<void> {
  await vi.waitFor(
    async () => {
      const pending = await db
        .selectFrom('derivedChanges')
        .select('id')
        .where('userId', '=', userId)
        .limit(1)
        .executeTakeFirst();
      expect(pending).toBeUndefined();
      await check();
    },
    { timeout: timeoutMs, interval: 50 },
  );
}

import { sql } from 'kysely';
import type { AsyncJobProgress, AsyncJobType } from '@pacer/contract';
import type { DbOrTrx } from '../../db/database.ts';
import type { AsyncJobRow } from '../../db/tables.ts';

export interface AsyncJobInsert {
  readonly userId: string;
  readonly clientId: string;
  readonly type: AsyncJobType;
  readonly input: Record<string, unknown>;
}

export async function insertAsyncJob(db: DbOrTrx, job: AsyncJobInsert): Promise<AsyncJobRow> {
  return db
    .insertInto('asyncJobs')
    .values({ ...job, status: 'queued', input: JSON.stringify(job.input) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The user's job of that type; another user's is not found. */
export async function findUserAsyncJob(
  db: DbOrTrx,
  userId: string,
  type: AsyncJobType,
  id: string,
): Promise<AsyncJobRow | undefined> {
  return db
    .selectFrom('asyncJobs')
    .selectAll()
    .where('id', '=', id)
    .where('userId', '=', userId)
    .where('type', '=', type)
    .executeTakeFirst();
}

/**
 * A worker takes the job: `queued` (first attempt) or `running` (its previous
 * worker died) becomes `running`, one attempt more. A finished job is not
 * taken again, so a repeated pg-boss delivery cannot finish a job twice.
 */
export async function startAsyncJobAttempt(db: DbOrTrx, id: string): Promise<AsyncJobRow | undefined> {
  return db
    .updateTable('asyncJobs')
    .set({
      status: 'running',
      attempts: sql`attempts + 1`,
      startedAt: sql`coalesce(started_at, now())`,
      updatedAt: sql`now()`,
    })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .returningAll()
    .executeTakeFirst();
}

export async function setAsyncJobProgress(db: DbOrTrx, id: string, progress: AsyncJobProgress): Promise<void> {
  await db
    .updateTable('asyncJobs')
    .set({ progress: JSON.stringify(progress), updatedAt: sql`now()` })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute();
}

/** `running -> completed`, exactly once: false when the job was no longer running. */
export async function completeAsyncJob(db: DbOrTrx, id: string, result: Record<string, unknown>): Promise<boolean> {
  const updated = await db
    .updateTable('asyncJobs')
    .set({
      status: 'completed',
      result: JSON.stringify(result),
      progress: null,
      completedAt: sql`now()`,
      updatedAt: sql`now()`,
    })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/** `queued | running -> failed`, with the reason shown to the caller. */
export async function failAsyncJob(db: DbOrTrx, id: string, error: string): Promise<boolean> {
  const updated = await db
    .updateTable('asyncJobs')
    .set({ status: 'failed', error, progress: null, completedAt: sql`now()`, updatedAt: sql`now()` })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

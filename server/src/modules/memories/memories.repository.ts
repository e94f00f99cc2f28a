import { sql } from 'kysely';
import type { MemoryCategory } from '@pacer/contract';
import type { DbOrTrx } from '../../db/database.ts';
import type { MemoryRow } from '../../db/tables.ts';

export interface MemoryInsert {
  readonly userId: string;
  readonly content: string;
  readonly category: MemoryCategory;
  readonly pinned: boolean;
  readonly source: string;
}

/**
 * Insert unless the user already keeps `max` memories; one statement, so
 * concurrent inserts cannot overshoot the cap by more than the race window
 * of a single snapshot (the count and the insert share it).
 */
export async function insertMemoryWithinCap(
  db: DbOrTrx,
  memory: MemoryInsert,
  max: number,
): Promise<MemoryRow | undefined> {
  const { rows } = await sql<MemoryRow>`
    insert into memories (user_id, content, category, pinned, source)
    select ${memory.userId}, ${memory.content}, ${memory.category}, ${memory.pinned}, ${memory.source}
    where (select count(*) from memories where user_id = ${memory.userId}) < ${max}
    returning *`.execute(db);
  return rows[0];
}

export interface MemoryFilter {
  readonly category?: MemoryCategory | undefined;
  readonly pinned?: boolean | undefined;
}

/** Pinned first, then newest first. */
export async function listMemories(db: DbOrTrx, userId: string, filter: MemoryFilter): Promise<MemoryRow[]> {
  let query = db.selectFrom('memories').selectAll().where('userId', '=', userId);
  if (filter.category !== undefined) query = query.where('category', '=', filter.category);
  if (filter.pinned !== undefined) query = query.where('pinned', '=', filter.pinned);
  return query.orderBy('pinned', 'desc').orderBy('createdAt', 'desc').orderBy('id').execute();
}

/** True when the user's memory existed and is gone. */
export async function deleteMemory(db: DbOrTrx, userId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('memories').where('userId', '=', userId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

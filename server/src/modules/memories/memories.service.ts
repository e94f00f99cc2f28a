import {
  MEMORIES_PER_USER_MAX,
  type Memory,
  type MemoryCreate,
  type MemoryList,
  type MemoryListQuery,
} from '@pacer/contract';
import type { Db } from '../../db/database.ts';
import type { MemoryRow } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import type { Actor } from '../../lib/actor.ts';
import { deleteMemory, insertMemoryWithinCap, listMemories } from './memories.repository.ts';

/** Keep a fact about the athlete; the calling app is its source. At most `MEMORIES_PER_USER_MAX` per user. */
export async function rememberMemory(db: Db, actor: Actor, input: MemoryCreate): Promise<Memory> {
  const row = await insertMemoryWithinCap(
    db,
    {
      userId: actor.userId,
      content: input.content,
      category: input.category,
      pinned: input.pinned,
      source: actor.source,
    },
    MEMORIES_PER_USER_MAX,
  );
  if (!row) {
    throw new AppError(
      'validation_failed',
      `At most ${MEMORIES_PER_USER_MAX} memories are kept per athlete: forget one (list_memories, forget_memory) before adding another.`,
      { errors: [{ path: 'content', message: `at most ${MEMORIES_PER_USER_MAX} memories per athlete` }] },
    );
  }
  return toMemory(row);
}

export async function listUserMemories(db: Db, actor: Actor, query: MemoryListQuery): Promise<MemoryList> {
  const rows = await listMemories(db, actor.userId, query);
  return { items: rows.map(toMemory) };
}

/** Another user's id is "not found" too. */
export async function forgetMemory(db: Db, actor: Actor, id: string): Promise<void> {
  if (!(await deleteMemory(db, actor.userId, id))) throw new AppError('not_found', `No memory ${id}.`);
}

function toMemory(row: MemoryRow): Memory {
  return {
    id: row.id,
    content: row.content,
    category: row.category,
    pinned: row.pinned,
    source: row.source,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

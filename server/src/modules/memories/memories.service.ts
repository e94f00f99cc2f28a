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
import type { TokenPrincipal } from '../oauth/token.service.ts';
import { deleteMemory, insertMemoryWithinCap, listMemories } from './memories.repository.ts';

/** Keep a fact about the athlete; the calling app is its source. At most `MEMORIES_PER_USER_MAX` per user. */
export async function rememberMemory(db: Db, principal: TokenPrincipal, input: MemoryCreate): Promise<Memory> {
  const row = await insertMemoryWithinCap(
    db,
    {
      userId: principal.userId,
      content: input.content,
      category: input.category,
      pinned: input.pinned,
      source: principal.clientId,
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

export async function listUserMemories(db: Db, principal: TokenPrincipal, query: MemoryListQuery): Promise<MemoryList> {
  const rows = await listMemories(db, principal.userId, query);
  return { items: rows.map(toMemory) };
}

/** Another user's id is "not found" too. */
export async function forgetMemory(db: Db, principal: TokenPrincipal, id: string): Promise<void> {
  if (!(await deleteMemory(db, principal.userId, id))) throw new AppError('not_found', `No memory ${id}.`);
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

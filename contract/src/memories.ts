import { z } from 'zod';
import { TimestampSchema } from './common.ts';

/**
 * Memories: a small per-user store of facts an AI assistant keeps about the
 * athlete between conversations (goals, injuries, preferences). Read and
 * written over MCP only (`list_memories`, `remember_memory`,
 * `forget_memory`), with the `memory:*` scopes.
 */
export const MEMORY_CATEGORIES = [
  'goal',
  'injury',
  'health',
  'preference',
  'schedule',
  'equipment',
  'nutrition',
  'other',
] as const;
export const MemoryCategorySchema = z.enum(MEMORY_CATEGORIES);
export type MemoryCategory = z.infer<typeof MemoryCategorySchema>;

export const MEMORY_CONTENT_MAX = 600;
/** Memories one athlete may keep; the oldest unpinned must be forgotten to add more. */
export const MEMORIES_PER_USER_MAX = 200;

export const MemoryCreateSchema = z
  .strictObject({
    content: z
      .string()
      .trim()
      .min(1)
      .max(MEMORY_CONTENT_MAX)
      .describe(`The fact to remember, in one or two sentences, at most ${MEMORY_CONTENT_MAX} characters.`),
    category: MemoryCategorySchema.default('other').describe(`One of ${MEMORY_CATEGORIES.join(', ')}.`),
    pinned: z.boolean().default(false).describe('Pinned memories are listed first and matter most.'),
  })
  .meta({ title: 'MemoryCreate' });
export type MemoryCreate = z.infer<typeof MemoryCreateSchema>;

export const MemorySchema = z
  .object({
    id: z.uuid(),
    content: z.string(),
    category: MemoryCategorySchema,
    pinned: z.boolean(),
    source: z.string().describe('Client id of the app that stored it.'),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .meta({ title: 'Memory' });
export type Memory = z.infer<typeof MemorySchema>;

export const MemoryListQuerySchema = z.strictObject({
  category: MemoryCategorySchema.optional().describe('Only memories of this category.'),
  pinned: z.boolean().optional().describe('Only pinned (`true`) or unpinned (`false`) memories.'),
});
export type MemoryListQuery = z.infer<typeof MemoryListQuerySchema>;

export const MemoryListSchema = z
  .object({ items: z.array(MemorySchema).describe('Pinned first, then newest first.') })
  .meta({ title: 'MemoryList' });
export type MemoryList = z.infer<typeof MemoryListSchema>;

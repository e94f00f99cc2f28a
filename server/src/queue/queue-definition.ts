import type { Queue, WorkOptions } from 'pg-boss';
import type { z } from 'zod';

/**
 * A queue is a contract: its name, the schema of its payload and its options
 * live together, so a producer cannot send what the worker would not accept.
 */
export interface QueueDefinition<TPayload> {
  readonly name: string;
  readonly payload: z.ZodType<TPayload>;
  readonly options: Omit<Queue, 'name'>;
  readonly work: WorkOptions;
}

export function defineQueue<TPayload>(definition: QueueDefinition<TPayload>): QueueDefinition<TPayload> {
  return definition;
}

import { z } from 'zod';
import { TimestampSchema } from './common.ts';

/**
 * Durable async jobs behind the MCP async tools (specification §2.6, §4.2):
 * `generate_workout_structure` -> `generation_run_id` (`structure_generation`),
 * `generate_report` -> `report_id` (`report`), `sync_data` -> `run_id`
 * (`trigger_run`). Polled with `get_async_job_status`.
 */
export const ASYNC_JOB_TYPES = ['structure_generation', 'report', 'trigger_run'] as const;
export const AsyncJobTypeSchema = z.enum(ASYNC_JOB_TYPES);
export type AsyncJobType = z.infer<typeof AsyncJobTypeSchema>;

/** `queued -> running -> completed | failed`; a job whose worker died runs again from `running`. */
export const ASYNC_JOB_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export const AsyncJobStatusValueSchema = z.enum(ASYNC_JOB_STATUSES);
export type AsyncJobStatusValue = z.infer<typeof AsyncJobStatusValueSchema>;

/** The specification's input object of `get_async_job_status`, exactly. */
export const AsyncJobStatusInputSchema = z.strictObject({
  job_type: AsyncJobTypeSchema.describe(
    '`structure_generation` (id from generate_workout_structure), `report` (generate_report) or `trigger_run` (sync_data).',
  ),
  job_id: z
    .string()
    .min(1)
    .max(100)
    .describe('The id the async tool returned: `generation_run_id`, `report_id` or `run_id`.'),
});
export type AsyncJobStatusInput = z.infer<typeof AsyncJobStatusInputSchema>;

export const AsyncJobProgressSchema = z
  .object({
    step: z.number().int().min(0).describe('Steps done.'),
    total: z.number().int().min(1).describe('Steps in all.'),
    message: z.string().describe('What the job is doing now.'),
  })
  .meta({ title: 'AsyncJobProgress' });
export type AsyncJobProgress = z.infer<typeof AsyncJobProgressSchema>;

export const AsyncJobStatusSchema = z
  .object({
    job_type: AsyncJobTypeSchema,
    job_id: z.uuid(),
    status: AsyncJobStatusValueSchema,
    completed: z.boolean().describe('True once the job finished successfully.'),
    failed: z.boolean().describe('True when the job failed for good; see `error`.'),
    progress: AsyncJobProgressSchema.optional().describe('While running: how far the job is.'),
    poll_after_seconds: z
      .number()
      .int()
      .min(0)
      .describe('Wait this long before polling again; 0 once the job has finished.'),
    error: z.string().optional().describe('Why the job failed.'),
    result: z.record(z.string(), z.unknown()).optional().describe("The job's result once completed."),
    created_at: TimestampSchema,
    started_at: TimestampSchema.optional(),
    completed_at: TimestampSchema.optional(),
  })
  .meta({ title: 'AsyncJobStatus' });
export type AsyncJobStatus = z.infer<typeof AsyncJobStatusSchema>;

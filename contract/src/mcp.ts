import { z } from 'zod';
import { IdempotencyKeySchema, LocalDateSchema } from './common.ts';
import { AsyncJobStatusValueSchema } from './jobs.ts';
import { ReportTypeSchema } from './reports.ts';

/**
 * Schemas of the MCP tools that have no REST twin. MCP wire fields are
 * snake_case, as the specification writes them (`job_type`, `report_id`);
 * tools that mirror a REST route take and answer that route's schemas.
 */

/** Write and async tools take the key as an argument too: hosts rarely let a model set headers. */
export const McpIdempotencyArgumentShape = {
  idempotency_key: IdempotencyKeySchema.optional().describe(
    'Optional, any unique string: a retry with the same key and arguments within 24 h returns the first result instead of acting again.',
  ),
};

export const CurrentTimeSchema = z
  .object({
    date: LocalDateSchema.describe("Today in the athlete's time zone."),
    time: z.string().describe('Local wall-clock time, `HH:MM:SS`.'),
    weekday: z.string().describe('Local day of the week, e.g. `Monday`.'),
    time_zone: z.string().describe('IANA time zone of the profile, e.g. `Europe/Berlin`.'),
    utc_offset: z.string().describe('Offset from UTC now, `±HH:MM`.'),
    now: z.string().describe('The current instant as ISO 8601 with the local offset.'),
  })
  .meta({ title: 'CurrentTime' });
export type CurrentTime = z.infer<typeof CurrentTimeSchema>;

export const GenerateReportInputSchema = z.strictObject({
  type: ReportTypeSchema.describe(
    '`WEEKLY_TRAINING` (workouts, training load, wellness and recovery of 7 days), `LAST_3_WORKOUTS` (the three most recent workouts) or `WEEKLY_NUTRITION` (intake and fuel of 7 days).',
  ),
  end_date: LocalDateSchema.optional().describe(
    "Last day the report covers (weekly reports cover the 7 days ending here). Default: today in the athlete's time zone.",
  ),
  ...McpIdempotencyArgumentShape,
});
export type GenerateReportInput = z.infer<typeof GenerateReportInputSchema>;

export const SYNC_DAYS_MAX = 31;
export const SyncDataInputSchema = z.strictObject({
  from: LocalDateSchema.optional().describe(
    'First day whose failed deliveries are re-applied. Default: 6 days before `to`.',
  ),
  to: LocalDateSchema.optional().describe(
    "Last day whose failed deliveries are re-applied. Default: today in the athlete's time zone.",
  ),
  ...McpIdempotencyArgumentShape,
});
export type SyncDataInput = z.infer<typeof SyncDataInputSchema>;

export const WORKOUT_INTENTS = ['recovery', 'endurance', 'tempo', 'sweet_spot', 'threshold', 'vo2max'] as const;
export const WorkoutIntentSchema = z.enum(WORKOUT_INTENTS);
export type WorkoutIntent = z.infer<typeof WorkoutIntentSchema>;

export const GenerateWorkoutStructureInputSchema = z.strictObject({
  planned_workout_id: z.uuid().describe('The planned workout to write the steps to.'),
  intent: WorkoutIntentSchema.describe(
    'What the session trains: `recovery`, `endurance`, `tempo`, `sweet_spot`, `threshold` or `vo2max`.',
  ),
  duration_secs: z
    .number()
    .int()
    .min(900)
    .max(6 * 3600)
    .optional()
    .describe("Total length, seconds (15 min to 6 h). Default: the planned workout's duration, else 1 hour."),
  ...McpIdempotencyArgumentShape,
});
export type GenerateWorkoutStructureInput = z.infer<typeof GenerateWorkoutStructureInputSchema>;

const accepted = {
  status: AsyncJobStatusValueSchema.describe('`queued` right after the call.'),
  poll_after_seconds: z.number().int().min(0).describe('Call `get_async_job_status` after this many seconds.'),
};
export const ReportJobAcceptedSchema = z
  .object({ report_id: z.uuid(), job_type: z.literal('report'), ...accepted })
  .meta({ title: 'ReportJobAccepted' });
export const SyncJobAcceptedSchema = z
  .object({ run_id: z.uuid(), job_type: z.literal('trigger_run'), ...accepted })
  .meta({ title: 'SyncJobAccepted' });
export const StructureJobAcceptedSchema = z
  .object({ generation_run_id: z.uuid(), job_type: z.literal('structure_generation'), ...accepted })
  .meta({ title: 'StructureJobAccepted' });

export const IdInputSchema = z.strictObject({ id: z.uuid().describe('The record id.') });
export const DeletedSchema = z.object({ id: z.uuid(), deleted: z.literal(true) }).meta({ title: 'Deleted' });

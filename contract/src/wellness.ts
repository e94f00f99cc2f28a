import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  DateInputSchema,
  IdempotencyHeadersSchema,
  DateRangeQuerySchema,
  LocalDateSchema,
  RawJsonSchema,
  TimestampSchema,
  pageOf,
  problemResponses,
  requireScopes,
  writeProblemResponses,
} from './common.ts';

const c = initContract();

/** A number in a physiological range; `null` clears the stored value. */
const num = (min: number, max: number, description: string) =>
  z.number().min(min).max(max).nullable().optional().describe(description);
const int = (min: number, max: number, description: string) =>
  z.number().int().min(min).max(max).nullable().optional().describe(description);

const DAY_SECS = 86_400;

/**
 * The wellness fields, each with the range a real measurement can take. The
 * specification shows hrv, restingHr, sleepSecs, weight and vo2max and marks
 * the list partial; docs/design.md §3 widens it to what wearables report daily.
 */
export const wellnessFieldShape = {
  hrv: num(1, 300, 'Heart rate variability (rMSSD), milliseconds.'),
  restingHr: int(20, 150, 'Resting heart rate, bpm.'),
  sleepSecs: int(0, DAY_SECS, 'Total sleep, seconds.'),
  sleepDeepSecs: int(0, DAY_SECS, 'Deep sleep, seconds.'),
  sleepLightSecs: int(0, DAY_SECS, 'Light sleep, seconds.'),
  sleepRemSecs: int(0, DAY_SECS, 'REM sleep, seconds.'),
  sleepAwakeSecs: int(0, DAY_SECS, 'Time awake in bed, seconds.'),
  sleepScore: int(0, 100, 'Sleep score from the device, 0-100.'),
  weight: num(20, 400, 'Body weight, kilograms.'),
  bodyFat: num(1, 75, 'Body fat, percent.'),
  vo2max: num(10, 100, 'Estimated VO2 max, ml/kg/min.'),
  spO2: num(50, 100, 'Blood oxygen saturation, percent.'),
  respiration: num(4, 60, 'Average respiration rate, breaths per minute.'),
  steps: int(0, 200_000, 'Steps.'),
  stress: int(0, 100, 'Average stress level, 0-100.'),
  mood: int(1, 5, 'Mood, 1 (worst) to 5 (best).'),
  fatigue: int(1, 5, 'Fatigue, 1 (fresh) to 5 (exhausted).'),
  soreness: int(1, 5, 'Muscle soreness, 1 (none) to 5 (severe).'),
  motivation: int(1, 5, 'Motivation, 1 (none) to 5 (high).'),
  comments: z.string().max(2000).nullable().optional().describe('Free-text note, at most 2000 characters.'),
} as const;
export type WellnessField = keyof typeof wellnessFieldShape;
export const WELLNESS_FIELDS = Object.keys(wellnessFieldShape) as WellnessField[];

export const WellnessUpsertSchema = z
  .strictObject({
    date: DateInputSchema,
    ...wellnessFieldShape,
    rawJson: RawJsonSchema.optional(),
  })
  .meta({ title: 'WellnessUpsert' });
export type WellnessUpsert = z.infer<typeof WellnessUpsertSchema>;

/** In a stored record every field is present: a value, or `null` when unknown. */
const storedShape = Object.fromEntries(
  Object.entries(wellnessFieldShape).map(([key, schema]) => [key, schema.unwrap()]),
) as { [K in WellnessField]: ReturnType<(typeof wellnessFieldShape)[K]['unwrap']> };

export const WellnessRecordSchema = z
  .object({
    date: LocalDateSchema,
    ...storedShape,
    rawJsonBySource: z
      .record(z.string(), RawJsonSchema)
      .describe('The last `rawJson` each source app sent for this date, keyed by its client id.'),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .meta({ title: 'WellnessRecord' });
export type WellnessRecord = z.infer<typeof WellnessRecordSchema>;

export const wellnessContract = c.router({
  upsertWellness: {
    method: 'POST',
    path: '/api/wellness',
    summary: 'Create or update the wellness record of one day',
    description:
      'Upsert keyed on the calendar date. Fields present overwrite, `null` clears, absent fields keep their stored value. Unknown keys are refused; put extra data in `rawJson`.',
    body: WellnessUpsertSchema,
    headers: IdempotencyHeadersSchema,
    responses: {
      200: WellnessRecordSchema.describe('The record existed and was updated.'),
      201: WellnessRecordSchema.describe('The record was created.'),
      ...writeProblemResponses,
    },
    metadata: requireScopes('health:write'),
    strictStatusCodes: true,
  },
  listWellness: {
    method: 'GET',
    path: '/api/wellness',
    summary: 'List wellness records in a date range',
    query: DateRangeQuerySchema,
    responses: {
      200: pageOf(WellnessRecordSchema).meta({ title: 'WellnessPage' }),
      ...problemResponses,
    },
    metadata: requireScopes('health:read'),
    strictStatusCodes: true,
  },
});

import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  DateInputSchema,
  IdempotencyHeadersSchema,
  DateRangeQuerySchema,
  LocalDateSchema,
  TimestampSchema,
  notFoundResponses,
  pageOf,
  problemResponses,
  requireScopes,
  writeProblemResponses,
} from './common.ts';

const c = initContract();

export const PLANNED_SPORTS = [
  'ride',
  'run',
  'swim',
  'walk',
  'hike',
  'row',
  'ski',
  'strength',
  'yoga',
  'other',
] as const;
export const PlannedSportSchema = z.enum(PLANNED_SPORTS);
export type PlannedSport = z.infer<typeof PlannedSportSchema>;

/** Bounds of a structure (docs/design.md §3 "Planned workouts"). */
export const MAX_STRUCTURE_STEPS = 100;
export const MAX_INTERVAL_STEPS = 20;
export const MAX_INTERVAL_REPEAT = 100;
const DAY_SECS = 86_400;

/** `HH:MM`, 24-hour clock, the user's local time. */
export const TimeOfDaySchema = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM (24-hour clock)')
  .describe("Local start time, `HH:MM` (24-hour clock) in the user's time zone.");

export const StepDurationSchema = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('time'),
      secs: z.number().int().min(1).max(DAY_SECS).describe('Duration, seconds.'),
    }),
    z.strictObject({
      type: z.literal('distance'),
      meters: z.number().min(1).max(500_000).describe('Distance, metres.'),
    }),
  ])
  .meta({ title: 'StepDuration', description: 'How long the step lasts: a time in seconds or a distance in metres.' });
export type StepDuration = z.infer<typeof StepDurationSchema>;

export const StepTargetSchema = z
  .discriminatedUnion('type', [
    z
      .strictObject({
        type: z.literal('power'),
        minPercentFtp: z.number().min(0).max(400).describe('Lower bound, percent of FTP.'),
        maxPercentFtp: z
          .number()
          .min(0)
          .max(400)
          .describe('Upper bound, percent of FTP; equal to the lower for one value.'),
      })
      .refine((target) => target.minPercentFtp <= target.maxPercentFtp, {
        message: 'must not be below `minPercentFtp`',
        path: ['maxPercentFtp'],
      }),
    z.strictObject({
      type: z.literal('heartRateZone'),
      zone: z.number().int().min(1).max(5).describe('Heart-rate zone, 1 (easy) to 5 (maximal).'),
    }),
    z
      .strictObject({
        type: z.literal('pace'),
        minSecsPerKm: z.number().min(60).max(3600).describe('Fast end of the range, seconds per kilometre.'),
        maxSecsPerKm: z
          .number()
          .min(60)
          .max(3600)
          .describe('Slow end of the range, seconds per kilometre; equal to the fast end for one value.'),
      })
      .refine((target) => target.minSecsPerKm <= target.maxSecsPerKm, {
        message: 'must not be below `minSecsPerKm`',
        path: ['maxSecsPerKm'],
      }),
  ])
  .meta({
    title: 'StepTarget',
    description: 'Intensity of a step: a range in percent of FTP, a heart-rate zone, or a pace range.',
  });
export type StepTarget = z.infer<typeof StepTargetSchema>;

const stepFields = {
  duration: StepDurationSchema,
  target: StepTargetSchema.optional().describe('Intensity; without one the step is free.'),
  label: z.string().trim().min(1).max(200).optional().describe('Short instruction shown with the step.'),
};

/** A step inside an interval block: the work and recovery parts of each repeat. */
export const IntervalPartSchema = z
  .strictObject({ type: z.enum(['work', 'recovery', 'steady']), ...stepFields })
  .meta({ title: 'IntervalPart' });
export type IntervalPart = z.infer<typeof IntervalPartSchema>;

/** A single top-level step. */
export const SimpleStepSchema = z
  .strictObject({ type: z.enum(['warmup', 'steady', 'work', 'recovery', 'cooldown']), ...stepFields })
  .meta({ title: 'SimpleStep' });
export type SimpleStep = z.infer<typeof SimpleStepSchema>;

/**
 * `repeat` times its parts in order. Parts are simple steps, so a structure
 * nests at most two levels deep (an interval cannot hold an interval).
 */
export const IntervalStepSchema = z
  .strictObject({
    type: z.literal('interval'),
    repeat: z.number().int().min(1).max(MAX_INTERVAL_REPEAT).describe('How many times the parts are done.'),
    steps: z
      .array(IntervalPartSchema)
      .min(1)
      .max(MAX_INTERVAL_STEPS)
      .describe(`The parts of one repeat, in order, at most ${MAX_INTERVAL_STEPS}.`),
    label: z.string().trim().min(1).max(200).optional().describe('Short instruction shown with the block.'),
  })
  .meta({ title: 'IntervalStep' });
export type IntervalStep = z.infer<typeof IntervalStepSchema>;

export const PlannedStepSchema = z.discriminatedUnion('type', [SimpleStepSchema, IntervalStepSchema]);
export type PlannedStep = z.infer<typeof PlannedStepSchema>;

/** Every step written, interval blocks and their parts included (repeats are not multiplied out). */
export function countStructureSteps(steps: readonly PlannedStep[]): number {
  return steps.reduce((count, step) => count + 1 + (step.type === 'interval' ? step.steps.length : 0), 0);
}

export const PlannedStructureSchema = z
  .strictObject({
    steps: z
      .array(PlannedStepSchema)
      .min(1)
      .max(MAX_STRUCTURE_STEPS)
      .describe('The steps in order. Interval blocks hold their own parts; a structure nests at most two levels.'),
  })
  .refine((structure) => countStructureSteps(structure.steps) <= MAX_STRUCTURE_STEPS, {
    message: `at most ${MAX_STRUCTURE_STEPS} steps in all, interval blocks and their parts included`,
    path: ['steps'],
  })
  .meta({
    title: 'PlannedStructure',
    description: `Ordered steps; at most ${MAX_STRUCTURE_STEPS} in all, counting each interval block and each of its parts once.`,
  });
export type PlannedStructure = z.infer<typeof PlannedStructureSchema>;

const title = z.string().trim().min(1).max(200).describe('Title, at most 200 characters.');
const optionalFields = {
  timeOfDay: TimeOfDaySchema.nullable().optional(),
  description: z.string().max(10_000).nullable().optional().describe('Free text, at most 10,000 characters.'),
  durationSecs: z.number().int().min(1).max(DAY_SECS).nullable().optional().describe('Planned duration, seconds.'),
  trainingStress: z
    .number()
    .min(0)
    .max(1000)
    .nullable()
    .optional()
    .describe('Planned training stress (TSS-like score; 100 = one hour at threshold).'),
  // Not described here: a titled component must read the same in requests and responses.
  structure: PlannedStructureSchema.nullable().optional(),
};

export const PlannedWorkoutCreateSchema = z
  .strictObject({
    date: DateInputSchema,
    sport: PlannedSportSchema,
    title,
    ...optionalFields,
  })
  .meta({ title: 'PlannedWorkoutCreate' });
export type PlannedWorkoutCreate = z.infer<typeof PlannedWorkoutCreateSchema>;

export const PlannedWorkoutPatchSchema = z
  .strictObject({
    date: DateInputSchema.optional(),
    sport: PlannedSportSchema.optional(),
    title: title.optional(),
    ...optionalFields,
  })
  .meta({
    title: 'PlannedWorkoutPatch',
    description:
      'Fields present overwrite, `null` clears, absent fields keep their value. `structure` is replaced whole.',
  });
export type PlannedWorkoutPatch = z.infer<typeof PlannedWorkoutPatchSchema>;

export const PlannedWorkoutSchema = z
  .object({
    id: z.uuid(),
    date: LocalDateSchema,
    timeOfDay: z.string().nullable().describe('`HH:MM` local start time, or `null` for "any time that day".'),
    sport: PlannedSportSchema,
    title: z.string(),
    description: z.string().nullable(),
    durationSecs: z.number().int().nullable().describe('Planned duration, seconds.'),
    trainingStress: z.number().nullable().describe('Planned training stress.'),
    structure: PlannedStructureSchema.nullable(),
    source: z.string().describe('Client id of the app that created the workout.'),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .meta({ title: 'PlannedWorkout' });
export type PlannedWorkout = z.infer<typeof PlannedWorkoutSchema>;

/**
 * Same parameters as every date-keyed list, but a plan looks ahead: with
 * neither bound the range is today and the 29 days after.
 */
export const PlannedWorkoutListQuerySchema = DateRangeQuerySchema.extend({
  from: LocalDateSchema.optional().describe(
    "First date, inclusive. Default: 29 days before `to` when `to` is given, else today in the user's time zone.",
  ),
  to: LocalDateSchema.optional().describe('Last date, inclusive. Default: 29 days after `from`.'),
});
export type PlannedWorkoutListQuery = z.infer<typeof PlannedWorkoutListQuerySchema>;

const IdParamsSchema = z.strictObject({ id: z.uuid().describe('Planned workout id.') });

export const plannedWorkoutsContract = c.router({
  createPlannedWorkout: {
    method: 'POST',
    path: '/api/planned-workouts',
    summary: 'Plan a workout',
    headers: IdempotencyHeadersSchema,
    body: PlannedWorkoutCreateSchema,
    responses: {
      201: PlannedWorkoutSchema.describe('The workout was created.'),
      ...writeProblemResponses,
    },
    metadata: requireScopes('planning:write'),
    strictStatusCodes: true,
  },
  listPlannedWorkouts: {
    method: 'GET',
    path: '/api/planned-workouts',
    summary: 'List planned workouts in a date range',
    description: 'Ordered by date, then start time (workouts without one first), then id.',
    query: PlannedWorkoutListQuerySchema,
    responses: {
      200: pageOf(PlannedWorkoutSchema).meta({ title: 'PlannedWorkoutPage' }),
      ...problemResponses,
    },
    metadata: requireScopes('planning:read'),
    strictStatusCodes: true,
  },
  getPlannedWorkout: {
    method: 'GET',
    path: '/api/planned-workouts/:id',
    summary: 'Read one planned workout',
    pathParams: IdParamsSchema,
    responses: {
      200: PlannedWorkoutSchema,
      ...problemResponses,
      ...notFoundResponses,
    },
    metadata: requireScopes('planning:read'),
    strictStatusCodes: true,
  },
  updatePlannedWorkout: {
    method: 'PATCH',
    path: '/api/planned-workouts/:id',
    summary: 'Change a planned workout',
    headers: IdempotencyHeadersSchema,
    description:
      'Fields present overwrite, `null` clears, absent fields keep their value; `structure` is replaced whole. Answers the stored workout.',
    pathParams: IdParamsSchema,
    body: PlannedWorkoutPatchSchema,
    responses: {
      200: PlannedWorkoutSchema.describe('The workout as stored after the change.'),
      ...writeProblemResponses,
      ...notFoundResponses,
    },
    metadata: requireScopes('planning:write'),
    strictStatusCodes: true,
  },
  deletePlannedWorkout: {
    method: 'DELETE',
    path: '/api/planned-workouts/:id',
    summary: 'Delete a planned workout',
    headers: IdempotencyHeadersSchema,
    pathParams: IdParamsSchema,
    body: c.noBody(),
    responses: {
      204: c.noBody(),
      ...writeProblemResponses,
      ...notFoundResponses,
    },
    metadata: requireScopes('planning:write'),
    strictStatusCodes: true,
  },
});

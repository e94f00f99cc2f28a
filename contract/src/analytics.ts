import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ABSORPTION_TYPES } from './nutrition.ts';
import {
  DateRangeQuerySchema,
  ProblemSchema,
  LocalDateSchema,
  notFoundResponses,
  pageOf,
  problemResponses,
  requireScopes,
  TimestampWithOffsetSchema,
} from './common.ts';

const c = initContract();

/**
 * Derived data (docs/design.md §3 "Derived data"; the models are described in
 * docs/science.md and implemented in server/src/modules/analytics and
 * server/src/modules/fuel): training load,
 * the daily recovery capacity score and the glycogen (fuel) timeline. All are
 * computed in the background when an input changes and stored; these routes
 * read what is stored.
 */

export const TRAINING_LOAD_METHODS = ['power', 'heart_rate', 'estimate', 'mixed'] as const;
export const TrainingLoadMethodSchema = z.enum(TRAINING_LOAD_METHODS);
export type TrainingLoadMethod = z.infer<typeof TrainingLoadMethodSchema>;

export const AnalyticsRangeQuerySchema = z.strictObject({
  from: LocalDateSchema.optional().describe('First date, inclusive. Default: 29 days before `to`.'),
  to: LocalDateSchema.optional().describe("Last date, inclusive. Default: today in the user's time zone."),
});
export type AnalyticsRangeQuery = z.infer<typeof AnalyticsRangeQuerySchema>;

export const TrainingLoadDaySchema = z
  .object({
    date: LocalDateSchema,
    tss: z.number().describe('Training stress of the day (sum over its workouts).'),
    atl: z.number().describe('Acute training load (7-day exponential average): fatigue.'),
    ctl: z.number().describe('Chronic training load (42-day exponential average): fitness.'),
    tsb: z.number().describe('Training stress balance entering the day (CTL − ATL of the day before): form.'),
    method: TrainingLoadMethodSchema.nullable().describe(
      "How the day's stress was computed: `power` (NP/FTP), `heart_rate`, `estimate` (sport and duration), `mixed`; null without workouts.",
    ),
  })
  .meta({ title: 'TrainingLoadDay' });
export type TrainingLoadDay = z.infer<typeof TrainingLoadDaySchema>;

export const TrainingLoadSchema = z
  .object({ items: z.array(TrainingLoadDaySchema).describe('One per day, oldest first.') })
  .meta({ title: 'TrainingLoad' });
export type TrainingLoad = z.infer<typeof TrainingLoadSchema>;

export const RECOVERY_STATUSES = ['ready', 'maintain', 'recover', 'insufficient_data'] as const;
export const RecoveryStatusSchema = z.enum(RECOVERY_STATUSES);
export type RecoveryStatus = z.infer<typeof RecoveryStatusSchema>;

export const RECOVERY_COMPONENTS = ['hrv', 'restingHr', 'sleep', 'subjective', 'load'] as const;
export type RecoveryComponentName = (typeof RECOVERY_COMPONENTS)[number];

export const RecoveryComponentSchema = z
  .object({
    available: z.boolean().describe('False when its inputs or its baseline are missing; it then does not count.'),
    value: z
      .number()
      .nullable()
      .describe(
        "The input as used: HRV today's ln rMSSD (null without a reading today; the 7-day trend is in `detail`), resting HR in bpm, sleep in seconds, load the form in % of fitness (100·TSB/CTL).",
      ),
    baseline: z
      .object({
        mean: z.number(),
        sd: z.number(),
        low: z.number().describe('Lower end of the normal range (smallest worthwhile change).'),
        high: z.number(),
      })
      .nullable()
      .describe("The athlete's own normal for the input, where it has one."),
    score: z.number().nullable().describe('0-100, 100 = best.'),
    weight: z.number().nullable().describe('Its share of the score after renormalising over available components.'),
    contribution: z.number().nullable().describe('weight × score.'),
    detail: z.string().describe('What the component saw, in plain words.'),
  })
  .meta({ title: 'RecoveryComponent' });
export type RecoveryComponent = z.infer<typeof RecoveryComponentSchema>;

export const RecoveryDaySchema = z
  .object({
    date: LocalDateSchema,
    score: z.number().nullable().describe('0-100 (2 decimals; round for display), or null with `insufficient_data`.'),
    status: RecoveryStatusSchema,
    components: z.object({
      hrv: RecoveryComponentSchema,
      restingHr: RecoveryComponentSchema,
      sleep: RecoveryComponentSchema,
      subjective: RecoveryComponentSchema,
      load: RecoveryComponentSchema,
    }),
    explanation: z.string().describe('One sentence naming the component that lowered the score most.'),
  })
  .meta({ title: 'RecoveryDay' });
export type RecoveryDay = z.infer<typeof RecoveryDaySchema>;

export const FUEL_RANGE_MAX_DAYS = 14;

export const FuelLevelSchema = z
  .object({
    at: TimestampWithOffsetSchema,
    liverG: z.number().describe('Liver glycogen, grams: the blood glucose store.'),
    muscleG: z.number().describe('Muscle glycogen, grams.'),
    totalG: z.number().describe('Liver + muscle glycogen, grams.'),
    percent: z.number().describe('Of the capacity (liver + muscle).'),
  })
  .meta({ title: 'FuelLevel' });

export const FuelPointSchema = z
  .object({
    at: TimestampWithOffsetSchema.describe("End of the 15-minute step, in the athlete's offset."),
    liverG: z.number(),
    muscleG: z.number(),
    gutG: z.number().describe('Eaten carbohydrate released but not yet taken up.'),
    totalG: z.number(),
    percent: z.number(),
  })
  .meta({ title: 'FuelPoint' });

/** Whether the glycogen predicted for a planned workout covers it. */
export const FUEL_STATUSES = ['ready', 'top_up', 'at_risk', 'not_logged'] as const;
export const FuelStatusSchema = z.enum(FUEL_STATUSES);
export type FuelStatus = z.infer<typeof FuelStatusSchema>;

/** The glycogen store that decides a workout's fuel status: the liver (blood glucose) or muscle. */
export const FUEL_LIMITING_STORES = ['liver', 'muscle'] as const;
export const FuelLimitingStoreSchema = z.enum(FUEL_LIMITING_STORES);
export type FuelLimitingStore = z.infer<typeof FuelLimitingStoreSchema>;

/**
 * Where a meal in the fuel timeline comes from: `logged` (eaten, as an app
 * logged it), `planned` (a nutrition item marked planned, e.g. an accepted
 * fuel recommendation) or `assumed` (the athlete's usual intake, filled in
 * for the rest of today and future days; docs/science.md §3).
 */
export const FUEL_MEAL_SOURCES = ['logged', 'planned', 'assumed'] as const;
export const FuelMealSourceSchema = z.enum(FUEL_MEAL_SOURCES);
export type FuelMealSource = z.infer<typeof FuelMealSourceSchema>;

/** When an advice item or plan line applies, relative to the workout. */
export const FUEL_ADVICE_PHASES = ['before', 'during', 'after'] as const;
export const FuelAdvicePhaseSchema = z.enum(FUEL_ADVICE_PHASES);
export type FuelAdvicePhase = z.infer<typeof FuelAdvicePhaseSchema>;

export const FuelTimelineSchema = z
  .object({
    capacity: z.object({ liverG: z.number(), muscleG: z.number() }),
    points: z.array(FuelPointSchema),
    workouts: z.array(
      z.object({
        kind: z.enum(['recorded', 'planned']),
        id: z.uuid(),
        title: z.string().nullable(),
        start: TimestampWithOffsetSchema,
        end: TimestampWithOffsetSchema,
        intensityFactor: z.number(),
        fuelStatus: FuelStatusSchema.nullable().describe(
          "A planned workout's fuel status (as `GET /api/planned-workouts/{id}/fuel` answers it); null for a recorded one.",
        ),
        limitingStore: FuelLimitingStoreSchema.nullable().describe(
          "The store that decides a planned workout's status; null when it is `ready` or `not_logged`, and for a recorded workout.",
        ),
      }),
    ),
    meals: z.array(
      z.object({
        at: TimestampWithOffsetSchema,
        name: z.string(),
        carbsG: z.number(),
        absorptionType: z.enum(ABSORPTION_TYPES),
        source: FuelMealSourceSchema,
      }),
    ),
    incompleteLogDates: z
      .array(LocalDateSchema)
      .describe(
        'Days in the range with a recorded workout the logged food cannot fuel: the log is incomplete, and the stores are held at their floors (liver 0 g, muscle 25 % of its capacity) instead of drawn empty.',
      ),
    assumptions: z.array(z.string()).describe('What the model assumed where data was missing.'),
  })
  .meta({ title: 'FuelTimeline' });
export type FuelTimeline = z.infer<typeof FuelTimelineSchema>;

export const FuelTimelineQuerySchema = z.strictObject({
  from: LocalDateSchema.optional().describe("First date, inclusive. Default: today in the user's time zone."),
  to: LocalDateSchema.optional().describe(
    `Last date, inclusive, at most ${FUEL_RANGE_MAX_DAYS} days after \`from\`. Default: \`from\` + 2 days.`,
  ),
});

export const PlannedWorkoutFuelSchema = z
  .object({
    plannedWorkoutId: z.uuid(),
    start: FuelLevelSchema,
    end: FuelLevelSchema,
    minimum: FuelLevelSchema,
    status: FuelStatusSchema.describe(
      '`at_risk` when the liver falls below 20 g during the workout, or muscle reaches its floor (25 % of its capacity) or starts below 50 %; `top_up` when muscle starts below 70 %; else `ready`.',
    ),
    limitingStore: FuelLimitingStoreSchema.nullable().describe(
      'The store that decides the status (the first to run short); null when `ready`.',
    ),
    advice: z.array(
      z.object({
        at: TimestampWithOffsetSchema,
        phase: FuelAdvicePhaseSchema,
        carbsG: z.number(),
        absorptionType: z.enum(ABSORPTION_TYPES),
        reason: z.string(),
      }),
    ),
    plan: z
      .array(z.object({ phase: FuelAdvicePhaseSchema, text: z.string() }))
      .describe('The advice as a short plan: a line or two each for before, during and after the workout.'),
    assumptions: z.array(z.string()),
  })
  .meta({ title: 'PlannedWorkoutFuel' });
export type PlannedWorkoutFuel = z.infer<typeof PlannedWorkoutFuelSchema>;

export const analyticsContract = c.router({
  getTrainingLoad: {
    method: 'GET',
    path: '/api/training-load',
    summary: 'Training stress, ATL, CTL and TSB per day',
    query: AnalyticsRangeQuerySchema,
    responses: { 200: TrainingLoadSchema, ...problemResponses },
    metadata: requireScopes('workout:read'),
    strictStatusCodes: true,
  },
  getRecovery: {
    method: 'GET',
    path: '/api/recovery',
    summary: 'Recovery capacity score per day',
    description:
      'Each day: a 0-100 score from HRV (ln rMSSD against a 60-day baseline), resting HR, sleep, subjective wellness and training-load balance, with each component and one sentence naming the largest factor.',
    query: DateRangeQuerySchema,
    responses: { 200: pageOf(RecoveryDaySchema).meta({ title: 'RecoveryPage' }), ...problemResponses },
    metadata: requireScopes('health:read'),
    strictStatusCodes: true,
  },
});

export const fuelContract = c.router({
  getFuelTimeline: {
    method: 'GET',
    path: '/api/fuel/timeline',
    summary: 'Glycogen timeline (liver, muscle, gut) in 15-minute steps',
    query: FuelTimelineQuerySchema,
    responses: { 200: FuelTimelineSchema, ...problemResponses },
    metadata: requireScopes('nutrition:read'),
    strictStatusCodes: true,
  },
  getPlannedWorkoutFuel: {
    method: 'GET',
    path: '/api/planned-workouts/:id/fuel',
    summary: 'Predicted glycogen at the start and end of a planned workout, with advice',
    pathParams: z.strictObject({ id: z.uuid().describe('Planned workout id.') }),
    responses: {
      200: PlannedWorkoutFuelSchema,
      ...problemResponses,
      ...notFoundResponses,
      422: ProblemSchema.describe('The workout is in the past, or has no duration to predict from.'),
    },
    metadata: requireScopes('planning:read'),
    strictStatusCodes: true,
  },
});

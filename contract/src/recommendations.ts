import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  IdempotencyHeadersSchema,
  LocalDateSchema,
  PAGE_LIMIT_MAX,
  PageLimitSchema,
  ProblemSchema,
  TimestampSchema,
  TimestampWithOffsetSchema,
  notFoundResponses,
  problemResponses,
  requireScopes,
  writeProblemResponses,
} from './common.ts';
import { AbsorptionTypeSchema } from './nutrition.ts';
import { PlannedStructureSchema } from './planned-workouts.ts';

const c = initContract();

/**
 * Recommendations: what Pacer suggests from the derived data, each citing the
 * rule and the numbers that fired it, and the change that accepting applies.
 * They are re-evaluated after every recompute of the athlete's derived data:
 * a new situation opens one, a situation that no longer holds expires it.
 * The rules are described in server/src/modules/recommendations.
 */

export const RECOMMENDATION_KINDS = ['easier_workout', 'fuel_advice', 'lighter_week'] as const;
export const RecommendationKindSchema = z.enum(RECOMMENDATION_KINDS);
export type RecommendationKind = z.infer<typeof RecommendationKindSchema>;

export const RECOMMENDATION_STATUSES = ['open', 'accepted', 'dismissed', 'expired'] as const;
export const RecommendationStatusSchema = z.enum(RECOMMENDATION_STATUSES);
export type RecommendationStatus = z.infer<typeof RecommendationStatusSchema>;

export const EasierWorkoutEvidenceSchema = z
  .object({
    rule: z.literal('low_recovery_before_hard_workout'),
    recoveryDate: LocalDateSchema.describe('The day of the recovery score used (the latest one).'),
    recoveryScore: z.number().describe('0-100; `recover` is below `recoveryThreshold`.'),
    recoveryThreshold: z.number(),
    date: LocalDateSchema.describe("The planned workout's date."),
    plannedTss: z.number().describe("The workout's planned training stress (or the stress of its steps)."),
    intensityFactor: z.number().describe('Duration-weighted intensity factor of the workout.'),
    hardTss: z.number().describe('A workout is hard from this planned stress on...'),
    hardIntensityFactor: z.number().describe('...or from this intensity factor on.'),
    recoverDays: z
      .number()
      .int()
      .optional()
      .describe(
        'Consecutive days in `recover` up to `recoveryDate` (at most 14 are read). From `restAfterRecoverDays` on the suggestion is rest or at most 60 minutes easy. Absent on recommendations made before it was recorded.',
      ),
    recoverSince: LocalDateSchema.optional().describe('The first of those consecutive days in `recover`.'),
    restAfterRecoverDays: z
      .number()
      .int()
      .optional()
      .describe('This many consecutive days in `recover` or more make the suggestion rest or at most 60 minutes easy.'),
  })
  .meta({ title: 'EasierWorkoutEvidence' });

export const FuelAdviceEvidenceSchema = z
  .object({
    rule: z.literal('fuel_at_risk'),
    date: LocalDateSchema.describe("The planned workout's date."),
    status: z
      .enum(['at_risk', 'top_up'])
      .describe(
        "The workout's fuel status: `at_risk`, or `top_up` (muscle starts below 70 %). A `ready` workout's advice is on its fuel answer, not a recommendation.",
      ),
    limitingStore: z
      .enum(['liver', 'muscle'])
      .nullable()
      .describe('The store that runs short first: the liver (blood glucose) or muscle.'),
    startPercent: z.number().describe('Predicted glycogen at the start, percent of capacity (liver + muscle).'),
    minPercent: z.number().describe('Predicted lowest glycogen during the workout, percent of capacity.'),
    startLiverG: z.number().describe('Predicted liver glycogen at the start, grams.'),
    startMuscleG: z.number().describe('Predicted muscle glycogen at the start, grams.'),
    lowestLiverG: z.number().describe('Liver glycogen at the lowest combined point, grams.'),
    startThreshold: z
      .number()
      .describe('`at_risk` when muscle starts below this percent of its capacity, or reaches its floor (25 %)...'),
    minimumThreshold: z
      .number()
      .describe(
        '...or the liver falls below this many grams during the workout (before the liver and muscle were judged apart: a percent of the combined capacity).',
      ),
  })
  .meta({ title: 'FuelAdviceEvidence' });

export const LighterWeekEvidenceSchema = z
  .object({
    rule: z.literal('ctl_ramp_too_steep'),
    date: LocalDateSchema.describe('The latest day of training load.'),
    ctl: z.number().describe('CTL (fitness) on `date`.'),
    ctlWeekBefore: z.number().describe('CTL 7 days before `date`.'),
    ctlRamp: z.number().describe('`ctl` − `ctlWeekBefore`.'),
    threshold: z.number().describe('A rise above this in 7 days is a ramp too steep.'),
  })
  .meta({ title: 'LighterWeekEvidence' });

export const RecommendationEvidenceSchema = z
  .discriminatedUnion('rule', [EasierWorkoutEvidenceSchema, FuelAdviceEvidenceSchema, LighterWeekEvidenceSchema])
  .describe('The rule that fired and the numbers it saw.');
export type RecommendationEvidence = z.infer<typeof RecommendationEvidenceSchema>;

export const SwapStructureActionSchema = z
  .object({
    type: z.literal('swap_structure'),
    plannedWorkoutId: z.uuid(),
    intent: z
      .enum(['endurance', 'recovery'])
      .describe(
        '`endurance`: the same length at endurance intensity; `recovery`: at most 60 minutes easy (after 3 or more days in `recover`).',
      ),
    structure: PlannedStructureSchema,
    durationSecs: z.number().int(),
    trainingStress: z.number(),
  })
  .meta({
    title: 'SwapStructureAction',
    description: "Accepting replaces the planned workout's steps, duration and training stress with these.",
  });

export const LogNutritionActionSchema = z
  .object({
    type: z.literal('log_nutrition'),
    plannedWorkoutId: z.uuid(),
    items: z
      .array(
        z.object({
          at: TimestampWithOffsetSchema,
          carbsG: z.number(),
          absorptionType: AbsorptionTypeSchema,
          reason: z.string(),
        }),
      )
      .describe(
        "The fuel advice: accepting plans these as the calling app's nutrition items (`planned: true`), never as eaten.",
      ),
  })
  .meta({
    title: 'LogNutritionAction',
    description:
      "Accepting adds the items to the calling app's nutrition log of each item's date as planned items (`planned: true`, meal `OTHER`): the fuel forecast counts them, the day's totals do not until the app marks them eaten. The app's items logged there before stay.",
  });

export const ScaleWeekActionSchema = z
  .object({
    type: z.literal('scale_week'),
    scaleTrainingStress: z.number().describe('Factor applied to training stress and duration, e.g. 0.8.'),
    from: LocalDateSchema,
    to: LocalDateSchema,
    plannedWorkoutIds: z.array(z.uuid()).describe('The planned workouts from `from` to `to`.'),
  })
  .meta({
    title: 'ScaleWeekAction',
    description:
      "Accepting multiplies each listed workout's training stress, duration and step durations by `scaleTrainingStress`; intensities stay.",
  });

export const RecommendationActionSchema = z
  .discriminatedUnion('type', [SwapStructureActionSchema, LogNutritionActionSchema, ScaleWeekActionSchema])
  .describe('What accepting applies.');
export type RecommendationAction = z.infer<typeof RecommendationActionSchema>;

export const RecommendationSchema = z
  .object({
    id: z.uuid(),
    kind: RecommendationKindSchema.describe(
      '`easier_workout` (low recovery before a hard planned workout), `fuel_advice` (a planned workout at risk on glycogen, or needing a top-up) or `lighter_week` (fitness rising too fast).',
    ),
    status: RecommendationStatusSchema.describe(
      '`open` until accepted or dismissed; `expired` when its situation no longer holds.',
    ),
    plannedWorkoutId: z.uuid().nullable().describe('The planned workout it is about, if one.'),
    title: z.string(),
    body: z
      .string()
      .describe(
        'What was seen and what accepting does, in plain words; for `fuel_advice`, the reason and then the fuel plan, one line each (newline-separated).',
      ),
    evidence: RecommendationEvidenceSchema,
    action: RecommendationActionSchema,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema.describe('Last change: new numbers while open, or the decision.'),
    decidedAt: TimestampSchema.nullable().describe('When it left `open` (accepted, dismissed or expired).'),
  })
  .meta({ title: 'Recommendation' });
export type Recommendation = z.infer<typeof RecommendationSchema>;

export const RecommendationListQuerySchema = z.strictObject({
  status: RecommendationStatusSchema.default('open').describe('Only recommendations in this state. Default `open`.'),
  limit: PageLimitSchema.describe(`At most this many, newest first (at most ${PAGE_LIMIT_MAX}).`),
});
export type RecommendationListQuery = z.infer<typeof RecommendationListQuerySchema>;

export const RecommendationListSchema = z
  .object({ items: z.array(RecommendationSchema).describe('Newest first.') })
  .meta({ title: 'RecommendationList' });
export type RecommendationList = z.infer<typeof RecommendationListSchema>;

const IdParamsSchema = z.strictObject({ id: z.uuid().describe('Recommendation id.') });

const decisionResponses = {
  200: RecommendationSchema.describe('The recommendation after the change.'),
  ...writeProblemResponses,
  ...notFoundResponses,
  409: ProblemSchema.describe(
    'The recommendation is no longer open (`conflict`: already accepted, dismissed or expired), or a request with the same `Idempotency-Key` is still being processed (`idempotency_in_progress`).',
  ),
} as const;

export const recommendationsContract = c.router({
  listRecommendations: {
    method: 'GET',
    path: '/api/recommendations',
    summary: 'List recommendations',
    description:
      'What the rules suggest from recovery, fuel and training load, each with the evidence that fired it and the action accepting applies. Default: the open ones.',
    query: RecommendationListQuerySchema,
    responses: { 200: RecommendationListSchema, ...problemResponses },
    metadata: requireScopes('recommendations:read'),
    strictStatusCodes: true,
  },
  acceptRecommendation: {
    method: 'POST',
    path: '/api/recommendations/:id/accept',
    summary: 'Accept a recommendation: apply its action',
    description:
      "Applies the action in one transaction (swaps the planned workout's steps, logs the advised food as the calling app's items, or scales the week's planned workouts) and marks the recommendation `accepted`. The changes are attributed to the calling app and need no scope beyond `recommendations:write`. The derived data is recomputed afterwards like after any other write.",
    headers: IdempotencyHeadersSchema,
    pathParams: IdParamsSchema,
    body: c.noBody(),
    responses: decisionResponses,
    metadata: requireScopes('recommendations:write'),
    strictStatusCodes: true,
  },
  dismissRecommendation: {
    method: 'POST',
    path: '/api/recommendations/:id/dismiss',
    summary: 'Dismiss a recommendation',
    description: 'Marks it `dismissed`; nothing else changes, and the same situation is not suggested again.',
    headers: IdempotencyHeadersSchema,
    pathParams: IdParamsSchema,
    body: c.noBody(),
    responses: decisionResponses,
    metadata: requireScopes('recommendations:write'),
    strictStatusCodes: true,
  },
});

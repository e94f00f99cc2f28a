import {
  contract,
  IdInputSchema,
  McpIdempotencyArgumentShape,
  RecommendationListQuerySchema,
  RecommendationSchema,
} from '@pacer/contract';
import {
  acceptRecommendation,
  dismissRecommendation,
  listRecommendationsOf,
} from '../../modules/derived/recommendations.service.ts';
import { defineTool, DESTRUCTIVE_WRITE, IDEMPOTENT_WRITE, READ_ONLY } from '../tool.ts';

export const recommendationTools = [
  defineTool({
    name: 'list_recommendations',
    title: 'Recommendations',
    description:
      "What Pacer suggests from the athlete's derived data, newest first (default: the open ones; `status` for accepted, dismissed or expired). Kinds: `easier_workout` (recovery score below 45 before a planned workout of stress ≥ 80 or intensity factor ≥ 0.85 in the next 2 days: after 3 or more consecutive days in `recover`, rest or at most 60 minutes easy, with `recoverDays` and `recoverSince` in the evidence; after 1-2, an endurance session of the same length), `fuel_advice` (a planned workout in the next 2 days predicted `at_risk` on glycogen: log the advised carbohydrate), `lighter_week` (CTL rose more than 8 in 7 days, with 42 days of training history: scale the week's planned workouts to 80 %). Each has `evidence` (the rule and the numbers that fired it: cite these, do not invent others), the `action` accepting applies, and a plain `body`. Ask the athlete before accepting.",
    phase: 'read',
    scopes: ['recommendations:read'],
    annotations: READ_ONLY,
    input: RecommendationListQuerySchema,
    output: contract.recommendations.listRecommendations.responses[200],
    run: ({ db, actor }, args) => listRecommendationsOf(db, actor, args),
  }),
  defineTool({
    name: 'accept_recommendation',
    title: 'Accept a recommendation',
    description: `Apply an open recommendation (id from list_recommendations) with the athlete's consent: \`easier_workout\` replaces the planned workout's steps, duration and stress; \`fuel_advice\` plans the advised items as this assistant's nutrition items for their dates (\`planned: true\`: a plan, not food eaten); \`lighter_week\` scales the listed planned workouts' stress, duration and steps to 80 %. Answers the recommendation, now \`accepted\`. A recommendation that is no longer open is refused.`,
    phase: 'write',
    scopes: ['recommendations:write'],
    annotations: DESTRUCTIVE_WRITE,
    input: IdInputSchema.safeExtend(McpIdempotencyArgumentShape),
    output: RecommendationSchema,
    sameShapeAs: { result: 'list_recommendations' },
    run: (context, { id }) => acceptRecommendation(context, context.actor, id),
  }),
  defineTool({
    name: 'dismiss_recommendation',
    title: 'Dismiss a recommendation',
    description: `Decline an open recommendation (id from list_recommendations) when the athlete does not want it: nothing in the plan or food log changes, and the same situation is not suggested again. Answers the recommendation, now \`dismissed\`. A recommendation that is no longer open is refused.`,
    phase: 'write',
    scopes: ['recommendations:write'],
    annotations: IDEMPOTENT_WRITE,
    input: IdInputSchema.safeExtend(McpIdempotencyArgumentShape),
    output: RecommendationSchema,
    sameShapeAs: { result: 'list_recommendations' },
    run: ({ db, actor }, { id }) => dismissRecommendation(db, actor, id),
  }),
];

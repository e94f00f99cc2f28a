import {
  contract,
  DeletedSchema,
  IdInputSchema,
  McpIdempotencyArgumentShape,
  MemoryCreateSchema,
  MemorySchema,
  NutritionUpsertSchema,
  PlannedWorkoutCreateSchema,
  PlannedWorkoutPatchSchema,
  ProfilePatchSchema,
  WellnessUpsertSchema,
} from '@pacer/contract';
import { forgetMemory, rememberMemory } from '../../modules/memories/memories.service.ts';
import { upsertNutritionDay } from '../../modules/nutrition/nutrition.service.ts';
import {
  createPlannedWorkout,
  patchPlannedWorkout,
  removePlannedWorkout,
} from '../../modules/planned-workouts/planned-workouts.service.ts';
import { updateProfile } from '../../modules/profile/profile.service.ts';
import { upsertWellnessDay } from '../../modules/wellness/wellness.service.ts';
import { ADDITIVE_WRITE, defineTool, DESTRUCTIVE_WRITE } from '../tool.ts';

/** The arguments update_planned_workout takes besides `id`, named from the contract's patch schema. */
const PLANNED_WORKOUT_FIELDS = Object.keys(PlannedWorkoutPatchSchema.shape)
  .map((field) => `\`${field}\``)
  .join(', ');

export const writeTools = [
  defineTool({
    name: 'log_wellness',
    title: 'Log daily wellness',
    description: `Record the athlete's wellness for one day (upsert on the date): HRV (rMSSD, ms), resting HR (bpm), sleep (s), weight (kg), subjective check-in answers (1-5), comments and more; each field's unit and range is in the input schema. Fields sent overwrite, \`null\` clears, fields left out keep their value. \`date\` is the athlete's local date (\`YYYY-MM-DD\`). Answers the stored day.`,
    phase: 'write',
    scopes: ['health:write'],
    annotations: DESTRUCTIVE_WRITE,
    input: WellnessUpsertSchema.safeExtend(McpIdempotencyArgumentShape),
    output: contract.wellness.upsertWellness.responses[200],
    sameShapeAs: { result: 'get_wellness' },
    run: async (context, { idempotency_key: _key, ...body }) =>
      (await upsertWellnessDay(context, context.actor, body)).record,
  }),
  defineTool({
    name: 'log_nutrition',
    title: 'Log food and drink',
    description: `Record what the athlete ate or drank on one day: each item with the exact time (\`logged_at\`, ISO 8601 with the athlete's offset), carbs/protein/fat (g), calories (kcal) and for carbohydrate its absorption type (RAPID, FAST, BALANCED, DENSE, HYPER_LOAD); \`planned: true\` for food planned but not eaten yet (the fuel forecast counts it, the day's totals do not; send it again with \`planned: false\` once eaten). Replaces the items this assistant logged for that date (send them all; other apps' items stay), at most 200 a day.`,
    phase: 'write',
    scopes: ['nutrition:write'],
    feature: 'nutrition',
    annotations: DESTRUCTIVE_WRITE,
    input: NutritionUpsertSchema.safeExtend(McpIdempotencyArgumentShape),
    output: contract.nutrition.upsertNutrition.responses[200],
    run: async (context, { idempotency_key: _key, ...body }) =>
      (await upsertNutritionDay(context, context.actor, body)).log,
  }),
  defineTool({
    name: 'update_profile',
    title: "Update the athlete's profile",
    description: `Change profile fields: weight (kg), FTP (watts), max/resting/threshold heart rate (bpm), name, time zone (IANA), sex, birth date, feature flags. Fields sent overwrite, \`null\` clears, fields left out stay. Heart rates must keep resting < threshold < max. Answers the stored profile.`,
    phase: 'write',
    scopes: ['profile:write'],
    annotations: DESTRUCTIVE_WRITE,
    input: ProfilePatchSchema.safeExtend(McpIdempotencyArgumentShape),
    output: contract.profile.updateProfile.responses[200],
    sameShapeAs: { result: 'get_profile' },
    run: (context, { idempotency_key: _key, ...patch }) => updateProfile(context, context.actor.userId, patch),
  }),
  defineTool({
    name: 'create_planned_workout',
    title: 'Plan a workout',
    description: `Add a workout to the athlete's plan: date (local), sport, title, optional start time (HH:MM), duration (s), training stress and step structure (targets in % of FTP, heart-rate zone or pace). Use generate_workout_structure to have the steps written for you. Each call adds a workout.`,
    phase: 'write',
    scopes: ['planning:write'],
    annotations: ADDITIVE_WRITE,
    input: PlannedWorkoutCreateSchema.safeExtend(McpIdempotencyArgumentShape),
    output: contract.plannedWorkouts.createPlannedWorkout.responses[201],
    sameShapeAs: { result: 'get_planned_workout' },
    run: (context, { idempotency_key: _key, ...body }) => createPlannedWorkout(context, context.actor, body),
  }),
  defineTool({
    name: 'update_planned_workout',
    title: 'Change a planned workout',
    description: `Change a planned workout by id (from list_planned_workouts). Takes ${PLANNED_WORKOUT_FIELDS}: fields sent overwrite, \`null\` clears, fields left out stay; \`structure\` (steps as create_planned_workout takes them) is replaced whole. Answers the stored workout.`,
    phase: 'write',
    scopes: ['planning:write'],
    annotations: DESTRUCTIVE_WRITE,
    input: PlannedWorkoutPatchSchema.safeExtend({ ...IdInputSchema.shape, ...McpIdempotencyArgumentShape }),
    output: contract.plannedWorkouts.updatePlannedWorkout.responses[200],
    // Both tools need `planning:write`: whoever sees this one sees create_planned_workout's steps.
    sameShapeAs: { arguments: { structure: 'create_planned_workout' }, result: 'get_planned_workout' },
    run: (context, { id, idempotency_key: _key, ...patch }) => patchPlannedWorkout(context, context.actor, id, patch),
  }),
  defineTool({
    name: 'delete_planned_workout',
    title: 'Delete a planned workout',
    description: `Remove a planned workout by id from the athlete's plan. Cannot be undone; confirm with the athlete first.`,
    phase: 'write',
    scopes: ['planning:write'],
    annotations: DESTRUCTIVE_WRITE,
    input: IdInputSchema.safeExtend(McpIdempotencyArgumentShape),
    output: DeletedSchema,
    run: async (context, { id }) => {
      await removePlannedWorkout(context, context.actor, id);
      return { id, deleted: true as const };
    },
  }),
  defineTool({
    name: 'remember_memory',
    title: 'Remember a fact about the athlete',
    description: `Keep a short fact about the athlete for later conversations (at most 600 characters): a goal, an injury, a preference, their schedule or equipment. Pin what matters most. Do not store anything the athlete asked you not to keep. Each call adds a memory (at most 200 per athlete).`,
    phase: 'write',
    scopes: ['memory:write'],
    annotations: ADDITIVE_WRITE,
    input: MemoryCreateSchema.safeExtend(McpIdempotencyArgumentShape),
    output: MemorySchema,
    sameShapeAs: { result: 'list_memories' },
    run: (context, { idempotency_key: _key, ...memory }) => rememberMemory(context.db, context.actor, memory),
  }),
  defineTool({
    name: 'forget_memory',
    title: 'Forget a memory',
    description: `Delete a memory by id (from list_memories), e.g. when the athlete says it is no longer true.`,
    phase: 'write',
    scopes: ['memory:write'],
    annotations: DESTRUCTIVE_WRITE,
    input: IdInputSchema.safeExtend(McpIdempotencyArgumentShape),
    output: DeletedSchema,
    run: async (context, { id }) => {
      await forgetMemory(context.db, context.actor, id);
      return { id, deleted: true as const };
    },
  }),
];

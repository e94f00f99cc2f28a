/**
 * MCP 2025-11-25 tool annotations: hosts decide from `readOnlyHint`,
 * `destructiveHint` and `idempotentHint` whether to ask the user before a
 * call, so each tool's hints must match what its service does. Every tool is
 * classified here by reading the service it calls; a new tool fails until it
 * is classified.
 */
import { PlannedWorkoutPatchSchema } from '@pacer/contract';
import { describe, expect, it } from 'vitest';
import { ALL_TOOLS } from '../../server/src/mcp/registry.ts';

type Behaviour =
  /** Reads only (a cache the user never sees may be filled, e.g. decoded streams). */
  | 'read'
  /** Adds a record on every call (without an idempotency key, a repeat adds another). */
  | 'create'
  /** Overwrites or replaces stored values; the same arguments again change nothing more. */
  | 'overwrite'
  /** Removes a record; a repeat finds nothing more to remove. */
  | 'delete'
  /** Records a decision about a suggestion, changing none of the athlete's data; a repeat is refused. */
  | 'decide'
  /** Starts a job that adds a record (a report) each time. */
  | 'job that creates'
  /** Starts a job that replaces stored values with what the same arguments always give. */
  | 'job that overwrites'
  /** Starts a job that re-applies pushed data over what is stored; deliveries that fail again are re-applied again. */
  | 'job that re-applies';

const HINTS: Record<Behaviour, { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean }> = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  create: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  overwrite: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  delete: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  decide: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  'job that creates': { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  'job that overwrites': { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  'job that re-applies': { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
};

/** Each tool by what its service does (server/src/mcp/tools/*.ts and the modules they call). */
const BEHAVIOUR: Readonly<Record<string, Behaviour>> = {
  get_profile: 'read',
  get_current_time: 'read',
  list_workouts: 'read',
  get_workout: 'read',
  // Decodes the stored FIT file on first read and keeps the streams: a cache, not the athlete's data.
  get_workout_streams: 'read',
  get_wellness: 'read',
  get_nutrition: 'read',
  list_planned_workouts: 'read',
  get_planned_workout: 'read',
  list_reports: 'read',
  get_report: 'read',
  list_memories: 'read',
  get_training_load: 'read',
  get_recovery: 'read',
  get_fuel_timeline: 'read',
  get_workout_fuel_plan: 'read',
  list_recommendations: 'read',
  get_async_job_status: 'read',
  create_planned_workout: 'create',
  remember_memory: 'create',
  // upsertWellnessDay: fields sent overwrite, `null` clears.
  log_wellness: 'overwrite',
  // upsertNutritionDay: replaces the items this app logged for the date.
  log_nutrition: 'overwrite',
  update_profile: 'overwrite',
  // patchPlannedWorkout: fields sent overwrite; `structure` is replaced whole.
  update_planned_workout: 'overwrite',
  // acceptRecommendation: `easier_workout` replaces a planned workout's steps, `lighter_week` scales a week's workouts.
  accept_recommendation: 'overwrite',
  delete_planned_workout: 'delete',
  forget_memory: 'delete',
  dismiss_recommendation: 'decide',
  generate_report: 'job that creates',
  // runStructureGenerationJob: writes the steps, duration and stress of the planned workout.
  generate_workout_structure: 'job that overwrites',
  // runSyncJob: re-queues failed and dead-lettered deliveries; processing writes the app's values again.
  sync_data: 'job that re-applies',
};

describe('MCP tool hints', () => {
  it('classify every tool, and name no tool that does not exist', () => {
    const names = ALL_TOOLS.map((tool) => tool.name).sort();

    expect(Object.keys(BEHAVIOUR).sort()).toEqual(names);
  });

  it.each(ALL_TOOLS.map((tool) => [tool.name, tool] as const))('%s states the hints of what it does', (name, tool) => {
    const behaviour = BEHAVIOUR[name];
    if (behaviour === undefined) throw new Error(`${name} is not classified in BEHAVIOUR`);

    expect(tool.annotations).toEqual({ ...HINTS[behaviour], openWorldHint: false });
  });
});

describe('MCP tool names and descriptions', () => {
  it('sync_data says it re-applies failed deliveries, and that it syncs no device and pulls from no service', () => {
    const tool = ALL_TOOLS.find((entry) => entry.name === 'sync_data');

    expect(tool?.title).toMatch(/re-apply failed deliveries/i);
    expect(tool?.title).not.toMatch(/sync/i);
    expect(tool?.description).toMatch(/failed or dead-lettered webhook deliveries/);
    expect(tool?.description).toMatch(/recomputed/);
    expect(tool?.description).toMatch(/does not sync a watch or any device and pulls nothing from other services/);
  });

  it('update_planned_workout names every field it takes', () => {
    const tool = ALL_TOOLS.find((entry) => entry.name === 'update_planned_workout');

    for (const field of Object.keys(PlannedWorkoutPatchSchema.shape)) {
      expect(tool?.description, field).toContain(`\`${field}\``);
    }
  });
});

import {
  AsyncJobStatusInputSchema,
  AsyncJobStatusSchema,
  GenerateReportInputSchema,
  GenerateWorkoutStructureInputSchema,
  ReportJobAcceptedSchema,
  StructureJobAcceptedSchema,
  SYNC_DAYS_MAX,
  SyncDataInputSchema,
  SyncJobAcceptedSchema,
  type ReportType,
  type Scope,
} from '@pacer/contract';
import { AppError } from '../../errors.ts';
import { addDays, daysBetween, localDateOf } from '../../lib/dates.ts';
import { getAsyncJobStatus, POLL_AFTER_SECS, startAsyncJob } from '../../modules/async-jobs/async-jobs.service.ts';
import { getPlannedWorkout } from '../../modules/planned-workouts/planned-workouts.service.ts';
import { McpToolError } from '../tool-error.ts';
import { ADDITIVE_WRITE, defineTool, DESTRUCTIVE_WRITE, READ_ONLY, REPEATABLE_DESTRUCTIVE_WRITE } from '../tool.ts';

const POLL = 'Poll get_async_job_status with the returned id until `completed` (or `failed`).';

/** A report never shows data the token could not read itself. */
const REPORT_DATA_SCOPES: Readonly<Record<ReportType, readonly Scope[]>> = {
  WEEKLY_TRAINING: ['workout:read', 'health:read'],
  LAST_3_WORKOUTS: ['workout:read'],
  WEEKLY_NUTRITION: ['nutrition:read'],
};

const accepted = { status: 'queued' as const, poll_after_seconds: POLL_AFTER_SECS.queued };

export const asyncTools = [
  defineTool({
    name: 'generate_report',
    title: 'Generate a report',
    description: `Start a report from the athlete's stored data: \`WEEKLY_TRAINING\` (workouts, training load, wellness and daily recovery scores of the 7 days ending at \`end_date\`), \`LAST_3_WORKOUTS\`, or \`WEEKLY_NUTRITION\` (intake of 7 days, each day's lowest glycogen and the fuel status of planned workouts). Deterministic Markdown plus the figures. Answers a \`report_id\` at once; ${POLL} Then read it with get_report.`,
    phase: 'async',
    scopes: ['analysis:read'],
    annotations: ADDITIVE_WRITE,
    input: GenerateReportInputSchema,
    output: ReportJobAcceptedSchema,
    scopesFor: (args) => REPORT_DATA_SCOPES[args.type],
    run: async ({ db, boss, principal, actor }, args) => {
      if (args.type === 'WEEKLY_NUTRITION' && !principal.nutritionEnabled) {
        throw new McpToolError(
          'feature_disabled',
          "A nutrition report needs the athlete's nutrition feature, which is off.",
        );
      }
      const endDate = args.end_date ?? localDateOf(new Date(), actor.timeZone);
      const job = await startAsyncJob({ db, boss }, actor, 'report', { type: args.type, end_date: endDate });
      return { report_id: job.id, job_type: 'report' as const, ...accepted };
    },
  }),
  defineTool({
    name: 'sync_data',
    title: 'Re-apply failed deliveries from connected apps',
    description: `Re-apply the data that apps the athlete granted access pushed to Pacer but that failed to process (failed or dead-lettered webhook deliveries) on the athlete's days \`from\`..\`to\` (default: the last 7 days, at most ${SYNC_DAYS_MAX}): each is processed again like a new delivery: the app's values are written for their day (over what is stored now) and the derived data of the days it touches (training load, recovery, recommendations) is recomputed. It does not sync a watch or any device and pulls nothing from other services: data arrives only when an app pushes it. Answers a \`run_id\` at once; ${POLL} The result counts what was re-queued.`,
    phase: 'async',
    scopes: ['health:write'],
    annotations: REPEATABLE_DESTRUCTIVE_WRITE,
    input: SyncDataInputSchema,
    output: SyncJobAcceptedSchema,
    run: async ({ db, boss, actor }, args) => {
      const to = args.to ?? localDateOf(new Date(), actor.timeZone);
      const from = args.from ?? addDays(to, -6);
      if (daysBetween(from, to) < 0) throw AppError.validation('from', 'must not be after `to`');
      if (daysBetween(from, to) >= SYNC_DAYS_MAX) {
        throw AppError.validation('from', `the range may span at most ${SYNC_DAYS_MAX} days`);
      }
      const job = await startAsyncJob({ db, boss }, actor, 'trigger_run', { from, to });
      return { run_id: job.id, job_type: 'trigger_run' as const, ...accepted };
    },
  }),
  defineTool({
    name: 'generate_workout_structure',
    title: 'Write the steps of a planned workout',
    description: `Write warm-up, main set and cool-down steps into a planned workout (replacing the steps it has) from its sport and the \`intent\` (recovery, endurance, tempo, sweet_spot, threshold, vo2max), for its planned duration or \`duration_secs\`. Rides get % FTP targets (with watts when the profile has FTP), other sports heart-rate zones (with bpm when it has threshold HR); the planned duration and training stress are updated too. Answers a \`generation_run_id\` at once; ${POLL}`,
    phase: 'async',
    scopes: ['planning:write'],
    annotations: DESTRUCTIVE_WRITE,
    input: GenerateWorkoutStructureInputSchema,
    output: StructureJobAcceptedSchema,
    run: async ({ db, boss, actor }, { idempotency_key: _key, ...input }) => {
      // Fail now on an unknown id rather than in the job.
      await getPlannedWorkout(db, actor, input.planned_workout_id);
      const job = await startAsyncJob({ db, boss }, actor, 'structure_generation', input);
      return { generation_run_id: job.id, job_type: 'structure_generation' as const, ...accepted };
    },
  }),
  defineTool({
    name: 'get_async_job_status',
    title: 'Status of an async job',
    description:
      'Where a job started by generate_report (`job_type` `report`, `report_id`), sync_data (`trigger_run`, `run_id`) or generate_workout_structure (`structure_generation`, `generation_run_id`) stands: queued, running (with progress), completed (with its result) or failed (with the reason). Wait `poll_after_seconds` between polls.',
    phase: 'async',
    scopes: [],
    annotations: READ_ONLY,
    input: AsyncJobStatusInputSchema,
    output: AsyncJobStatusSchema,
    run: ({ db, actor }, args) => getAsyncJobStatus(db, actor, args),
  }),
];

import {
  contract,
  CurrentTimeSchema,
  DateRangeQuerySchema,
  IdInputSchema,
  MemoryListQuerySchema,
  MemoryListSchema,
  PlannedWorkoutListQuerySchema,
  ReportListQuerySchema,
  STREAM_POINTS_MIN,
  WorkoutListQuerySchema,
} from '@pacer/contract';
import { z } from 'zod';
import { currentTimeOf } from '../../lib/dates.ts';
import { listUserMemories } from '../../modules/memories/memories.service.ts';
import { listNutritionDays } from '../../modules/nutrition/nutrition.service.ts';
import { getPlannedWorkout, listPlannedWorkoutPage } from '../../modules/planned-workouts/planned-workouts.service.ts';
import { getProfile } from '../../modules/profile/profile.service.ts';
import { getReport, listReportPage } from '../../modules/reports/reports.service.ts';
import { listWellnessDays } from '../../modules/wellness/wellness.service.ts';
import { getWorkout, getWorkoutStreams, listWorkoutPage } from '../../modules/workouts/workouts.service.ts';
import { defineTool, READ_ONLY } from '../tool.ts';

const NoArguments = z.strictObject({});

/** Down-sampled by default: a model rarely needs every second, and results are capped at 512 KiB. */
const MCP_STREAM_POINTS_DEFAULT = 500;
const MCP_STREAM_POINTS_MAX = 5000;

const DATES =
  "Dates are the athlete's local calendar dates (`YYYY-MM-DD`); call get_current_time first if you do not know today's date.";
const PAGING = 'Answers `{items, nextCursor}`; pass `nextCursor` as `cursor` for the next page.';

export const readTools = [
  defineTool({
    name: 'get_profile',
    title: "Athlete's profile",
    description:
      "Read the athlete's profile: name, time zone, weight (kg), FTP (watts), max/resting/threshold heart rate (bpm), sex, birth date and feature flags. Use it for the thresholds that training zones and advice depend on.",
    phase: 'read',
    scopes: ['profile:read'],
    annotations: READ_ONLY,
    input: NoArguments,
    output: contract.profile.getProfile.responses[200],
    run: ({ db, actor }) => getProfile(db, actor.userId),
  }),
  defineTool({
    name: 'get_current_time',
    title: 'Current date and time for the athlete',
    description:
      'The athlete\'s current local date, time, weekday and time zone. Call this before anything that depends on "today", "yesterday" or "this week": your own clock and zone are not the athlete\'s.',
    phase: 'read',
    scopes: [],
    annotations: READ_ONLY,
    input: NoArguments,
    output: CurrentTimeSchema,
    run: ({ actor }) => Promise.resolve(currentTimeOf(new Date(), actor.timeZone)),
  }),
  defineTool({
    name: 'list_workouts',
    title: 'List recorded workouts',
    description: `Recorded activities (from FIT files) in a date range, oldest first: sport, start time, duration (s), distance (m), ascent (m), heart rate (bpm), power (W), training stress. Default range: the 30 days up to today; at most 366 days; \`sport\` filters (e.g. \`cycling\`, \`running\`). ${DATES} ${PAGING}`,
    phase: 'read',
    scopes: ['workout:read'],
    annotations: READ_ONLY,
    input: WorkoutListQuerySchema,
    output: contract.workouts.listWorkouts.responses[200],
    sameShapeAs: { result: 'get_workout' },
    run: ({ db, actor }, args) => listWorkoutPage(db, actor, args),
  }),
  defineTool({
    name: 'get_workout',
    title: 'One workout',
    description:
      "One recorded workout by id (from list_workouts), with its laps and the recording device. Times are UTC; `localDate` is the athlete's date.",
    phase: 'read',
    scopes: ['workout:read'],
    annotations: READ_ONLY,
    input: IdInputSchema,
    output: contract.workouts.getWorkout.responses[200],
    run: ({ db, actor }, args) => getWorkout(db, actor, args.id),
  }),
  defineTool({
    name: 'get_workout_streams',
    title: "A workout's time series",
    description: `Second-by-second channels of a workout (time s, heart rate bpm, power W, cadence, speed m/s, altitude m, distance m, position), down-sampled to at most \`maxPoints\` points (default ${MCP_STREAM_POINTS_DEFAULT}, at most ${MCP_STREAM_POINTS_MAX}). Ask for few points for an overview, more for detail.`,
    phase: 'read',
    scopes: ['workout:read'],
    annotations: READ_ONLY,
    readsPrimary: true,
    input: IdInputSchema.extend({
      maxPoints: z
        .number()
        .int()
        .min(STREAM_POINTS_MIN)
        .max(MCP_STREAM_POINTS_MAX)
        .default(MCP_STREAM_POINTS_DEFAULT)
        .describe('Down-sample to at most this many points.'),
    }),
    output: contract.workouts.getWorkoutStreams.responses[200],
    run: ({ db, decoding, actor }, args) => getWorkoutStreams({ db, decoding }, actor, args.id, args.maxPoints),
  }),
  defineTool({
    name: 'get_wellness',
    title: 'Daily wellness',
    description: `Daily wellness in a date range, oldest first: the fields log_wellness takes, e.g. HRV (rMSSD, ms), resting HR (bpm), sleep (s, with stages and score), weight (kg) and subjective check-in answers (1-5). Missing values are null. Default range: the 30 days up to today; at most 366 days. ${DATES} ${PAGING}`,
    phase: 'read',
    scopes: ['health:read'],
    annotations: READ_ONLY,
    input: DateRangeQuerySchema,
    output: contract.wellness.listWellness.responses[200],
    run: ({ db, actor }, args) => listWellnessDays(db, actor, args),
  }),
  defineTool({
    name: 'get_nutrition',
    title: 'Nutrition log',
    description: `Food and drink per day in a date range, oldest first: each item with the exact time it was eaten (\`logged_at\`, with offset), carbs/protein/fat/fiber/sugar (g), calories (kcal), water (ml), meal and carbohydrate absorption type, and daily totals. Default range: the 30 days up to today. ${DATES} ${PAGING}`,
    phase: 'read',
    scopes: ['nutrition:read'],
    feature: 'nutrition',
    annotations: READ_ONLY,
    input: DateRangeQuerySchema,
    output: contract.nutrition.listNutrition.responses[200],
    run: ({ db, actor }, args) => listNutritionDays(db, actor, args),
  }),
  defineTool({
    name: 'list_planned_workouts',
    title: 'List planned workouts',
    description: `Workouts the athlete plans to do, by date then start time: sport, title, planned duration (s), planned training stress and the step structure. Default range: today and the 29 days after. ${DATES} ${PAGING}`,
    phase: 'read',
    scopes: ['planning:read'],
    annotations: READ_ONLY,
    input: PlannedWorkoutListQuerySchema,
    output: contract.plannedWorkouts.listPlannedWorkouts.responses[200],
    sameShapeAs: { result: 'get_planned_workout' },
    run: ({ db, actor }, args) => listPlannedWorkoutPage(db, actor, args),
  }),
  defineTool({
    name: 'get_planned_workout',
    title: 'One planned workout',
    description: 'One planned workout by id (from list_planned_workouts), with its steps.',
    phase: 'read',
    scopes: ['planning:read'],
    annotations: READ_ONLY,
    input: IdInputSchema,
    output: contract.plannedWorkouts.getPlannedWorkout.responses[200],
    run: ({ db, actor }, args) => getPlannedWorkout(db, actor, args.id),
  }),
  defineTool({
    name: 'list_reports',
    title: 'List reports',
    description:
      'Reports made earlier with generate_report, newest first (id, type, title, period). Read one with get_report. Answers `{items, nextCursor}`.',
    phase: 'read',
    scopes: ['analysis:read'],
    annotations: READ_ONLY,
    input: ReportListQuerySchema,
    output: contract.reports.listReports.responses[200],
    run: ({ db, actor }, args) => listReportPage(db, actor, args),
  }),
  defineTool({
    name: 'get_report',
    title: 'One report',
    description:
      'A finished report by id (the `report_id` of generate_report): Markdown for the athlete and the figures behind it. Not found while it is still being generated: poll get_async_job_status first.',
    phase: 'read',
    scopes: ['analysis:read'],
    annotations: READ_ONLY,
    input: IdInputSchema,
    output: contract.reports.getReport.responses[200],
    run: ({ db, actor }, args) => getReport(db, actor, args.id),
  }),
  defineTool({
    name: 'list_memories',
    title: 'What you remember about the athlete',
    description:
      'Facts kept about the athlete across conversations (goals, injuries, preferences, schedule, equipment), pinned first, then newest. Read them at the start of a conversation; filter by `category` or `pinned`.',
    phase: 'read',
    scopes: ['memory:read'],
    annotations: READ_ONLY,
    input: MemoryListQuerySchema,
    output: MemoryListSchema,
    run: ({ db, actor }, args) => listUserMemories(db, actor, args),
  }),
];

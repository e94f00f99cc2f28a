import {
  AnalyticsRangeQuerySchema,
  contract,
  DateRangeQuerySchema,
  FuelTimelineQuerySchema,
  IdInputSchema,
} from '@pacer/contract';
import { getFuelTimeline, getPlannedWorkoutFuel } from '../../modules/derived/fuel.service.ts';
import { getRecoveryPage, getTrainingLoad } from '../../modules/derived/analytics.service.ts';
import { defineTool, READ_ONLY } from '../tool.ts';

export const analyticsTools = [
  defineTool({
    name: 'get_training_load',
    title: 'Training load (fitness, fatigue, form)',
    description:
      "Per day: training stress (TSS) of the day's workouts and how it was computed (`power` from NP/FTP, `heart_rate`, or `estimate` from sport and duration), ATL (7-day fatigue), CTL (42-day fitness) and TSB (form entering the day = CTL − ATL of the day before). Default range: the 30 days up to today; at most 366. Dates are the athlete's local dates.",
    phase: 'read',
    scopes: ['workout:read'],
    annotations: READ_ONLY,
    input: AnalyticsRangeQuerySchema,
    output: contract.analytics.getTrainingLoad.responses[200],
    run: ({ db, actor }, args) => getTrainingLoad(db, actor, args),
  }),
  defineTool({
    name: 'get_recovery',
    title: 'Recovery capacity score',
    description:
      "Per day: a 0-100 recovery score with status (`ready` ≥ 70, `maintain` 45-69, `recover` < 45, or `insufficient_data` with a null score), each component (HRV as ln rMSSD against the athlete's 60-day normal range, resting HR against its baseline, sleep against need, subjective check-in, training-load balance) with its value, baseline, weight and contribution, and one sentence naming what lowered the score most. Explain the score from these numbers; do not invent others. Default range: the 30 days up to today.",
    phase: 'read',
    scopes: ['health:read'],
    annotations: READ_ONLY,
    input: DateRangeQuerySchema,
    output: contract.analytics.getRecovery.responses[200],
    run: ({ db, actor }, args) => getRecoveryPage(db, actor, args),
  }),
  defineTool({
    name: 'get_fuel_timeline',
    title: 'Glycogen (fuel) timeline',
    description:
      "The athlete's modelled carbohydrate stores in 15-minute steps: liver and muscle glycogen and carbohydrate still in the gut (grams), total and percent of capacity, with the meals (exact times, carbs, absorption type) and the recorded and planned workouts that moved them, plus the assumptions made where data was missing. At most 14 days; default: today and the next 2 days. Times carry the athlete's offset.",
    phase: 'read',
    scopes: ['nutrition:read'],
    feature: 'nutrition',
    annotations: READ_ONLY,
    input: FuelTimelineQuerySchema,
    output: contract.fuel.getFuelTimeline.responses[200],
    run: ({ db, actor }, args) => getFuelTimeline(db, actor, args),
  }),
  defineTool({
    name: 'get_workout_fuel_plan',
    title: 'Fuel plan for a planned workout',
    description:
      'For a planned workout (id from list_planned_workouts): predicted glycogen at its start, its end and its lowest point (grams and percent), a status (`ready`: start ≥ 70 % and never below 20 %; `at_risk`: start < 50 % or below 20 %; else `top_up`), and advice: how many grams of which carbohydrate type to eat when, before and during the workout, so that it becomes `ready`. Logging exactly the advised items makes it `ready`.',
    phase: 'read',
    scopes: ['planning:read'],
    feature: 'nutrition',
    annotations: READ_ONLY,
    input: IdInputSchema,
    output: contract.fuel.getPlannedWorkoutFuel.responses[200],
    run: ({ db, actor }, args) => getPlannedWorkoutFuel(db, actor, args.id),
  }),
];

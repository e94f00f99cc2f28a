import { initContract } from '@ts-rest/core';
import { adminContract } from './admin.ts';
import { analyticsContract, fuelContract } from './analytics.ts';
import { reportsContract } from './reports.ts';
import { nutritionContract } from './nutrition.ts';
import { plannedWorkoutsContract } from './planned-workouts.ts';
import { profileContract } from './profile.ts';
import { recommendationsContract } from './recommendations.ts';
import { wellnessContract } from './wellness.ts';
import { webhooksContract, developerWebhooksContract } from './webhooks.ts';
import { workoutsContract } from './workouts.ts';

export * from './admin.ts';
export * from './analytics.ts';
export * from './common.ts';
export * from './jobs.ts';
export * from './mcp.ts';
export * from './memories.ts';
export * from './nutrition.ts';
export * from './planned-workouts.ts';
export * from './profile.ts';
export * from './recommendations.ts';
export * from './reports.ts';
export * from './wellness.ts';
export * from './webhooks.ts';
export * from './workouts.ts';

const c = initContract();

/** The whole REST API. Each resource keeps its own router; this composes them. */
export const contract = c.router({
  wellness: wellnessContract,
  nutrition: nutritionContract,
  profile: profileContract,
  plannedWorkouts: plannedWorkoutsContract,
  workouts: workoutsContract,
  reports: reportsContract,
  analytics: analyticsContract,
  fuel: fuelContract,
  recommendations: recommendationsContract,
  admin: adminContract,
  webhooks: webhooksContract,
  developer: developerWebhooksContract,
});
export type PacerContract = typeof contract;

export const API_TITLE = 'Pacer API';
export const API_VERSION = '0.1.0';

import { initContract } from '@ts-rest/core';
import { nutritionContract } from './nutrition.ts';
import { plannedWorkoutsContract } from './planned-workouts.ts';
import { profileContract } from './profile.ts';
import { wellnessContract } from './wellness.ts';
import { webhooksContract, developerWebhooksContract } from './webhooks.ts';
import { workoutsContract } from './workouts.ts';

export * from './common.ts';
export * from './nutrition.ts';
export * from './planned-workouts.ts';
export * from './profile.ts';
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
  webhooks: webhooksContract,
  developer: developerWebhooksContract,
});
export type PacerContract = typeof contract;

export const API_TITLE = 'Pacer API';
export const API_VERSION = '0.1.0';

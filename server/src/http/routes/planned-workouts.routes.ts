import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import type { AnalyticsInputDeps } from '../../modules/derived/recompute-request.ts';
import { principalOf } from '../bearer-auth.ts';
import {
  createPlannedWorkout,
  getPlannedWorkout,
  listPlannedWorkoutPage,
  patchPlannedWorkout,
  removePlannedWorkout,
} from '../../modules/planned-workouts/planned-workouts.service.ts';

const s = initServer();

export function plannedWorkoutsRoutes(deps: AnalyticsInputDeps & { readonly db: Db }) {
  return s.router(contract.plannedWorkouts, {
    createPlannedWorkout: async ({ body, res }) => {
      return { status: 201, body: await createPlannedWorkout(deps, principalOf(res), body) };
    },
    listPlannedWorkouts: async ({ query, res }) => {
      return { status: 200, body: await listPlannedWorkoutPage(deps.db, principalOf(res), query) };
    },
    getPlannedWorkout: async ({ params, res }) => {
      return { status: 200, body: await getPlannedWorkout(deps.db, principalOf(res), params.id) };
    },
    updatePlannedWorkout: async ({ params, body, res }) => {
      return { status: 200, body: await patchPlannedWorkout(deps, principalOf(res), params.id, body) };
    },
    deletePlannedWorkout: async ({ params, res }) => {
      await removePlannedWorkout(deps, principalOf(res), params.id);
      return { status: 204, body: undefined };
    },
  });
}

import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import type { ReadRouter } from '../../db/read-replica.ts';
import { readDbOf } from '../read-routing.ts';
import { actorOf } from '../bearer-auth.ts';
import { writeDepsOf } from '../idempotency.middleware.ts';
import {
  createPlannedWorkout,
  getPlannedWorkout,
  listPlannedWorkoutPage,
  patchPlannedWorkout,
  removePlannedWorkout,
} from '../../modules/planned-workouts/planned-workouts.service.ts';

const s = initServer();

export function plannedWorkoutsRoutes(deps: { readonly db: Db; readonly reads: ReadRouter }) {
  return s.router(contract.plannedWorkouts, {
    createPlannedWorkout: async ({ body, res }) => {
      return { status: 201, body: await createPlannedWorkout(writeDepsOf(res, deps), actorOf(res), body) };
    },
    listPlannedWorkouts: async ({ query, res }) => {
      return { status: 200, body: await listPlannedWorkoutPage(readDbOf(res, deps), actorOf(res), query) };
    },
    getPlannedWorkout: async ({ params, res }) => {
      return { status: 200, body: await getPlannedWorkout(readDbOf(res, deps), actorOf(res), params.id) };
    },
    updatePlannedWorkout: async ({ params, body, res }) => {
      return { status: 200, body: await patchPlannedWorkout(writeDepsOf(res, deps), actorOf(res), params.id, body) };
    },
    deletePlannedWorkout: async ({ params, res }) => {
      await removePlannedWorkout(writeDepsOf(res, deps), actorOf(res), params.id);
      return { status: 204, body: undefined };
    },
  });
}

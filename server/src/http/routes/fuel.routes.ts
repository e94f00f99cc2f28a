import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import { actorOf } from '../bearer-auth.ts';
import { getFuelTimeline, getPlannedWorkoutFuel } from '../../modules/derived/fuel.service.ts';

const s = initServer();

export function fuelRoutes(deps: { readonly db: Db }) {
  return s.router(contract.fuel, {
    getFuelTimeline: async ({ query, res }) => {
      return { status: 200, body: await getFuelTimeline(deps.db, actorOf(res), query) };
    },
    getPlannedWorkoutFuel: async ({ params, res }) => {
      return { status: 200, body: await getPlannedWorkoutFuel(deps.db, actorOf(res), params.id) };
    },
  });
}

import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import type { ReadRouter } from '../../db/read-replica.ts';
import { readDbOf } from '../read-routing.ts';
import { actorOf } from '../bearer-auth.ts';
import { getFuelTimeline, getPlannedWorkoutFuel } from '../../modules/derived/fuel.service.ts';

const s = initServer();

export function fuelRoutes(deps: { readonly db: Db; readonly reads: ReadRouter }) {
  return s.router(contract.fuel, {
    getFuelTimeline: async ({ query, res }) => {
      return { status: 200, body: await getFuelTimeline(readDbOf(res, deps), actorOf(res), query) };
    },
    getPlannedWorkoutFuel: async ({ params, res }) => {
      return { status: 200, body: await getPlannedWorkoutFuel(readDbOf(res, deps), actorOf(res), params.id) };
    },
  });
}

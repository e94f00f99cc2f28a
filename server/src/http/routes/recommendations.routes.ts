import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import type { ReadRouter } from '../../db/read-replica.ts';
import { readDbOf } from '../read-routing.ts';
import { actorOf } from '../bearer-auth.ts';
import { writeDepsOf } from '../idempotency.middleware.ts';
import {
  acceptRecommendation,
  dismissRecommendation,
  listRecommendationsOf,
} from '../../modules/derived/recommendations.service.ts';

const s = initServer();

export function recommendationsRoutes(deps: { readonly db: Db; readonly reads: ReadRouter }) {
  return s.router(contract.recommendations, {
    listRecommendations: async ({ query, res }) => {
      return { status: 200, body: await listRecommendationsOf(readDbOf(res, deps), actorOf(res), query) };
    },
    acceptRecommendation: async ({ params, res }) => {
      return { status: 200, body: await acceptRecommendation(writeDepsOf(res, deps), actorOf(res), params.id) };
    },
    dismissRecommendation: async ({ params, res }) => {
      return { status: 200, body: await dismissRecommendation(writeDepsOf(res, deps).db, actorOf(res), params.id) };
    },
  });
}

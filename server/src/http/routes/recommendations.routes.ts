import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import { principalOf } from '../bearer-auth.ts';
import type { AnalyticsInputDeps } from '../../modules/derived/recompute-request.ts';
import {
  acceptRecommendation,
  dismissRecommendation,
  listRecommendationsOf,
} from '../../modules/derived/recommendations.service.ts';

const s = initServer();

export function recommendationsRoutes(deps: AnalyticsInputDeps & { readonly db: Db }) {
  return s.router(contract.recommendations, {
    listRecommendations: async ({ query, res }) => {
      return { status: 200, body: await listRecommendationsOf(deps.db, principalOf(res), query) };
    },
    acceptRecommendation: async ({ params, res }) => {
      return { status: 200, body: await acceptRecommendation(deps, principalOf(res), params.id) };
    },
    dismissRecommendation: async ({ params, res }) => {
      return { status: 200, body: await dismissRecommendation(deps.db, principalOf(res), params.id) };
    },
  });
}

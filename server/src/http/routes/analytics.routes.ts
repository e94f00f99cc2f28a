import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import { actorOf } from '../bearer-auth.ts';
import { getRecoveryPage, getTrainingLoad } from '../../modules/derived/analytics.service.ts';

const s = initServer();

export function analyticsRoutes(deps: { readonly db: Db }) {
  return s.router(contract.analytics, {
    getTrainingLoad: async ({ query, res }) => {
      return { status: 200, body: await getTrainingLoad(deps.db, actorOf(res), query) };
    },
    getRecovery: async ({ query, res }) => {
      return { status: 200, body: await getRecoveryPage(deps.db, actorOf(res), query) };
    },
  });
}

import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import type { ReadRouter } from '../../db/read-replica.ts';
import { readDbOf } from '../read-routing.ts';
import { actorOf } from '../bearer-auth.ts';
import { getRecoveryPage, getTrainingLoad } from '../../modules/derived/analytics.service.ts';

const s = initServer();

export function analyticsRoutes(deps: { readonly db: Db; readonly reads: ReadRouter }) {
  return s.router(contract.analytics, {
    getTrainingLoad: async ({ query, res }) => {
      return { status: 200, body: await getTrainingLoad(readDbOf(res, deps), actorOf(res), query) };
    },
    getRecovery: async ({ query, res }) => {
      return { status: 200, body: await getRecoveryPage(readDbOf(res, deps), actorOf(res), query) };
    },
  });
}

import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import type { ReadRouter } from '../../db/read-replica.ts';
import { readDbOf } from '../read-routing.ts';
import { actorOf } from '../bearer-auth.ts';
import { writeDepsOf } from '../idempotency.middleware.ts';
import { listWellnessDays, upsertWellnessDay } from '../../modules/wellness/wellness.service.ts';

const s = initServer();

export function wellnessRoutes(deps: { readonly db: Db; readonly reads: ReadRouter }) {
  return s.router(contract.wellness, {
    upsertWellness: async ({ body, res }) => {
      const result = await upsertWellnessDay(writeDepsOf(res, deps), actorOf(res), body);
      return { status: result.created ? 201 : 200, body: result.record };
    },
    listWellness: async ({ query, res }) => {
      return { status: 200, body: await listWellnessDays(readDbOf(res, deps), actorOf(res), query) };
    },
  });
}

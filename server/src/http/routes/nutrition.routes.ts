import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import type { ReadRouter } from '../../db/read-replica.ts';
import { readDbOf } from '../read-routing.ts';
import { actorOf } from '../bearer-auth.ts';
import { writeDepsOf } from '../idempotency.middleware.ts';
import { listNutritionDays, upsertNutritionDay } from '../../modules/nutrition/nutrition.service.ts';

const s = initServer();

export function nutritionRoutes(deps: { readonly db: Db; readonly reads: ReadRouter }) {
  return s.router(contract.nutrition, {
    upsertNutrition: async ({ body, res }) => {
      const result = await upsertNutritionDay(writeDepsOf(res, deps), actorOf(res), body);
      return { status: result.created ? 201 : 200, body: result.log };
    },
    listNutrition: async ({ query, res }) => {
      return { status: 200, body: await listNutritionDays(readDbOf(res, deps), actorOf(res), query) };
    },
  });
}

import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import type { ReadRouter } from '../../db/read-replica.ts';
import { readDbOf } from '../read-routing.ts';
import { actorOf } from '../bearer-auth.ts';
import { writeDepsOf } from '../idempotency.middleware.ts';
import { getProfile, updateProfile } from '../../modules/profile/profile.service.ts';

const s = initServer();

export function profileRoutes(deps: { readonly db: Db; readonly reads: ReadRouter }) {
  return s.router(contract.profile, {
    getProfile: async ({ res }) => {
      return { status: 200, body: await getProfile(readDbOf(res, deps), actorOf(res).userId) };
    },
    updateProfile: async ({ body, res }) => {
      return { status: 200, body: await updateProfile(writeDepsOf(res, deps), actorOf(res).userId, body) };
    },
  });
}

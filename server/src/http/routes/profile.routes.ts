import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import type { AnalyticsInputDeps } from '../../modules/derived/recompute-request.ts';
import { principalOf } from '../bearer-auth.ts';
import { getProfile, updateProfile } from '../../modules/profile/profile.service.ts';

const s = initServer();

export function profileRoutes(deps: AnalyticsInputDeps & { readonly db: Db }) {
  return s.router(contract.profile, {
    getProfile: async ({ res }) => {
      return { status: 200, body: await getProfile(deps.db, principalOf(res).userId) };
    },
    updateProfile: async ({ body, res }) => {
      return { status: 200, body: await updateProfile(deps, principalOf(res).userId, body) };
    },
  });
}

import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import { getMcpStats } from '../../modules/mcp-audit/mcp-stats.service.ts';

const s = initServer();

/** Administrator routes; mounted behind `loadSession` and `requireAdmin` (http/admin-auth.ts). */
export function adminRoutes(deps: { readonly db: Db; readonly config: Config }) {
  return s.router(contract.admin, {
    getMcpStats: async ({ query }) => ({
      status: 200,
      body: await getMcpStats(deps.db, { windowHours: query.windowHours, mcpResource: deps.config.mcpResource }),
    }),
  });
}

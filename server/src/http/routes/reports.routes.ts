import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import { actorOf } from '../bearer-auth.ts';
import { getReport, listReportPage } from '../../modules/reports/reports.service.ts';

const s = initServer();

export function reportRoutes(deps: { readonly db: Db }) {
  return s.router(contract.reports, {
    listReports: async ({ query, res }) => {
      return { status: 200, body: await listReportPage(deps.db, actorOf(res), query) };
    },
    getReport: async ({ params, res }) => {
      return { status: 200, body: await getReport(deps.db, actorOf(res), params.id) };
    },
  });
}

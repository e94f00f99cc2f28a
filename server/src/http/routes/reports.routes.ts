import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Db } from '../../db/database.ts';
import type { ReadRouter } from '../../db/read-replica.ts';
import { readDbOf } from '../read-routing.ts';
import { actorOf } from '../bearer-auth.ts';
import { getReport, listReportPage } from '../../modules/reports/reports.service.ts';

const s = initServer();

export function reportRoutes(deps: { readonly db: Db; readonly reads: ReadRouter }) {
  return s.router(contract.reports, {
    listReports: async ({ query, res }) => {
      return { status: 200, body: await listReportPage(readDbOf(res, deps), actorOf(res), query) };
    },
    getReport: async ({ params, res }) => {
      return { status: 200, body: await getReport(readDbOf(res, deps), actorOf(res), params.id) };
    },
  });
}

import type { AsyncJobType } from '@pacer/contract';
import { runSyncJob } from '../webhooks/webhook-sync.service.ts';
import { runStructureGenerationJob } from '../planned-workouts/structure-generation.service.ts';
import { runReportJob } from '../reports/report-generation.service.ts';
import type { AsyncJobRunner } from './async-jobs.service.ts';

/** Which service runs which kind of async job. */
export const ASYNC_JOB_RUNNERS: Readonly<Record<AsyncJobType, AsyncJobRunner>> = {
  report: runReportJob,
  trigger_run: runSyncJob,
  structure_generation: runStructureGenerationJob,
};

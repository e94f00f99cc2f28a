import { MCP_STATS_WINDOW_HOURS_MAX, type McpStats } from '@pacer/contract';
import type { Db } from '../../db/database.ts';
import {
  countRefreshReuseRevocations,
  selectAuthFailureCounts,
  selectDcrClientCounts,
  selectOutcomeCounts,
  selectToolLatencies,
  selectTopClients,
} from './mcp-stats.repository.ts';

/** Execution and auth-failure records outlive the longest stats window by a day, then the hourly purge drops them. */
export const MCP_RECORD_RETENTION_DAYS = MCP_STATS_WINDOW_HOURS_MAX / 24 + 1;

const TOP_CLIENTS_LIMIT = 10;
const RATE_LIMITED = 'rate_limited';

export interface McpStatsOptions {
  /** Hours back from `now` (1-720, validated by the contract). */
  readonly windowHours: number;
  /** `{base}/mcp`: refresh-token reuse is counted on grants bound to it. */
  readonly mcpResource: string;
  readonly now?: Date;
}

/** Tool calls, latency, failures and registrations on `/mcp` in the window (docs/design.md §3 "Operations"). */
export async function getMcpStats(db: Db, options: McpStatsOptions): Promise<McpStats> {
  const since = new Date((options.now ?? new Date()).getTime() - options.windowHours * 3_600_000);
  const [latencies, outcomes, topClients, authFailures, dcr, refreshReuseDetected] = await Promise.all([
    selectToolLatencies(db, since),
    selectOutcomeCounts(db, since),
    selectTopClients(db, since, TOP_CLIENTS_LIMIT),
    selectAuthFailureCounts(db, since),
    selectDcrClientCounts(db, since),
    countRefreshReuseRevocations(db, options.mcpResource, since),
  ]);

  const overall = latencies.find((row) => row.tool === null);
  const byStatus: Record<string, number> = {};
  const byErrorCode: Record<string, number> = {};
  let rateLimitHits = 0;
  for (const { status, errorCode, count } of outcomes) {
    byStatus[status] = (byStatus[status] ?? 0) + count;
    if (status === 'error' && errorCode !== null) byErrorCode[errorCode] = (byErrorCode[errorCode] ?? 0) + count;
    if (errorCode === RATE_LIMITED) rateLimitHits += count;
  }

  return {
    windowHours: options.windowHours,
    totalExecutions: overall?.count ?? 0,
    byStatus,
    byErrorCode,
    byTool: latencies.flatMap(({ tool, count, errors, p50, p95, p99 }) =>
      tool === null ? [] : [{ tool, count, errors, p50, p95, p99 }],
    ),
    latencyMs: { p50: overall?.p50 ?? null, p95: overall?.p95 ?? null, p99: overall?.p99 ?? null },
    dcr: { totalClients: dcr.total, registeredInWindow: dcr.registeredSince },
    topClients: topClients.map(({ clientId, name, count }) => ({ clientId, name, count })),
    authFailures: Object.fromEntries(authFailures.map(({ reason, count }) => [reason, count])),
    rateLimitHits,
    refreshReuseDetected,
  };
}

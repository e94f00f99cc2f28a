import type { McpExecutionStatus, McpStats } from '@pacer/contract';
import { type RawBuilder, sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';

/** The contract's latency percentiles in milliseconds; `null` when there was nothing to measure. */
export type LatencyRow = Readonly<McpStats['latencyMs']>;

export interface ToolLatencyRow extends LatencyRow {
  /** `null` on the row that sums every tool. */
  readonly tool: string | null;
  readonly count: number;
  readonly errors: number;
}

export interface OutcomeCountRow {
  readonly status: McpExecutionStatus;
  readonly errorCode: string | null;
  readonly count: number;
}

export interface ClientCountRow {
  readonly clientId: string;
  /** `null` when no client has this public id (any more). */
  readonly name: string | null;
  readonly count: number;
}

export interface ReasonCountRow {
  readonly reason: string;
  readonly count: number;
}

export interface DcrCountsRow {
  readonly total: number;
  readonly registeredSince: number;
}

/**
 * The continuous percentile of the durations, in milliseconds rounded to 0.1
 * (`percentile_cont` interpolates between the two nearest calls).
 */
function durationPercentile(fraction: number): RawBuilder<number | null> {
  return sql<
    number | null
  >`round((percentile_cont(${sql.lit(fraction)}) within group (order by duration_ms))::numeric, 1)::float8`;
}

/**
 * Calls, failures and latency per tool, plus one row (`tool: null`) over all
 * tools: `grouping sets` reads the window once for both, and the overall row
 * exists (with null percentiles) even when there were no calls.
 */
export async function selectToolLatencies(db: DbOrTrx, since: Date): Promise<ToolLatencyRow[]> {
  return db
    .selectFrom('mcpExecutions')
    .select((eb) => [
      sql<string | null>`case when grouping(tool) = 0 then tool end`.as('tool'),
      eb.fn.countAll<number>().as('count'),
      eb.fn.countAll<number>().filterWhere('status', '=', 'error').as('errors'),
      durationPercentile(0.5).as('p50'),
      durationPercentile(0.95).as('p95'),
      durationPercentile(0.99).as('p99'),
    ])
    .where('startedAt', '>=', since)
    .groupBy(sql`grouping sets ((tool), ())`)
    .orderBy(sql`grouping(tool)`)
    .orderBy('count', 'desc')
    .orderBy('tool')
    .execute();
}

/** Calls per (status, error code) in the window. */
export async function selectOutcomeCounts(db: DbOrTrx, since: Date): Promise<OutcomeCountRow[]> {
  return db
    .selectFrom('mcpExecutions')
    .select((eb) => ['status', 'errorCode', eb.fn.countAll<number>().as('count')])
    .where('startedAt', '>=', since)
    .groupBy(['status', 'errorCode'])
    .execute();
}

/** The clients with the most calls in the window, with their registered name where one exists. */
export async function selectTopClients(db: DbOrTrx, since: Date, limit: number): Promise<ClientCountRow[]> {
  return db
    .selectFrom('mcpExecutions as e')
    .leftJoin('oauthClients as c', 'c.clientId', 'e.clientId')
    .select((eb) => ['e.clientId', 'c.name', eb.fn.countAll<number>().as('count')])
    .where('e.startedAt', '>=', since)
    .groupBy(['e.clientId', 'c.name'])
    .orderBy('count', 'desc')
    .orderBy('e.clientId')
    .limit(limit)
    .execute();
}

/** Refused requests on `/mcp` per reason in the window. */
export async function selectAuthFailureCounts(db: DbOrTrx, since: Date): Promise<ReasonCountRow[]> {
  return db
    .selectFrom('mcpAuthFailures')
    .select(['reason', sql<number>`sum(count)::int`.as('count')])
    .where('at', '>=', since)
    .groupBy('reason')
    .orderBy('reason')
    .execute();
}

/** Dynamically registered clients (RFC 7591): all of them, and those registered since `since`. */
export async function selectDcrClientCounts(db: DbOrTrx, since: Date): Promise<DcrCountsRow> {
  return db
    .selectFrom('oauthClients')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.countAll<number>().filterWhere('createdAt', '>=', since).as('registeredSince'),
    ])
    .where('kind', '=', 'dcr')
    .executeTakeFirstOrThrow();
}

/** Grants on `resource` revoked since `since` because a rotated refresh token was presented again. */
export async function countRefreshReuseRevocations(db: DbOrTrx, resource: string, since: Date): Promise<number> {
  const row = await db
    .selectFrom('oauthGrants')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('revokedReason', '=', 'refresh_reuse')
    .where('resource', '=', resource)
    .where('revokedAt', '>=', since)
    .executeTakeFirstOrThrow();
  return row.count;
}

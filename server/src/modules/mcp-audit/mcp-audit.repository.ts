import type { Insertable } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';
import type { McpExecutionsTable } from '../../db/tables.ts';

export type McpExecutionInsert = Insertable<McpExecutionsTable>;

/** One multi-row insert for a batch of records. */
export async function insertMcpExecutions(db: DbOrTrx, executions: readonly McpExecutionInsert[]): Promise<void> {
  if (executions.length === 0) return;
  await db
    .insertInto('mcpExecutions')
    .values([...executions])
    .execute();
}

export interface McpAuthFailure {
  readonly reason: string;
  readonly clientIp: string;
}

/** One more refused request in the current minute's row for its address and reason (created on the first). */
export async function countMcpAuthFailure(db: DbOrTrx, failure: McpAuthFailure): Promise<void> {
  await db
    .insertInto('mcpAuthFailures')
    .values({ reason: failure.reason, clientIp: failure.clientIp })
    .onConflict((conflict) =>
      conflict
        .columns(['at', 'clientIp', 'reason'])
        .doUpdateSet((eb) => ({ count: eb('mcpAuthFailures.count', '+', 1) })),
    )
    .execute();
}

/** Housekeeping: records older than `before` (the stats window is at most 30 days). */
export async function deleteMcpRecordsBefore(db: DbOrTrx, before: Date): Promise<number> {
  const executions = await db.deleteFrom('mcpExecutions').where('startedAt', '<', before).executeTakeFirst();
  const failures = await db.deleteFrom('mcpAuthFailures').where('at', '<', before).executeTakeFirst();
  return Number(executions.numDeletedRows) + Number(failures.numDeletedRows);
}

import type { Db } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import { insertMcpAuthFailure, insertMcpExecution, type McpExecutionInsert } from './mcp-audit.repository.ts';

/**
 * Record a tool call for the stats (DESIGN.md §3 "Operations"). Written off
 * the request's path: the answer does not wait for it, and a failed write is
 * only logged (a lost record is a statistic, never a lost call).
 */
export function recordMcpExecution(db: Db, logger: Logger, execution: McpExecutionInsert): void {
  insertMcpExecution(db, execution).catch((error: unknown) =>
    logger.warn({ err: error, tool: execution.tool }, 'could not record an MCP execution'),
  );
}

/** Record a refused request on `/mcp` by reason (`missing_token`, `expired`, `client_not_allowed`, …). */
export function recordMcpAuthFailure(db: Db, logger: Logger, reason: string): void {
  insertMcpAuthFailure(db, reason).catch((error: unknown) =>
    logger.warn({ err: error, reason }, 'could not record an MCP auth failure'),
  );
}

import type { Db } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import {
  countMcpAuthFailure,
  insertMcpExecutions,
  type McpAuthFailure,
  type McpExecutionInsert,
} from './mcp-audit.repository.ts';

/** How long a record may wait before its batch is written, and the most a batch holds. */
const FLUSH_INTERVAL_MS = 250;
const MAX_BATCH = 500;

/**
 * Records every tool call for the stats (docs/design.md §3 "Operations"), off the
 * request's path: records are buffered and written as one multi-row insert
 * every 250 ms (or 500 records), which took a commit per call off PostgreSQL
 * (the largest single cost of an MCP call in the bench). `close()` writes what
 * is left; a process killed with SIGKILL loses at most the last 250 ms of
 * statistics, never a call. A failed write is only logged.
 */
export class McpExecutionRecorder {
  private readonly db: Db;
  private readonly logger: Logger;
  private buffer: McpExecutionInsert[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(db: Db, logger: Logger) {
    this.db = db;
    this.logger = logger;
  }

  record(execution: McpExecutionInsert): void {
    this.buffer.push(execution);
    if (this.buffer.length >= MAX_BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS).unref();
  }

  /** Write what is buffered now; resolves once it (and any earlier batch) is written. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length > 0) {
      this.writing = this.writing.then(() =>
        insertMcpExecutions(this.db, batch).catch((error: unknown) =>
          this.logger.warn({ err: error, records: batch.length }, 'could not record MCP executions'),
        ),
      );
    }
    return this.writing;
  }

  close(): Promise<void> {
    return this.flush();
  }
}

/**
 * Count a refused request on `/mcp` by reason (`missing_token`, `expired`,
 * `client_not_allowed`, …) and client address: one row per minute, address
 * and reason holds the count, so a flood of bad tokens adds no row per request.
 */
export function recordMcpAuthFailure(db: Db, logger: Logger, failure: McpAuthFailure): void {
  countMcpAuthFailure(db, failure).catch((error: unknown) =>
    logger.warn({ err: error, reason: failure.reason }, 'could not record an MCP auth failure'),
  );
}

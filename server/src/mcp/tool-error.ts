import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** The stable error codes of MCP tool results (docs/design.md §3 "MCP / Tools"). */
export type McpErrorCode =
  | 'not_found'
  | 'validation_failed'
  | 'tool_not_found'
  | 'execution_disabled'
  | 'feature_disabled'
  | 'insufficient_scope'
  | 'idempotency_in_progress'
  | 'idempotency_key_reused'
  | 'rate_limited'
  | 'payload_too_large'
  | 'internal_error';

/** A refused call: `isError` with `{error, message, retry_after_seconds?}` as text, never `structuredContent`. */
export class McpToolError extends Error {
  override readonly name = 'McpToolError';
  readonly code: McpErrorCode;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: McpErrorCode, message: string, retryAfterSeconds?: number) {
    super(message);
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  toResult(): CallToolResult {
    const body = {
      error: this.code,
      message: this.message,
      ...(this.retryAfterSeconds === undefined ? {} : { retry_after_seconds: this.retryAfterSeconds }),
    };
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
  }
}

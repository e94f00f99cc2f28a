import { createHash } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { IdempotencyKeySchema } from '@pacer/contract';
import { type z } from 'zod';
import { AppError, type ErrorCode } from '../errors.ts';
import { fieldErrorsOf } from '../http/problem.ts';
import { canonicalJson, type IdempotencyScope, runIdempotent } from '../modules/idempotency/idempotency.service.ts';
import type { McpExecutionRecorder } from '../modules/mcp-audit/mcp-audit.service.ts';
import type { ReadRouter } from '../db/read-replica.ts';
import { noteGrantWrite } from '../modules/oauth/token.service.ts';
import type { RateLimitResult } from '../modules/rate-limit/rate-limit.service.ts';
import { featureEnabled, findEnabledTool } from './registry.ts';
import type { ToolContext, ToolDefinition } from './tool.ts';
import { type McpErrorCode, McpToolError } from './tool-error.ts';

export { McpToolError } from './tool-error.ts';

/** docs/design.md §3: a result larger than this is refused (`payload_too_large`): hosts truncate or choke on more. */
export const MAX_RESULT_BYTES = 512 * 1024;

const PASSED_THROUGH: ReadonlySet<ErrorCode> = new Set([
  'not_found',
  'validation_failed',
  'insufficient_scope',
  'idempotency_in_progress',
  'idempotency_key_reused',
  'rate_limited',
  'payload_too_large',
]);

/** A service's `AppError` as a tool error: its own code where MCP has it, else by class (4xx, 5xx). */
function toToolError(error: AppError): McpToolError {
  const retry = error.headers['Retry-After'];
  const retryAfter = retry ? Number(retry) : undefined;
  if (PASSED_THROUGH.has(error.code)) return new McpToolError(error.code as McpErrorCode, error.message, retryAfter);
  // Any other 429 (e.g. `fit_decode_in_progress`) asks the host to wait like a rate limit.
  if (error.status === 429) return new McpToolError('rate_limited', error.message, retryAfter);
  return new McpToolError(error.status < 500 ? 'validation_failed' : 'internal_error', error.message);
}

function validationMessage(error: z.ZodError): string {
  const fields = fieldErrorsOf(error.issues);
  return `Invalid arguments: ${fields.map((field) => `${field.path || '(arguments)'}: ${field.message}`).join('; ')}`;
}

/** A tool's context plus where the call is recorded and where its reads may go. */
export interface ExecutionContext extends ToolContext {
  readonly recorder: McpExecutionRecorder;
  /** Read-only tools read through it (a replica, read-your-writes); `db` is the primary. */
  readonly reads: ReadRouter;
}

export interface CallToolRequest {
  readonly name: string;
  readonly arguments: Record<string, unknown> | undefined;
  /** `Mcp-Idempotency-Key` header of the HTTP request, if sent. */
  readonly idempotencyHeader: string | undefined;
  /** The token's MCP window, counted before the call (undefined: the limit is off). */
  readonly rateLimit: RateLimitResult | undefined;
}

/**
 * Run one `tools/call`: switches, feature, rate limit, arguments, the
 * idempotency key, then the tool over the same service as REST. The result
 * is `structuredContent = output.parse(result)` (undeclared keys never reach
 * strict clients) and the same JSON as text. Every call is recorded.
 */
export async function callTool(context: ExecutionContext, request: CallToolRequest): Promise<CallToolResult> {
  const started = new Date();
  const startedAt = performance.now();
  let tool: ToolDefinition | undefined;
  let result: CallToolResult;
  let errorCode: McpErrorCode | null = null;
  try {
    tool = findEnabledTool(context.config, request.name);
    result = await runCall(context, request, tool);
  } catch (error) {
    const toolError = asToolError(context, request.name, error);
    errorCode = toolError.code;
    result = toolError.toResult();
  }
  context.recorder.record({
    tool: (tool?.name ?? request.name).slice(0, 100),
    clientId: context.principal.clientId,
    userId: context.principal.userId,
    startedAt: started,
    durationMs: Math.round((performance.now() - startedAt) * 10) / 10,
    status: errorCode === null && result.isError !== true ? 'ok' : 'error',
    errorCode: errorCode ?? (result.isError === true ? errorCodeOf(result) : null),
    argsSha256: createHash('sha256')
      .update(canonicalJson(request.arguments ?? {}))
      .digest('hex'),
  });
  return result;
}

function asToolError(context: ToolContext, name: string, error: unknown): McpToolError {
  if (error instanceof McpToolError) return error;
  if (error instanceof AppError) return toToolError(error);
  context.logger.error({ err: error, tool: name }, 'MCP tool failed');
  return new McpToolError('internal_error', 'The tool failed unexpectedly; try again later.');
}

/** The code of a stored (replayed) error result. */
function errorCodeOf(result: CallToolResult): McpErrorCode | null {
  const first = result.content[0];
  if (first?.type !== 'text') return null;
  try {
    return (JSON.parse(first.text) as { error?: McpErrorCode }).error ?? null;
  } catch {
    return null;
  }
}

async function runCall(
  context: ExecutionContext,
  request: CallToolRequest,
  tool: ToolDefinition | undefined,
): Promise<CallToolResult> {
  if (!tool) throw new McpToolError('tool_not_found', `There is no tool named ${request.name}.`);
  if (!context.config.mcp.executionEnabled) {
    throw new McpToolError('execution_disabled', 'Tool execution is switched off on this server; try again later.');
  }
  if (!featureEnabled(tool, context.principal)) {
    throw new McpToolError(
      'feature_disabled',
      `${tool.name} needs the athlete's ${tool.feature ?? ''} feature, which is off in their profile.`,
    );
  }
  const missing = tool.scopes.filter((scope) => !context.principal.scopes.includes(scope));
  if (missing.length > 0)
    throw new McpToolError('insufficient_scope', `This tool needs the scope ${missing.join(' ')}.`);
  if (request.rateLimit && !request.rateLimit.allowed) {
    throw new McpToolError(
      'rate_limited',
      `Too many tool calls with this token: at most ${request.rateLimit.limit} per minute.`,
      request.rateLimit.resetSecs,
    );
  }
  const parsed = tool.input.safeParse(request.arguments ?? {});
  if (!parsed.success) throw new McpToolError('validation_failed', validationMessage(parsed.error));
  const args = parsed.data as Record<string, unknown>;

  if (tool.annotations.readOnlyHint) {
    if (tool.readsPrimary === true) return execute(context, tool, args);
    return execute({ ...context, db: context.reads.readDbFor(context.principal.msSinceWrite) }, tool, args);
  }
  const key = idempotencyKeyOf(request.idempotencyHeader, args);
  const result =
    key === undefined ? await execute(context, tool, args) : await executeIdempotently(context, tool, args, key);
  await noteWrite(context, result);
  return result;
}

/**
 * With a replica, a write tool's call is noted on the token's grant before its
 * result goes back: the caller's next reads go to the primary for the
 * read-your-writes window (db/read-replica.ts), as after a REST write.
 */
async function noteWrite(context: ExecutionContext, result: CallToolResult): Promise<void> {
  if (!context.reads.replicated || result.isError === true) return;
  try {
    await noteGrantWrite(context.db, context.principal.grantId);
  } catch (error) {
    context.logger.warn({ err: error }, 'could not note a write for read-your-writes');
  }
}

/**
 * A write or async tool called with an idempotency key: `runIdempotent`, as a
 * REST request with a key. The tool runs in the transaction holding the
 * claim; a result commits with its writes, a tool error rolls them back.
 */
async function executeIdempotently(
  context: ToolContext,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  key: string,
): Promise<CallToolResult> {
  // Scope (docs/design.md §3): client, user, tool and key. The arguments without the key are the fingerprint's body.
  const { idempotency_key: _key, ...fingerprinted } = args;
  const scope: IdempotencyScope = {
    userId: context.principal.userId,
    clientId: context.principal.clientId,
    key: `mcp:${tool.name}:${key}`,
  };
  const claim = {
    scope,
    method: 'MCP',
    url: tool.name,
    path: tool.name,
    requestContentLength: null,
    body: { kind: 'json', body: fingerprinted },
  } as const;
  const outcome = await runIdempotent(context.db, claim, async (trx) => {
    let result: CallToolResult;
    try {
      result = await execute({ ...context, db: trx }, tool, args);
    } catch (error) {
      result = asToolError(context, tool.name, error).toResult();
    }
    const code = result.isError === true ? errorCodeOf(result) : null;
    return {
      result,
      response: {
        status: 200,
        contentType: 'application/json',
        body: Buffer.from(JSON.stringify(result)),
        bodySha256: null,
      },
      commit: result.isError !== true,
      // Like REST's 5xx and 429, an internal error or a rate limit leaves the key free so a retry
      // runs again; any other error is kept for replay.
      keep: code !== 'internal_error' && code !== 'rate_limited',
    };
  });
  if (outcome.outcome === 'replay') return JSON.parse(outcome.response.body.toString('utf8')) as CallToolResult;
  if (outcome.unstored !== undefined) {
    context.logger.error({ err: outcome.unstored, tool: tool.name }, 'could not store an idempotent tool result');
  }
  return outcome.answer.result;
}

function idempotencyKeyOf(header: string | undefined, args: Record<string, unknown>): string | undefined {
  const fromArgs = typeof args['idempotency_key'] === 'string' ? args['idempotency_key'] : undefined;
  if (header === undefined) return fromArgs;
  if (!IdempotencyKeySchema.safeParse(header).success) {
    throw new McpToolError(
      'validation_failed',
      'The Mcp-Idempotency-Key header must be 1-255 visible ASCII characters.',
    );
  }
  if (fromArgs !== undefined && fromArgs !== header) {
    throw new McpToolError(
      'validation_failed',
      'The Mcp-Idempotency-Key header and the idempotency_key argument differ; send one of them.',
    );
  }
  return header;
}

async function execute(
  context: ToolContext,
  tool: ToolDefinition,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const output = tool.output.parse(await tool.run(context, args)) as Record<string, unknown>;
  const text = JSON.stringify(output);
  if (Buffer.byteLength(text) > MAX_RESULT_BYTES) {
    throw new McpToolError(
      'payload_too_large',
      `The result is larger than ${MAX_RESULT_BYTES / 1024} KiB; ask for a smaller range, page or fewer points.`,
    );
  }
  return { structuredContent: output, content: [{ type: 'text', text }] };
}

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
  ListToolsRequestSchema,
  type ListToolsResult,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { API_VERSION, type Scope } from '@pacer/contract';
import express, { type Request, type RequestHandler, type Response, Router } from 'express';
import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import type { Logger } from '../logger.ts';
import { type McpExecutionRecorder, recordMcpAuthFailure } from '../modules/mcp-audit/mcp-audit.service.ts';
import { noteGrantUse, type TokenPrincipal } from '../modules/oauth/token.service.ts';
import { rateLimitHeaders, type RateLimitResult } from '../modules/rate-limit/rate-limit.service.ts';
import { actorOfPrincipal } from '../http/bearer-auth.ts';
import { clientIpOf } from '../http/client-address.ts';
import { isLoopbackHost } from '../modules/oauth/redirect-uri.ts';
import type { FitDecodeQueue } from '../modules/workouts/fit-decode-queue.ts';
import { callTool, type ExecutionContext } from './execute.ts';
import { exchangedRequest, JsonExchange } from './json-exchange.ts';
import {
  authenticateMcp,
  authFailuresSpent,
  countAuthFailure,
  insufficientScope,
  type McpAuthRefusal,
} from './mcp-auth.ts';
import { MCP_PATH } from './mcp-endpoint.ts';
import { featureEnabled, findEnabledTool, listVisibleTools } from './registry.ts';
import type { ReadRouter } from '../db/read-replica.ts';

const MAX_BODY_BYTES = 1024 * 1024;
const RATE_LIMIT_WINDOW_SECS = 60;

const INSTRUCTIONS =
  "Pacer holds this athlete's training data: workouts from their devices, daily wellness (HRV, sleep, resting HR), timed nutrition, their profile and planned workouts. Call get_current_time before reasoning about dates: dates are the athlete's local calendar dates. Read list_memories at the start of a conversation. Write tools accept an `idempotency_key`; async tools answer an id to poll with get_async_job_status.";

export interface McpDeps {
  readonly config: Config;
  readonly db: Db;
  /** Where read-only tools read (a replica, read-your-writes: db/read-replica.ts). */
  readonly reads: ReadRouter;
  readonly boss: PgBoss;
  readonly logger: Logger;
  readonly recorder: McpExecutionRecorder;
  /** The app's FIT decode queue: a tool that decodes a file takes its place in it like a REST request. */
  readonly decoding: FitDecodeQueue;
}

/** A JSON-RPC error outside any request (transport level): `id` null. */
function sendJsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

function sendRefusal(res: Response, refusal: McpAuthRefusal): void {
  res.set(refusal.headers).status(refusal.status).json(refusal.body);
}

/**
 * DNS-rebinding protection (MCP 2025-11-25 transports, "Security Warning"):
 * the Host must be the base URL's host (any loopback name when the base URL
 * is loopback), and an `Origin`, when a browser sends one, must be the base
 * URL's origin or on `PACER_MCP_ALLOWED_ORIGINS`. Checked before any auth.
 * Server-to-server hosts send no `Origin` and pass.
 */
export function originGuard(config: Config): RequestHandler {
  const base = new URL(config.baseUrl);
  const hosts = new Set([base.host.toLowerCase()]);
  if (isLoopbackHost(base.hostname)) {
    const port = base.port ? `:${base.port}` : '';
    for (const name of ['localhost', '127.0.0.1', '[::1]']) hosts.add(`${name}${port}`);
  }
  const origins = new Set([base.origin, ...config.mcp.allowedOrigins]);
  return (req, res, next) => {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!hosts.has(host)) {
      sendJsonRpcError(res, 403, -32000, `Host ${host || '(none)'} is not allowed.`);
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin)) {
      sendJsonRpcError(res, 403, -32000, `Origin ${origin} is not allowed.`);
      return;
    }
    next();
  };
}

type MediaPreference = 'json' | 'sse' | 'none';

/**
 * JSON or SSE as the client's `Accept` prefers (q-values, then order). The
 * SDK transport insists on both types being listed; a client that accepts
 * only JSON gets JSON.
 */
export function preferredResponse(accept: string | undefined): MediaPreference {
  if (!accept) return 'json';
  let best: { kind: MediaPreference; q: number } = { kind: 'none', q: 0 };
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((param) => param.trim()).find((param) => param.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    const kind: MediaPreference =
      type === 'application/json' || type === 'application/*' || type === '*/*'
        ? 'json'
        : type === 'text/event-stream' || type === 'text/*'
          ? 'sse'
          : 'none';
    if (kind !== 'none' && q > best.q) best = { kind, q };
  }
  return best.kind;
}

interface ToolCallMessage {
  readonly name: string;
  readonly arguments: Record<string, unknown> | undefined;
}

function toolCallsOf(messages: readonly JSONRPCMessage[]): ToolCallMessage[] {
  const calls: ToolCallMessage[] = [];
  for (const message of messages) {
    if (!message || typeof message !== 'object' || !('method' in message) || message.method !== 'tools/call') continue;
    const params = (message as { params?: { name?: unknown; arguments?: unknown } }).params;
    if (typeof params?.name !== 'string') continue;
    const args = params.arguments;
    calls.push({
      name: params.name,
      arguments:
        args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined,
    });
  }
  return calls;
}

/** Scopes a call needs that the token lacks, or none (unknown tools and bad arguments are the tool's to answer). */
function scopesNeeded(config: Config, principal: TokenPrincipal, call: ToolCallMessage): readonly Scope[] {
  const tool = findEnabledTool(config, call.name);
  // A tool that does not exist for this user answers `feature_disabled`, not a scope challenge.
  if (!tool || !featureEnabled(tool, principal)) return [];
  const parsed = tool.scopesFor ? tool.input.safeParse(call.arguments ?? {}) : undefined;
  const extra = parsed?.success && tool.scopesFor ? tool.scopesFor(parsed.data) : [];
  const needed = [...new Set([...tool.scopes, ...extra])];
  return needed.some((scope) => !principal.scopes.includes(scope)) ? needed : [];
}

function readBody(req: Request): { ok: true; body: unknown } | { ok: false; tooDeep: boolean } {
  const raw = req.body as Buffer | undefined;
  // Measured before `JSON.parse` builds it: a few thousand levels overflow the stack of whatever walks it next.
  if (raw && jsonNestsDeeperThan(raw)) return { ok: false, tooDeep: true };
  try {
    return { ok: true, body: JSON.parse(raw && raw.length > 0 ? raw.toString('utf8') : '') as unknown };
  } catch {
    return { ok: false, tooDeep: false };
  }
}

function refuse(deps: McpDeps, res: Response, refusal: McpAuthRefusal, clientIp: string): void {
  recordMcpAuthFailure(deps.db, deps.logger, { reason: refusal.reason, clientIp });
  sendRefusal(res, refusal);
}

/** 429 for an address that sent too many bad tokens (`PACER_MCP_AUTH_FAILURES_PER_MINUTE`), with `Retry-After`. */
function refuseAddress(res: Response, window: RateLimitResult): void {
  res.set(rateLimitHeaders(window));
  sendJsonRpcError(
    res,
    429,
    -32000,
    `Too many failed authentications from this address; retry after ${String(window.resetSecs)} s.`,
  );
}

// CORS for browser-based hosts on an allowed origin (the guard has refused every other origin).
const cors: RequestHandler = (req, res, next) => {
  if (req.headers.origin !== undefined) {
    res.set({
      'Access-Control-Allow-Origin': req.headers.origin,
      'Access-Control-Expose-Headers': 'WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version',
      Vary: 'Origin',
    });
  }
  next();
};

const answerPreflight: RequestHandler = (_req, res) => {
  res
    .set({
      'Access-Control-Allow-Methods': 'POST',
      'Access-Control-Allow-Headers':
        'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Idempotency-Key, Last-Event-ID',
      'Access-Control-Max-Age': '600',
    })
    .status(204)
    .end();
};

const methodNotAllowed: RequestHandler = (_req, res) => {
  res.set('Allow', 'POST');
  sendJsonRpcError(res, 405, -32000, 'Method not allowed: this server is stateless; POST JSON-RPC messages to /mcp.');
};

type PostHandler = (req: Request, res: Response, preference: 'json' | 'sse') => Promise<void>;

/** `POST /mcp`: content type and `Accept` checked, then the body read raw (at most 1 MiB) and handed on. */
function acceptPost(handlePost: PostHandler): RequestHandler {
  const rawJson = express.raw({ type: () => true, limit: MAX_BODY_BYTES });
  return (req, res, next) => {
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (contentType !== 'application/json') {
      sendJsonRpcError(res, 415, -32000, 'Unsupported Media Type: send application/json.');
      return;
    }
    const preference = preferredResponse(req.headers.accept);
    if (preference === 'none') {
      sendJsonRpcError(res, 406, -32000, 'Not Acceptable: accept application/json or text/event-stream.');
      return;
    }
    rawJson(req, res, (error?: unknown) => {
      if (error) {
        const status = (error as { status?: number }).status === 413 ? 413 : 400;
        sendJsonRpcError(
          res,
          status,
          status === 413 ? -32000 : -32700,
          status === 413 ? 'Request body too large (1 MiB).' : 'Parse error',
        );
        return;
      }
      handlePost(req, res, preference).catch(next);
    });
  };
}

/** The body as one JSON-RPC message, or undefined when a parse error or a batch has been answered. */
function readSingleMessage(req: Request, res: Response): { body: unknown } | undefined {
  const parsed = readBody(req);
  if (!parsed.ok) {
    // JSON-RPC 2.0 §5.1: -32700 for a body the server cannot parse, as the SDK's transport answers invalid JSON.
    const reason = parsed.tooDeep ? `nests deeper than ${MAX_JSON_DEPTH} levels` : 'is not JSON';
    sendJsonRpcError(res, 400, -32700, `Parse error: the body ${reason}.`);
    return undefined;
  }
  // MCP 2025-06-18 removed JSON-RPC batching; refusing it also keeps one call per rate-limit count.
  if (Array.isArray(parsed.body)) {
    sendJsonRpcError(
      res,
      400,
      -32600,
      'Invalid Request: JSON-RPC batches are not supported; send one message per POST.',
    );
    return undefined;
  }
  return { body: parsed.body };
}

interface Authorized {
  readonly principal: TokenPrincipal;
  readonly rateLimit: RateLimitResult | undefined;
}

/**
 * Tool calls count against their token's window (`PACER_MCP_RATE_LIMIT_PER_MINUTE`), keyed by the
 * token's SHA-256 and counted by the token lookup's own statement, as REST counts its windows. Only
 * a known token counts: a random one never gets a window row of its own (MCP has no per-address
 * request window to bound them; its bad tokens meet the auth-failure window instead).
 */
function toolCallWindows(deps: McpDeps, calls: readonly ToolCallMessage[]) {
  const limit = deps.config.mcp.rateLimitPerMinute;
  if (calls.length === 0 || limit === 0) return undefined;
  return (tokenHash: string) => ({
    windowSecs: RATE_LIMIT_WINDOW_SECS,
    buckets: [{ key: `mcp:token:${tokenHash}`, limit }],
    knownTokenOnly: true,
  });
}

/**
 * The token checked (an address that sent too many bad ones gets 429) and,
 * for tool calls, counted against its rate limit and
 * checked for the scopes each call needs. Undefined when refused (answered).
 */
async function authorizeRequest(
  deps: McpDeps,
  req: Request,
  res: Response,
  calls: readonly ToolCallMessage[],
): Promise<Authorized | undefined> {
  const { config } = deps;
  const authorization = req.headers.authorization;
  const clientIp = clientIpOf(req);
  const auth = await authenticateMcp(deps, authorization, toolCallWindows(deps, calls));
  if (!auth.ok) {
    // A spent address's bad tokens are refused without being counted or recorded again. Its valid
    // tokens still pass: hosted assistants reach us from a few shared addresses, and one bad actor
    // behind the same address must not shut out every user there. So the address's window is read
    // only for a token that failed: a valid call pays no query for it.
    const spent = await authFailuresSpent(deps, clientIp);
    if (spent) {
      refuseAddress(res, spent);
      return undefined;
    }
    const window = auth.refusal.status === 401 ? await countAuthFailure(deps, clientIp) : undefined;
    if (window && !window.allowed) {
      recordMcpAuthFailure(deps.db, deps.logger, { reason: auth.refusal.reason, clientIp });
      refuseAddress(res, window);
    } else {
      refuse(deps, res, auth.refusal, clientIp);
    }
    return undefined;
  }
  const { principal } = auth;
  for (const call of calls) {
    const needed = scopesNeeded(config, principal, call);
    if (needed.length > 0) {
      refuse(deps, res, insufficientScope(config, principal, needed), clientIp);
      return undefined;
    }
  }
  return { principal, rateLimit: auth.limits[0] };
}

interface ToolHandlers {
  readonly toolsList: () => ListToolsResult;
  readonly toolCall: (params: CallToolRequest['params']) => Promise<CallToolResult>;
}

/** `tools/list` and `tools/call` for this token. */
function toolHandlers(deps: McpDeps, req: Request, authorized: Authorized): ToolHandlers {
  const { config } = deps;
  const { principal, rateLimit } = authorized;
  const idempotencyHeader = req.headers['mcp-idempotency-key'];
  const context: ExecutionContext = {
    db: deps.db,
    reads: deps.reads,
    boss: deps.boss,
    config,
    logger: deps.logger,
    principal,
    actor: actorOfPrincipal(principal),
    decoding: deps.decoding,
    recorder: deps.recorder,
  };
  return {
    toolsList: (): ListToolsResult => ({ tools: listVisibleTools(config, principal) }),
    toolCall: (params: CallToolRequest['params']): Promise<CallToolResult> =>
      callTool(context, {
        name: params.name,
        arguments: params.arguments,
        idempotencyHeader: Array.isArray(idempotencyHeader) ? idempotencyHeader.join(', ') : idempotencyHeader,
        rateLimit,
      }),
  };
}

/** The SDK `Server` of one request, with `tools/list` and `tools/call` for its token. */
function sdkServer(handlers: ToolHandlers, schemaValidator: AjvJsonSchemaValidator): Server {
  const server = new Server(
    { name: 'pacer', title: 'Pacer', version: API_VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: schemaValidator,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, handlers.toolsList);
  server.setRequestHandler(CallToolRequestSchema, (request) => handlers.toolCall(request.params));
  return server;
}

/** The request's SDK `Server` on a stateless Streamable HTTP transport. */
async function answerWithSdk(
  req: Request,
  res: Response,
  body: unknown,
  preference: 'json' | 'sse',
  server: Server,
): Promise<void> {
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: preference === 'json',
  });
  // The SDK insists that both media types are acceptable; the preference was decided above.
  req.headers.accept = 'application/json, text/event-stream';
  res.on('close', () => {
    // A finished answer leaves nothing open; closing would only build an abort error per request.
    if (res.writableFinished) return;
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

/**
 * A `tools/call` or `tools/list` answered with JSON (json-exchange.ts): the
 * request's SDK `Server` answers it, and its answer is written as the Streamable
 * HTTP transport writes a JSON answer (status 200, `Content-Type` and
 * `Content-Length`, the `JSON.stringify` of the message).
 */
async function answerWithExchange(res: Response, request: JSONRPCRequest, server: Server): Promise<void> {
  const exchange = new JsonExchange(request);
  await server.connect(exchange);
  const text = JSON.stringify(await exchange.exchange());
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

/**
 * `POST /mcp` (docs/design.md §3 "MCP"): stateless Streamable HTTP. Each request
 * gets its own SDK `Server` and transport (`sessionIdGenerator: undefined`);
 * nothing is kept between requests, so any API process can answer any call.
 * The low-level `Server` is used rather than `McpServer`: `tools/list` is
 * filtered per token and answered from schemas converted once at start-up.
 */
export function mcpRouter(deps: McpDeps): Router {
  const router = Router();
  const guard = originGuard(deps.config);
  // One validator for every request: the SDK would build a new Ajv instance per `Server`.
  const schemaValidator = new AjvJsonSchemaValidator();

  const handlePost: PostHandler = async (req, res, preference) => {
    const message = readSingleMessage(req, res);
    if (!message) return;
    const calls = toolCallsOf([message.body as JSONRPCMessage]);
    const authorized = await authorizeRequest(deps, req, res, calls);
    if (!authorized) return;
    noteGrantUse(deps.db, authorized.principal.grantId, deps.logger);
    const server = sdkServer(toolHandlers(deps, req, authorized), schemaValidator);
    const exchanged = exchangedRequest(message.body, preference, req.headers['mcp-protocol-version']);
    if (exchanged) await answerWithExchange(res, exchanged, server);
    else await answerWithSdk(req, res, message.body, preference, server);
  };

  router.options(MCP_PATH, guard, cors, answerPreflight);
  router.post(MCP_PATH, guard, cors, acceptPost(handlePost));
  router.get(MCP_PATH, methodNotAllowed);
  router.delete(MCP_PATH, methodNotAllowed);
  return router;
}

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  JSONRPCRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * The methods answered through a `JsonExchange`: the two a host calls all the
 * time. Everything else (initialize, ping, notifications, unknown methods)
 * goes through the SDK's Streamable HTTP transport.
 */
const EXCHANGED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'tools/list']);

/**
 * The body as a request a `JsonExchange` answers, or undefined when the SDK's
 * Streamable HTTP transport must: the client prefers a JSON answer, the body is
 * one JSON-RPC request by the SDK's own `JSONRPCRequestSchema` (the first member
 * of the `JSONRPCMessageSchema` union the transport parses with, so the same
 * message comes out), its method is `tools/call` or `tools/list`, and its
 * `Mcp-Protocol-Version` header, if sent, is one the transport accepts (an
 * unsupported one gets the transport's own 400).
 */
export function exchangedRequest(
  body: unknown,
  preference: 'json' | 'sse',
  protocolVersion: string | string[] | undefined,
): JSONRPCRequest | undefined {
  if (preference !== 'json') return undefined;
  if (protocolVersion !== undefined) {
    if (typeof protocolVersion !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) return undefined;
  }
  // A cheap look before the schema: most bodies that are not a tools call leave here.
  const method = (body as { method?: unknown } | null)?.method;
  if (typeof method !== 'string' || !EXCHANGED_METHODS.has(method)) return undefined;
  const parsed = JSONRPCRequestSchema.safeParse(body);
  return parsed.success ? parsed.data : undefined;
}

/**
 * An SDK `Transport` for one JSON-RPC request whose answer is one JSON body:
 * the request goes to the connected SDK `Server` as its transport would hand
 * it on (`onmessage`), and the `Server`'s answer (result or JSON-RPC error,
 * built and validated by the SDK) is what `exchange` resolves to.
 *
 * What it leaves out is the Streamable HTTP transport's conversion of Node's
 * request and response to web `Request`/`Response` objects and back
 * (@hono/node-server), its stream bookkeeping and its second parse of the
 * message: for a single request answered with JSON they produce nothing but
 * `Content-Type: application/json` and `JSON.stringify` of the answer, which
 * the caller writes (mcp.router.ts). The sameness of the two paths' answers
 * is tested (test/integration/mcp-json-exchange.test.ts).
 */
export class JsonExchange implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  private readonly request: JSONRPCRequest;
  private answered: ((message: JSONRPCMessage) => void) | undefined;

  constructor(request: JSONRPCRequest) {
    this.request = request;
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    // Only the answer to the request is expected: no tool sends notifications or requests of its own.
    if ('id' in message && message.id === this.request.id && ('result' in message || 'error' in message)) {
      this.answered?.(message);
      this.answered = undefined;
    }
    return Promise.resolve();
  }

  /** The SDK `Server`'s answer to the request (connect the `Server` first). */
  exchange(): Promise<JSONRPCMessage> {
    return new Promise((resolve) => {
      this.answered = resolve;
      this.onmessage?.(this.request, {});
    });
  }
}

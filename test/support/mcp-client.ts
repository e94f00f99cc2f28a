import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** An MCP SDK client on a bearer token, as a host that already holds one connects. */
export async function connectWithToken(mcpUrl: string, token: string, name = 'pacer-test'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** The `{error, message, retry_after_seconds?}` of an `isError` tool result. */
export function toolError(result: unknown): { error: string; message: string; retry_after_seconds?: number } {
  const call = result as CallToolResult;
  if (call.isError !== true) throw new Error(`expected a tool error, got ${JSON.stringify(call).slice(0, 300)}`);
  expectNoStructuredContent(call);
  const first = call.content[0];
  if (first?.type !== 'text') throw new Error('a tool error carries its JSON as text');
  return JSON.parse(first.text) as { error: string; message: string; retry_after_seconds?: number };
}

function expectNoStructuredContent(call: CallToolResult): void {
  if (call.structuredContent !== undefined) throw new Error('a tool error must not carry structuredContent');
}

/** `structuredContent` of a successful call, checked to equal its text content (docs/design.md §3). */
export function toolResult<T = Record<string, unknown>>(result: unknown): T {
  const call = result as CallToolResult;
  if (call.isError === true) throw new Error(`tool failed: ${JSON.stringify(call.content).slice(0, 400)}`);
  const first = call.content[0];
  if (first?.type !== 'text' || first.text !== JSON.stringify(call.structuredContent)) {
    throw new Error('content[0].text must be the JSON of structuredContent');
  }
  return call.structuredContent as T;
}

/**
 * What an MCP host keeps between the redirect and the callback, in memory.
 * `stepUpPending` hides the refresh token while a scope step-up runs: the
 * SDK 1.32 client answers a 403 `insufficient_scope` by trying its refresh
 * token first, and a refresh can never widen scopes (RFC 6749 §6), so a host
 * has to go back to the authorization endpoint (MCP 2025-11-25, Scope
 * Challenge Handling), which is what hiding it makes the SDK do.
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  stepUpPending = false;

  readonly redirectUrl: string;
  private readonly scope: string;

  constructor(redirectUrl: string, scope: string) {
    this.redirectUrl = redirectUrl;
    this.scope = scope;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Assistant under test',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: this.scope,
    };
  }
  state(): string {
    return 'mcp-e2e-state';
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.client = information;
  }
  tokens() {
    if (this.stepUpPending && this.saved) {
      const { refresh_token: _refresh, ...rest } = this.saved;
      return rest as OAuthTokens;
    }
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
    this.stepUpPending = false;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}

/** A fetch for the SDK transport that tells the provider when the server asks to step up. */
export function stepUpAwareFetch(provider: MemoryOAuthProvider): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.status === 403 && /insufficient_scope/.test(response.headers.get('www-authenticate') ?? '')) {
      provider.stepUpPending = true;
    }
    return response;
  };
}

/** `connectWithToken` with extra headers on every request (e.g. `Mcp-Idempotency-Key`, as a host sets it). */
export async function connectWithHeaders(
  mcpUrl: string,
  token: string,
  headers: Record<string, string>,
  name = 'pacer-test',
): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { ...headers, Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

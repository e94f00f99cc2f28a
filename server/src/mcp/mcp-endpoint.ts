import type { RequestHandler } from 'express';
import { loadOnFirstRequest } from '../http/load-on-first-request.ts';
import type { McpDeps } from './mcp.router.ts';

export const MCP_PATH = '/mcp';

/**
 * `/mcp` as the app mounts it: the router (mcp.router.ts), and with it the
 * MCP SDK's server, transport and JSON Schema validator, is imported with the
 * first request for it, so a process no assistant calls never holds them.
 */
export function mcpEndpoint(deps: McpDeps): RequestHandler {
  return loadOnFirstRequest(async () => (await import('./mcp.router.ts')).mcpRouter(deps));
}

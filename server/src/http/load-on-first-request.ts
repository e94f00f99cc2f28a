import type { RequestHandler } from 'express';

/**
 * A handler whose module is imported on the first request that reaches it,
 * for features a process may never serve (`/mcp`, `/docs`): their libraries
 * (the MCP SDK and its JSON Schema validator, the OpenAPI generator with its
 * own copy of zod) are megabytes of heap an API process serving only `/api`
 * would otherwise hold from start-up (docs/design.md §2 "Memory"). Requests
 * that arrive while it loads wait for it; a failed import fails those
 * requests (500) and is tried again by the next one.
 */
export function loadOnFirstRequest(load: () => Promise<RequestHandler>): RequestHandler {
  let loading: Promise<RequestHandler> | undefined;
  return (req, res, next) => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    loading.then((handler) => handler(req, res, next), next);
  };
}

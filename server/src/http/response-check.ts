import { type AppRoute, isAppRouteOtherResponse, validateResponse } from '@ts-rest/core';
import type { Request } from 'express';

/**
 * PACER_CHECK_RESPONSES (the test suite turns it on): every JSON answer a
 * ts-rest route returns is checked against the contract's schema for its
 * status before it is sent, and a mismatch fails the request (500, logged
 * with the schema's issues), so the test that caused it fails too. The body
 * sent is the handler's own, unchanged: ts-rest's `responseValidation` would
 * send the parsed body instead (unknown keys stripped), so tests would see
 * something production never sends. Statuses the contract does not declare
 * have no schema to check against; files and other non-JSON bodies are not
 * checked.
 */
export function checkingResponses<T extends object>(implementation: T): T {
  return wrap(implementation) as T;
}

type Handler = (args: { req: Request }) => Promise<{ status: number; body: unknown }>;

function wrap(node: unknown): unknown {
  if (typeof node === 'function') return checkedHandler(node as Handler);
  // A route with its own middleware: `{ middleware, handler }`.
  if (node && typeof node === 'object' && 'handler' in node && typeof node.handler === 'function') {
    return { ...node, handler: checkedHandler(node.handler as Handler) };
  }
  if (node && typeof node === 'object' && !Array.isArray(node)) {
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, wrap(value)]));
  }
  return node;
}

function checkedHandler(handler: Handler): Handler {
  return async (args) => {
    const result = await handler(args);
    const route = (args.req as { tsRestRoute?: AppRoute }).tsRestRoute;
    const declared = route?.responses[Number(result.status)];
    if (route && declared !== undefined && !isAppRouteOtherResponse(declared)) {
      validateResponse({ appRoute: route, response: { status: Number(result.status), body: result.body } });
    }
    return result;
  };
}

import { contract } from '@pacer/contract';
import { type AppRoute, type AppRouter, isAppRoute, isAppRouteOtherResponse, validateResponse } from '@ts-rest/core';
import type { Request, Response } from 'express';
import { documentHeaderMismatch, documentMismatch, type HeaderValue } from './document-check.ts';

/**
 * PACER_CHECK_RESPONSES (the test suite turns it on): every JSON answer a
 * ts-rest route returns is checked against the contract's schema for its
 * status before it is sent, and a mismatch fails the request (500, logged
 * with the schema's issues), so the test that caused it fails too. The body
 * sent is the handler's own, unchanged: ts-rest's `responseValidation` would
 * send the parsed body instead (unknown keys stripped), so tests would see
 * something production never sends. A status the route does not declare
 * fails too; files and other non-JSON bodies are checked for their status
 * only. The problem answers of the error handler are checked the same way
 * (`problemMismatch`). Each answer is then checked against the committed
 * openapi.json as well, its body (`documentMismatch`) and the headers it
 * carries by then (`documentHeaderMismatch`: those the middleware set, such
 * as `X-Request-Id` and `RateLimit-*`, and an error's own, such as
 * `Retry-After`).
 */
export function checkingResponses<T extends object>(implementation: T): T {
  return wrap(implementation) as T;
}

type Handler = (args: { req: Request; res?: Response }) => Promise<{ status: number; body: unknown }>;
type Headers = Readonly<Record<string, HeaderValue>>;

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
    const mismatch = route && answerMismatch(route, Number(result.status), result.body, args.res?.getHeaders() ?? {});
    if (mismatch) throw new Error(`${route.method} ${route.path}: ${mismatch}`);
    return result;
  };
}

/** Why `body` with `status` and `headers` (when given) is not what `route` declares, or `undefined` when it is. */
function answerMismatch(
  route: AppRoute,
  status: number,
  body: unknown,
  headers: Headers | undefined,
): string | undefined {
  const declared = route.responses[status];
  if (declared === undefined) return `status ${String(status)} is not declared in the contract`;
  if (!isAppRouteOtherResponse(declared)) {
    try {
      validateResponse({ appRoute: route, response: { status, body } });
    } catch (error) {
      return `the ${String(status)} body does not match the contract: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  return (
    documentMismatch(route, status, isAppRouteOtherResponse(declared) ? undefined : body) ??
    (headers && documentHeaderMismatch(route, status, headers))
  );
}

interface MatchedRoute {
  readonly route: AppRoute;
  readonly pattern: RegExp;
  /** Literal segments first: `/api/workouts/upload-fit` before `/api/workouts/:id`. */
  readonly params: number;
}

function routesOf(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((node) => (isAppRoute(node) ? [node] : routesOf(node)));
}

let contractRoutes: readonly MatchedRoute[] | undefined;

/** The contract route a request was for: the one ts-rest matched, or the one its method and path name. */
function contractRouteOf(req: Request): AppRoute | undefined {
  const matched = (req as { tsRestRoute?: AppRoute }).tsRestRoute;
  if (matched) return matched;
  contractRoutes ??= routesOf(contract)
    .map((route) => {
      const segments = route.path.split('/');
      const pattern = segments.map((segment) =>
        segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      );
      return {
        route,
        pattern: new RegExp(`^${pattern.join('/')}/?$`),
        params: segments.filter((segment) => segment.startsWith(':')).length,
      };
    })
    .sort((a, b) => a.params - b.params);
  return contractRoutes.find(
    (entry) => entry.route.method === req.method && entry.pattern.test(req.originalUrl.split('?')[0] ?? ''),
  )?.route;
}

/**
 * For the error handler under PACER_CHECK_RESPONSES: why the problem answer
 * about to be sent for `req` disagrees with the contract route it was for,
 * or `undefined` when it agrees or the request was for no contract route.
 */
export function problemMismatch(req: Request, status: number, body: unknown, headers?: Headers): string | undefined {
  const route = contractRouteOf(req);
  const mismatch = route && answerMismatch(route, status, body, headers);
  return mismatch ? `${route.method} ${route.path}: ${mismatch}` : undefined;
}

/**
 * For a replayed idempotent answer under PACER_CHECK_RESPONSES (it never
 * reaches a handler): why the headers about to go out for `req` disagree with
 * openapi.json, or `undefined`.
 */
export function replayHeadersMismatch(req: Request, status: number, headers: Headers): string | undefined {
  const route = contractRouteOf(req);
  const mismatch = route && documentHeaderMismatch(route, status, headers);
  return mismatch ? `${route.method} ${route.path}: ${mismatch}` : undefined;
}

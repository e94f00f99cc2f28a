/**
 * PACER_CHECK_RESPONSES (http/response-check.ts): an answer that disagrees
 * with the contract fails instead of going out; one that agrees goes out as
 * the handler wrote it (not as ts-rest's parser would rewrite it).
 */
import type { AddressInfo } from 'node:net';
import { initContract } from '@ts-rest/core';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import express, { type ErrorRequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Request } from 'express';
import { checkingResponses, problemMismatch } from '../../server/src/http/response-check.ts';
import { toProblem } from '../../server/src/http/problem.ts';
import { AppError } from '../../server/src/errors.ts';
import { errorHandler } from '../../server/src/http/error-handler.ts';
import { createLogger } from '../../server/src/logger.ts';

const c = initContract();
const probe = c.router({
  get: {
    method: 'GET',
    path: '/thing/:kind',
    pathParams: z.object({ kind: z.enum(['right', 'wrong', 'extra', 'undeclared']) }),
    responses: { 200: z.object({ id: z.string(), count: z.number().int() }) },
  },
});

let url: string;
let close: () => void;

beforeAll(async () => {
  const app = express();
  const s = initServer();
  const routes = s.router(probe, {
    get: ({ params }) => {
      const answer = (): { status: 200; body: { id: string; count: number } } => {
        if (params.kind === 'wrong') return { status: 200, body: { id: 'a', count: 'three' as unknown as number } };
        if (params.kind === 'extra') return { status: 200, body: { id: 'a', count: 3, note: 'kept' } as never };
        if (params.kind === 'undeclared') return { status: 418 as 200, body: { anything: true } as never };
        return { status: 200, body: { id: 'a', count: 3 } };
      };
      return Promise.resolve(answer());
    },
  });
  createExpressEndpoints(probe, checkingResponses(routes), app, { responseValidation: false });
  const onError: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
    res.status(500).json({ failed: error instanceof Error ? error.message : String(error) });
  };
  app.use(onError);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => close());

describe('checkingResponses', () => {
  it('lets an answer that matches the contract out', async () => {
    const res = await fetch(`${url}/thing/right`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: 'a', count: 3 });
  });

  it('fails an answer that disagrees with the contract, instead of sending it', async () => {
    const res = await fetch(`${url}/thing/wrong`);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { failed: string }).failed).toMatch(
      /^GET \/thing\/:kind: the 200 body does not match the contract: /,
    );
  });

  it("sends the handler's body as written, not a parsed copy", async () => {
    const res = await fetch(`${url}/thing/extra`);
    expect(await res.json()).toEqual({ id: 'a', count: 3, note: 'kept' });
  });

  it('fails a status the contract does not declare', async () => {
    const res = await fetch(`${url}/thing/undeclared`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ failed: 'GET /thing/:kind: status 418 is not declared in the contract' });
  });
});

describe('problemMismatch (the error handler under PACER_CHECK_RESPONSES)', () => {
  const request = (method: string, originalUrl: string) => ({ method, originalUrl }) as Request;
  const problem = (code: ConstructorParameters<typeof AppError>[0]) => {
    const error = new AppError(code, 'detail');
    return [error.status, toProblem(error, 'req-1')] as const;
  };

  it('accepts a problem the route declares, found by method and path', () => {
    expect(problemMismatch(request('GET', '/api/wellness?from=2026-11-01'), ...problem('unauthorized'))).toBe(
      undefined,
    );
    expect(problemMismatch(request('GET', '/api/workouts/3f1c'), ...problem('not_found'))).toBe(undefined);
  });

  it('names a status the route does not declare', () => {
    expect(problemMismatch(request('GET', '/api/wellness'), ...problem('not_found'))).toBe(
      'GET /api/wellness: status 404 is not declared in the contract',
    );
  });

  it('names a body that is not the declared problem', () => {
    expect(problemMismatch(request('GET', '/api/wellness'), 401, { error: 'nope' })).toMatch(
      /^GET \/api\/wellness: the 401 body does not match the contract: /,
    );
  });

  it('has nothing to say about a request for no contract route', () => {
    expect(problemMismatch(request('GET', '/no/such/route'), ...problem('not_found'))).toBe(undefined);
    expect(problemMismatch(request('DELETE', '/api/wellness'), ...problem('not_found'))).toBe(undefined);
  });
});

describe('the error handler with checkResponses', () => {
  it('answers a problem the route does not declare with a 500 that names the mismatch, and logs it', async () => {
    const lines: string[] = [];
    const logger = createLogger('error', { write: (line: string) => void lines.push(line) });
    const app = express();
    // As request-context.ts does for every answer (openapi.json declares X-Request-Id required).
    app.use((_req, res, next) => {
      res.setHeader('X-Request-Id', 'req-1');
      next();
    });
    // GET /api/wellness declares no 404: a handler that answers one has drifted from the contract.
    app.get('/api/wellness', (_req, _res, next) => next(new AppError('not_found', 'gone')));
    app.get('/api/workouts/:id', (_req, _res, next) => next(new AppError('not_found', 'gone')));
    app.use(errorHandler(logger, { checkResponses: true }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const drifted = await fetch(`${base}/api/wellness`);
      expect(drifted.status).toBe(500);
      expect(((await drifted.json()) as { detail: string }).detail).toBe(
        'The answer disagrees with the contract: GET /api/wellness: status 404 is not declared in the contract',
      );
      expect(lines.join('')).toContain('answer disagrees with the contract');
      // A declared problem goes out as it is.
      expect((await fetch(`${base}/api/workouts/3f1c`)).status).toBe(404);
    } finally {
      server.close();
    }
  });
});

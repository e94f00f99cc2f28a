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
import { checkingResponses } from '../../server/src/http/response-check.ts';

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
    res.status(500).json({ failed: (error as object).constructor.name });
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
    expect(await res.json()).toEqual({ failed: 'TsRestResponseValidationError' });
  });

  it("sends the handler's body as written, not a parsed copy", async () => {
    const res = await fetch(`${url}/thing/extra`);
    expect(await res.json()).toEqual({ id: 'a', count: 3, note: 'kept' });
  });

  it('has nothing to check a status the contract does not declare against', async () => {
    const res = await fetch(`${url}/thing/undeclared`);
    expect(res.status).toBe(418);
  });
});

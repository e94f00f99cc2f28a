/**
 * http/load-on-first-request.ts: a feature's handler is imported with the
 * first request for it, once however many requests wait for it, and a failed
 * import fails the waiting requests and is tried again by the next one.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOnFirstRequest } from '../../server/src/http/load-on-first-request.ts';

let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function serve(handler: RequestHandler): Promise<string> {
  const app = express();
  app.get('/feature', handler);
  app.use(((error: Error, _req, res, _next) => {
    res.status(500).json({ error: error.message });
  }) satisfies ErrorRequestHandler);
  server = createServer(app);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
}

describe('loadOnFirstRequest', () => {
  it('loads nothing before the first request, then loads once for every request', async () => {
    let loads = 0;
    const url = await serve(
      loadOnFirstRequest(async () => {
        loads += 1;
        await new Promise((resolve) => setTimeout(resolve, 50));
        return (_req, res) => {
          res.json({ loads });
        };
      }),
    );
    expect(loads).toBe(0);
    // Requests that arrive while it loads wait for the same load.
    const answers = await Promise.all([1, 2, 3].map(() => fetch(`${url}/feature`).then((res) => res.json())));
    expect(answers).toEqual([{ loads: 1 }, { loads: 1 }, { loads: 1 }]);
    expect(await (await fetch(`${url}/feature`)).json()).toEqual({ loads: 1 });
  });

  it('answers 500 when the load fails and tries again on the next request', async () => {
    let attempts = 0;
    const url = await serve(
      loadOnFirstRequest(() => {
        attempts += 1;
        if (attempts === 1) return Promise.reject(new Error('module not found'));
        return Promise.resolve((_req, res) => {
          res.json({ attempts });
        });
      }),
    );
    const failed = await fetch(`${url}/feature`);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: 'module not found' });
    const retried = await fetch(`${url}/feature`);
    expect(retried.status).toBe(200);
    expect(await retried.json()).toEqual({ attempts: 2 });
  });
});

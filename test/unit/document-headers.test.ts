/**
 * PACER_CHECK_RESPONSES, headers: an answer's headers are checked against the
 * `headers` openapi.json declares for its operation and status. Real routes
 * of the contract, real document; the answers are made up here, some of them
 * deliberately wrong.
 */
import type { AddressInfo } from 'node:net';
import { contract } from '@pacer/contract';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import express, { type ErrorRequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentHeaderMismatch } from '../../server/src/http/document-check.ts';
import { checkingResponses } from '../../server/src/http/response-check.ts';

const profileRoute = contract.profile.getProfile;
const upsertRoute = contract.wellness.upsertWellness;
const rateLimits = { 'RateLimit-Limit': 120, 'RateLimit-Remaining': '119', 'RateLimit-Reset': '60' };

describe('documentHeaderMismatch', () => {
  it('accepts the headers the document declares, with values their schemas admit', () => {
    expect(documentHeaderMismatch(profileRoute, 200, { 'x-request-id': 'req-1', ...rateLimits })).toBe(undefined);
    expect(documentHeaderMismatch(upsertRoute, 201, { 'X-Request-Id': 'req-2', 'Idempotent-Replayed': 'true' })).toBe(
      undefined,
    );
    expect(documentHeaderMismatch(upsertRoute, 429, { 'X-Request-Id': 'req-3', 'Retry-After': '7' })).toBe(undefined);
  });

  it('ignores headers the document never mentions', () => {
    expect(
      documentHeaderMismatch(profileRoute, 200, {
        'x-request-id': 'req-1',
        'content-type': 'application/json',
        'cache-control': 'no-store',
        vary: ['Origin', 'Accept-Encoding'],
      }),
    ).toBe(undefined);
  });

  it('names a required header that is missing', () => {
    expect(documentHeaderMismatch(profileRoute, 200, rateLimits)).toBe(
      'the 200 headers do not match openapi.json: required header X-Request-Id is missing',
    );
  });

  it('names a header whose value its schema does not admit', () => {
    expect(
      documentHeaderMismatch(profileRoute, 200, { 'x-request-id': 'r', ...rateLimits, 'RateLimit-Remaining': 'lots' }),
    ).toMatch(/^the 200 headers do not match openapi\.json: header RateLimit-Remaining: "lots" /);
    expect(documentHeaderMismatch(profileRoute, 200, { 'x-request-id': 'r', 'ratelimit-reset': '-1' })).toMatch(
      /header RateLimit-Reset: "-1" .*>= 0/,
    );
    expect(documentHeaderMismatch(upsertRoute, 200, { 'x-request-id': 'r', 'idempotent-replayed': 'yes' })).toMatch(
      /header Idempotent-Replayed: "yes" .*allowed values/,
    );
  });

  it('names a documented header on an answer that does not declare it', () => {
    expect(documentHeaderMismatch(profileRoute, 200, { 'x-request-id': 'r', 'retry-after': '3' })).toBe(
      'the 200 headers do not match openapi.json: header retry-after is not declared for this answer',
    );
    expect(
      documentHeaderMismatch(contract.wellness.listWellness, 200, {
        'x-request-id': 'r',
        'idempotent-replayed': 'true',
      }),
    ).toBe('the 200 headers do not match openapi.json: header idempotent-replayed is not declared for this answer');
  });
});

describe('checkingResponses with the document headers', () => {
  let url: string;
  let close: () => void;

  beforeAll(async () => {
    const app = express();
    const s = initServer();
    const router = s.router(contract.profile, {
      // A handler that (wrongly) sets a header the document declares only for 429/503 answers.
      getProfile: ({ req, res }) => {
        res.setHeader('X-Request-Id', 'req-under-test');
        if (req.query['drift'] === 'retry-after') res.setHeader('Retry-After', '5');
        if (req.query['drift'] === 'no-request-id') res.removeHeader('X-Request-Id');
        return Promise.resolve({ status: 401 as const, body: problem(401) });
      },
      updateProfile: () => Promise.resolve({ status: 401 as const, body: problem(401) }),
    });
    createExpressEndpoints(contract.profile, checkingResponses(router), app, { responseValidation: false });
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

  it('lets an answer with the declared headers out', async () => {
    const res = await fetch(`${url}/api/profile`);
    expect(res.status).toBe(401);
    expect(res.headers.get('x-request-id')).toBe('req-under-test');
  });

  it('fails an answer carrying a documented header its response does not declare', async () => {
    const res = await fetch(`${url}/api/profile?drift=retry-after`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      failed:
        'GET /api/profile: the 401 headers do not match openapi.json: header retry-after is not declared for this answer',
    });
  });

  it('fails an answer missing a required header', async () => {
    const res = await fetch(`${url}/api/profile?drift=no-request-id`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      failed: 'GET /api/profile: the 401 headers do not match openapi.json: required header X-Request-Id is missing',
    });
  });
});

function problem(status: 401) {
  return {
    type: 'urn:pacer:problem:unauthorized',
    title: 'Unauthorized',
    status,
    code: 'unauthorized' as const,
  };
}

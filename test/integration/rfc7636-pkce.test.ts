/**
 * RFC 7636 (PKCE), required with S256 for every client (docs/design.md §3, specification §5.4 rule 1, §7):
 * §4.3 the challenge and method on the authorization request (`plain` and a missing method refused),
 * §4.5 / §4.6 the verifier on the token request, checked against the stored challenge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthFixture } from '../support/oauth-fixture.ts';
import {
  authorizationRequest,
  authorizeAs,
  exchangeCode,
  pkcePair,
  type AuthorizeQuery,
  type CookieJar,
  type TestClient,
} from '../support/oauth-flow.ts';
import type { TestServer } from '../support/test-server.ts';

let server: TestServer;
let jar: CookieJar;
let app: TestClient;

beforeAll(async () => {
  ({ server, jar, app } = await startOAuthFixture({ client: { isPublic: true, redirectUri: 'http://127.0.0.1/cb' } }));
});
afterAll(async () => {
  await server.stop();
});

/** No PKCE parameters unless `override` brings them. */
const request = (override: AuthorizeQuery) =>
  authorizationRequest(server.url, app, {
    state: 'pkce',
    code_challenge: undefined,
    code_challenge_method: undefined,
    ...override,
  });

describe('PKCE on the authorization request (§4.3)', () => {
  it.each([
    ['no challenge at all', {}],
    ['the plain method', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }],
    ['a challenge without a method', { code_challenge: pkcePair().challenge }],
    ['a challenge that is not S256-shaped', { code_challenge: 'short', code_challenge_method: 'S256' }],
  ])('refuses %s with invalid_request on the redirect', async (_label, override) => {
    const result = await authorizeAs(jar, request(override), 'stop');
    expect(result.status).toBe(303);
    expect(result.location?.searchParams.get('error')).toBe('invalid_request');
    expect(result.location?.searchParams.get('state')).toBe('pkce');
  });
});

describe('PKCE on the token request (§4.5, §4.6)', () => {
  async function codeFor(challenge: string): Promise<string> {
    const result = await authorizeAs(jar, request({ code_challenge: challenge, code_challenge_method: 'S256' }));
    return result.location?.searchParams.get('code') ?? '';
  }
  const exchange = (code: string, verifier: string | undefined) => exchangeCode(server.url, app, { code, verifier });

  it('issues tokens for the matching verifier', async () => {
    const { verifier, challenge } = pkcePair();
    const res = await exchange(await codeFor(challenge), verifier);
    expect(res.status).toBe(200);
  });

  it('refuses a wrong verifier and a missing one with invalid_grant, and the code is spent', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await codeFor(challenge);
    const wrong = await exchange(code, pkcePair().verifier);
    expect(wrong.status).toBe(400);
    expect(wrong.body['error']).toBe('invalid_grant');
    expect((await exchange(code, verifier)).body['error']).toBe('invalid_grant');
    const missing = await exchange(await codeFor(pkcePair().challenge), undefined);
    expect(missing.body['error']).toBe('invalid_grant');
  });
});

/**
 * Token-endpoint figures for `npm run bench` (OAuth issue):
 * - refresh-grant throughput and latency with autocannon (10 connections), every request
 *   presenting its own, never-used refresh token (rotation makes each usable once);
 * - the authorization-code round trip (authorize -> consent POST -> token), sequentially, p50/p99.
 */
import { createHash, randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import type pg from 'pg';

export interface OAuthBenchResult {
  readonly refresh: {
    readonly requests: number;
    readonly rps: number;
    readonly p50: number;
    readonly p99: number;
    readonly non2xx: number;
    readonly errors: number;
  };
  readonly codeRoundTrip: {
    readonly runs: number;
    readonly p50: number;
    readonly p99: number;
    readonly failures: number;
  };
}

export interface OAuthBenchOptions {
  readonly serverUrl: string;
  readonly pool: pg.Pool;
  readonly userEmail: string;
  readonly userPassword: string;
  readonly client: { clientId: string; clientSecret: string; redirectUri: string };
  readonly connections: number;
  readonly durationS: number;
  readonly roundTrips: number;
}

const hash = (value: string) => createHash('sha256').update(value).digest('hex');
const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);

/** Refresh tokens stored the way the server stores them (SHA-256 only), one grant per 1,000. */
async function mintRefreshTokens(options: OAuthBenchOptions, count: number): Promise<string[]> {
  const { pool } = options;
  const ids = await pool.query<{ client: string; owner: string }>(
    `SELECT c.id AS client, u.id AS owner FROM oauth_clients c, users u WHERE c.client_id = $1 AND lower(u.email) = lower($2)`,
    [options.client.clientId, options.userEmail],
  );
  const row = ids.rows[0];
  if (!row) throw new Error('bench client or user not found');
  const tokens: string[] = [];
  for (let start = 0; start < count; start += 1000) {
    const grant = await pool.query<{ id: string }>(
      `INSERT INTO oauth_grants (client_id, user_id, scopes) VALUES ($1, $2, ARRAY['health:read']) RETURNING id`,
      [row.client, row.owner],
    );
    const batch = Array.from(
      { length: Math.min(1000, count - start) },
      () => `prt_${randomBytes(32).toString('base64url')}`,
    );
    await pool.query(
      `INSERT INTO oauth_refresh_tokens (grant_id, token_hash, scopes, expires_at)
       SELECT $1, h, ARRAY['health:read'], now() + interval '1 day' FROM unnest($2::text[]) AS h`,
      [grant.rows[0]?.id, batch.map(hash)],
    );
    tokens.push(...batch);
  }
  return tokens;
}

async function runRefreshLoad(options: OAuthBenchOptions, tokens: string[]): Promise<OAuthBenchResult['refresh']> {
  let next = 0;
  const base = new URLSearchParams({
    grant_type: 'refresh_token',
    client_id: options.client.clientId,
    client_secret: options.client.clientSecret,
  });
  const result = await autocannon({
    url: options.serverUrl,
    connections: options.connections,
    duration: options.durationS,
    requests: [
      {
        method: 'POST',
        path: '/api/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        setupRequest: (request) => {
          const body = new URLSearchParams(base);
          body.set('refresh_token', tokens[next] ?? 'exhausted');
          next += 1;
          return { ...request, body: body.toString() };
        },
      },
    ],
  });
  return {
    requests: result.requests.total,
    rps: Math.round(result.requests.average * 10) / 10,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** One browser-less authorization code round trip: authorize (consent page) -> approve -> token. */
async function codeRoundTrip(options: OAuthBenchOptions, cookie: string, csrf: string): Promise<number> {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const started = performance.now();
  const authorize = new URL('/api/oauth/authorize', options.serverUrl);
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: options.client.clientId,
    redirect_uri: options.client.redirectUri,
    scope: 'health:read',
    state: 'bench',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    prompt: 'consent',
  })) {
    authorize.searchParams.set(name, value);
  }
  const pageRes = await fetch(authorize, { headers: { cookie }, redirect: 'manual' });
  const html = await pageRes.text();
  const fields: Record<string, string> = { decision: 'approve' };
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g)) {
    fields[match[1] as string] = (match[2] as string).replace(/&amp;/g, '&');
  }
  fields['_csrf'] = csrf;
  const form = new URLSearchParams(fields);
  // The ticked scope checkboxes, as a browser sends them (a server without them ignores the field).
  for (const match of html.matchAll(
    /<input\b[^>]*\bname="granted_scope"[^>]*\bvalue="([^"]*)"[^>]*\schecked\b[^>]*>/g,
  )) {
    form.append('granted_scope', match[1] as string);
  }
  const approve = await fetch(new URL('/api/oauth/authorize', options.serverUrl), {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
    redirect: 'manual',
  });
  const code = new URL(approve.headers.get('location') ?? 'http://invalid/').searchParams.get('code');
  if (!code) throw new Error(`no code (consent POST answered ${approve.status})`);
  const token = await fetch(new URL('/api/oauth/token', options.serverUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: options.client.clientId,
      client_secret: options.client.clientSecret,
      code,
      redirect_uri: options.client.redirectUri,
      code_verifier: verifier,
    }),
  });
  if (token.status !== 200) throw new Error(`token endpoint answered ${token.status}`);
  await token.arrayBuffer();
  return performance.now() - started;
}

async function signIn(options: OAuthBenchOptions): Promise<{ cookie: string; csrf: string }> {
  const form = await fetch(new URL('/login', options.serverUrl));
  const csrf = /pacer_csrf=([^;]+)/.exec(form.headers.get('set-cookie') ?? '')?.[1] ?? '';
  const res = await fetch(new URL('/login', options.serverUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `pacer_csrf=${csrf}` },
    body: new URLSearchParams({ _csrf: csrf, email: options.userEmail, password: options.userPassword }),
    redirect: 'manual',
  });
  const session = /pacer_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  if (!session) throw new Error(`sign-in failed (${res.status})`);
  return { cookie: `pacer_csrf=${csrf}; pacer_session=${session}`, csrf };
}

export async function runOAuthBench(options: OAuthBenchOptions): Promise<OAuthBenchResult> {
  // Generous: rotation makes each token single-use, and a reused one would revoke its grant.
  const tokens = await mintRefreshTokens(options, Math.max(20_000, options.durationS * 3000));
  const refresh = await runRefreshLoad(options, tokens);

  const session = await signIn(options);
  const samples: number[] = [];
  let failures = 0;
  for (let run = 0; run < options.roundTrips; run += 1) {
    try {
      samples.push(await codeRoundTrip(options, session.cookie, session.csrf));
    } catch {
      failures += 1;
    }
  }
  samples.sort((a, b) => a - b);
  const round2 = (value: number) => Math.round(value * 100) / 100;
  return {
    refresh,
    codeRoundTrip: {
      runs: samples.length,
      p50: round2(percentile(samples, 50)),
      p99: round2(percentile(samples, 99)),
      failures,
    },
  };
}

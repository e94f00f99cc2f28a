/**
 * MCP operations statistics (docs/design.md §3 "Operations"): GET
 * /api/admin/mcp/stats for an admin's bearer token or portal session, the
 * `/admin` page drawing the same numbers, and the purge of old records.
 */
import { type McpStats, McpStatsSchema, type Problem } from '@pacer/contract';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OauthClient, User } from '../../server/src/db/tables.ts';
import { sha256Hex } from '../../server/src/lib/crypto.ts';
import { purgeExpired } from '../../server/src/modules/maintenance/maintenance.service.ts';
import { countMcpAuthFailure, insertMcpExecutions } from '../../server/src/modules/mcp-audit/mcp-audit.repository.ts';
import { insertClient } from '../../server/src/modules/oauth/client.repository.ts';
import { usePortalBrowser } from '../support/browser.ts';
import { makeApp, makeUser, mintToken } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { signIn } from '../support/oauth-flow.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const STATS = '/api/admin/mcp/stats';
/** Markup in a client name must reach the page as text. */
const COACH_NAME = 'Coach <b>Assistant</b> & Co';
const GHOST_CLIENT = 'ghost-client';
const FILLER_CLIENTS = Array.from({ length: 10 }, (_, index) => `filler-${String(index + 1).padStart(2, '0')}`);

let server: TestServer;
let admin: User;
let athlete: User;
let coach: OauthClient;

const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);

async function recordCall(
  tool: string,
  clientId: string,
  durationMs: number,
  options: { errorCode?: string; hoursAgo?: number } = {},
): Promise<void> {
  await insertMcpExecutions(server.db, [
    {
      tool,
      clientId,
      userId: athlete.id,
      startedAt: hoursAgo(options.hoursAgo ?? 2),
      durationMs,
      status: options.errorCode ? 'error' : 'ok',
      errorCode: options.errorCode ?? null,
      argsSha256: sha256Hex(`${tool}:${durationMs}`),
    },
  ]);
}

async function insertDcrClient(name: string, createdAt: Date): Promise<void> {
  await insertClient(server.db, {
    clientId: `dcr-${sha256Hex(name).slice(0, 12)}`,
    clientSecretHash: null,
    name,
    ownerUserId: null,
    kind: 'dcr',
    isPublic: true,
    redirectUris: ['http://127.0.0.1/callback'],
    scopes: [],
    webhookSecretHash: null,
    registrationKey: sha256Hex(name),
    createdAt,
  });
}

/** A grant of `resource` revoked `revokedHoursAgo` hours ago for `reason`. */
async function revokedGrant(resource: string | null, reason: string | null, revokedHoursAgo: number): Promise<void> {
  const { grantId } = await mintToken(server.db, athlete, { scopes: ['profile:read'], client: coach, resource });
  await server.db
    .updateTable('oauthGrants')
    .set({ revokedAt: hoursAgo(revokedHoursAgo), revokedReason: reason })
    .where('id', '=', grantId)
    .execute();
}

/**
 * The seeded window (two hours ago), with latencies chosen so that
 * `percentile_cont` interpolates: get_profile 10..50 ms gives p95 = 40 + 0.8 × 10.
 */
async function seed(): Promise<void> {
  for (const ms of [10, 20, 30, 40, 50]) await recordCall('get_profile', coach.clientId, ms);
  await recordCall('log_wellness', coach.clientId, 100);
  await recordCall('log_wellness', coach.clientId, 200, { errorCode: 'validation_failed' });
  await recordCall('list_workouts', GHOST_CLIENT, 1);
  await recordCall('list_workouts', GHOST_CLIENT, 2, { errorCode: 'rate_limited' });
  await recordCall('list_workouts', GHOST_CLIENT, 3, { errorCode: 'rate_limited' });
  for (const clientId of FILLER_CLIENTS) await recordCall('get_current_time', clientId, 1);
  // Outside 24 h, inside 48 h.
  await recordCall('get_profile', coach.clientId, 1000, { hoursAgo: 30 });

  await countMcpAuthFailure(server.db, { reason: 'missing_token', clientIp: '203.0.113.1' });
  await countMcpAuthFailure(server.db, { reason: 'missing_token', clientIp: '203.0.113.1' });
  await countMcpAuthFailure(server.db, { reason: 'invalid_token', clientIp: '203.0.113.2' });
  await server.db
    .insertInto('mcpAuthFailures')
    .values({ reason: 'expired', at: hoursAgo(30) })
    .execute();

  await insertDcrClient('Fresh host', hoursAgo(3));
  await insertDcrClient('Old host', hoursAgo(120));

  const mcp = server.config.mcpResource;
  await revokedGrant(mcp, 'refresh_reuse', 1);
  await revokedGrant(mcp, 'refresh_reuse', 30);
  // Not counted: a REST grant, and an MCP grant its user revoked.
  await revokedGrant(null, 'refresh_reuse', 1);
  await revokedGrant(mcp, null, 1);
}

const EXPECTED_24H: Omit<McpStats, 'topClients'> = {
  windowHours: 24,
  totalExecutions: 20,
  byStatus: { ok: 17, error: 3 },
  byErrorCode: { validation_failed: 1, rate_limited: 2 },
  byTool: [
    { tool: 'get_current_time', count: 10, errors: 0, p50: 1, p95: 1, p99: 1 },
    { tool: 'get_profile', count: 5, errors: 0, p50: 30, p95: 48, p99: 49.6 },
    // 2.98 rounds to 3 (0.1 ms resolution).
    { tool: 'list_workouts', count: 3, errors: 2, p50: 2, p95: 2.9, p99: 3 },
    { tool: 'log_wellness', count: 2, errors: 1, p50: 150, p95: 195, p99: 199 },
  ],
  // Eleven 1 ms calls, then 2, 3, 10, 20, 30, 40, 50, 100, 200.
  latencyMs: { p50: 1, p95: 105, p99: 181 },
  dcr: { totalClients: 2, registeredInWindow: 1 },
  authFailures: { missing_token: 2, invalid_token: 1 },
  rateLimitHits: 2,
  refreshReuseDetected: 1,
};

function expected24h(): McpStats {
  return {
    ...EXPECTED_24H,
    topClients: [
      { clientId: coach.clientId, name: COACH_NAME, count: 7 },
      { clientId: GHOST_CLIENT, name: null, count: 3 },
      // Ties in client-id order; at most ten rows.
      ...FILLER_CLIENTS.slice(0, 8).map((clientId) => ({ clientId, name: null, count: 1 })),
    ],
  };
}

beforeAll(async () => {
  server = await startTestServer();
  admin = await makeUser(server.db, { admin: true });
  athlete = await makeUser(server.db);
  coach = await makeApp(server.db, admin, COACH_NAME);
  await seed();
});
afterAll(async () => {
  await server.stop();
});

async function adminToken(): Promise<string> {
  return (await mintToken(server.db, admin, { scopes: ['admin:read'] })).token;
}

describe('GET /api/admin/mcp/stats with an admin bearer token', () => {
  it('answers the exact counts and percentiles of the last 24 hours, in the contract shape', async () => {
    const res = await call<McpStats>(server.url, 'GET', STATS, { token: await adminToken() });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected24h());
    // Parsing strips undeclared keys: equality proves there are none.
    expect(McpStatsSchema.parse(res.body)).toEqual(res.body);
  });

  it('counts a record 30 hours old only in windows longer than 30 hours', async () => {
    const token = await adminToken();
    const day = await call<McpStats>(server.url, 'GET', `${STATS}?windowHours=24`, { token });
    const twoDays = await call<McpStats>(server.url, 'GET', `${STATS}?windowHours=48`, { token });
    expect(day.body.totalExecutions).toBe(20);
    expect(twoDays.status).toBe(200);
    expect(twoDays.body.windowHours).toBe(48);
    expect(twoDays.body.totalExecutions).toBe(21);
    // 10, 20, 30, 40, 50 and 1000 ms.
    expect(twoDays.body.byTool.find((tool) => tool.tool === 'get_profile')).toEqual({
      tool: 'get_profile',
      count: 6,
      errors: 0,
      p50: 35,
      p95: 762.5,
      p99: 952.5,
    });
    expect(twoDays.body.latencyMs).toEqual({ p50: 1, p95: 200, p99: 840 });
    expect(twoDays.body.authFailures).toEqual({ missing_token: 2, invalid_token: 1, expired: 1 });
    expect(twoDays.body.refreshReuseDetected).toBe(2);
    expect(twoDays.body.topClients[0]).toEqual({ clientId: coach.clientId, name: COACH_NAME, count: 8 });
  });

  it('answers null percentiles and no tools for a window without calls', async () => {
    const res = await call<McpStats>(server.url, 'GET', `${STATS}?windowHours=1`, { token: await adminToken() });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      windowHours: 1,
      totalExecutions: 0,
      byStatus: {},
      byErrorCode: {},
      byTool: [],
      latencyMs: { p50: null, p95: null, p99: null },
      topClients: [],
      rateLimitHits: 0,
    });
  });

  it.each(['0', '721', '1.5', 'week'])('refuses windowHours=%s with a 400 problem', async (windowHours) => {
    const res = await call<Problem>(server.url, 'GET', `${STATS}?windowHours=${windowHours}`, {
      token: await adminToken(),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors?.map((error) => error.path)).toEqual(['windowHours']);
  });
});

describe('who may read the stats', () => {
  it("refuses a non-admin user's token with 403 forbidden, whatever its scopes", async () => {
    const { token } = await mintToken(server.db, athlete, { scopes: ['profile:read', 'analysis:read', 'admin:read'] });
    const res = await call<Problem>(server.url, 'GET', STATS, { token });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
  });

  it('answers 401 with a Bearer challenge and no error when nothing is presented', async () => {
    const res = await call<Problem>(server.url, 'GET', STATS);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain(`resource_metadata="${server.config.baseUrl}/.well-known/oauth-protected-resource"`);
    expect(challenge).not.toContain('error=');
  });

  it('refuses an unknown token with 401 invalid_token', async () => {
    const res = await call<Problem>(server.url, 'GET', STATS, { token: 'pat_not-a-real-token' });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_token');
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it("refuses an admin's token without admin:read with 403 insufficient_scope naming it", async () => {
    const { token } = await mintToken(server.db, admin, { scopes: ['profile:read', 'analysis:read'] });
    const res = await call<Problem>(server.url, 'GET', STATS, { token });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('insufficient_scope');
    expect(res.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(res.headers.get('www-authenticate')).toContain('scope="admin:read"');
  });

  it("refuses an admin's token bound to the MCP resource with 401 invalid_token (RFC 8707)", async () => {
    const { token } = await mintToken(server.db, admin, {
      scopes: ['admin:read'],
      resource: server.config.mcpResource,
    });
    const res = await call<Problem>(server.url, 'GET', STATS, { token });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_token');
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it("answers an admin's portal session with the same stats", async () => {
    const jar = await signIn(server.url, admin.email);
    const res = await call<McpStats>(server.url, 'GET', STATS, { headers: { cookie: jar.header() } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected24h());
  });

  it("refuses a non-admin's portal session with 403 forbidden", async () => {
    const jar = await signIn(server.url, athlete.email);
    const res = await call<Problem>(server.url, 'GET', STATS, { headers: { cookie: jar.header() } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
  });
});

describe('the /admin page (Chromium)', () => {
  const chromium = usePortalBrowser(() => server.url);

  /** The bars as drawn: tool -> percentile -> milliseconds. */
  async function drawnBars(page: Page): Promise<Record<string, Record<string, number>>> {
    const chart = page.getByRole('img', { name: /Latency per tool/ });
    const bars = await chart.locator('rect[data-tool]').evaluateAll((rects) =>
      rects.map((rect) => ({
        tool: rect.getAttribute('data-tool') ?? '',
        percentile: rect.getAttribute('data-percentile') ?? '',
        ms: Number(rect.getAttribute('data-ms')),
      })),
    );
    const drawn: Record<string, Record<string, number>> = {};
    for (const bar of bars) (drawn[bar.tool] ??= {})[bar.percentile] = bar.ms;
    return drawn;
  }

  function barsOf(byTool: McpStats['byTool']): Record<string, Record<string, number | null>> {
    return Object.fromEntries(byTool.map(({ tool, p50, p95, p99 }) => [tool, { p50, p95, p99 }]));
  }

  it("draws each tool's p50, p95 and p99 as bars with the stats' values", async () => {
    const { page } = await chromium.signedInPage(admin, '/admin');
    expect(await drawnBars(page)).toEqual(barsOf(EXPECTED_24H.byTool));
    // Longer bars for longer latencies, on one scale.
    const width = (tool: string, percentile: string) =>
      page.locator(`rect[data-tool="${tool}"][data-percentile="${percentile}"]`).evaluate((rect) => {
        return (rect as SVGRectElement).width.baseVal.value;
      });
    expect(await width('log_wellness', 'p99')).toBeGreaterThan(await width('get_profile', 'p99'));

    const clients = page.getByRole('region', { name: 'Top clients' });
    expect(await clients.getByRole('row').nth(1).textContent()).toContain(COACH_NAME);
    expect(await clients.locator('b').count()).toBe(0);
    const errors = page.getByRole('region', { name: 'Errors by code' });
    expect(await errors.textContent()).toMatch(/rate_limited\s*2/);
  });

  it('switches the window with the selector', async () => {
    const { page } = await chromium.signedInPage(admin, '/admin');
    await page.getByRole('navigation', { name: 'Time window' }).getByRole('link', { name: '7 days' }).click();
    await page.waitForURL(`${server.url}/admin?windowHours=168`);
    const current = page.locator('nav[aria-label="Time window"] a[aria-current="page"]');
    expect(await current.textContent()).toBe('7 days');
    expect((await drawnBars(page))['get_profile']).toEqual({ p50: 35, p95: 762.5, p99: 952.5 });
  });

  it('answers a signed-in non-admin with a 403 page', async () => {
    const { page } = await chromium.signedInPage(athlete, '/admin');
    const response = await page.goto(`${server.url}/admin`);
    expect(response?.status()).toBe(403);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Forbidden');
    expect(await page.locator('svg').count()).toBe(0);
  });

  it('sends a visitor who is not signed in to /login and back', async () => {
    const res = await fetch(`${server.url}/admin`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/login?next=%2Fadmin');
  });
});

describe('the hourly maintenance purge', () => {
  it('deletes MCP execution and auth-failure records older than 31 days and keeps younger ones', async () => {
    const days = (count: number) => count * 24;
    await recordCall('get_profile', coach.clientId, 5, { hoursAgo: days(32) });
    await recordCall('get_profile', coach.clientId, 6, { hoursAgo: days(30) });
    await server.db
      .insertInto('mcpAuthFailures')
      .values([
        { reason: 'purge_me', at: hoursAgo(days(32)) },
        { reason: 'keep_me', at: hoursAgo(days(30)) },
      ])
      .execute();

    const removed = await purgeExpired(server.db, 1);
    expect(removed.mcpRecords).toBe(2);
    const durations = await server.db.selectFrom('mcpExecutions').select('durationMs').execute();
    expect(durations.map((row) => row.durationMs)).not.toContain(5);
    expect(durations.map((row) => row.durationMs)).toContain(6);
    const reasons = await server.db.selectFrom('mcpAuthFailures').select('reason').execute();
    expect(reasons.map((row) => row.reason)).toEqual(expect.arrayContaining(['keep_me']));
    expect(reasons.map((row) => row.reason)).not.toContain('purge_me');
  });
});

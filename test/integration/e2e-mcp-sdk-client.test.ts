/**
 * End to end as an AI assistant connects: the MCP TypeScript SDK's `Client`
 * with `StreamableHTTPClientTransport` and an `OAuthClientProvider` finds the
 * protected-resource metadata from the 401 (RFC 9728), registers itself
 * (RFC 7591), authorizes with PKCE and `resource` while a person signs in and
 * approves in Chromium, then works through every tool. The SDK validates each
 * `structuredContent` against the tool's `outputSchema`, so a result that
 * disagreed with its schema would fail here. Also: the scope step-up after a
 * 403 `insufficient_scope`, an idempotent replay and a reused key, async jobs
 * polled to `completed`, and revocation in /settings stopping the next call.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InvalidGrantError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_SCOPES, type McpStats, SCOPE_DESCRIPTIONS, type Scope, type Workout } from '@pacer/contract';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { ALL_TOOLS } from '../../server/src/mcp/registry.ts';
import { findClientByClientId } from '../../server/src/modules/oauth/client.repository.ts';
import { insertRecommendation } from '../../server/src/modules/derived/recommendations.repository.ts';
import { cardHeaded, usePortalBrowser } from '../support/browser.ts';
import { listenForCallbacks, type CallbackListener } from '../support/callbacks.ts';
import { makeUser, mintToken, TEST_PASSWORD } from '../support/factories.ts';
import { oneHourRide } from '../support/fit-fixtures.ts';
import { call } from '../support/http.ts';
import {
  connectWithToken,
  MemoryOAuthProvider,
  stepUpAwareFetch,
  toolError,
  toolResult,
} from '../support/mcp-client.ts';
import { waitForRecompute } from '../support/recompute.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
let person: BrowserContext;
let callbacks: CallbackListener;
let athlete: User;
let admin: User;
let signedIn = false;

// Launched before the hooks below and closed after them: `person` is one context (one session) throughout.
const chromium = usePortalBrowser(() => server.url);
beforeAll(async () => {
  server = await startTestServer();
  admin = await makeUser(server.db, { admin: true }); // owner of registered clients
  athlete = await makeUser(server.db, { timeZone: 'Europe/Berlin' });
  person = await chromium.browser.newContext();
  callbacks = await listenForCallbacks();
});
afterAll(async () => {
  await person?.close();
  await callbacks?.close();
  await server?.stop();
});

/** The person's part: sign in (once), untick `untick` and approve on the consent page, land on the redirect URI. */
async function approve(url: URL | undefined, untick: readonly Scope[] = []): Promise<string> {
  if (!url) throw new Error('the client never asked for authorization');
  const before = callbacks.received.length;
  const page: Page = await person.newPage();
  try {
    await page.goto(url.href);
    if (!signedIn) {
      await page.waitForURL((current) => current.pathname === '/login');
      await page.getByLabel('Email').fill(athlete.email);
      await page.getByLabel('Password').fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      signedIn = true;
    }
    await page.waitForURL((current) => current.pathname === '/api/oauth/authorize');
    for (const scope of untick) {
      await page.getByRole('checkbox', { name: SCOPE_DESCRIPTIONS[scope], exact: true }).uncheck();
    }
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL((current) => current.href.startsWith(callbacks.redirectUri));
  } finally {
    await page.close();
  }
  const callback = callbacks.received.slice(before).at(-1);
  const code = callback?.searchParams.get('code');
  if (!code) throw new Error(`no code on the callback: ${callback?.href ?? 'none'}`);
  return code;
}

const provider = () => assistant;
let assistant: MemoryOAuthProvider;

function transport(): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(server.config.mcpResource), {
    authProvider: provider(),
    fetch: stepUpAwareFetch(provider()),
  });
}

async function connect(): Promise<Client> {
  const client = new Client({ name: 'assistant-under-test', version: '1.0.0' });
  await client.connect(transport());
  return client;
}

describe('an assistant on the MCP SDK client', () => {
  let client: Client;

  it('discovers the server, registers, authorizes with PKCE in the browser and lists what its scopes allow', async () => {
    assistant = new MemoryOAuthProvider(callbacks.redirectUri, 'profile:read');
    await expect(connect()).rejects.toBeInstanceOf(UnauthorizedError);
    const url = assistant.authorizationUrl;
    expect(url?.searchParams.get('resource')).toBe(server.config.mcpResource);
    expect(url?.searchParams.get('code_challenge_method')).toBe('S256');
    // The scope came from the 401 challenge (SEP-835): every MCP scope, writes included.
    expect(url?.searchParams.get('scope')?.split(' ')).toEqual(
      expect.arrayContaining(['profile:read', 'health:read', 'workout:read', 'health:write']),
    );
    // The person keeps the assistant from logging daily metrics, so the next test steps up.
    await transport().finishAuth(await approve(url, ['health:write']));
    expect(assistant.saved?.refresh_token).toMatch(/^prt_/); // without offline_access

    client = await connect();
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name).sort();
    expect(names).toContain('get_profile');
    expect(names).toContain('get_current_time');
    expect(names).not.toContain('log_wellness');
    const profile = toolResult<{ id: string }>(await client.callTool({ name: 'get_profile', arguments: {} }));
    expect(profile.id).toBe(athlete.id);
  });

  it('steps up when a tool needs a scope the token lacks, then calls it', async () => {
    const args = { date: '2026-11-20', hrv: 64, restingHr: 48 };
    await expect(client.callTool({ name: 'log_wellness', arguments: args })).rejects.toBeInstanceOf(UnauthorizedError);
    const scopes = assistant.authorizationUrl?.searchParams.get('scope')?.split(' ') ?? [];
    expect(scopes).toContain('health:write');
    expect(scopes).toContain('profile:read'); // nothing granted before is lost
    await transport().finishAuth(await approve(assistant.authorizationUrl));
    expect(assistant.saved?.scope?.split(' ')).toContain('health:write');

    client = await connect();
    const day = toolResult<{ date: string; hrv: number }>(
      await client.callTool({ name: 'log_wellness', arguments: args }),
    );
    expect(day).toMatchObject({ date: '2026-11-20', hrv: 64 });
  });

  it('replays an idempotent call byte for byte and refuses the key for other arguments', async () => {
    const args = { date: '2026-11-21', hrv: 70, idempotency_key: 'assistant-call-1' };
    const first = await client.callTool({ name: 'log_wellness', arguments: args });
    const again = await client.callTool({ name: 'log_wellness', arguments: args });
    expect(again).toEqual(first);
    const reused = await client.callTool({ name: 'log_wellness', arguments: { ...args, hrv: 71 } });
    expect(toolError(reused).error).toBe('idempotency_key_reused');
  });

  it('works through every tool with the real SDK validating each result', async () => {
    const registered = await findClientByClientId(server.db, String(assistant.client?.client_id));
    if (!registered) throw new Error('the registered client is missing');
    const { token } = await mintToken(server.db, athlete, {
      scopes: [...MCP_SCOPES],
      resource: server.config.mcpResource,
      client: registered,
    });
    const full = await connectWithToken(server.config.mcpResource, token);
    const listed = (await full.listTools()).tools.map((tool) => tool.name);
    expect(listed.sort()).toEqual(ALL_TOOLS.map((tool) => tool.name).sort());

    const called = new Set<string>();
    const use = async <T = Record<string, unknown>>(name: string, args: Record<string, unknown> = {}): Promise<T> => {
      called.add(name);
      return toolResult<T>(await full.callTool({ name, arguments: args }));
    };
    const finish = async (jobType: string, jobId: string) => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const status = await use<{ status: string; poll_after_seconds: number; result?: Record<string, unknown> }>(
          'get_async_job_status',
          { job_type: jobType, job_id: jobId },
        );
        if (status.status === 'completed') return status.result ?? {};
        if (status.status === 'failed') throw new Error(`${jobType} job failed: ${JSON.stringify(status)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`${jobType} job ${jobId} did not complete`);
    };

    // A workout to read, uploaded by an app over REST.
    const rest = await mintToken(server.db, athlete, { scopes: ['workout:write'] });
    const fit = oneHourRide();
    const form = new FormData();
    form.append('file', new Blob([fit.bytes as Uint8Array<ArrayBuffer>]), 'ride.fit');
    const uploaded = (await (
      await fetch(`${server.url}/api/workouts/upload-fit`, {
        method: 'POST',
        headers: { authorization: `Bearer ${rest.token}` },
        body: form,
      })
    ).json()) as Workout;

    const now = await use<{ date: string; time_zone: string }>('get_current_time');
    expect(now.time_zone).toBe('Europe/Berlin');
    expect((await use<{ id: string }>('get_profile')).id).toBe(athlete.id);
    expect(await use('update_profile', { ftp: 260, weight: 68.5, thresholdHr: 172 })).toMatchObject({ ftp: 260 });

    const workouts = await use<{ items: { id: string }[] }>('list_workouts', {
      from: uploaded.localDate,
      to: uploaded.localDate,
    });
    expect(workouts.items.map((item) => item.id)).toEqual([uploaded.id]);
    expect(await use('get_workout', { id: uploaded.id })).toMatchObject({ id: uploaded.id });
    const streams = await use<{ points: number }>('get_workout_streams', { id: uploaded.id, maxPoints: 50 });
    expect(streams.points).toBeLessThanOrEqual(50);

    await use('log_wellness', { date: now.date, hrv: 58, sleepSecs: 27_000 });
    const wellness = await use<{ items: { date: string; hrv: number }[] }>('get_wellness', {
      from: now.date,
      to: now.date,
    });
    expect(wellness.items).toMatchObject([{ date: now.date, hrv: 58 }]);
    await use('log_nutrition', {
      date: now.date,
      items: [{ name: 'Oats', carbs: 60, logged_at: `${now.date}T07:30:00+01:00`, absorptionType: 'DENSE' }],
    });
    const nutrition = await use<{ items: { totals: { carbs: number } }[] }>('get_nutrition', {
      from: now.date,
      to: now.date,
    });
    expect(nutrition.items[0]?.totals.carbs).toBe(60);

    const planned = await use<{ id: string }>('create_planned_workout', {
      date: now.date,
      sport: 'ride',
      title: 'Threshold intervals',
      durationSecs: 3600,
    });
    expect((await use<{ items: { id: string }[] }>('list_planned_workouts', { from: now.date })).items).toHaveLength(1);
    await use('update_planned_workout', { id: planned.id, timeOfDay: '18:00' });
    const structureJob = await use<{ generation_run_id: string }>('generate_workout_structure', {
      planned_workout_id: planned.id,
      intent: 'threshold',
    });
    const structureResult = await finish('structure_generation', structureJob.generation_run_id);
    expect(structureResult).toMatchObject({ planned_workout_id: planned.id, intent: 'threshold' });
    const withSteps = await use<{ structure: { steps: { label?: string }[] } | null; timeOfDay: string }>(
      'get_planned_workout',
      { id: planned.id },
    );
    expect(withSteps.timeOfDay).toBe('18:00');
    expect(withSteps.structure?.steps.some((step) => step.label?.includes('W)'))).toBe(true); // watts from FTP 260

    // Derived data, recomputed in the background after the writes above.
    await waitForRecompute(server.db, athlete.id);

    const load = await use<{ items: { date: string; tss: number }[] }>('get_training_load', {
      from: uploaded.localDate,
      to: uploaded.localDate,
    });
    expect(load.items[0]?.tss).toBeGreaterThan(0);
    expect(
      (await use<{ items: { date: string }[] }>('get_recovery', { from: now.date, to: now.date })).items,
    ).toHaveLength(1);
    const fuel = await use<{ meals: { name: string }[] }>('get_fuel_timeline', { from: now.date, to: now.date });
    expect(fuel.meals.map((meal) => meal.name)).toEqual(['Oats']);
    const plan = await use<{ plannedWorkoutId: string; status: string }>('get_workout_fuel_plan', { id: planned.id });
    expect(plan.plannedWorkoutId).toBe(planned.id);

    // Recommendations as the rules would store them (this athlete's data fires none by itself).
    const easier = await insertRecommendation(server.db, athlete.id, {
      kind: 'easier_workout',
      dedupeKey: `easier:${planned.id}:${now.date}`,
      plannedWorkoutId: planned.id,
      title: 'Make “Threshold intervals” an easy endurance session',
      body: 'Your recovery score is 38, in the recover band below 45.',
      evidence: {
        rule: 'low_recovery_before_hard_workout',
        recoveryDate: now.date,
        recoveryScore: 38,
        recoveryThreshold: 45,
        date: now.date,
        plannedTss: 95,
        intensityFactor: 0.97,
        hardTss: 80,
        hardIntensityFactor: 0.85,
      },
      action: {
        type: 'swap_structure',
        plannedWorkoutId: planned.id,
        intent: 'endurance',
        structure: { steps: [{ type: 'steady', duration: { type: 'time', secs: 3600 } }] },
        durationSecs: 3600,
        trainingStress: 42,
      },
    });
    const lighter = await insertRecommendation(server.db, athlete.id, {
      kind: 'lighter_week',
      dedupeKey: `lighter:${now.date}`,
      plannedWorkoutId: null,
      title: 'Make the week lighter',
      body: 'Your fitness (CTL) rose by 9 in 7 days.',
      evidence: { rule: 'ctl_ramp_too_steep', date: now.date, ctl: 50, ctlWeekBefore: 41, ctlRamp: 9, threshold: 8 },
      action: { type: 'scale_week', scaleTrainingStress: 0.8, from: now.date, to: now.date, plannedWorkoutIds: [] },
    });
    const open = await use<{ items: { id: string; status: string }[] }>('list_recommendations');
    // The recompute's own rules may open more (a fuel advice for a workout today, depending on the clock).
    const seeded = new Set([easier.id, lighter.id]);
    expect(
      open.items
        .map((item) => item.id)
        .filter((id) => seeded.has(id))
        .sort(),
    ).toEqual([easier.id, lighter.id].sort());
    expect(await use('dismiss_recommendation', { id: lighter.id })).toMatchObject({
      id: lighter.id,
      status: 'dismissed',
    });
    expect(await use('accept_recommendation', { id: easier.id, idempotency_key: 'accept-easier' })).toMatchObject({
      id: easier.id,
      status: 'accepted',
    });
    expect(await use('get_planned_workout', { id: planned.id })).toMatchObject({
      trainingStress: 42,
      durationSecs: 3600,
    });

    const memory = await use<{ id: string }>('remember_memory', {
      content: 'Training for a 200 km gravel race in May.',
      category: 'goal',
      pinned: true,
    });
    expect((await use<{ items: { id: string }[] }>('list_memories')).items.map((item) => item.id)).toEqual([memory.id]);
    expect(await use('forget_memory', { id: memory.id })).toEqual({ id: memory.id, deleted: true });

    const report = await use<{ report_id: string }>('generate_report', { type: 'WEEKLY_TRAINING' });
    await finish('report', report.report_id);
    expect((await use<{ items: { id: string }[] }>('list_reports')).items.map((item) => item.id)).toContain(
      report.report_id,
    );
    const read = await use<{ markdown: string }>('get_report', { id: report.report_id });
    expect(read.markdown).toMatch(/^# /);

    const sync = await use<{ run_id: string }>('sync_data', {});
    expect(await finish('trigger_run', sync.run_id)).toMatchObject({ deliveries_requeued: 0 });

    expect(await use('delete_planned_workout', { id: planned.id })).toEqual({ id: planned.id, deleted: true });
    expect([...called].sort()).toEqual(ALL_TOOLS.map((tool) => tool.name).sort());
    await full.close();
  });

  it('records every call for the administrator statistics', async () => {
    const { token } = await mintToken(server.db, admin, { scopes: ['admin:read'] });
    await vi.waitFor(
      async () => {
        const stats = await call<McpStats>(server.url, 'GET', '/api/admin/mcp/stats', { token });
        expect(stats.status).toBe(200);
        const tools = new Map(stats.body.byTool.map((entry) => [entry.tool, entry]));
        // Every tool was called at least once by the test above.
        for (const tool of ALL_TOOLS) expect(tools.get(tool.name)?.count ?? 0).toBeGreaterThan(0);
        expect(stats.body.byErrorCode['idempotency_key_reused']).toBe(1);
        expect(stats.body.topClients[0]?.name).toBe('Assistant under test');
        expect(stats.body.dcr.totalClients).toBe(1);
        expect(stats.body.authFailures['missing_token']).toBeGreaterThan(0);
      },
      { timeout: 5000, interval: 100 },
    );
  });

  it('stops working once the athlete revokes the assistant in /settings', async () => {
    const accessToken = assistant.saved?.access_token ?? '';
    const page = await person.newPage();
    await page.goto(`${server.url}/settings`);
    const card = cardHeaded(page, 'Assistant under test');
    await card.getByRole('button', { name: 'Revoke' }).first().click();
    await page.waitForURL((current) => current.searchParams.get('notice') === 'revoked');
    await page.close();

    const res = await fetch(server.config.mcpResource, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // The SDK client's refresh token went with the grant: the call fails instead of silently working, on the
    // token endpoint's invalid_grant for that refresh token.
    await expect(client.callTool({ name: 'get_profile', arguments: {} })).rejects.toThrow(InvalidGrantError);
    await client.close();
  });
});

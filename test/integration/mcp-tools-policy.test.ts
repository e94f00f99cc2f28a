/**
 * Which MCP tools a caller sees and may run, and how refused calls answer
 * (docs/design.md §3 "MCP / Tools" and "Idempotency and jobs"), through the MCP
 * SDK client as a host uses it:
 * - `tools/list` per token scopes, tool metadata (names, titles, schemas, hints),
 * - phase switches (`PACER_MCP_READ_/WRITE_/ASYNC_ENABLED`: `tool_not_found`)
 *   and `PACER_MCP_EXECUTION_ENABLED` (`execution_disabled`),
 * - the profile's nutrition feature (`feature_disabled`),
 * - another user's ids (`not_found`), argument validation (`validation_failed`),
 * - idempotency keys by argument and by `Mcp-Idempotency-Key` header,
 * - the per-token tool-call rate limit (`rate_limited`),
 * - the error result shape: `isError`, no `structuredContent`, text `{error, message}`.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MCP_SCOPES, type Scope } from '@pacer/contract';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { OauthClient, User } from '../../server/src/db/tables.ts';
import { sha256Hex } from '../../server/src/lib/crypto.ts';
import { insertRecommendation } from '../../server/src/modules/derived/recommendations.repository.ts';
import { makeApp, makeUser, mintToken } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { connectWithHeaders, connectWithToken, toolError, toolResult } from '../support/mcp-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/** The tool names of docs/design.md §3, fixed because hosts and users script against them. */
const READ_TOOLS = [
  'get_profile',
  'list_workouts',
  'get_workout',
  'get_workout_streams',
  'get_wellness',
  'get_training_load',
  'get_recovery',
  'get_fuel_timeline',
  'get_workout_fuel_plan',
  'list_recommendations',
  'get_nutrition',
  'list_planned_workouts',
  'get_planned_workout',
  'list_reports',
  'get_report',
  'list_memories',
  'get_current_time',
];
const WRITE_TOOLS = [
  'log_wellness',
  'log_nutrition',
  'update_profile',
  'create_planned_workout',
  'update_planned_workout',
  'delete_planned_workout',
  'remember_memory',
  'forget_memory',
  'accept_recommendation',
  'dismiss_recommendation',
];
const ASYNC_TOOLS = ['generate_report', 'sync_data', 'generate_workout_structure', 'get_async_job_status'];
const ALL_TOOLS = [...READ_TOOLS, ...WRITE_TOOLS, ...ASYNC_TOOLS];

const ALL_SCOPES: readonly Scope[] = MCP_SCOPES;
const RATE_LIMIT = 3;

let server: TestServer;
let readOff: TestServer;
let writeOff: TestServer;
let asyncOff: TestServer;
let executionOff: TestServer;
let rateLimited: TestServer;

beforeAll(async () => {
  [server, readOff, writeOff, asyncOff, executionOff, rateLimited] = await Promise.all([
    startTestServer(),
    startTestServer({ PACER_MCP_READ_ENABLED: 'false' }),
    startTestServer({ PACER_MCP_WRITE_ENABLED: 'false' }),
    startTestServer({ PACER_MCP_ASYNC_ENABLED: 'false' }),
    startTestServer({ PACER_MCP_EXECUTION_ENABLED: 'false' }),
    startTestServer({ PACER_MCP_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) }),
  ]);
});
afterAll(async () => {
  await Promise.all([server, readOff, writeOff, asyncOff, executionOff, rateLimited].map((target) => target?.stop()));
});

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

interface Connected {
  readonly client: Client;
  readonly user: User;
  readonly token: string;
}

/** An MCP SDK client for `user` (a fresh one by default) holding `scopes`. */
async function connect(
  target: TestServer,
  scopes: readonly Scope[] = ALL_SCOPES,
  options: { user?: User; headers?: Record<string, string>; client?: OauthClient } = {},
): Promise<Connected> {
  const user = options.user ?? (await makeUser(target.db));
  const { token } = await mintToken(target.db, user, {
    scopes,
    resource: target.config.mcpResource,
    ...(options.client ? { client: options.client } : {}),
  });
  const client = options.headers
    ? await connectWithHeaders(target.config.mcpResource, token, options.headers)
    : await connectWithToken(target.config.mcpResource, token);
  open.push(client);
  return { client, user, token };
}

async function listedNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((tool) => tool.name).sort();
}

const run = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

const errorCodeOf = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  toolError(await run(client, name, args)).error;

const sorted = (names: readonly string[]) => [...names].sort();

/** Wait for an async job to finish, by polling its status (never a fixed sleep). */
async function awaitJob(client: Client, jobType: string, jobId: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const status = toolResult<{ status: string }>(
        await run(client, 'get_async_job_status', { job_type: jobType, job_id: jobId }),
      );
      expect(status.status).toBe('completed');
    },
    { timeout: 15_000, interval: 50 },
  );
}

describe('tools/list', () => {
  it('lists only the tools whose scopes the token holds, and those that need none', async () => {
    const { client } = await connect(server, ['profile:read']);

    expect(await listedNames(client)).toEqual(sorted(['get_profile', 'get_current_time', 'get_async_job_status']));
  });

  it('lists every tool to a token with every MCP scope', async () => {
    const { client } = await connect(server);

    expect(await listedNames(client)).toEqual(sorted(ALL_TOOLS));
  });

  it('describes every tool: snake_case name, title, description, object schemas and all four hints', async () => {
    const { client } = await connect(server);
    const { tools } = await client.listTools();

    expect(tools).toHaveLength(ALL_TOOLS.length);
    for (const tool of tools) {
      expect(tool.name, tool.name).toMatch(/^[a-z][a-z0-9_]{0,39}$/);
      expect(tool.title, tool.name).toEqual(expect.any(String));
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(20);
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.annotations, tool.name).toMatchObject({
        readOnlyHint: expect.any(Boolean),
        destructiveHint: expect.any(Boolean),
        idempotentHint: expect.any(Boolean),
        openWorldHint: false,
      });
    }
  });
});

describe('phase switches', () => {
  const phases = [
    {
      flag: 'PACER_MCP_READ_ENABLED',
      target: () => readOff,
      hidden: READ_TOOLS,
      calls: [{ name: 'get_profile', arguments: {} }],
    },
    {
      flag: 'PACER_MCP_WRITE_ENABLED',
      target: () => writeOff,
      hidden: WRITE_TOOLS,
      calls: [{ name: 'log_wellness', arguments: { date: '2026-11-20', hrv: 55 } }],
    },
    {
      flag: 'PACER_MCP_ASYNC_ENABLED',
      target: () => asyncOff,
      hidden: ASYNC_TOOLS,
      calls: [
        { name: 'generate_report', arguments: { type: 'LAST_3_WORKOUTS' } },
        { name: 'get_async_job_status', arguments: { job_type: 'report', job_id: randomUUID() } },
      ],
    },
  ];

  it.each(phases)('$flag=false hides its tools from tools/list and answers tool_not_found', async (phase) => {
    const { client } = await connect(phase.target());

    expect(await listedNames(client)).toEqual(sorted(ALL_TOOLS.filter((name) => !phase.hidden.includes(name))));
    for (const request of phase.calls) {
      expect(await errorCodeOf(client, request.name, request.arguments), request.name).toBe('tool_not_found');
    }
  });

  it('answers tool_not_found for a name that is no tool', async () => {
    const { client } = await connect(server);

    expect(await errorCodeOf(client, 'drop_all_tables')).toBe('tool_not_found');
  });

  it('PACER_MCP_EXECUTION_ENABLED=false lists every tool but answers every call execution_disabled', async () => {
    const { client } = await connect(executionOff);

    expect(await listedNames(client)).toEqual(sorted(ALL_TOOLS));
    for (const name of ALL_TOOLS) expect(await errorCodeOf(client, name), name).toBe('execution_disabled');
  });
});

describe("the profile's nutrition feature", () => {
  async function setNutrition(user: User, enabled: boolean): Promise<void> {
    const { token } = await mintToken(server.db, user, { scopes: ['profile:write'] });
    const patched = await call(server.url, 'PATCH', '/api/profile', {
      token,
      body: { featureFlags: { nutrition: enabled } },
    });
    expect(patched.status).toBe(200);
  }

  it('hides and refuses the nutrition tools while it is off, and brings them back when it is on', async () => {
    const { client, user } = await connect(server);
    const nutritionItem = {
      name: 'Banana',
      carbs: 27,
      logged_at: '2026-11-20T08:00:00+01:00',
    };

    await setNutrition(user, false);
    const listedWhileOff = await listedNames(client);
    const codesWhileOff = {
      get_nutrition: await errorCodeOf(client, 'get_nutrition'),
      log_nutrition: await errorCodeOf(client, 'log_nutrition', { date: '2026-11-20', items: [nutritionItem] }),
      generate_report: await errorCodeOf(client, 'generate_report', { type: 'WEEKLY_NUTRITION' }),
    };
    await setNutrition(user, true);
    const listedWhileOn = await listedNames(client);

    expect(listedWhileOff).not.toContain('get_nutrition');
    expect(listedWhileOff).not.toContain('log_nutrition');
    expect(listedWhileOff).toContain('generate_report');
    expect(codesWhileOff).toEqual({
      get_nutrition: 'feature_disabled',
      log_nutrition: 'feature_disabled',
      generate_report: 'feature_disabled',
    });
    expect(listedWhileOn).toEqual(expect.arrayContaining(['get_nutrition', 'log_nutrition']));
    toolResult(await run(client, 'get_nutrition'));
  });
});

describe("another user's ids", () => {
  let athlete: Connected;
  let other: Connected;
  let othersReportId: string;
  let othersPlannedWorkoutId: string;
  let othersMemoryId: string;
  let othersRecommendationId: string;

  beforeAll(async () => {
    athlete = await connect(server);
    other = await connect(server);
    // Connected clients are closed after each test; these two live for the whole block.
    open.splice(0);
    othersReportId = toolResult<{ report_id: string }>(
      await run(other.client, 'generate_report', { type: 'LAST_3_WORKOUTS' }),
    ).report_id;
    othersPlannedWorkoutId = toolResult<{ id: string }>(
      await run(other.client, 'create_planned_workout', { date: '2026-12-01', sport: 'ride', title: 'Endurance' }),
    ).id;
    othersMemoryId = toolResult<{ id: string }>(
      await run(other.client, 'remember_memory', { content: 'Rides with a power meter.' }),
    ).id;
    await awaitJob(other.client, 'report', othersReportId);
    othersRecommendationId = (
      await insertRecommendation(server.db, other.user.id, {
        kind: 'lighter_week',
        dedupeKey: 'lighter:2026-11-20',
        plannedWorkoutId: null,
        title: 'Make the week lighter',
        body: 'CTL rose by 9 in 7 days.',
        evidence: {
          rule: 'ctl_ramp_too_steep',
          date: '2026-11-20',
          ctl: 50,
          ctlWeekBefore: 41,
          ctlRamp: 9,
          threshold: 8,
        },
        action: {
          type: 'scale_week',
          scaleTrainingStress: 0.8,
          from: '2026-11-20',
          to: '2026-11-26',
          plannedWorkoutIds: [othersPlannedWorkoutId],
        },
      })
    ).id;
  });
  afterAll(async () => {
    await Promise.all([athlete?.client.close(), other?.client.close()]);
  });

  it.each([
    { name: 'get_async_job_status', args: () => ({ job_type: 'report', job_id: othersReportId }) },
    { name: 'get_report', args: () => ({ id: othersReportId }) },
    { name: 'get_planned_workout', args: () => ({ id: othersPlannedWorkoutId }) },
    { name: 'forget_memory', args: () => ({ id: othersMemoryId }) },
    { name: 'delete_planned_workout', args: () => ({ id: othersPlannedWorkoutId }) },
    { name: 'accept_recommendation', args: () => ({ id: othersRecommendationId }) },
    { name: 'dismiss_recommendation', args: () => ({ id: othersRecommendationId }) },
  ])("$name with another user's id answers not_found", async ({ name, args }) => {
    expect(await errorCodeOf(athlete.client, name, args())).toBe('not_found');
  });

  it("leaves the other user's records as they were", async () => {
    toolResult(await run(other.client, 'get_report', { id: othersReportId }));
    toolResult(await run(other.client, 'get_planned_workout', { id: othersPlannedWorkoutId }));
    const memories = toolResult<{ items: { id: string }[] }>(await run(other.client, 'list_memories'));
    expect(memories.items.map((memory) => memory.id)).toContain(othersMemoryId);
    const recommendation = await server.db
      .selectFrom('recommendations')
      .select('status')
      .where('id', '=', othersRecommendationId)
      .executeTakeFirstOrThrow();
    // Never decided by the stranger (a recompute of the owner's data may have expired it meanwhile).
    expect(['open', 'expired']).toContain(recommendation.status);
  });

  it('answers not_found for a job id that is not a UUID', async () => {
    expect(
      await errorCodeOf(athlete.client, 'get_async_job_status', { job_type: 'report', job_id: 'not-a-uuid' }),
    ).toBe('not_found');
  });

  it('answers not_found when job_type does not match the job', async () => {
    expect(
      await errorCodeOf(other.client, 'get_async_job_status', { job_type: 'trigger_run', job_id: othersReportId }),
    ).toBe('not_found');
  });
});

describe('argument validation', () => {
  it('answers validation_failed naming a field out of range', async () => {
    const { client } = await connect(server);
    const error = toolError(await run(client, 'log_wellness', { date: '2026-11-20', hrv: 1000 }));

    expect(error.error).toBe('validation_failed');
    expect(error.message).toContain('hrv');
  });

  it('answers validation_failed naming an unknown argument', async () => {
    const { client } = await connect(server);
    const error = toolError(await run(client, 'log_wellness', { date: '2026-11-20', heartRateVariability: 50 }));

    expect(error.error).toBe('validation_failed');
    expect(error.message).toContain('heartRateVariability');
  });
});

describe('idempotency keys', () => {
  const workout = { date: '2026-12-02', sport: 'run', title: 'Tempo run' };

  async function plannedOn(client: Client, date: string): Promise<number> {
    const page = toolResult<{ items: unknown[] }>(await run(client, 'list_planned_workouts', { from: date, to: date }));
    return page.items.length;
  }

  it('replays the first result for the same key and arguments, and creates one workout', async () => {
    const { client } = await connect(server);

    const first = await run(client, 'create_planned_workout', { ...workout, idempotency_key: 'plan-1' });
    const second = await run(client, 'create_planned_workout', { ...workout, idempotency_key: 'plan-1' });

    toolResult(first);
    expect(second).toEqual(first);
    expect(await plannedOn(client, workout.date)).toBe(1);
  });

  it('answers idempotency_key_reused for the same key with other arguments', async () => {
    const { client } = await connect(server);

    toolResult(await run(client, 'create_planned_workout', { ...workout, idempotency_key: 'plan-2' }));
    const reused = await run(client, 'create_planned_workout', {
      ...workout,
      title: 'Long run',
      idempotency_key: 'plan-2',
    });

    expect(toolError(reused).error).toBe('idempotency_key_reused');
    expect(await plannedOn(client, workout.date)).toBe(1);
  });

  it('takes the key from the Mcp-Idempotency-Key header, shared with the argument form', async () => {
    const user = await makeUser(server.db);
    const { client: withHeader } = await connect(server, ALL_SCOPES, {
      user,
      headers: { 'Mcp-Idempotency-Key': 'plan-3' },
    });
    const { client: plain } = await connect(server, ALL_SCOPES, { user });

    const first = await run(withHeader, 'create_planned_workout', workout);
    const replayed = await run(withHeader, 'create_planned_workout', workout);
    const byArgument = await run(plain, 'create_planned_workout', { ...workout, idempotency_key: 'plan-3' });
    const reused = await run(withHeader, 'create_planned_workout', { ...workout, title: 'Long run' });

    toolResult(first);
    expect(replayed).toEqual(first);
    expect(byArgument).toEqual(first);
    expect(toolError(reused).error).toBe('idempotency_key_reused');
    expect(await plannedOn(plain, workout.date)).toBe(1);
  });

  it('answers validation_failed when the header and the argument differ', async () => {
    const { client } = await connect(server, ALL_SCOPES, { headers: { 'Mcp-Idempotency-Key': 'plan-4' } });

    const error = toolError(
      await run(client, 'create_planned_workout', { ...workout, idempotency_key: 'plan-4-other' }),
    );

    expect(error.error).toBe('validation_failed');
    expect(await plannedOn(client, workout.date)).toBe(0);
  });

  it('answers validation_failed for a header that is not 1-255 visible ASCII characters', async () => {
    const { client } = await connect(server, ALL_SCOPES, { headers: { 'Mcp-Idempotency-Key': 'two words' } });

    expect(await errorCodeOf(client, 'create_planned_workout', workout)).toBe('validation_failed');
    expect(await plannedOn(client, workout.date)).toBe(0);
  });

  it('keeps keys per client: another app of the same user with the same key runs again', async () => {
    const user = await makeUser(server.db);
    const { client: developer } = await connect(server, ALL_SCOPES, { user });
    const { client: assistant } = await connect(server, ALL_SCOPES, { user, client: await makeApp(server.db, user) });

    const first = toolResult<{ id: string }>(
      await run(developer, 'create_planned_workout', { ...workout, idempotency_key: 'plan-5' }),
    );
    const second = toolResult<{ id: string }>(
      await run(assistant, 'create_planned_workout', { ...workout, idempotency_key: 'plan-5' }),
    );

    expect(second.id).not.toBe(first.id);
    expect(await plannedOn(developer, workout.date)).toBe(2);
  });

  it('keeps keys per tool: the same key on two tools runs both', async () => {
    const { client } = await connect(server);

    const planned = toolResult<{ id: string }>(
      await run(client, 'create_planned_workout', { ...workout, idempotency_key: 'shared-key' }),
    );
    const remembered = toolResult<{ id: string; content: string }>(
      await run(client, 'remember_memory', { content: 'Prefers morning runs.', idempotency_key: 'shared-key' }),
    );

    expect(planned.id).not.toBe(remembered.id);
    expect(remembered.content).toBe('Prefers morning runs.');
    expect(await plannedOn(client, workout.date)).toBe(1);
  });
});

describe('per-token rate limit', () => {
  it(`refuses the call after ${RATE_LIMIT} in a minute with rate_limited, not counting tools/list`, async () => {
    const { client } = await connect(rateLimited);

    for (let listing = 0; listing < RATE_LIMIT + 2; listing += 1) await client.listTools();
    const allowed = [];
    for (let index = 0; index < RATE_LIMIT; index += 1) allowed.push(await run(client, 'get_current_time'));
    const refused = toolError(await run(client, 'get_current_time'));
    const listedAfter = await listedNames(client);

    for (const result of allowed) toolResult(result);
    expect(refused.error).toBe('rate_limited');
    expect(refused.retry_after_seconds).toBeGreaterThan(0);
    expect(refused.retry_after_seconds).toBeLessThanOrEqual(60);
    expect(listedAfter).toEqual(sorted(ALL_TOOLS));
  });

  it("counts a known token's calls in its lookup, and gives a random token no window row", async () => {
    const { client, token } = await connect(rateLimited);
    const random = `pat_${randomUUID()}`;
    const windowOf = (presented: string) =>
      rateLimited.db
        .selectFrom('rateLimitCounters')
        .select('count')
        .where('key', '=', `mcp:token:${sha256Hex(presented)}`)
        .executeTakeFirst();

    toolResult(await run(client, 'get_current_time'));
    const refused = await fetch(rateLimited.config.mcpResource, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${random}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'get_current_time', arguments: {} },
      }),
    });

    expect(refused.status).toBe(401);
    expect(await windowOf(token)).toEqual({ count: 1 });
    expect(await windowOf(random)).toBeUndefined();
  });

  it('refuses a JSON-RPC batch, so a batch cannot run more calls than the limit counts', async () => {
    const { token } = await connect(rateLimited);
    const batch = Array.from({ length: RATE_LIMIT + 2 }, (_, index) => ({
      jsonrpc: '2.0',
      id: index + 1,
      method: 'tools/call',
      params: { name: 'get_current_time', arguments: {} },
    }));

    const response = await fetch(rateLimited.config.mcpResource, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      body: JSON.stringify(batch),
    });
    // MCP 2025-06-18 dropped JSON-RPC batching: one message per POST.
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });
});

describe('error results', () => {
  it('carry isError, no structuredContent and the text JSON {error, message}', async () => {
    const { client } = await connect(server);

    const result = await run(client, 'get_planned_workout', { id: randomUUID() });

    expect(result.isError).toBe(true);
    expect(result).not.toHaveProperty('structuredContent');
    expect(result.content).toHaveLength(1);
    const first = result.content[0];
    expect(first?.type).toBe('text');
    const body = JSON.parse(first?.type === 'text' ? first.text : '') as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect(body).toMatchObject({ error: 'not_found', message: expect.any(String) });
  });
});

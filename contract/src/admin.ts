import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { problemResponses, type RouteMetadata } from './common.ts';

const c = initContract();

/** Administrator routes: an admin's portal session, or an admin user's bearer token with the scope `admin:read`. */
export const ADMIN_METADATA: RouteMetadata = { admin: true };

export const MCP_STATS_WINDOW_HOURS_DEFAULT = 24;
export const MCP_STATS_WINDOW_HOURS_MAX = 720;

/** How a tool call ended, as `byStatus` counts it. */
export const MCP_EXECUTION_STATUSES = ['ok', 'error'] as const;
export type McpExecutionStatus = (typeof MCP_EXECUTION_STATUSES)[number];

const LatencySchema = z
  .object({
    p50: z.number().nullable().describe('Milliseconds; `null` without executions.'),
    p95: z.number().nullable(),
    p99: z.number().nullable(),
  })
  .meta({ title: 'LatencyPercentiles' });

export const McpStatsSchema = z
  .object({
    windowHours: z.number().int(),
    totalExecutions: z.number().int().describe('Tool calls in the window.'),
    byStatus: z
      .record(z.string(), z.number().int())
      .describe(`Tool calls per status (${MCP_EXECUTION_STATUSES.map((status) => `\`${status}\``).join(', ')}).`),
    byErrorCode: z.record(z.string(), z.number().int()).describe('Failed tool calls per error code.'),
    byTool: z
      .array(
        z.object({
          tool: z.string(),
          count: z.number().int(),
          errors: z.number().int(),
          p50: z.number().nullable().describe('Milliseconds.'),
          p95: z.number().nullable(),
          p99: z.number().nullable(),
        }),
      )
      .describe('Per tool, most called first.'),
    latencyMs: LatencySchema,
    dcr: z.object({
      totalClients: z.number().int().describe('Dynamically registered clients in all.'),
      registeredInWindow: z.number().int(),
    }),
    topClients: z
      .array(z.object({ clientId: z.string(), name: z.string().nullable(), count: z.number().int() }))
      .describe('The clients with the most tool calls, at most 10.'),
    authFailures: z
      .record(z.string(), z.number().int())
      .describe('Refused requests on `/mcp` per reason (`missing_token`, `invalid_token`, `expired`, …).'),
    rateLimitHits: z.number().int().describe('Tool calls refused with `rate_limited`.'),
    refreshReuseDetected: z
      .number()
      .int()
      .describe('MCP grants revoked in the window because a rotated refresh token came back.'),
  })
  .meta({ title: 'McpStats' });
export type McpStats = z.infer<typeof McpStatsSchema>;

export const McpStatsQuerySchema = z.strictObject({
  windowHours: z.coerce
    .number()
    .int()
    .min(1)
    .max(MCP_STATS_WINDOW_HOURS_MAX)
    .default(MCP_STATS_WINDOW_HOURS_DEFAULT)
    .describe(`Hours back from now, 1-${MCP_STATS_WINDOW_HOURS_MAX}.`),
});

export const adminContract = c.router({
  getMcpStats: {
    method: 'GET',
    path: '/api/admin/mcp/stats',
    summary: 'MCP execution statistics (administrators)',
    description:
      "Tool calls, latencies, error codes, dynamic registrations and refused requests on `/mcp` in the window. An admin's portal session, or an admin user's bearer token with the scope `admin:read`; anyone else gets 403.",
    query: McpStatsQuerySchema,
    responses: {
      200: McpStatsSchema,
      ...problemResponses,
      403: problemResponses[403].describe('Not an administrator, or a token without `admin:read`.'),
    },
    metadata: ADMIN_METADATA,
    strictStatusCodes: true,
  },
});

import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { TokenPrincipal } from '../modules/oauth/token.service.ts';
import type { ToolDefinition, ToolPhase } from './tool.ts';
import { analyticsTools } from './tools/analytics.tools.ts';
import { asyncTools } from './tools/async.tools.ts';
import { readTools } from './tools/read.tools.ts';
import { recommendationTools } from './tools/recommendation.tools.ts';
import { writeTools } from './tools/write.tools.ts';

/** docs/design.md §3 "MCP / Tools": snake_case names of at most 40 characters, at most 40 tools. */
export const TOOL_NAME = /^[a-z][a-z0-9_]{0,39}$/;
export const MAX_TOOLS = 40;

export const ALL_TOOLS: readonly ToolDefinition[] = [
  ...readTools,
  ...analyticsTools,
  ...recommendationTools,
  ...writeTools,
  ...asyncTools,
];

/**
 * JSON Schema (draft-07, what MCP hosts' validators read) of a tool's
 * arguments and result, converted once at start-up: `tools/list` is answered
 * from these objects, never by converting zod per request.
 */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Tool['inputSchema'] {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' });
  return splitNullableTypes(json) as Tool['inputSchema'];
}

/** Keywords that describe the property itself and stay outside the `anyOf`. */
const ANNOTATIONS = ['title', 'description', 'default', 'examples'] as const;

/**
 * zod writes a nullable scalar as `type: ["number", "null"]`. That is valid
 * JSON Schema, but hosts that map tool schemas onto their own (stricter)
 * schema dialects handle `anyOf` with one type per branch better (the MCP
 * Inspector's `--strict` portability check flags the array form), so the
 * array form is rewritten as `anyOf: [{type: "number", …}, {type: "null"}]`.
 */
export function splitNullableTypes(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(splitNullableTypes);
  if (node === null || typeof node !== 'object') return node;
  const schema = Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, splitNullableTypes(value)]),
  ) as Record<string, unknown>;
  const type = schema['type'];
  if (!Array.isArray(type) || type.length !== 2 || !type.includes('null')) return schema;
  const outside: Record<string, unknown> = {};
  const inside: Record<string, unknown> = { type: type.find((entry) => entry !== 'null') };
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type') continue;
    if ((ANNOTATIONS as readonly string[]).includes(key)) outside[key] = value;
    else inside[key] = value;
  }
  return { ...outside, anyOf: [inside, { type: 'null' }] };
}

function describeTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchemaOf(tool.input, 'input'),
    outputSchema: jsonSchemaOf(tool.output, 'output'),
    annotations: { title: tool.title, ...tool.annotations },
  };
}

const byName = new Map<string, { readonly tool: ToolDefinition; readonly listed: Tool }>();
for (const tool of ALL_TOOLS) {
  if (!TOOL_NAME.test(tool.name))
    throw new Error(`MCP tool name ${tool.name} is not snake_case of at most 40 characters`);
  if (byName.has(tool.name)) throw new Error(`MCP tool ${tool.name} is defined twice`);
  byName.set(tool.name, { tool, listed: describeTool(tool) });
}
if (byName.size > MAX_TOOLS) throw new Error(`${byName.size} MCP tools: at most ${MAX_TOOLS}`);

export function phaseEnabled(config: Config, phase: ToolPhase): boolean {
  if (phase === 'read') return config.mcp.readEnabled;
  if (phase === 'write') return config.mcp.writeEnabled;
  return config.mcp.asyncEnabled;
}

/** A tool of an enabled phase, or undefined: a disabled phase's tools do not exist for callers. */
export function findEnabledTool(config: Config, name: string): ToolDefinition | undefined {
  const entry = byName.get(name);
  return entry && phaseEnabled(config, entry.tool.phase) ? entry.tool : undefined;
}

export function featureEnabled(tool: ToolDefinition, principal: TokenPrincipal): boolean {
  return tool.feature !== 'nutrition' || principal.nutritionEnabled;
}

/**
 * `tools/list` (specification §4.2): only tools whose phase is enabled,
 * whose scopes the token holds, and whose feature is on for the user.
 */
export function listVisibleTools(config: Config, principal: TokenPrincipal): Tool[] {
  const visible: Tool[] = [];
  for (const { tool, listed } of byName.values()) {
    if (!phaseEnabled(config, tool.phase) || !featureEnabled(tool, principal)) continue;
    if (tool.scopes.every((scope) => principal.scopes.includes(scope))) visible.push(listed);
  }
  return visible;
}

/** Every tool as `tools/list` describes it (the manifest is built from these). */
export function describeAllTools(): readonly { readonly tool: ToolDefinition; readonly listed: Tool }[] {
  return [...byName.values()];
}

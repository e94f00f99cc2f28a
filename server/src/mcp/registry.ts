import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../config.ts';
import type { TokenPrincipal } from '../modules/oauth/token.service.ts';
import type { ToolDefinition, ToolPhase } from './tool.ts';
import { isPage, toolInputSchema, toolOutputSchema } from './tool-schema.ts';
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

function toolNamed(name: string): ToolDefinition {
  const tool = ALL_TOOLS.find((entry) => entry.name === name);
  if (!tool) throw new Error(`sameShapeAs names ${name}, which is no MCP tool`);
  return tool;
}

/** Words for a schema part another tool spells out: where to read its shape. */
function shapeWords(tool: ToolDefinition): { arguments: Record<string, string>; result?: string } {
  const words: Record<string, string> = {};
  for (const [argument, name] of Object.entries(tool.sameShapeAs?.arguments ?? {})) {
    toolNamed(name);
    words[argument] = `Shaped as the \`${argument}\` argument of ${name}.`;
  }
  const resultOf = tool.sameShapeAs?.result;
  if (resultOf === undefined) return { arguments: words };
  return {
    arguments: words,
    result: isPage(toolOutputSchema(toolNamed(resultOf).output))
      ? `The fields of an entry of ${resultOf}'s \`items\`.`
      : `The fields of ${resultOf}'s result.`,
  };
}

function describeTool(tool: ToolDefinition): Tool {
  const words = shapeWords(tool);
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toolInputSchema(tool.input, words.arguments),
    outputSchema: toolOutputSchema(tool.output, words.result),
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

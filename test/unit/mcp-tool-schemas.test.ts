import { describe, expect, it } from 'vitest';
import { ALL_TOOLS, describeAllTools } from '../../server/src/mcp/registry.ts';
import { isPage, splitNullableTypes, toolOutputSchema } from '../../server/src/mcp/tool-schema.ts';

/** Every `type` keyword anywhere in a schema. */
function typesIn(node: unknown, found: unknown[] = []): unknown[] {
  if (Array.isArray(node)) node.forEach((entry) => typesIn(entry, found));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'type') found.push(value);
      typesIn(value, found);
    }
  }
  return found;
}

/** Every subschema object anywhere in a schema (and the schema itself). */
function nodesIn(node: unknown, found: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(node)) node.forEach((entry) => nodesIn(entry, found));
  else if (node && typeof node === 'object') {
    found.push(node as Record<string, unknown>);
    for (const value of Object.values(node)) nodesIn(value, found);
  }
  return found;
}

/** The record a result schema describes: the result, or an entry of a list's `items`. */
function recordOf(schema: Record<string, unknown>): unknown {
  return isPage(schema) ? (schema['properties'] as { items: { items: unknown } }).items.items : schema;
}

describe('MCP tool schemas', () => {
  it('state a format by its name, without the regex zod spells it out as, and carry no $schema', () => {
    for (const { listed } of describeAllTools()) {
      for (const schema of [listed.inputSchema, listed.outputSchema]) {
        expect(schema, listed.name).not.toHaveProperty('$schema');
        for (const node of nodesIn(schema)) {
          if (typeof node['format'] === 'string') expect(node, listed.name).not.toHaveProperty('pattern');
        }
      }
    }
  });

  it('point every $ref at a definition of the same schema', () => {
    for (const { listed } of describeAllTools()) {
      for (const schema of [listed.inputSchema, listed.outputSchema]) {
        const defs = (schema as { $defs?: Record<string, unknown> }).$defs ?? {};
        for (const node of nodesIn(schema)) {
          if (typeof node['$ref'] !== 'string') continue;
          expect(node['$ref'], listed.name).toMatch(/^#\/\$defs\//);
          expect(defs, listed.name).toHaveProperty([node['$ref'].slice('#/$defs/'.length)]);
        }
      }
    }
  });

  it("say a result has the shape of another tool's only when its record has exactly those fields", () => {
    const referring = ALL_TOOLS.filter((tool) => tool.sameShapeAs?.result !== undefined);
    expect(referring.length).toBeGreaterThan(0);
    for (const tool of referring) {
      const other = ALL_TOOLS.find((entry) => entry.name === tool.sameShapeAs?.result);
      expect(other, tool.name).toBeDefined();
      if (!other) continue;

      expect(recordOf(toolOutputSchema(tool.output)), tool.name).toEqual(recordOf(toolOutputSchema(other.output)));
    }
  });

  it('refer an argument to another tool only when that tool takes the same argument under the same scopes', () => {
    for (const tool of ALL_TOOLS) {
      for (const [argument, name] of Object.entries(tool.sameShapeAs?.arguments ?? {})) {
        const other = ALL_TOOLS.find((entry) => entry.name === name);
        const shapeOf = (schema: unknown) => (schema as { shape: Record<string, unknown> }).shape[argument];

        expect(other?.scopes, tool.name).toEqual(tool.scopes);
        expect(shapeOf(tool.input), tool.name).toBeDefined();
        expect(shapeOf(tool.input), tool.name).toBe(shapeOf(other?.input));
      }
    }
  });

  it('write every nullable field as anyOf branches with one type each (portable to strict hosts)', () => {
    for (const { listed } of describeAllTools()) {
      for (const schema of [listed.inputSchema, listed.outputSchema]) {
        expect(typesIn(schema).filter((type) => Array.isArray(type))).toEqual([]);
      }
      expect(listed.inputSchema.type).toBe('object');
      expect(listed.outputSchema?.type).toBe('object');
    }
  });

  it('keep annotations outside and constraints inside the non-null branch', () => {
    expect(
      splitNullableTypes({
        type: 'object',
        properties: { hrv: { type: ['number', 'null'], minimum: 1, maximum: 300, description: 'ms' } },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        hrv: { description: 'ms', anyOf: [{ type: 'number', minimum: 1, maximum: 300 }, { type: 'null' }] },
      },
    });
  });
});

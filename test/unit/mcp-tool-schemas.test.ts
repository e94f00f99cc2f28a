import { describe, expect, it } from 'vitest';
import { describeAllTools, splitNullableTypes } from '../../server/src/mcp/registry.ts';

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

describe('MCP tool schemas', () => {
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

import { describe, expect, it } from 'vitest';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from '../../server/src/lib/json-depth.ts';

const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

describe('jsonNestsDeeperThan', () => {
  it('accepts nesting up to the limit and refuses one level more', () => {
    expect(jsonNestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonNestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
  });

  it('reads bytes and strings alike, objects and arrays alike', () => {
    const deep = '{"a":'.repeat(70) + '1' + '}'.repeat(70);
    expect(jsonNestsDeeperThan(deep)).toBe(true);
    expect(jsonNestsDeeperThan(new TextEncoder().encode(deep))).toBe(true);
    expect(jsonNestsDeeperThan(new TextEncoder().encode(nested(3)), 3)).toBe(false);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ note: '['.repeat(500), quoted: 'say \\"[[[[\\"' + '{'.repeat(100) });
    expect(jsonNestsDeeperThan(text)).toBe(false);
  });

  it('counts depth, not the number of siblings', () => {
    const wide = JSON.stringify(Array.from({ length: 10_000 }, () => [[1]]));
    expect(jsonNestsDeeperThan(wide)).toBe(false);
  });

  it('refuses the 200,000-level body that once broke a webhook log', () => {
    expect(jsonNestsDeeperThan(Buffer.from(nested(200_000)))).toBe(true);
  });
});

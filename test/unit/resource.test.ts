import { describe, expect, it } from 'vitest';
import { normalizeResource } from '../../server/src/modules/oauth/resource.ts';

/** RFC 8707 `resource` as the server compares and binds it: one trailing slash names the same resource. */
describe('normalizeResource', () => {
  it('drops one trailing slash', () => {
    expect(normalizeResource('https://pacer.example/mcp/')).toBe('https://pacer.example/mcp');
    expect(normalizeResource('https://pacer.example/')).toBe('https://pacer.example');
  });

  it('leaves a resource without a trailing slash as it is', () => {
    expect(normalizeResource('https://pacer.example/mcp')).toBe('https://pacer.example/mcp');
    expect(normalizeResource('https://pacer.example/mcpx')).toBe('https://pacer.example/mcpx');
  });

  it('drops only one slash, so two still name another resource', () => {
    expect(normalizeResource('https://pacer.example/mcp//')).toBe('https://pacer.example/mcp/');
  });
});

/**
 * `npm run check:generated` compares openapi.json with its previous version:
 * these are the changes it must call breaking, on the real document.
 */
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../server/src/http/openapi.ts';
import { breakingChanges } from '../../server/src/tools/openapi-breaking.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const current = (): Json => JSON.parse(JSON.stringify(buildOpenApiDocument())) as Json;

describe('breaking changes against the previous openapi.json', () => {
  it('finds none between a document and itself, nor when paths, fields and enum values are added', () => {
    const before = current();
    expect(breakingChanges(before, current())).toEqual([]);
    const after = current();
    after.paths['/api/new-thing'] = { get: { responses: { '200': { description: 'ok' } } } };
    after.components.schemas.WellnessRecord.properties.extra = { type: 'string' };
    after.components.schemas.WellnessRecord.required = [...after.components.schemas.WellnessRecord.required];
    const sex = after.components.schemas.Profile?.properties?.sex as { enum?: string[] } | undefined;
    sex?.enum?.push('another');
    expect(breakingChanges(before, after)).toEqual([]);
  });

  it('reports a removed path and a removed method', () => {
    const before = current();
    const after = current();
    delete after.paths['/api/workouts/{id}/streams'];
    delete after.paths['/api/profile'].patch;
    expect(breakingChanges(before, after).sort()).toEqual([
      'removed method PATCH /api/profile',
      'removed path /api/workouts/{id}/streams',
    ]);
  });

  it('reports a response field removed from a shared component, at every operation that returns it', () => {
    const before = current();
    const after = current();
    delete after.components.schemas.WellnessRecord.properties.hrv;
    const changes = breakingChanges(before, after);
    expect(changes).toContain('removed response field POST /api/wellness 200 application/json hrv');
    expect(changes).toContain('removed response field GET /api/wellness 200 application/json items[].hrv');
    expect(changes.every((change) => change.startsWith('removed response field ') && change.endsWith('hrv'))).toBe(
      true,
    );
  });

  it('reports a removed enum value in a parameter, a request body and a response', () => {
    const before = current();
    const after = current();
    const enums: string[][] = [];
    const strip = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(strip);
      if (typeof node !== 'object' || node === null) return;
      const schema = node as Json;
      if (Array.isArray(schema.enum) && schema.enum.includes('run')) {
        enums.push(schema.enum as string[]);
        schema.enum = schema.enum.filter((value: unknown) => value !== 'run');
      }
      Object.values(schema).forEach(strip);
    };
    strip(after);
    expect(enums.length).toBeGreaterThan(0);
    const changes = breakingChanges(before, after);
    expect(changes.length).toBeGreaterThan(0);
    expect(changes.every((change) => change.startsWith('removed enum value "run" at '))).toBe(true);
    expect(changes.some((change) => / body application\/json /.test(change))).toBe(true);
    expect(changes.some((change) => / 200 application\/json /.test(change))).toBe(true);
  });
});

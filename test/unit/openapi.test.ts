import { readFile } from 'node:fs/promises';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../server/src/http/openapi.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

type Schema = { properties?: Record<string, Schema>; required?: string[]; [key: string]: unknown };

describe('openapi.json', () => {
  it('is exactly what the contract generates (committed, no drift)', async () => {
    const committed = await readFile(path.join(ROOT, 'openapi.json'), 'utf8');
    expect(committed).toBe(`${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
  });

  it('is a valid OpenAPI document', async () => {
    const document = buildOpenApiDocument();
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  it('carries the zod constraints: ranges, enums, formats, required fields and no unknown keys', () => {
    const schemas = buildOpenApiDocument().components?.schemas as Record<string, Schema>;
    const wellness = schemas['WellnessUpsert'] as Schema;
    expect(wellness.required).toEqual(['date']);
    expect(wellness['additionalProperties']).toBe(false);
    expect(wellness.properties?.['hrv']).toMatchObject({ type: 'number', minimum: 1, maximum: 300, nullable: true });
    expect(wellness.properties?.['restingHr']).toMatchObject({ type: 'integer', minimum: 20, maximum: 150 });
    const item = schemas['NutritionItemInput'] as Schema;
    expect(item.required).toEqual(expect.arrayContaining(['name', 'logged_at']));
    expect(item.required).not.toContain('absorptionType');
    expect(item.properties?.['absorptionType']).toMatchObject({
      enum: ['RAPID', 'FAST', 'BALANCED', 'DENSE', 'HYPER_LOAD'],
      default: 'BALANCED',
    });
    expect(item.properties?.['logged_at']).toMatchObject({ type: 'string', format: 'date-time' });
    const problem = schemas['Problem'] as Schema;
    expect(problem.required).toEqual(expect.arrayContaining(['type', 'title', 'status', 'code']));
  });

  it('declares every status and the OAuth scopes of each route', () => {
    const document = buildOpenApiDocument();
    const post = document.paths['/api/wellness']?.post;
    expect(Object.keys(post?.responses ?? {}).sort()).toEqual(['200', '201', '400', '401', '403', '413', '415', '500']);
    expect(post?.responses['400'].content).toHaveProperty(['application/problem+json']);
    expect(post?.security).toEqual([{ oauth2: ['health:write'] }]);
    expect(document.paths['/api/nutrition']?.get?.security).toEqual([{ oauth2: ['nutrition:read'] }]);
    const parameters = (document.paths['/api/wellness']?.get?.parameters ?? []) as { name: string }[];
    expect(parameters.map((parameter) => parameter.name)).toEqual(['from', 'to', 'limit', 'cursor']);
  });
});

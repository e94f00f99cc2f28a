import { readFile } from 'node:fs/promises';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { documentMismatch } from '../../server/src/http/document-check.ts';
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
    expect(wellness.properties?.['hrv']).toMatchObject({
      anyOf: [{ type: 'number', minimum: 1, maximum: 300 }, { type: 'null' }],
    });
    expect(wellness.properties?.['restingHr']).toMatchObject({
      anyOf: [{ type: 'integer', minimum: 20, maximum: 150 }, { type: 'null' }],
    });
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
    expect(Object.keys(post?.responses ?? {}).sort()).toEqual([
      '200',
      '201',
      '400',
      '401',
      '403',
      '409',
      '413',
      '415',
      '422',
      '429',
      '500',
    ]);
    const get = document.paths['/api/wellness']?.get;
    expect(Object.keys(get?.responses ?? {}).sort()).toEqual(['200', '400', '401', '403', '429', '500']);
    expect(post?.responses['400'].content).toHaveProperty(['application/problem+json']);
    expect(post?.security).toEqual([{ oauth2: ['health:write'] }]);
    expect(document.paths['/api/nutrition']?.get?.security).toEqual([{ oauth2: ['nutrition:read'] }]);
    const parameters = (document.paths['/api/wellness']?.get?.parameters ?? []) as { name: string }[];
    expect(parameters.map((parameter) => parameter.name)).toEqual(['from', 'to', 'limit', 'cursor']);
  });

  it('declares the profile and planned-workout routes with their scopes, 404s and structure schema', () => {
    const document = buildOpenApiDocument();
    expect(document.paths['/api/profile']?.get?.security).toEqual([{ oauth2: ['profile:read'] }]);
    expect(document.paths['/api/profile']?.patch?.security).toEqual([{ oauth2: ['profile:write'] }]);
    const collection = document.paths['/api/planned-workouts'];
    expect(collection?.get?.security).toEqual([{ oauth2: ['planning:read'] }]);
    expect(collection?.post?.security).toEqual([{ oauth2: ['planning:write'] }]);
    const item = document.paths['/api/planned-workouts/{id}'];
    expect(item?.get?.security).toEqual([{ oauth2: ['planning:read'] }]);
    for (const method of ['patch', 'delete'] as const) {
      expect(item?.[method]?.security).toEqual([{ oauth2: ['planning:write'] }]);
    }
    for (const method of ['get', 'patch', 'delete'] as const) {
      expect(Object.keys(item?.[method]?.responses ?? {})).toContain('404');
    }
    expect(Object.keys(item?.delete?.responses ?? {})).toContain('204');
    const schemas = buildOpenApiDocument().components?.schemas as Record<string, Schema>;
    expect(schemas['ProfilePatch']?.['additionalProperties']).toBe(false);
    expect(schemas['ProfilePatch']?.properties).not.toHaveProperty('email');
    expect(schemas['PlannedStructure']?.properties?.['steps']).toMatchObject({ minItems: 1, maxItems: 100 });
    expect(schemas['StepTarget']?.['oneOf']).toHaveLength(3);
  });

  it('is OpenAPI 3.1, where a nullable reference admits null (3.0 `nullable` beside `allOf` did not)', () => {
    const document = buildOpenApiDocument();
    expect(document.openapi).toBe('3.1.0');
    const schemas = document.components?.schemas as Record<string, Schema>;
    expect(schemas['PlannedWorkout']?.properties?.['structure']).toEqual({
      anyOf: [{ $ref: '#/components/schemas/PlannedStructure' }, { type: 'null' }],
    });
    expect(JSON.stringify(document)).not.toContain('"nullable"');
    const route = { method: 'GET', path: '/api/planned-workouts/:id' } as never;
    const workout = {
      id: '6f1c2a9e-3a1b-4c3d-9e8f-0a1b2c3d4e5f',
      date: '2026-11-27',
      timeOfDay: null,
      sport: 'run',
      title: 'Easy',
      description: null,
      durationSecs: 1800,
      trainingStress: null,
      structure: null,
      source: 'app',
      createdAt: '2026-11-26T10:00:00.000Z',
      updatedAt: '2026-11-26T10:00:00.000Z',
    };
    expect(documentMismatch(route, 200, workout)).toBeUndefined();
    expect(documentMismatch(route, 200, { ...workout, structure: 'none' })).toMatch(/structure/);
    expect(documentMismatch(route, 418, {})).toMatch(/not declared/);
  });

  it('requires every request body, and declares the upload file as binary', () => {
    const document = buildOpenApiDocument();
    for (const [route, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(
        item as Record<string, { requestBody?: { required?: boolean } }>,
      )) {
        if (operation.requestBody)
          expect({ route, method, required: operation.requestBody.required }).toEqual({
            route,
            method,
            required: true,
          });
      }
    }
    const upload = document.components?.schemas?.['WorkoutUpload'] as Schema;
    expect(upload.properties?.['file']).toMatchObject({ type: 'string', format: 'binary' });
  });

  it('declares the response headers: request id and rate limits everywhere, Retry-After where sent, replay on idempotent writes', () => {
    const document = buildOpenApiDocument();
    const post = document.paths['/api/wellness']?.post;
    for (const status of Object.keys(post?.responses ?? {})) {
      expect(Object.keys(post?.responses[status].headers ?? {})).toEqual(
        expect.arrayContaining(['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
      );
    }
    expect(post?.responses['409'].headers).toHaveProperty('Retry-After');
    expect(post?.responses['400'].headers).not.toHaveProperty('Retry-After');
    expect(Object.keys(post?.responses['429'].headers ?? {}).sort()).toEqual([
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'Retry-After',
      'X-Request-Id',
    ]);
    expect(post?.responses['201'].headers).toHaveProperty('Idempotent-Replayed');
    // A kept refusal is replayed too; a 429 or a 5xx never is (idempotency.middleware.ts keepsResponse).
    expect(post?.responses['400'].headers).toHaveProperty('Idempotent-Replayed');
    expect(post?.responses['429'].headers).not.toHaveProperty('Idempotent-Replayed');
    expect(post?.responses['500'].headers).not.toHaveProperty('Idempotent-Replayed');
    expect(document.paths['/api/wellness']?.get?.responses['200'].headers).not.toHaveProperty('Idempotent-Replayed');
  });
});

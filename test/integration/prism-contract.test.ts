/**
 * Stoplight Prism as a validating proxy over the committed openapi.json, in
 * front of the real test server, as an integrator's CI contract tester runs
 * it: every request and answer that passes through is checked against the
 * document, and what disagrees is listed in the `sl-violations` header.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../server/src/http/openapi.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PRISM = path.join(ROOT, 'node_modules/.bin/prism');

let server: TestServer;
let token: string;
const proxies: ChildProcess[] = [];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Prism proxying `server` over `document`; resolves with its base URL once it listens. */
async function startPrism(document: string): Promise<string> {
  const port = await freePort();
  const child = spawn(PRISM, ['proxy', document, server.url, '--host', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proxies.push(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prism did not start:\n${output}`)), 30_000);
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => reject(new Error(`Prism exited (${String(code)}):\n${output}`)));
  });
  return `http://127.0.0.1:${String(port)}`;
}

interface Seen {
  readonly call: string;
  readonly status: number;
  readonly body: unknown;
  readonly violations: readonly unknown[];
}

async function send(base: string, method: string, route: string, body?: unknown): Promise<Seen> {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const header = res.headers.get('sl-violations');
  return {
    call: `${method} ${route}`,
    status: res.status,
    body: text ? (JSON.parse(text) as unknown) : undefined,
    violations: header ? (JSON.parse(header) as unknown[]) : [],
  };
}

beforeAll(async () => {
  server = await startTestServer();
  const athlete = await makeUser(server.db, { timeZone: 'Europe/Berlin' });
  const minted = await mintToken(server.db, athlete, {
    scopes: ['planning:read', 'planning:write', 'health:read', 'health:write'],
  });
  token = minted.token;
}, 60_000);
afterAll(async () => {
  for (const child of proxies) child.kill();
  await server.stop();
});

describe('Prism as a validating proxy over openapi.json', () => {
  it('finds no violation in planned workouts (structure null and set), wellness and problem answers', async () => {
    const base = await startPrism(path.join(ROOT, 'openapi.json'));
    const seen: Seen[] = [];
    const created = await send(base, 'POST', '/api/planned-workouts', {
      date: '2026-12-01',
      sport: 'run',
      title: 'Easy run',
      structure: null,
    });
    seen.push(created);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ structure: null });
    const id = (created.body as { id: string }).id;
    seen.push(await send(base, 'GET', `/api/planned-workouts/${id}`));
    seen.push(await send(base, 'GET', '/api/planned-workouts?from=2026-11-01&to=2026-12-31'));
    const structured = await send(base, 'PATCH', `/api/planned-workouts/${id}`, {
      structure: { steps: [{ type: 'steady', duration: { type: 'time', secs: 1800 } }] },
    });
    seen.push(structured);
    expect(structured.status).toBe(200);
    const cleared = await send(base, 'PATCH', `/api/planned-workouts/${id}`, { structure: null });
    seen.push(cleared);
    expect(cleared.body).toMatchObject({ structure: null });
    seen.push(await send(base, 'POST', '/api/wellness', { date: '2026-11-20', restingHr: 48, hrv: null }));
    seen.push(await send(base, 'GET', '/api/wellness?from=2026-11-01&to=2026-11-30'));
    const missing = await send(base, 'GET', '/api/planned-workouts/6f1c2a9e-3a1b-4c3d-9e8f-0a1b2c3d4e5f');
    seen.push(missing);
    expect(missing.status).toBe(404);
    seen.push(await send(base, 'DELETE', `/api/planned-workouts/${id}`));

    expect(seen.map((entry) => [entry.call, entry.status])).toEqual([
      ['POST /api/planned-workouts', 201],
      [`GET /api/planned-workouts/${id}`, 200],
      ['GET /api/planned-workouts?from=2026-11-01&to=2026-12-31', 200],
      [`PATCH /api/planned-workouts/${id}`, 200],
      [`PATCH /api/planned-workouts/${id}`, 200],
      ['POST /api/wellness', 201],
      ['GET /api/wellness?from=2026-11-01&to=2026-11-30', 200],
      ['GET /api/planned-workouts/6f1c2a9e-3a1b-4c3d-9e8f-0a1b2c3d4e5f', 404],
      [`DELETE /api/planned-workouts/${id}`, 204],
    ]);
    expect(seen.filter((entry) => entry.violations.length > 0)).toEqual([]);
  }, 60_000);

  it('reports a violation when the document does not admit a null structure (so the check above can fail)', async () => {
    const document = JSON.parse(JSON.stringify(buildOpenApiDocument())) as {
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const workout = document.components.schemas['PlannedWorkout'];
    if (!workout) throw new Error('no PlannedWorkout schema');
    workout.properties['structure'] = { $ref: '#/components/schemas/PlannedStructure' };
    const file = path.join(tmpdir(), `pacer-openapi-strict-${String(process.pid)}.json`);
    await writeFile(file, JSON.stringify(document));
    const base = await startPrism(file);
    const created = await send(base, 'POST', '/api/planned-workouts', {
      date: '2026-12-02',
      sport: 'ride',
      title: 'Spin',
      structure: null,
    });
    expect(created.status).toBe(201);
    expect(JSON.stringify(created.violations)).toContain('structure');
  }, 60_000);
});

/**
 * The SDK names its release on every request: `X-Pacer-Client` everywhere and,
 * under Node, a `User-Agent` with the Node major version. The version in the
 * code is the one in package.json.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createPacerClient, SDK_VERSION } from '@pacer/client-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const seen: IncomingHttpHeaders[] = [];
const server = createServer((req, res) => {
  seen.push(req.headers);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ items: [], nextCursor: null }));
});
let baseUrl = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('SDK version and client headers', () => {
  it("equals client-sdk/package.json's version", async () => {
    const manifest = JSON.parse(
      await readFile(path.join(import.meta.dirname, '..', '..', 'client-sdk', 'package.json'), 'utf8'),
    ) as { version: string };
    expect(SDK_VERSION).toBe(manifest.version);
  });

  it('sends X-Pacer-Client and a User-Agent naming the SDK release and the Node major version', async () => {
    const pacer = createPacerClient({ baseUrl, accessToken: 'pat_test', retry: false });
    const res = await pacer.wellness.listWellness({ query: { from: '2026-11-01', to: '2026-11-02' } });
    expect(res.status).toBe(200);
    const headers = seen.at(-1);
    const nodeMajor = process.versions.node.split('.')[0];
    expect(headers?.['x-pacer-client']).toBe(`pacer-client-sdk/${SDK_VERSION}`);
    expect(headers?.['user-agent']).toBe(`pacer-client-sdk/${SDK_VERSION} node/${nodeMajor}`);
  });

  it("lets the caller's own headers option replace the User-Agent", async () => {
    const pacer = createPacerClient({
      baseUrl,
      accessToken: 'pat_test',
      retry: false,
      headers: { 'User-Agent': 'my-app/1.0' },
    });
    await pacer.wellness.listWellness({ query: { from: '2026-11-01', to: '2026-11-02' } });
    expect(seen.at(-1)?.['user-agent']).toBe('my-app/1.0');
    expect(seen.at(-1)?.['x-pacer-client']).toBe(`pacer-client-sdk/${SDK_VERSION}`);
  });
});

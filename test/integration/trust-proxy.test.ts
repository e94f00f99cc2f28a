/**
 * `PACER_TRUST_PROXY` (Express `trust proxy` semantics): which peers'
 * `X-Forwarded-For` names the client. The client address it yields is the
 * one every place uses: the REST per-address window, the DCR window, webhook
 * `source_ip` and the request log. Off by default, so a client talking to us
 * directly cannot choose its address by sending the header.
 */
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.ts';
import { makeUser, makeWebhookApp } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { deliver, findDeliveryRow } from '../support/webhooks.ts';

const started: TestServer[] = [];
afterAll(async () => {
  for (const server of started) await server.stop();
});

async function serverWith(env: Record<string, string>, logLines?: Record<string, unknown>[]): Promise<TestServer> {
  const capture = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        logLines?.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const server = await startTestServer(
    { PACER_RATE_LIMIT_IP_PER_MINUTE: '2', ...env },
    logLines ? { logDestination: capture } : {},
  );
  started.push(server);
  return server;
}

/** Three unauthenticated requests "from" each address: the third from one address is refused. */
async function statusesFrom(server: TestServer, addresses: readonly string[]): Promise<Record<string, number[]>> {
  const statuses: Record<string, number[]> = {};
  for (const address of addresses) {
    statuses[address] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await call(server.url, 'GET', '/api/profile', { headers: { 'x-forwarded-for': address } });
      statuses[address].push(answer.status);
    }
  }
  return statuses;
}

describe('PACER_TRUST_PROXY configuration', () => {
  it('takes a hop count or a list of addresses, CIDRs and named ranges; off by default', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ PACER_TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ PACER_TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ PACER_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ PACER_TRUST_PROXY: 'loopback, 10.0.0.0/8 ,fd00::/8,192.168.1.7' }).trustProxy).toEqual([
      'loopback',
      '10.0.0.0/8',
      'fd00::/8',
      '192.168.1.7',
    ]);
  });

  it('refuses "true" (every hop trusted) and anything that is not an address, naming the variable', () => {
    expect(() => loadConfig({ PACER_TRUST_PROXY: 'true' })).toThrow(/PACER_TRUST_PROXY="true": trusting every hop/);
    expect(() => loadConfig({ PACER_TRUST_PROXY: 'nginx.internal' })).toThrow(
      /PACER_TRUST_PROXY="nginx.internal": expected a hop count or a list of proxy addresses/,
    );
    expect(() => loadConfig({ PACER_TRUST_PROXY: '10.0.0.0/99' })).toThrow(/PACER_TRUST_PROXY/);
  });
});

describe('off (the default): X-Forwarded-For is ignored', () => {
  it('counts every request against the peer address, whatever the header claims', async () => {
    const server = await serverWith({});
    const statuses = await statusesFrom(server, ['203.0.113.1', '203.0.113.2']);
    // Six requests from one peer (127.0.0.1) with a window of two: only the first two pass.
    expect(statuses).toEqual({ '203.0.113.1': [401, 401, 429], '203.0.113.2': [429, 429, 429] });
  });
});

describe('a hop count (1: one proxy in front)', () => {
  it('gives each forwarded client its own REST window, and the log line names the client', async () => {
    const lines: Record<string, unknown>[] = [];
    const server = await serverWith({ PACER_TRUST_PROXY: '1', PACER_LOG_LEVEL: 'info' }, lines);
    const statuses = await statusesFrom(server, ['203.0.113.1', '203.0.113.2']);
    expect(statuses).toEqual({ '203.0.113.1': [401, 401, 429], '203.0.113.2': [401, 401, 429] });

    // With one trusted hop the client is the last address the proxy appended; a
    // spoofed entry further left (sent by the client itself) is not believed.
    const spoofed = await call(server.url, 'GET', '/api/profile', {
      headers: { 'x-forwarded-for': '198.51.100.9, 203.0.113.3', 'x-request-id': 'trust-proxy-log' },
    });
    expect(spoofed.status).toBe(401);
    const logged = lines.find((line) => (line['req'] as { id?: string } | undefined)?.id === 'trust-proxy-log');
    expect(logged?.['req']).toMatchObject({ clientIp: '203.0.113.3' });
  });

  it('records the forwarded client as a webhook delivery source_ip', async () => {
    const server = await serverWith({ PACER_TRUST_PROXY: '1' });
    const owner = await makeUser(server.db);
    const { client, webhookSecret } = await makeWebhookApp(server.db, owner);
    const answer = await deliver(
      server,
      client.clientId,
      { type: 'ping' },
      { secret: webhookSecret, headers: { 'x-forwarded-for': '198.51.100.20' } },
    );
    expect(answer.deliveryId).toBeTruthy();
    const row = await findDeliveryRow(server.db, answer.deliveryId ?? '');
    expect(row?.sourceIp).toBe('198.51.100.20');
  });

  it('counts dynamic client registrations per forwarded client', async () => {
    const server = await serverWith({ PACER_TRUST_PROXY: '1', PACER_DCR_RATE_LIMIT_PER_HOUR: '1' });
    // Registered clients belong to the first admin.
    await makeUser(server.db, { admin: true });
    const register = (address: string) =>
      call(server.url, 'POST', '/api/oauth/register', {
        headers: { 'x-forwarded-for': address },
        body: { client_name: 'Proxy test', redirect_uris: ['http://127.0.0.1:5555/callback'] },
      });
    expect((await register('198.51.100.30')).status).toBe(201);
    expect((await register('198.51.100.30')).status).toBe(429);
    expect((await register('198.51.100.31')).status).toBe(201);
  });
});

describe('a list of proxy addresses', () => {
  it('believes X-Forwarded-For only from a listed proxy', async () => {
    const trusted = await serverWith({ PACER_TRUST_PROXY: 'loopback' });
    expect(await statusesFrom(trusted, ['203.0.113.1', '203.0.113.2'])).toEqual({
      '203.0.113.1': [401, 401, 429],
      '203.0.113.2': [401, 401, 429],
    });
    // We are 127.0.0.1, which this list does not name: the header is ignored.
    const untrusted = await serverWith({ PACER_TRUST_PROXY: '10.0.0.0/8' });
    expect(await statusesFrom(untrusted, ['203.0.113.1', '203.0.113.2'])).toEqual({
      '203.0.113.1': [401, 401, 429],
      '203.0.113.2': [429, 429, 429],
    });
  });
});

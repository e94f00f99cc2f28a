/**
 * The SDK's side of incoming webhooks: `webhooks.receiveWebhook` with the
 * secret header, and `signWebhook` (Web Crypto) producing a signature the
 * server accepts, whose events are then processed and visible over REST.
 */
import { createPacerClient, signWebhook } from '@pacer/client-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeUser, makeWebhookApp, mintToken } from '../support/factories.ts';
import { waitForState } from '../support/webhooks.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

describe('SDK: incoming webhooks', () => {
  it('sends a delivery with the secret header and gets the typed acknowledgement', async () => {
    const owner = await makeUser(server.db);
    const { client, webhookSecret } = await makeWebhookApp(server.db, owner);
    const sdk = createPacerClient({ baseUrl: server.url });
    const res = await sdk.webhooks.receiveWebhook({
      params: { clientId: client.clientId },
      headers: { 'x-webhook-secret': webhookSecret },
      body: { event: 'something.else', data: {} },
    });
    expect(res.status).toBe(200);
    if (res.status !== 200) throw new Error('unreachable');
    expect(res.body).toEqual({
      status: 'success',
      message: 'Data captured',
      receivedAt: expect.any(String) as string,
      secretMatched: true,
    });
  });

  it('signWebhook signs exactly the body it returns; the events are applied', async () => {
    const owner = await makeUser(server.db);
    const athlete = await makeUser(server.db);
    const { client, webhookSecret } = await makeWebhookApp(server.db, owner);
    const { token } = await mintToken(server.db, athlete, { scopes: ['health:write', 'health:read'], client });
    const signed = await signWebhook(webhookSecret, [
      { event: 'wellness.upsert', user: athlete.id, data: { date: '2026-11-02', restingHr: 47 } },
    ]);
    const response = await fetch(`${server.url}/api/webhooks/oauth/${client.clientId}`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { secretMatched: boolean }).secretMatched).toBe(true);
    const deliveryId = response.headers.get('x-webhook-delivery-id') ?? '';
    const row = await waitForState(server.db, deliveryId, ['processed', 'failed', 'ignored', 'dead_letter'], 10_000);
    expect(row.state).toBe('processed');
    expect(row.authMethod).toBe('signature');

    const read = await createPacerClient({ baseUrl: server.url, accessToken: token }).wellness.listWellness({
      query: { from: '2026-11-02', to: '2026-11-02' },
    });
    expect(read.status).toBe(200);
    if (read.status !== 200) throw new Error('unreachable');
    expect(read.body.items.map((item) => item.restingHr)).toEqual([47]);

    // A signature of other bytes (the same JSON with a space) is refused.
    const tampered = await fetch(`${server.url}/api/webhooks/oauth/${client.clientId}`, {
      method: 'POST',
      headers: signed.headers,
      body: `${signed.body} `,
    });
    expect(((await tampered.json()) as { secretMatched: boolean }).secretMatched).toBe(false);
  });
});

import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import { clientIpOf } from '../client-address.ts';
import { requireCsrfHeader, sessionUserOf } from '../session-api.ts';
import { redactedHeaders, redactedQuery, webhookBody, webhookRateLimit } from '../webhook-body.middleware.ts';
import { ingestDelivery, type WebhookDeps } from '../../modules/webhooks/webhook-ingest.service.ts';
import { getAppDelivery, listAppDeliveries, replayAppDelivery } from '../../modules/webhooks/webhook-portal.service.ts';

const s = initServer();

export function webhookRoutes(deps: WebhookDeps) {
  return s.router(contract.webhooks, {
    receiveWebhook: {
      // The rate limits first: nothing of the body is read for a refused request.
      middleware: [webhookRateLimit(deps), webhookBody],
      handler: async ({ params, headers, body, req, res }) => {
        const queryParams = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
        const result = await ingestDelivery(deps, {
          clientId: params.clientId,
          rawBody: res.locals['rawBody'] as Buffer,
          body,
          credentials: {
            headerSecret: headers['x-webhook-secret'],
            querySecret: queryParams.get('secret') ?? undefined,
            timestamp: headers['x-webhook-timestamp'],
            signature: headers['x-webhook-signature'],
          },
          webhookId: headers['x-webhook-id'],
          headers: redactedHeaders(req),
          query: redactedQuery(queryParams),
          sourceIp: clientIpOf(req),
        });
        res.setHeader('X-Webhook-Delivery-Id', result.deliveryId);
        return { status: 200, body: result.ack };
      },
    },
  });
}

export function developerWebhookRoutes(deps: WebhookDeps) {
  return s.router(contract.developer, {
    listWebhookDeliveries: async ({ params, query, res }) => {
      const user = sessionUserOf(res.locals);
      return { status: 200, body: await listAppDeliveries(deps, user.id, params.clientId, query) };
    },
    getWebhookDelivery: async ({ params, res }) => {
      const user = sessionUserOf(res.locals);
      return { status: 200, body: await getAppDelivery(deps, user.id, params.clientId, params.deliveryId) };
    },
    replayWebhookDelivery: {
      middleware: [requireCsrfHeader],
      handler: async ({ params, res }) => {
        const user = sessionUserOf(res.locals);
        return { status: 202, body: await replayAppDelivery(deps, user.id, params.clientId, params.deliveryId) };
      },
    },
  });
}

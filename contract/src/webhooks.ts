import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ProblemSchema, type RouteMetadata } from './common.ts';

const c = initContract();
const problem = (description: string) => ProblemSchema.describe(description);

/** The specification's §2.5 acknowledgement; `duplicate` marks a repeated `X-Webhook-Id`. */
export const WebhookAckSchema = z
  .object({
    status: z.literal('success'),
    message: z.literal('Data captured'),
    receivedAt: z.iso.datetime().describe('When the delivery was stored (UTC).'),
    secretMatched: z
      .boolean()
      .describe(
        'Whether the secret (or signature) matched. A delivery that did not match is kept for the portal but never processed.',
      ),
    duplicate: z
      .literal(true)
      .optional()
      .describe(
        'Present when the delivery repeats an earlier one, which is not processed again: the same `X-Webhook-Id` from this app in the last 7 days, or, for a signed delivery without `X-Webhook-Id`, the same signature (same timestamp and bytes) within the 10 minutes it verifies in.',
      ),
  })
  .meta({ title: 'WebhookAck' });
export type WebhookAck = z.infer<typeof WebhookAckSchema>;

/** The events an incoming webhook may carry, each applied like the REST write of the same name's resource. */
export const WEBHOOK_EVENT_NAMES = ['wellness.upsert', 'nutrition.upsert', 'profile.update'] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENT_NAMES)[number];

export const WEBHOOK_DELIVERY_STATES = [
  'received',
  'queued',
  'processing',
  'processed',
  'failed',
  'ignored',
  'rejected',
  'dead_letter',
] as const;
export const WebhookDeliveryStateSchema = z
  .enum(WEBHOOK_DELIVERY_STATES)
  .describe(
    '`received` → `queued` → `processing` → `processed` | `failed` | `ignored`; `rejected` (secret did not match, never processed); `dead_letter` (transient failures past the retry limit).',
  );
export type WebhookDeliveryState = z.infer<typeof WebhookDeliveryStateSchema>;

/** How a delivery proved it came from the app: secret header, secret query parameter, or HMAC signature. */
export const WEBHOOK_AUTH_METHODS = ['header', 'query', 'signature'] as const;
export const WebhookAuthMethodSchema = z.enum(WEBHOOK_AUTH_METHODS);
export type WebhookAuthMethod = z.infer<typeof WebhookAuthMethodSchema>;

export const WebhookDeliverySchema = z
  .object({
    id: z.uuid(),
    clientId: z.string(),
    receivedAt: z.iso.datetime(),
    event: z.string().nullable().describe('The `event` name of an object body, if any.'),
    payload: z
      .unknown()
      .describe(
        'The body as received (JSON); `null` when only `payloadPreview` is kept: for a `rejected` delivery (its secret did not match, so only the start of its body is stored), or a body stored before bodies nesting deeper than 64 levels were refused.',
      ),
    payloadPreview: z
      .string()
      .nullable()
      .describe(
        'When `payload` is `null`: the start of the body as text, at most 4 KiB (cut at a UTF-8 character boundary); `null` otherwise.',
      ),
    payloadBytes: z.number().int().min(0).describe('Size of the body as received, in bytes.'),
    payloadSha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe('SHA-256 (hex) of the body as received: compare it with what you sent.'),
    headers: z.record(z.string(), z.string()).describe('Request headers; secrets are shown as `[redacted]`.'),
    query: z
      .record(z.string(), z.union([z.string(), z.array(z.string())]))
      .describe('Query parameters; `secret` redacted.'),
    sourceIp: z.string().nullable(),
    secretMatched: z.boolean(),
    authMethod: WebhookAuthMethodSchema.nullable(),
    webhookId: z.string().nullable().describe('`X-Webhook-Id` as sent.'),
    duplicateOf: z.uuid().nullable().describe('For a repeated `X-Webhook-Id`: the delivery that took the id first.'),
    state: WebhookDeliveryStateSchema,
    attempts: z.number().int().min(0).describe('Processing attempts so far (replays included).'),
    replays: z.number().int().min(0),
    errorCode: z
      .string()
      .nullable()
      .describe(
        '`secret_mismatch`, `duplicate`, `invalid_json`, `unknown_event`, `not_an_event`, `validation_failed`, `no_grant`, `not_found`, `unprocessable`, `transient`, `retries_exhausted`.',
      ),
    error: z.string().nullable().describe('The last error, in words.'),
    result: z.unknown().nullable().describe('What processing did: applied events, skipped entries, or field errors.'),
    queuedAt: z.iso.datetime().nullable(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ title: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

export const WebhookDeliveryListSchema = z
  .object({
    items: z.array(WebhookDeliverySchema),
    nextCursor: z.string().nullable().describe('Pass as `cursor` for the next (older) page; `null` on the last.'),
    counts: z.record(z.string(), z.number().int()).describe('Deliveries of this app per state.'),
  })
  .meta({ title: 'WebhookDeliveryList' });

const WEBHOOK_METADATA: RouteMetadata = { webhook: true };
const SESSION_METADATA: RouteMetadata = { session: true };

const sessionProblems = {
  400: problem('A query parameter was invalid.'),
  401: problem('Not signed in: this API uses the developer portal session cookie.'),
  404: problem('No such app among yours, or no such delivery.'),
  500: problem('Unexpected server error; quote the request id when reporting it.'),
} as const;

export const webhooksContract = c.router({
  receiveWebhook: {
    method: 'POST',
    path: '/api/webhooks/oauth/:clientId',
    summary: "Push an app's raw event (incoming webhook)",
    description: [
      'Stores the delivery, then answers at once; processing happens in the background.',
      'Authenticate with the app\'s webhook secret in `X-Webhook-Secret` or `?secret=`, or sign instead: `X-Webhook-Timestamp: <unix seconds>` and `X-Webhook-Signature: v1=<hex HMAC-SHA256(secret, timestamp + "." + raw body)>`, accepted within 5 minutes of our clock.',
      "A delivery whose secret does not match is still acknowledged (`secretMatched: false`) and shown in the developer portal, but never processed; of its body only the first 4 KiB, its size and SHA-256 are kept, and an app's rejected deliveries are capped in total size (the oldest go first).",
      `Recognised events: \`{"event": ${WEBHOOK_EVENT_NAMES.map((name) => `"${name}"`).join(' | ')}, "user": "<sub from /api/oauth/userinfo>", "data": <the body of the matching REST write>}\`, or an array of them. The app needs a live grant from that user with \`health:write\`, \`nutrition:write\` or \`profile:write\`. Other bodies are kept and marked \`ignored\`.`,
      '`X-Webhook-Id` de-duplicates: the same id from the same app within 7 days is acknowledged with `duplicate: true` and not processed again. A signed delivery sent without `X-Webhook-Id` is de-duplicated by its signature: the same timestamp and bytes again, within the window the signature verifies in, is a duplicate. A delivery authenticated by the plain secret without `X-Webhook-Id` is never a duplicate: send an id to make re-sends safe.',
      'Requests are rate-limited per client address and per app (every request counts, matched or not), before the body is read: `429` with `Retry-After`; the `RateLimit-*` headers show the tightest window.',
    ].join('\n\n'),
    pathParams: z.object({ clientId: z.string().describe("The app's client id.") }),
    query: z
      .object({ secret: z.string().optional().describe('The webhook secret, if not sent as a header.') })
      .describe('Other query parameters are kept with the delivery (shown in the portal) and otherwise ignored.'),
    headers: z.object({
      'x-webhook-secret': z.string().optional().describe("The app's webhook secret."),
      'x-webhook-id': z.string().max(200).optional().describe('Your id of this event, for de-duplication (7 days).'),
      'x-webhook-timestamp': z.string().optional().describe('Unix seconds, for a signed delivery.'),
      'x-webhook-signature': z
        .string()
        .optional()
        .describe('`v1=<hex HMAC-SHA256(secret, timestamp + "." + raw body)>`.'),
    }),
    body: z
      .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
      .describe('Any JSON object or array, at most 1 MiB.'),
    responses: {
      200: WebhookAckSchema,
      400: problem(
        'The body is not JSON (`invalid_json`), nests deeper than 64 levels (`json_too_deep`), or is not an object or array.',
      ),
      404: problem('No app with this client id.'),
      413: problem('The body is larger than 1 MiB.'),
      415: problem('The body is not `application/json`.'),
      429: problem(
        'Too many deliveries from this address or to this app (`rate_limited`): `Retry-After` says when to retry; the `RateLimit-*` headers show the window.',
      ),
      500: problem('Unexpected server error; quote the request id when reporting it.'),
    },
    metadata: WEBHOOK_METADATA,
    strictStatusCodes: true,
  },
});

export const developerWebhooksContract = c.router({
  listWebhookDeliveries: {
    method: 'GET',
    path: '/api/developer/apps/:clientId/webhooks',
    summary: "List one of your apps' webhook deliveries (developer portal session)",
    description: 'Newest first, optionally one state only. Authenticated by the developer portal session cookie.',
    pathParams: z.object({ clientId: z.string() }),
    query: z.strictObject({
      state: WebhookDeliveryStateSchema.optional(),
      cursor: z.string().max(200).optional(),
      limit: z.coerce.number().int().min(1).max(100).default(25),
    }),
    responses: { 200: WebhookDeliveryListSchema, ...sessionProblems },
    metadata: SESSION_METADATA,
    strictStatusCodes: true,
  },
  getWebhookDelivery: {
    method: 'GET',
    path: '/api/developer/apps/:clientId/webhooks/:deliveryId',
    summary: 'Read one webhook delivery (developer portal session)',
    pathParams: z.object({ clientId: z.string(), deliveryId: z.uuid() }),
    responses: { 200: WebhookDeliverySchema, ...sessionProblems },
    metadata: SESSION_METADATA,
    strictStatusCodes: true,
  },
  replayWebhookDelivery: {
    method: 'POST',
    path: '/api/developer/apps/:clientId/webhooks/:deliveryId/replay',
    summary: 'Process a delivery again (developer portal session)',
    description:
      'Re-queues a `processed`, `failed`, `ignored` or `dead_letter` delivery whose secret matched; it goes through the same processing again. Send the `pacer_csrf` cookie value in `X-CSRF-Token`.',
    pathParams: z.object({ clientId: z.string(), deliveryId: z.uuid() }),
    headers: z.object({ 'x-csrf-token': z.string().optional() }),
    body: c.noBody(),
    responses: {
      202: WebhookDeliverySchema.describe('The delivery, queued again.'),
      ...sessionProblems,
      403: problem('The `X-CSRF-Token` header does not match the CSRF cookie.'),
      409: problem('The delivery cannot be replayed in its state (rejected, or still queued or processing).'),
    },
    metadata: SESSION_METADATA,
    strictStatusCodes: true,
  },
});

import {
  ADMIN_SCOPES,
  API_TITLE,
  API_VERSION,
  contract,
  type RouteMetadata,
  SCOPE_DESCRIPTIONS,
} from '@pacer/contract';
import { generateOpenApi } from '@ts-rest/open-api';
import type { OpenAPIObject, OperationObject, ResponseObject, ResponsesObject, SchemaObject } from 'openapi3-ts';
import { z } from 'zod';
import { PROBLEM_CONTENT_TYPE } from './problem.ts';

/** The OpenAPI version of the document: 3.1, whose schemas are JSON Schema 2020-12. */
export const OPENAPI_VERSION = '3.1.0';

/**
 * zod 4 -> OpenAPI 3.1 schema (JSON Schema 2020-12) via zod's own converter, so every constraint
 * (ranges, enums, formats, required) reaches the document. Request schemas are
 * described as clients write them (`io: 'input'`: defaults are optional),
 * responses as the server sends them.
 */
function transformSchema(args: { schema: unknown; type: string }): SchemaObject | null {
  if (!(args.schema instanceof z.ZodType)) return null;
  const io = args.type === 'response' ? 'output' : 'input';
  const json: Record<string, unknown> = z.toJSONSchema(args.schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  });
  delete json['$schema'];
  // A response's description belongs to the response, not to the shared schema
  // component (the same `WellnessRecord` answers both 200 and 201).
  if (args.type === 'response') delete json['description'];
  return json;
}

function mapOperation(operation: OperationObject, route: { metadata?: unknown }): OperationObject {
  const metadata = route.metadata as RouteMetadata | undefined;
  const auth = metadata?.auth;
  const responses: ResponsesObject = {};
  for (const [status, response] of Object.entries<ResponseObject>(operation.responses)) {
    const json = response.content?.['application/json'];
    responses[status] =
      Number(status) >= 400 && json ? { ...response, content: { [PROBLEM_CONTENT_TYPE]: json } } : response;
  }
  return {
    ...operation,
    responses,
    ...(auth ? { security: [{ oauth2: [...auth.scopes] }] } : {}),
    ...(metadata?.session ? { security: [{ portalSession: [] }] } : {}),
    ...(metadata?.webhook ? { security: [{ webhookSecret: [] }, { webhookSecretQuery: [] }, {}] } : {}),
    ...(metadata?.admin ? { security: [{ oauth2: [...ADMIN_SCOPES] }, { portalSession: [] }] } : {}),
  };
}

type JsonNode = Record<string, unknown>;
const isNode = (value: unknown): value is JsonNode => typeof value === 'object' && value !== null;

/**
 * zod writes a nullable value of any type (`z.unknown().nullable()`) as
 * `anyOf: [{}, {type: 'null'}]`: `{}` already admits null, so the `anyOf`
 * goes (Redocly's `no-illogical-composition-keywords`).
 */
function collapseNullableAny(document: OpenAPIObject): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (!isNode(node)) return;
    const anyOf = node['anyOf'];
    if (Array.isArray(anyOf) && anyOf.some((part) => isNode(part) && Object.keys(part).length === 0)) {
      delete node['anyOf'];
    }
    Object.values(node).forEach(visit);
  };
  visit(document);
}

/** A response header the service sends, described once. */
interface HeaderSpec {
  readonly name: string;
  readonly description: string;
  readonly schema: SchemaObject;
  /** Sent on every answer it is declared for, whatever the configuration. */
  readonly required?: boolean;
  /** Which answers carry it: by status, and by the operation (does it take an `Idempotency-Key`). */
  readonly on: (status: string, operation: OperationObject) => boolean;
}

const takesIdempotencyKey = (operation: OperationObject): boolean =>
  (operation.parameters ?? []).some(
    (parameter) => 'name' in parameter && parameter.name.toLowerCase() === 'idempotency-key',
  );
const seconds: SchemaObject = { type: 'integer', minimum: 0 };

/**
 * The response headers of every operation, from one table (the middleware
 * that sets each is named). No route sends `Location`, so none is declared.
 */
const RESPONSE_HEADERS: readonly HeaderSpec[] = [
  // request-context.ts: every answer.
  {
    name: 'X-Request-Id',
    description:
      "This request's id (the caller's `X-Request-Id` when it was a sane token): quote it in support requests.",
    schema: { type: 'string', minLength: 1 },
    required: true,
    on: () => true,
  },
  // rate-limit.middleware.ts: on every answer while REST rate limits are on (the default).
  {
    name: 'RateLimit-Limit',
    description: 'Requests allowed in the tightest rate-limit window (one minute), while rate limits are on.',
    schema: { type: 'integer', minimum: 0 },
    on: () => true,
  },
  {
    name: 'RateLimit-Remaining',
    description: 'Requests left in that window.',
    schema: { type: 'integer', minimum: 0 },
    on: () => true,
  },
  {
    name: 'RateLimit-Reset',
    description: 'Seconds until that window ends.',
    schema: seconds,
    on: () => true,
  },
  // A spent window (429), the FIT decode queue (429, 503), a request with the same Idempotency-Key in progress (409).
  {
    name: 'Retry-After',
    description: 'Seconds to wait before trying again.',
    schema: seconds,
    on: (status, operation) =>
      status === '429' || status === '503' || (status === '409' && takesIdempotencyKey(operation)),
  },
  // idempotency.middleware.ts: a replayed answer; every kept one can be (below 500, not 408 or 429: keepsResponse).
  {
    name: 'Idempotent-Replayed',
    description:
      '`true` when this answer is the replay of an earlier request with the same `Idempotency-Key` (a refusal such as a 400 is replayed too).',
    schema: { type: 'string', enum: ['true'] },
    on: (status, operation) =>
      takesIdempotencyKey(operation) && Number(status) < 500 && status !== '408' && status !== '429',
  },
];

/** Request bodies are required; response headers declared from `RESPONSE_HEADERS`. */
function describeBodiesAndHeaders(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, OperationObject>)) {
      if (!isNode(operation) || !isNode(operation.responses)) continue;
      if (operation.requestBody && 'content' in operation.requestBody) operation.requestBody.required = true;
      for (const [status, response] of Object.entries<ResponseObject>(operation.responses)) {
        const headers = RESPONSE_HEADERS.filter((header) => header.on(status, operation));
        if (headers.length === 0) continue;
        response.headers = {
          ...response.headers,
          ...Object.fromEntries(
            headers.map((header) => [
              header.name,
              {
                description: header.description,
                ...(header.required ? { required: true } : {}),
                schema: header.schema,
              },
            ]),
          ),
        };
      }
    }
  }
}

/** The OpenAPI document of the REST API, generated from the contract alone (stable output). */
export function buildOpenApiDocument(): OpenAPIObject {
  const document = generateOpenApi(
    contract,
    {
      info: {
        title: API_TITLE,
        version: API_VERSION,
        description:
          "Training data of endurance athletes: activities, wellness, nutrition and profile. Every call carries an OAuth 2.0 access token (`Authorization: Bearer <token>`), except the incoming webhook (an app's webhook secret or HMAC signature) and the developer portal's delivery log (the portal session). Errors are RFC 9457 problem documents with a stable `code`.",
      },
      components: {
        securitySchemes: {
          portalSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'pacer_session',
            description:
              'The developer portal session (sign in at `/login`). Writes also need `X-CSRF-Token` = the `pacer_csrf` cookie.',
          },
          webhookSecret: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Webhook-Secret',
            description: "The app's webhook secret (or sign the body instead: see the operation).",
          },
          webhookSecretQuery: { type: 'apiKey', in: 'query', name: 'secret', description: "The app's webhook secret." },
          oauth2: {
            type: 'oauth2',
            description: 'OAuth 2.0 authorization code flow with PKCE (S256).',
            flows: {
              authorizationCode: {
                authorizationUrl: '/api/oauth/authorize',
                tokenUrl: '/api/oauth/token',
                refreshUrl: '/api/oauth/token',
                scopes: SCOPE_DESCRIPTIONS,
              },
            },
          },
        },
      },
    },
    { setOperationId: true, schemaTransformer: transformSchema, operationMapper: mapOperation },
  );
  collapseNullableAny(document);
  describeBodiesAndHeaders(document);
  // zod's JSON Schema 2020-12 output is OpenAPI 3.1's schema dialect (3.0 has
  // no `null` type, and its `nullable` does not reach into a `$ref`).
  document.openapi = OPENAPI_VERSION;
  // Base-URL independent: relative to wherever the document was fetched from.
  // The served copy names this deployment's base URL instead.
  return { ...document, servers: [{ url: '/', description: 'The Pacer deployment serving this document' }] };
}

/** The document as served: with this deployment's absolute URLs. */
export function servedOpenApiDocument(baseUrl: string): OpenAPIObject {
  const document = buildOpenApiDocument();
  const oauth = document.components?.securitySchemes?.['oauth2'] as
    { flows: { authorizationCode: Record<string, unknown> } } | undefined;
  if (oauth) {
    const flow = oauth.flows.authorizationCode;
    for (const key of ['authorizationUrl', 'tokenUrl', 'refreshUrl']) flow[key] = `${baseUrl}${String(flow[key])}`;
  }
  return { ...document, servers: [{ url: baseUrl }] };
}

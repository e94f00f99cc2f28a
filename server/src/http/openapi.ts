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

/**
 * zod 4 -> OpenAPI 3.0 schema via zod's own converter, so every constraint
 * (ranges, enums, formats, required) reaches the document. Request schemas are
 * described as clients write them (`io: 'input'`: defaults are optional),
 * responses as the server sends them.
 */
function transformSchema(args: { schema: unknown; type: string }): SchemaObject | null {
  if (!(args.schema instanceof z.ZodType)) return null;
  const io = args.type === 'response' ? 'output' : 'input';
  const json: Record<string, unknown> = z.toJSONSchema(args.schema, {
    target: 'openapi-3.0',
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
 * OpenAPI 3.0 has no `null` type: zod writes a nullable reference as
 * `{ nullable: true, allOf: [{ $ref }] }`. Without a `type` beside it,
 * `nullable` means nothing to 3.0 validators (3.0.3: it applies "only if
 * type is explicitly defined"; Redocly's `nullable-type-sibling` flags it),
 * so the referenced schema's type is copied next to it. A nullable schema of
 * any type (`z.unknown().nullable()`) already admits null: its `nullable` goes.
 */
function typeNullableReferences(document: OpenAPIObject): void {
  const components = (document.components?.schemas ?? {}) as Record<string, JsonNode>;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (!isNode(node)) return;
    const allOf = node['allOf'];
    if (node['nullable'] === true && node['type'] === undefined && Array.isArray(allOf) && allOf.length === 1) {
      const ref = (allOf[0] as JsonNode)['$ref'];
      const target = typeof ref === 'string' ? components[ref.replace('#/components/schemas/', '')] : undefined;
      if (target?.['type'] !== undefined) node['type'] = target['type'];
    }
    const composed = ['allOf', 'anyOf', 'oneOf', '$ref'].some((key) => key in node);
    if (node['nullable'] === true && node['type'] === undefined && !composed) delete node['nullable'];
    Object.values(node).forEach(visit);
  };
  visit(document);
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
  typeNullableReferences(document);
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

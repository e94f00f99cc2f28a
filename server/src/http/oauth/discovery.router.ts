import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import type { OAuthMetadata, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { MCP_SCOPES, type Scope, SCOPES } from '@pacer/contract';
import express, { type RequestHandler, type Router } from 'express';
import type { Config } from '../../config.ts';

/** RFC 8414 §3: the well-known URI suffix of authorization server metadata. */
export const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';
/** RFC 9728 §3: protected-resource metadata of the REST resource `{base}`. */
export const REST_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
/** RFC 9728 §3.1: the resource's path (`/mcp`) appended to the well-known URI. */
export const MCP_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

/** Where `/api/oauth/register` lives (advertised only while DCR is enabled). */
export const REGISTRATION_PATH = '/api/oauth/register';

/** Discovery documents change only with configuration; clients may keep them a few minutes. */
const DISCOVERY_MAX_AGE_SECS = 300;

/**
 * RFC 8414 §2 authorization server metadata. The issuer is the base URL with
 * no trailing slash (docs/design.md §3); RFC 8414 §3.3 requires clients to compare
 * it with the URL they derived the metadata URL from, so it must be exact.
 */
export function authorizationServerMetadata(config: Config): OAuthMetadata {
  const base = config.baseUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/api/oauth/authorize`,
    token_endpoint: `${base}/api/oauth/token`,
    revocation_endpoint: `${base}/api/oauth/revoke`,
    introspection_endpoint: `${base}/api/oauth/introspect`,
    userinfo_endpoint: `${base}/api/oauth/userinfo`,
    ...(config.mcp.dcrEnabled ? { registration_endpoint: `${base}${REGISTRATION_PATH}` } : {}),
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    // RFC 8414 §2: the default is ["query", "fragment"]; codes only ever travel in the query.
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    // docs/design.md §3: PKCE S256 for every client, `plain` refused.
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    // RFC 7009 §2.1: a public client revokes its own tokens by sending its client_id.
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    // RFC 7662 §2.1: introspection needs an authenticated (confidential) caller.
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    // RFC 9207 §3: every authorization response carries `iss`.
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${base}/docs`,
  };
}

/** RFC 9728 §2 metadata of the REST API, whose resource identifier is the base URL itself. */
export function restResourceMetadata(config: Config): OAuthProtectedResourceMetadata {
  return {
    resource: config.baseUrl,
    authorization_servers: [config.baseUrl],
    scopes_supported: [...SCOPES],
    // RFC 6750 §2.1 only: tokens in a query string or form body are not accepted.
    bearer_methods_supported: ['header'],
    resource_name: 'Pacer REST API',
    resource_documentation: `${config.baseUrl}/docs`,
  };
}

/**
 * The scopes a client should ask for on its first authorization to `/mcp`:
 * every MCP scope, so the first connection can reach every tool the user
 * allows (the consent page lets the user untick any of them). MCP 2025-11-25
 * "Scope Selection Strategy": a client requests the 401 challenge's `scope`,
 * else every scope of the resource metadata's `scopes_supported`; both carry
 * this list.
 *
 * Without `offline_access` (docs/design.md §3 "Scopes"): every grant gets a
 * refresh token anyway, and a client that asks for it is pushed to
 * `prompt=consent` (the MCP SDK adds it, after OpenID Connect Core §11), so
 * the page would show even where the consent may be remembered. It stays a
 * valid scope on the MCP allowlist and in the authorization server metadata.
 */
export const MCP_REQUESTED_SCOPES: readonly Scope[] = MCP_SCOPES.filter((scope) => scope !== 'offline_access');

/** RFC 9728 §2 metadata of the MCP endpoint: tokens must be bound to exactly `{base}/mcp` (specification §5.4). */
export function mcpResourceMetadata(config: Config): OAuthProtectedResourceMetadata {
  return {
    resource: config.mcpResource,
    authorization_servers: [config.baseUrl],
    scopes_supported: [...MCP_REQUESTED_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Pacer MCP',
  };
}

/**
 * The `resource_metadata` URL for challenges on `/mcp` (RFC 9728 §5.1): the
 * well-known path inserted between the resource's origin and its path
 * (§3.1), as the SDK's `getOAuthProtectedResourceMetadataUrl` builds it.
 * Written here because that function's module (the SDK's auth router)
 * imports every SDK auth handler and their schemas, about 1 MB of heap for
 * the life of every API process (docs/design.md §2 "Memory").
 */
export function mcpResourceMetadataUrl(config: Config): string {
  const resource = new URL(config.mcpResource);
  const path = resource.pathname === '/' ? '' : resource.pathname;
  return new URL(`/.well-known/oauth-protected-resource${path}`, resource).href;
}

const cacheBriefly: RequestHandler = (req, res, next) => {
  if (req.method === 'GET' && req.path === '/')
    res.setHeader('Cache-Control', `public, max-age=${DISCOVERY_MAX_AGE_SECS}`);
  next();
};

/**
 * The discovery documents: RFC 8414 authorization server metadata and one
 * RFC 9728 document per protected resource (REST and, while MCP is enabled,
 * `/mcp`).
 *
 * Why not the SDK's `mcpAuthMetadataRouter` (checked in 1.32.2): it builds the
 * protected-resource document itself from `resourceServerUrl.href`, so the
 * REST resource `{base}` would be advertised as `{base}/`, which is not the
 * identifier tokens are bound to (RFC 9728 §3.3 requires them to be
 * identical); it serves one resource per router and has no way to add
 * `bearer_methods_supported`; and it throws at start-up for an `http` issuer
 * other than localhost. So the documents are written here, and served with
 * the SDK's `metadataHandler` (CORS for any origin so browser-based clients
 * can read them, GET/OPTIONS only, 405 otherwise), as that router would.
 */
export function discoveryRouter(deps: { readonly config: Config }): Router {
  const router = express.Router();
  router.use(
    AUTHORIZATION_SERVER_METADATA_PATH,
    cacheBriefly,
    metadataHandler(authorizationServerMetadata(deps.config)),
  );
  // The more specific path first: the REST document's mount also matches `…/mcp` as a prefix.
  if (deps.config.mcp.enabled) {
    router.use(MCP_RESOURCE_METADATA_PATH, cacheBriefly, metadataHandler(mcpResourceMetadata(deps.config)));
  }
  router.use(REST_RESOURCE_METADATA_PATH, cacheBriefly, metadataHandler(restResourceMetadata(deps.config)));
  return router;
}

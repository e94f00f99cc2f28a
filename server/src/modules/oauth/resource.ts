/**
 * The resource a `resource` parameter (RFC 8707 §2) names, as this server
 * compares, stores and binds it: one trailing slash dropped, so
 * `{base}/mcp/` is `{base}/mcp` and `{base}/` is `{base}`. Some MCP hosts
 * append the slash; the identifiers we publish (RFC 9728 metadata) have none,
 * and a token must be bound to exactly `{base}/mcp` to be accepted there.
 * Only one slash: `{base}/mcp//` still names nothing we serve.
 */
export function normalizeResource(resource: string): string {
  return resource.endsWith('/') ? resource.slice(0, -1) : resource;
}

/** Hosts RFC 8252 §7.3 treats as loopback for native apps. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname.toLowerCase());
}

/**
 * Why a redirect URI cannot be registered, or `undefined` when it can:
 * absolute, no fragment (RFC 6749 §3.1.2), and HTTPS unless it points at a
 * loopback address (RFC 8252 §7.3, specification §5.4 rule 3).
 */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (uri.includes('#')) return 'must not contain a fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return undefined;
  return 'must use https (http only for loopback addresses)';
}

/**
 * The registered redirect URI a request names, or `undefined`. Matching is by
 * exact string (RFC 6749 §3.1.2.3, specification §5.4 rule 3), except that
 * the port of an `http` loopback URI is ignored (RFC 8252 §7.3: native apps
 * listen on an ephemeral port).
 */
export function matchRedirectUri(registered: readonly string[], requested: string): string | undefined {
  if (registered.includes(requested)) return requested;
  if (redirectUriProblem(requested) !== undefined) return undefined;
  const url = new URL(requested);
  if (url.protocol !== 'http:' || !isLoopbackHost(url.hostname)) return undefined;
  const withoutPort = (value: URL) => `${value.protocol}//${value.hostname}${value.pathname}${value.search}`;
  const key = withoutPort(url);
  return registered.some((uri) => {
    try {
      const candidate = new URL(uri);
      return candidate.protocol === 'http:' && isLoopbackHost(candidate.hostname) && withoutPort(candidate) === key;
    } catch {
      return false;
    }
  })
    ? requested
    : undefined;
}

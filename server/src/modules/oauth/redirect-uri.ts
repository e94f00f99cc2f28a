/** Hosts RFC 8252 §7.3 treats as loopback for native apps. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname.toLowerCase());
}

/**
 * Private-use schemes of MCP hosts that users connect Pacer to (Cursor,
 * VS Code, Windsurf, Zed, Claude Desktop) and that are not in reverse-domain
 * form. Accepted although they contain no `.`; see `isAllowedPrivateUseScheme`.
 */
export const KNOWN_MCP_HOST_SCHEMES: readonly string[] = [
  'cursor',
  'vscode',
  'vscode-insiders',
  'windsurf',
  'zed',
  'claude',
];

/**
 * Schemes that are never a redirect target: they run script or read local
 * data in the browser (`javascript`, `vbscript`, `data`, `blob`, `file`,
 * `about`), hand the code to another protocol (`ftp`, `ws`, `wss`), or to
 * another program entirely (`mailto`, `tel`).
 */
export const REFUSED_REDIRECT_SCHEMES: readonly string[] = [
  'javascript',
  'vbscript',
  'data',
  'blob',
  'file',
  'about',
  'ftp',
  'ws',
  'wss',
  'mailto',
  'tel',
];

/** A reverse-domain-name scheme (RFC 8252 §7.1, RFC 7595 §3.8): two or more non-empty labels. */
const REVERSE_DOMAIN_SCHEME = /^[a-z][a-z0-9+-]*(?:\.[a-z0-9+-]+)+$/;

/**
 * Whether a private-use URI scheme (lowercase, without the `:`) may carry an
 * authorization code.
 *
 * RFC 8252 §7.1: "apps MUST use a URI scheme based on a domain name under
 * their control, expressed in reverse order, as recommended by Section 3.8
 * of [RFC7595] for private-use URI schemes" (e.g. `com.example.app:/callback`).
 * RFC 8252 §8.4: "At a minimum, any private-use URI scheme that doesn't
 * contain a period character ('.') SHOULD be rejected." We follow that, with
 * one deliberate exception: the short `KNOWN_MCP_HOST_SCHEMES` list, because
 * Cursor, VS Code and the other MCP hosts register `cursor://…`,
 * `vscode://…` and cannot be connected otherwise.
 *
 * RFC 8252 §8.1: "multiple apps can typically register the same scheme,
 * which makes it indeterminate as to which app will receive the
 * authorization code". That is why a code is worth nothing without the PKCE
 * verifier (S256 is required of every client here), and why the consent page
 * names the scheme the user returns to.
 */
export function isAllowedPrivateUseScheme(scheme: string): boolean {
  if (REFUSED_REDIRECT_SCHEMES.includes(scheme) || scheme === 'http' || scheme === 'https') return false;
  return KNOWN_MCP_HOST_SCHEMES.includes(scheme) || REVERSE_DOMAIN_SCHEME.test(scheme);
}

/**
 * Why a redirect URI cannot be registered, or `undefined` when it can. It
 * must parse as an absolute URI without a fragment (RFC 6749 §3.1.2), and be
 * one of the three redirect kinds of RFC 8252 §7:
 * - `https` (§7.2, and every web client);
 * - `http` only on a loopback address (§7.3, specification §5.4 rule 3);
 * - a private-use scheme that `isAllowedPrivateUseScheme` accepts (§7.1).
 * Everything else (`javascript:`, `data:`, `file:`, `http` to another host,
 * an unlisted scheme without a `.` such as `myapp:`) is refused.
 */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (uri.includes('#')) return 'must not contain a fragment';
  // The URL parser lowercases the scheme.
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https') return undefined;
  if (scheme === 'http') {
    return isLoopbackHost(url.hostname) ? undefined : 'must use https (http only for loopback addresses)';
  }
  if (REFUSED_REDIRECT_SCHEMES.includes(scheme)) return `must not use the ${scheme}: scheme`;
  if (isAllowedPrivateUseScheme(scheme)) return undefined;
  return (
    'must use https, http on a loopback address, or an app scheme in reverse-domain form ' +
    `such as com.example.app:/callback (RFC 8252 §7.1); "${scheme}:" is none of these`
  );
}

/**
 * Whether any program on the user's device could receive a code sent to this
 * (registered, checked) redirect URI: an `http` loopback URI (RFC 8252 §7.3:
 * any local program may listen on the port) or a private-use scheme
 * (RFC 8252 §8.1: several apps may register one scheme). Only an `https`
 * redirect names a receiver that has to prove it owns the host (TLS), which
 * RFC 8252 §8.6 accepts as identity proof ("claimed https scheme redirects").
 */
export function anyAppCanClaim(uri: string): boolean {
  return new URL(uri).protocol !== 'https:';
}

/**
 * What the consent page tells the user they return to: the host of a web
 * redirect, the scheme (and authority, when it has one) of an app's
 * private-use redirect, since any app may claim such a scheme (RFC 8252 §8.1).
 */
export function redirectTargetLabel(uri: string): string {
  const url = new URL(uri);
  if (url.protocol === 'https:' || url.protocol === 'http:') return url.host;
  return url.host === '' ? url.protocol : `${url.protocol}//${url.host}`;
}

/**
 * The registered redirect URI a request names, or `undefined`. Matching is by
 * exact string (RFC 6749 §3.1.2.3, specification §5.4 rule 3), for private-use
 * schemes too, except that the port of an `http` loopback URI is ignored
 * (RFC 8252 §7.3: native apps listen on an ephemeral port).
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

/** This release of the SDK; a unit test keeps it equal to package.json's `version`. */
export const SDK_VERSION = '0.2.0';

/**
 * Sent as `X-Pacer-Client` on every request (browsers included: the API's CORS
 * policy allows the header) and, under Node.js, Deno or Bun, as `User-Agent`
 * with the runtime's version (a browser keeps its own User-Agent).
 */
export function clientHeaders(): Record<string, string> {
  const product = `pacer-client-sdk/${SDK_VERSION}`;
  const nodeVersion = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
  const isBrowser = typeof (globalThis as { document?: unknown }).document !== 'undefined';
  if (nodeVersion === undefined || isBrowser) return { 'x-pacer-client': product };
  const major = nodeVersion.split('.')[0];
  return { 'x-pacer-client': product, 'user-agent': `${product} node/${major}` };
}

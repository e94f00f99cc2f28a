import http, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback reverse proxy that adds `Authorization: Bearer <token>` to every
 * request that carries none, for MCP clients that cannot send a token (the
 * conformance suite). Everything else passes through unchanged, Host and
 * Origin included, so the server's DNS-rebinding guard sees what the client
 * sent. Start it first, then start the server with
 * `PACER_BASE_URL=<proxy.url>`, as a deployment behind a proxy is configured,
 * and `forward()` to it.
 */
export interface McpTokenProxy {
  /** `http://127.0.0.1:<port>`: the base URL clients (and the server's config) use. */
  readonly url: string;
  /** Where requests go from now on, and the token added to those without one. */
  forward(options: McpTokenProxyTarget): void;
  close(): Promise<void>;
}

export interface McpTokenProxyTarget {
  /** Origin of the real server, e.g. `http://127.0.0.1:40123`. */
  readonly target: string;
  readonly token: string;
}

/** RFC 9110 §7.6.1: connection-specific fields are not forwarded by a proxy. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

export async function startMcpTokenProxy(): Promise<McpTokenProxy> {
  let route: McpTokenProxyTarget | undefined;

  const server = http.createServer((req, res) => {
    if (!route) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('proxy has no target yet');
      return;
    }
    const target = new URL(route.target);
    const headers = endToEnd(req.headers);
    headers['authorization'] ??= `Bearer ${route.token}`;
    const upstream = http.request({
      hostname: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers,
      agent: false,
    });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
      // SSE: headers now, then every event as it arrives, never buffered.
      res.flushHeaders();
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (error) => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { 'content-type': 'text/plain' }).end(`upstream failed: ${error.message}`);
    });
    // A client that hangs up (closing an SSE stream) hangs up upstream too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    forward(options) {
      route = options;
    },
    close() {
      return new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

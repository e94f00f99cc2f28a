/**
 * An HTTP client whose connections leave from one loopback address of its
 * own (127.0.0.2, 127.0.0.3, …: on Linux all of 127.0.0.0/8 is the loopback
 * interface), so a proxy in front of Pacer sees several distinct clients on
 * one machine: its `$remote_addr`, and the `X-Forwarded-For` entry it
 * appends, is that address. Connections are kept alive, as a real client's are.
 */
import http from 'node:http';

export interface LoopbackRequest {
  readonly method: string;
  /** Path and query, e.g. `/api/wellness?from=…`. */
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: Uint8Array | string;
  /** Give up (and count it as a network error) after this long; default 30 s. */
  readonly timeoutMs?: number;
}

export interface LoopbackAnswer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
}

export class LoopbackClient {
  readonly localAddress: string;
  readonly #base: URL;
  readonly #agent: http.Agent;

  constructor(baseUrl: string, localAddress: string, maxSockets = 8) {
    this.localAddress = localAddress;
    this.#base = new URL(baseUrl);
    this.#agent = new http.Agent({ keepAlive: true, maxSockets, localAddress });
  }

  /** One HTTP exchange; rejects on a connection error, a reset or the timeout (never on a status). */
  request(options: LoopbackRequest): Promise<LoopbackAnswer> {
    const body = typeof options.body === 'string' ? Buffer.from(options.body) : options.body;
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          host: this.#base.hostname,
          port: this.#base.port,
          localAddress: this.localAddress,
          agent: this.#agent,
          method: options.method,
          path: options.path,
          headers: {
            ...options.headers,
            ...(body === undefined ? {} : { 'content-length': String(body.byteLength) }),
          },
          timeout: options.timeoutMs ?? 30_000,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          response.on('error', reject);
          response.on('aborted', () => reject(new Error('response aborted')));
        },
      );
      request.on('timeout', () => request.destroy(new Error('request timed out')));
      request.on('error', reject);
      request.end(body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

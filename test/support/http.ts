import type { Problem } from '@pacer/contract';

export interface JsonResponse<T = unknown> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

export interface RequestOptions {
  readonly token?: string;
  readonly body?: unknown;
  /** Sent verbatim instead of JSON-encoding `body`. */
  readonly rawBody?: string;
  readonly contentType?: string | null;
  readonly headers?: Record<string, string>;
}

/** Plain fetch against the server, decoding any JSON answer. */
export async function call<T = unknown>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && options.contentType !== null)
    headers['content-type'] = options.contentType ?? 'application/json';
  const response = await fetch(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    headers: response.headers,
    body: (type.includes('json') && text ? JSON.parse(text) : text) as T,
  };
}

export interface PreflightRequest {
  readonly origin: string;
  /** Access-Control-Request-Method; left out when undefined. */
  readonly method?: string;
  /** Access-Control-Request-Headers; left out when undefined. */
  readonly headers?: string;
}

/** A CORS preflight (Fetch standard, CORS protocol): OPTIONS from `origin`, asking for `method` and `headers`. */
export function corsPreflight(url: string, request: PreflightRequest): Promise<Response> {
  const headers: Record<string, string> = { origin: request.origin };
  if (request.method !== undefined) headers['access-control-request-method'] = request.method;
  if (request.headers !== undefined) headers['access-control-request-headers'] = request.headers;
  return fetch(url, { method: 'OPTIONS', headers });
}

export function asProblem(body: unknown): Problem {
  return body as Problem;
}

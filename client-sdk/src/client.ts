import { contract, type PacerContract } from '@pacer/contract';
import {
  ContractNoBody,
  initClient,
  isAppRouteOtherResponse,
  validateResponse,
  type ApiFetcher,
  type ApiFetcherArgs,
  type AppRoute,
  type InitClientReturn,
} from '@ts-rest/core';
import { PacerError, type PacerProblem } from './errors.ts';
import { clientHeaders as sdkHeaders } from './version.ts';

/** Retries of a call (see `PacerClientOptions.retry`). */
export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  readonly retries?: number;
  /** The first backoff's ceiling in ms; it doubles per retry (default 250). */
  readonly baseMs?: number;
  /**
   * The longest wait before a retry, in ms (default 20,000). A `Retry-After`
   * asking for more is not waited for: the answer is returned (or thrown) as is.
   */
  readonly maxMs?: number;
}

export interface PacerClientOptions {
  /** Where Pacer runs, e.g. `https://pacer.example.com` (no trailing slash needed). */
  readonly baseUrl: string;
  /**
   * An OAuth 2.0 access token, or a function that returns the current one.
   * Omit it only for the routes that take none: the incoming webhook (its
   * own secret or signature) and the developer portal's session API.
   */
  readonly accessToken?: string | (() => string | Promise<string>);
  /**
   * Extra headers sent with every request. Not for `X-Request-Id`: the SDK
   * sends a fresh one per request; pass your own per call in `extraHeaders`.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /** Check response bodies against the contract's schemas (off by default). */
  readonly validateResponse?: boolean;
  /**
   * Retry on 429, 502, 503, 504, a 409 `idempotency_in_progress` and network
   * errors with exponential backoff and full jitter, honouring `Retry-After`. GETs are always retried; writes
   * only when they carry an `Idempotency-Key` (which the SDK adds to every
   * write that takes one). `false` turns retries off.
   */
  readonly retry?: RetryOptions | false;
  /**
   * Give up on a call after this many ms, retries and their waits included
   * (default 30,000): it then throws `PacerError` with code `timeout`. `false`: no limit.
   */
  readonly timeoutMs?: number | false;
  /** Add a fresh `Idempotency-Key` (a random UUID) to every write that takes one (default true). */
  readonly idempotencyKeys?: boolean;
}

export const DEFAULT_RETRY: Required<RetryOptions> = { retries: 3, baseMs: 250, maxMs: 20_000 };
export const DEFAULT_TIMEOUT_MS = 30_000;

const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);
const IDEMPOTENCY_KEY = 'idempotency-key';
const REQUEST_ID = 'x-request-id';

/** Whether the route's request headers (the contract's IdempotencyHeadersSchema) take an Idempotency-Key. */
function takesIdempotencyKey(route: AppRoute): boolean {
  const headers = route.headers as { shape?: Record<string, unknown> } | undefined;
  return headers?.shape !== undefined && IDEMPOTENCY_KEY in headers.shape;
}

/**
 * `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. Returns
 * ms from now, or undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP-date names its day and month (IMF-fixdate, RFC 850, asctime); Date.parse alone takes `-3` as a year.
  if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Full jitter (a random wait between 0 and the exponential ceiling). */
function backoffMs(retry: Required<RetryOptions>, attempt: number): number {
  return Math.random() * Math.min(retry.maxMs, retry.baseMs * 2 ** attempt);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface RawAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
  /** The body as text when it was meant to be JSON or text. */
  readonly text: string | undefined;
  /** The body was JSON and parsed. */
  readonly json: boolean;
}

async function readAnswer(route: AppRoute, response: Response): Promise<RawAnswer> {
  const contentType = response.headers.get('content-type') ?? '';
  const base = { status: response.status, headers: response.headers };
  if (route.responses[response.status] === ContractNoBody) {
    await response.body?.cancel();
    return { ...base, body: undefined, text: undefined, json: false };
  }
  if (contentType.includes('application/') && contentType.includes('json')) {
    const text = await response.text();
    try {
      return { ...base, body: JSON.parse(text) as unknown, text, json: true };
    } catch {
      return { ...base, body: text, text, json: false };
    }
  }
  if (contentType.includes('text/') || (contentType === '' && response.status >= 400)) {
    const text = await response.text();
    return { ...base, body: text, text, json: false };
  }
  return { ...base, body: await response.blob(), text: undefined, json: false };
}

/**
 * The SDK's fetcher: one call of a route, with its retries, timeout, signal,
 * request ids and idempotency key. Resolves to a declared status with a
 * readable body; throws PacerError for anything else.
 */
function resilientFetcher(options: PacerClientOptions) {
  const token = options.accessToken;
  const retry = options.retry === false ? undefined : { ...DEFAULT_RETRY, ...options.retry };
  const timeoutMs = options.timeoutMs === false ? undefined : (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const autoKeys = options.idempotencyKeys ?? true;
  const clientHeaders = {
    ...sdkHeaders(),
    ...Object.fromEntries(Object.entries(options.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value])),
  };

  return async (args: ApiFetcherArgs) => {
    const route = args.route;
    // Read first and synchronously: createOAuthPacerClient relies on the token a call starts with.
    const firstToken = typeof token === 'function' ? token() : token;
    const headers: Record<string, string> = { ...clientHeaders, ...args.headers };
    if (autoKeys && headers[IDEMPOTENCY_KEY] === undefined && takesIdempotencyKey(route)) {
      headers[IDEMPOTENCY_KEY] = crypto.randomUUID();
    }
    const ownRequestId = headers[REQUEST_ID];
    const canRetry = retry !== undefined && (SAFE_METHODS.has(args.method) || headers[IDEMPOTENCY_KEY] !== undefined);
    const callerSignal = args.fetchOptions?.signal ?? undefined;
    const timeoutSignal = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const signals = [callerSignal, timeoutSignal].filter((signal): signal is AbortSignal => signal != null);
    const signal = signals.length > 0 ? AbortSignal.any(signals) : new AbortController().signal;
    const started = Date.now();

    let attempt = 0;
    let requestId: string | undefined;
    const failed = (cause: unknown): PacerError => {
      if (callerSignal?.aborted) {
        return new PacerError('the call was aborted', {
          status: null,
          code: 'aborted',
          requestId,
          attempts: attempt + 1,
          cause: callerSignal.reason,
        });
      }
      if (timeoutSignal?.aborted) {
        return new PacerError(`no answer within ${timeoutMs} ms`, {
          status: null,
          code: 'timeout',
          requestId,
          attempts: attempt + 1,
          cause,
        });
      }
      return new PacerError(`network error: ${cause instanceof Error ? cause.message : String(cause)}`, {
        status: null,
        code: 'network_error',
        requestId,
        attempts: attempt + 1,
        cause,
      });
    };
    /** Wait before the next attempt, or return false when no retry is left or worth it. */
    const waitForRetry = async (retryAfter: string | null): Promise<boolean> => {
      if (retry === undefined || !canRetry || attempt >= retry.retries) return false;
      const asked = parseRetryAfter(retryAfter);
      if (asked !== undefined && asked > retry.maxMs) return false;
      const wait = asked ?? backoffMs(retry, attempt);
      if (timeoutMs !== undefined && Date.now() - started + wait >= timeoutMs) return false;
      try {
        await sleep(wait, signal);
      } catch (error) {
        throw failed(error);
      }
      attempt += 1;
      return true;
    };

    for (;;) {
      const accessToken = attempt === 0 ? await firstToken : typeof token === 'function' ? await token() : token;
      requestId = ownRequestId ?? crypto.randomUUID();
      let answer: RawAnswer;
      try {
        const response = await fetch(args.path, {
          ...args.fetchOptions,
          signal,
          method: args.method,
          headers: {
            ...headers,
            [REQUEST_ID]: requestId,
            ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }),
          },
          body: args.body ?? null,
        });
        answer = await readAnswer(route, response);
      } catch (error) {
        if (signal.aborted || !(error instanceof TypeError)) throw failed(error);
        if (await waitForRetry(null)) continue;
        throw failed(error);
      }
      const retryable =
        RETRY_STATUSES.has(answer.status) ||
        // The first request with this key still runs (e.g. its answer was lost): ask again after Retry-After.
        (answer.status === 409 && isRecord(answer.body) && answer.body['code'] === 'idempotency_in_progress');
      if (retryable && (await waitForRetry(answer.headers.get('retry-after')))) continue;

      requestId = answer.headers.get(REQUEST_ID) ?? requestId;
      const declared = answer.status in route.responses;
      const schema = route.responses[answer.status];
      // A JSON schema answered with something else (a proxy's HTML page, even with a 200) is not what the type says.
      const wrongKind =
        schema !== undefined && schema !== ContractNoBody && !isAppRouteOtherResponse(schema) && !answer.json;
      const problem = answer.json && isRecord(answer.body) ? (answer.body as PacerProblem) : undefined;
      const raw = answer.text === undefined || problem !== undefined ? undefined : answer.text.slice(0, 2000);
      if (!declared || wrongKind || (answer.status >= 400 && problem === undefined)) {
        throw new PacerError(
          declared
            ? `HTTP ${answer.status} without the JSON body its route declares`
            : `HTTP ${answer.status}, a status this route does not declare${problem?.code ? ` (${problem.code})` : ''}`,
          {
            status: answer.status,
            code: declared ? 'invalid_response' : 'unexpected_status',
            requestId,
            problem,
            body: raw,
            attempts: attempt + 1,
          },
        );
      }
      const result = { status: answer.status, body: answer.body, headers: answer.headers };
      if (args.validateResponse ?? route.validateResponseOnClient) {
        return { ...result, body: validateResponse({ appRoute: route, response: result }).body };
      }
      return result;
    }
  };
}

/**
 * A typed Pacer client. Every route of the contract is a method that takes
 * `{ body, query, params, headers, extraHeaders, fetchOptions }` and resolves
 * to `{ status, body, headers }`, where `status` narrows `body` to the schema
 * the contract declares for it:
 *
 * ```ts
 * const pacer = createPacerClient({ baseUrl, accessToken });
 * const res = await pacer.wellness.upsertWellness({ body: { date: '2026-11-20', hrv: 62 } });
 * if (res.status === 201 || res.status === 200) console.log(res.body.hrv);
 * else console.error(res.body.code, res.body.errors); // an RFC 9457 problem
 * ```
 *
 * Statuses the route does not declare, error answers that are not JSON,
 * network errors, timeouts and aborts throw `PacerError`.
 */
export function createPacerClient(options: PacerClientOptions): PacerClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const args: PacerClientArgs = {
    baseUrl,
    validateResponse: options.validateResponse ?? false,
    throwOnUnknownStatus: false,
    api: resilientFetcher(options),
  };
  return initClient(contract, args);
}

/** The options createPacerClient gives ts-rest's initClient. */
interface PacerClientArgs {
  baseUrl: string;
  validateResponse: boolean;
  throwOnUnknownStatus: false;
  api: ApiFetcher;
}

/**
 * The client's type, named (not inferred) so that the published declarations
 * keep it as ts-rest's own type over the contract instead of an expansion.
 */
export type PacerClient = InitClientReturn<PacerContract, PacerClientArgs>;
export type { PacerContract };

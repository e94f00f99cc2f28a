/**
 * What the SDK could not turn into a typed answer of the contract:
 *
 * - `network_error`: no HTTP answer at all (server down, DNS, connection reset); `status` is `null`;
 * - `timeout`: no complete answer within the client's `timeoutMs` (retries included); `status` is `null`;
 * - `aborted`: the caller's `signal` aborted the call; `status` is `null`;
 * - `unexpected_status`: a status the route does not declare (e.g. a proxy's 502);
 * - `invalid_response`: a declared status whose body is not the JSON its route declares
 *   (e.g. a proxy's HTML 503, or an HTML 200 from a captive portal);
 * - otherwise the problem document's own `code`, when `paginate` meets an error answer.
 *
 * The statuses the contract declares (400, 401, 404, 422, 429, ...) with their
 * problem document are not errors: they resolve as typed responses.
 */
export type PacerErrorCode = 'network_error' | 'timeout' | 'aborted' | 'unexpected_status' | 'invalid_response';

/** RFC 9457 problem document, as far as the SDK could read it. */
export interface PacerProblem {
  readonly type?: string;
  readonly title?: string;
  readonly status?: number;
  readonly detail?: string;
  readonly code?: string;
  readonly requestId?: string;
  readonly errors?: readonly { readonly path: string; readonly message: string }[];
  readonly [key: string]: unknown;
}

export interface PacerErrorInit {
  readonly status: number | null;
  readonly code: PacerErrorCode | (string & {});
  readonly requestId: string | undefined;
  readonly problem?: PacerProblem | undefined;
  /** The raw body when it was not JSON (e.g. a proxy's HTML page), truncated to 2,000 characters. */
  readonly body?: string | undefined;
  /** How many HTTP requests the call sent (1 + retries). */
  readonly attempts: number;
  readonly cause?: unknown;
}

/** The one error class of the SDK's API calls (OAuth token requests keep `OAuthError`). */
export class PacerError extends Error {
  override readonly name = 'PacerError';
  /** The HTTP status, or `null` when there was no answer (network error, timeout, abort). */
  readonly status: number | null;
  readonly code: PacerErrorCode | (string & {});
  /** The `X-Request-Id` of the answer, else the one the SDK sent. */
  readonly requestId: string | undefined;
  readonly problem: PacerProblem | undefined;
  readonly body: string | undefined;
  readonly attempts: number;

  constructor(message: string, init: PacerErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.problem = init.problem;
    this.body = init.body;
    this.attempts = init.attempts;
  }
}

/** Type guard for `catch (error)`. */
export function isPacerError(error: unknown): error is PacerError {
  return error instanceof PacerError;
}

/**
 * One error type for the whole server. Services throw `AppError` with a stable
 * code; each surface serialises it its own way (problem+json on REST, RFC 6749
 * on OAuth endpoints, `isError` tool results on MCP). The code decides the
 * HTTP status through the one table below.
 */
export const ERROR_STATUS = {
  validation_failed: 400,
  invalid_json: 400,
  json_too_deep: 400,
  date_range_too_large: 400,
  invalid_cursor: 400,
  unauthorized: 401,
  invalid_token: 401,
  insufficient_scope: 403,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  idempotency_in_progress: 409,
  payload_too_large: 413,
  upload_decompressed_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  idempotency_key_reused: 422,
  fit_too_many_records: 422,
  fit_decode_timeout: 422,
  fit_not_fit_file: 422,
  fit_corrupt_header: 422,
  fit_not_activity: 422,
  fit_no_activity: 422,
  fit_unreadable: 422,
  activity_file_empty: 422,
  activity_format_unknown: 422,
  activity_xml_malformed: 422,
  activity_too_many_records: 422,
  gpx_no_track: 422,
  gpx_no_times: 422,
  tcx_no_activity: 422,
  upload_gzip_invalid: 422,
  rate_limited: 429,
  fit_decode_in_progress: 429,
  internal_error: 500,
  service_unavailable: 503,
  fit_decode_queue_full: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_TITLES: Record<ErrorCode, string> = {
  validation_failed: 'Validation failed',
  invalid_json: 'Body is not valid JSON',
  json_too_deep: 'JSON nested too deeply',
  date_range_too_large: 'Date range too large',
  invalid_cursor: 'Invalid cursor',
  unauthorized: 'Authentication required',
  invalid_token: 'Invalid access token',
  insufficient_scope: 'Insufficient scope',
  forbidden: 'Forbidden',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  request_timeout: 'Request timeout',
  conflict: 'Conflict',
  idempotency_in_progress: 'Request with this Idempotency-Key in progress',
  payload_too_large: 'Payload too large',
  upload_decompressed_too_large: 'Compressed file too large once decompressed',
  unsupported_media_type: 'Unsupported media type',
  unprocessable: 'Unprocessable content',
  idempotency_key_reused: 'Idempotency-Key reused with another request',
  fit_too_many_records: 'FIT file has too many records',
  fit_decode_timeout: 'FIT file took too long to read',
  fit_not_fit_file: 'Not a FIT file',
  fit_corrupt_header: 'FIT file header is damaged',
  fit_not_activity: 'FIT file is not an activity',
  fit_no_activity: 'FIT file holds no activity',
  fit_unreadable: 'FIT file cannot be read',
  activity_file_empty: 'The file is empty',
  activity_format_unknown: 'Not a FIT, TCX or GPX file',
  activity_xml_malformed: 'Malformed XML',
  activity_too_many_records: 'Activity file has too many track points',
  gpx_no_track: 'GPX file has no track',
  gpx_no_times: 'GPX track has no times',
  tcx_no_activity: 'TCX file has no activity',
  upload_gzip_invalid: 'Corrupt gzip data',
  rate_limited: 'Too many requests',
  fit_decode_in_progress: 'Another FIT file of yours is being processed',
  internal_error: 'Internal server error',
  service_unavailable: 'Service unavailable',
  fit_decode_queue_full: 'Too many FIT files being processed',
};

export interface FieldError {
  /** Dotted path of the field, e.g. `items.0.carbs`; empty for the whole body. */
  readonly path: string;
  readonly message: string;
}

export interface AppErrorOptions {
  readonly errors?: readonly FieldError[];
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: ErrorCode;
  readonly errors: readonly FieldError[] | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  static validation(path: string, message: string): AppError {
    return new AppError('validation_failed', `${path}: ${message}`, { errors: [{ path, message }] });
  }
}

/** Render an issue path (`['items', 0, 'carbs']`) the way every surface shows it. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  return path.map((part) => String(part)).join('.');
}

import { z } from 'zod';

/**
 * Every OAuth scope Pacer knows (docs/design.md §3 "Scopes"). The order here is the
 * order shown to people on the consent page and in discovery documents.
 */
export const SCOPES = [
  'profile:read',
  'profile:write',
  'workout:read',
  'workout:write',
  'health:read',
  'health:write',
  'nutrition:read',
  'nutrition:write',
  'planning:read',
  'planning:write',
  'analysis:read',
  'memory:read',
  'memory:write',
  'recommendations:read',
  'recommendations:write',
  'offline_access',
  'admin:read',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Scopes granted only to an administrator user (the authorize endpoint and
 * `token:create` refuse them for anyone else), never to an MCP token, and
 * not registered for an app unless asked for. `admin:read`: the
 * `/api/admin/*` routes by bearer token (docs/design.md §3 "Scopes").
 */
export const ADMIN_SCOPES: readonly Scope[] = ['admin:read'];

/** The scopes any user may grant: an app registered without a scope list gets these. */
export const USER_SCOPES: readonly Scope[] = SCOPES.filter((scope) => !ADMIN_SCOPES.includes(scope));

/**
 * What each scope lets an app do, in the athlete's words: the consent and
 * settings pages show it, and the OpenAPI document's OAuth flows list it.
 */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  'profile:read': 'Read your profile',
  'profile:write': 'Update your core athlete metrics (weight, FTP)',
  'workout:read': 'Read your workouts',
  'workout:write': 'Upload FIT files and manage your workouts',
  'health:read': 'Read your daily wellness metrics',
  'health:write': 'Log daily metrics (HRV, sleep, weight)',
  'nutrition:read': 'Read your nutrition logs',
  'nutrition:write': 'Log calories, macros and meal items',
  'planning:read': 'Read your planned workouts',
  'planning:write': 'Create and change planned workouts',
  'analysis:read': 'Read analyses such as recovery and fuel',
  'memory:read': 'Read notes an assistant keeps for you',
  'memory:write': 'Save notes for an assistant',
  'recommendations:read': 'Read training recommendations',
  'recommendations:write': 'Create training recommendations',
  offline_access: 'Stay connected when you are not using the app',
  'admin:read': 'Read server statistics (administrators only)',
};

/** Scope families MCP tokens may carry (specification §5.3, docs/design.md §3 "Scopes"). */
const MCP_SCOPE_FAMILIES = [
  'profile',
  'workout',
  'health',
  'nutrition',
  'planning',
  'analysis',
  'memory',
  'recommendations',
];

/** The MCP allowlist: every scope of those families, plus `offline_access`. */
export const MCP_SCOPES: readonly Scope[] = SCOPES.filter(
  (scope) => scope === 'offline_access' || MCP_SCOPE_FAMILIES.includes(scope.split(':')[0] ?? ''),
);
export const ScopeSchema = z.enum(SCOPES);

/** Route metadata read by the server's bearer-auth middleware and the OpenAPI generator. */
export interface RouteAuth {
  /** The token must hold every one of these scopes. */
  readonly scopes: readonly Scope[];
}
export interface RouteMetadata {
  readonly auth?: RouteAuth;
  /** Authenticated by the developer portal session cookie instead of a bearer token. */
  readonly session?: boolean;
  /** The incoming webhook: authenticated by the app's webhook secret or signature. */
  readonly webhook?: boolean;
  /** Administrators only: an admin's portal session, or an admin user's bearer token with `admin:read`. */
  readonly admin?: boolean;
}
export function requireScopes(...scopes: Scope[]): RouteMetadata {
  return { auth: { scopes } };
}

/** RFC 9457 problem details, with Pacer's stable `code` and per-field errors. */
export const ProblemSchema = z
  .object({
    type: z.string().describe('A URI reference that identifies the problem type.'),
    title: z.string(),
    status: z.number().int().min(400).max(599),
    detail: z.string().optional(),
    code: z.string().describe('Stable, machine-readable error code, e.g. `validation_failed`.'),
    requestId: z.string().optional().describe('The request id, also sent as `X-Request-Id`.'),
    errors: z
      .array(
        z.object({
          path: z.string().describe('Dotted path of the offending field, e.g. `items.0.carbs`.'),
          message: z.string(),
        }),
      )
      .optional(),
  })
  .meta({ title: 'Problem' });
export type Problem = z.infer<typeof ProblemSchema>;

/**
 * Statuses every authenticated route can answer with a problem document. The
 * media type on the wire is `application/problem+json`; the OpenAPI generator
 * declares it so for every status of 400 and above.
 */
const problem = (description: string) => ProblemSchema.describe(description);

export const problemResponses = {
  400: problem('The request was malformed or a field was invalid.'),
  401: problem('No valid access token was presented.'),
  403: problem('The access token lacks a required scope.'),
  429: problem(
    'Too many requests from this token or address: the `RateLimit-*` headers show the window, `Retry-After` says when to retry.',
  ),
  500: problem('Unexpected server error; quote the request id when reporting it.'),
} as const;

/** Every write (POST, PUT, PATCH, DELETE): the read set plus body limits and `Idempotency-Key` outcomes. */
export const writeProblemResponses = {
  ...problemResponses,
  409: problem(
    'A request with the same `Idempotency-Key` is still being processed (`idempotency_in_progress`); retry after `Retry-After`.',
  ),
  413: problem('The body is larger than allowed (1 MiB for JSON).'),
  415: problem('The body is not `application/json`.'),
  422: problem(
    'The `Idempotency-Key` was already used with a different request (`idempotency_key_reused`), or the content could not be processed.',
  ),
} as const;

/**
 * `Idempotency-Key` (docs/design.md §3): 1-255 visible ASCII characters, e.g. a
 * UUID. A retried write with the same key and body replays the first
 * response for 24 hours (marked `Idempotent-Replayed: true`); the same key
 * with another body is a 422; while the first request runs, a 409. Keys are
 * scoped to the token's app and user.
 */
export const IdempotencyKeySchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1-255 visible ASCII characters')
  .describe(
    'Makes a retried write safe: the same key and body within 24 h replay the first response instead of writing again.',
  );

/** Request headers of a write route: `headers: IdempotencyHeadersSchema` puts the header in OpenAPI and the SDK. */
export const IdempotencyHeadersSchema = z.object({
  'idempotency-key': IdempotencyKeySchema.optional(),
});

/**
 * For routes that address one record by id. Another user's record is "not
 * found" too, never 403: a 403 would tell the caller that the id exists.
 */
export const notFoundResponses = {
  404: problem("No such record, or it belongs to another user's account."),
} as const;

/** `YYYY-MM-DD`, a real calendar date. */
export const LocalDateSchema = z.iso.date().describe('Calendar date, `YYYY-MM-DD`.');

/** ISO 8601 timestamp that carries its offset (`Z` or `±hh:mm`). */
export const TimestampWithOffsetSchema = z.iso
  .datetime({ offset: true })
  .describe('ISO 8601 timestamp with a timezone offset, e.g. `2026-11-20T07:30:00+01:00`.');

/** A UTC timestamp as the server writes it. */
export const TimestampSchema = z.iso.datetime({ offset: true });

/**
 * A `date` field as clients may send it: `YYYY-MM-DD`, or a full ISO 8601
 * timestamp whose calendar date in its own offset is used (a `Z` timestamp is
 * read in the user's profile time zone; one without an offset is taken as
 * local wall-clock time).
 */
export const DateInputSchema = z
  .union([LocalDateSchema, z.iso.datetime({ offset: true, local: true })])
  .describe(
    "The user's local calendar date: `YYYY-MM-DD`, or an ISO 8601 timestamp whose date in its own offset is used (`Z` is converted with the profile time zone).",
  );

export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 200;
export const DATE_RANGE_MAX_DAYS = 366;

/** `?limit` of the lists that page by PAGE_LIMIT_DEFAULT up to PAGE_LIMIT_MAX (each list describes it). */
export const PageLimitSchema = z.coerce.number().int().min(1).max(PAGE_LIMIT_MAX).default(PAGE_LIMIT_DEFAULT);

/** `?from&to&limit&cursor` for lists keyed by calendar date. */
export const DateRangeQuerySchema = z.strictObject({
  from: LocalDateSchema.optional().describe('First date, inclusive. Default: 29 days before `to`.'),
  to: LocalDateSchema.optional().describe("Last date, inclusive. Default: today in the user's time zone."),
  limit: PageLimitSchema.describe(`Page size, at most ${PAGE_LIMIT_MAX}.`),
  cursor: z.string().max(200).optional().describe("Opaque cursor from the previous page's `nextCursor`."),
});
export type DateRangeQuery = z.infer<typeof DateRangeQuerySchema>;

export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next page; `null` on the last page.'),
  });
}

/** Free-form JSON object kept verbatim for the caller. */
export const RawJsonSchema = z
  .record(z.string(), z.unknown())
  .describe("The caller's raw payload, kept verbatim for reference.");

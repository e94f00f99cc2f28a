/**
 * The lean reference of the bench's `hotpath` section: `POST /api/wellness`
 * and `GET /api/wellness` on node:http + pg, nothing else, against the same
 * database, tables and token rows Pacer uses. It does the work the issue
 * describes, so Pacer's figures have something to be measured against:
 *
 * - one statement (a named prepared statement, like every query here) looks
 *   the bearer token up by its SHA-256 in `oauth_access_tokens` (with its
 *   grant, client and user) and bumps the per-minute windows of the client
 *   address and of the token in `rate_limit_counters`, with the same keys and
 *   the same counting as Pacer's limiter;
 * - the token must be known, unexpired, unrevoked (itself and its grant), its
 *   user active, unbound or bound to this server, and hold the route's scope;
 * - POST: a hand-written check of the JSON body by the contract's rules for a
 *   wellness upsert, then one upsert returning the row;
 *   GET: `?from&to&limit&cursor` checked by hand, then one select of the window.
 *
 * What it leaves out on purpose: request ids, request logs, idempotency keys,
 * the analytics recompute request, ETags. Errors are short problem documents.
 * Not a server anyone should run; `npm run bench` starts it as a child process.
 *
 * Environment: DATABASE_URL, PORT, BASE_URL (the REST resource a bound token
 * must name), RATE_LIMIT_PER_MINUTE and RATE_LIMIT_IP_PER_MINUTE (0 = off).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`reference server: ${name} is not set`);
  return value;
};
const DATABASE_URL = env('DATABASE_URL');
const PORT = Number(env('PORT'));
const BASE_URL = env('BASE_URL');
const PER_TOKEN = Number(env('RATE_LIMIT_PER_MINUTE'));
const PER_IP = Number(env('RATE_LIMIT_IP_PER_MINUTE'));
const WINDOW_SECS = 60;
const BODY_LIMIT = 1024 * 1024;
const PAGE_LIMIT_DEFAULT = 50;
const PAGE_LIMIT_MAX = 200;
const RANGE_DAYS_DEFAULT = 30;
const RANGE_DAYS_MAX = 366;
const DAY_MS = 86_400_000;

// Dates stay `YYYY-MM-DD` strings, as in Pacer.
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 20, application_name: 'pacer-bench-reference' });

/** Every wellness field: its column and the range of the contract (contract/src/wellness.ts), written out by hand. */
interface FieldRule {
  readonly column: string;
  readonly kind: 'number' | 'int' | 'text';
  readonly min: number;
  readonly max: number;
}
const FIELDS: Readonly<Record<string, FieldRule>> = {
  hrv: { column: 'hrv', kind: 'number', min: 1, max: 300 },
  restingHr: { column: 'resting_hr', kind: 'int', min: 20, max: 150 },
  sleepSecs: { column: 'sleep_secs', kind: 'int', min: 0, max: 86_400 },
  sleepDeepSecs: { column: 'sleep_deep_secs', kind: 'int', min: 0, max: 86_400 },
  sleepLightSecs: { column: 'sleep_light_secs', kind: 'int', min: 0, max: 86_400 },
  sleepRemSecs: { column: 'sleep_rem_secs', kind: 'int', min: 0, max: 86_400 },
  sleepAwakeSecs: { column: 'sleep_awake_secs', kind: 'int', min: 0, max: 86_400 },
  sleepScore: { column: 'sleep_score', kind: 'int', min: 0, max: 100 },
  weight: { column: 'weight', kind: 'number', min: 20, max: 400 },
  bodyFat: { column: 'body_fat', kind: 'number', min: 1, max: 75 },
  vo2max: { column: 'vo2max', kind: 'number', min: 10, max: 100 },
  spO2: { column: 'sp_o2', kind: 'number', min: 50, max: 100 },
  respiration: { column: 'respiration', kind: 'number', min: 4, max: 60 },
  steps: { column: 'steps', kind: 'int', min: 0, max: 200_000 },
  stress: { column: 'stress', kind: 'int', min: 0, max: 100 },
  mood: { column: 'mood', kind: 'int', min: 1, max: 5 },
  fatigue: { column: 'fatigue', kind: 'int', min: 1, max: 5 },
  soreness: { column: 'soreness', kind: 'int', min: 1, max: 5 },
  motivation: { column: 'motivation', kind: 'int', min: 1, max: 5 },
  comments: { column: 'comments', kind: 'text', min: 0, max: 2000 },
};
const FIELD_NAMES = Object.keys(FIELDS);

// ---------------------------------------------------------------------------
// Statements.

/** Token lookup and both rate-limit windows in one round trip; one row per window, the token's columns on each. */
const AUTH_SQL = `
  with token as (
    select t.scopes, t.resource, t.expires_at, t.revoked_at as token_revoked_at, g.revoked_at as grant_revoked_at,
      c.client_id, u.id as user_id, u.active as user_active, u.time_zone
    from oauth_access_tokens t
    join oauth_grants g on g.id = t.grant_id
    join oauth_clients c on c.id = g.client_id
    join users u on u.id = g.user_id
    where t.token_hash = $1
  ), hits as (
    insert into rate_limit_counters (key, count, window_started_at, expires_at)
    select key, 1, now(), now() + make_interval(secs => $3) from unnest($2::text[]) as key order by key
    on conflict (key) do update set
      count = case when rate_limit_counters.expires_at > now() then rate_limit_counters.count + 1 else 1 end,
      window_started_at = case
        when rate_limit_counters.expires_at > now() then rate_limit_counters.window_started_at else now() end,
      expires_at = case
        when rate_limit_counters.expires_at > now() then rate_limit_counters.expires_at else excluded.expires_at end
    returning key, count, greatest(1, ceil(extract(epoch from expires_at - now())))::int as reset_secs
  )
  select h.key, h.count, h.reset_secs, token.* from hits h left join token on true`;

interface AuthRow {
  readonly key: string;
  readonly count: number;
  readonly reset_secs: number;
  readonly scopes: string[] | null;
  readonly resource: string | null;
  readonly expires_at: Date | null;
  readonly token_revoked_at: Date | null;
  readonly grant_revoked_at: Date | null;
  readonly client_id: string | null;
  readonly user_id: string | null;
  readonly user_active: boolean | null;
  readonly time_zone: string | null;
}

/** One upsert text per set of columns sent; each its own named statement. */
const upsertStatements = new Map<string, { name: string; text: string }>();

function upsertStatement(columns: readonly string[], withRaw: boolean): { name: string; text: string } {
  const signature = `${columns.join(',')}|${withRaw}`;
  let statement = upsertStatements.get(signature);
  if (!statement) {
    const all = ['user_id', 'date', ...columns, ...(withRaw ? ['raw_json'] : [])];
    const sets = ['updated_at = now()', ...columns.map((column) => `${column} = excluded.${column}`)];
    if (withRaw) sets.push('raw_json = wellness.raw_json || excluded.raw_json');
    const text =
      `insert into wellness (${all.join(', ')}) values (${all.map((_, i) => `$${i + 1}`).join(', ')}) ` +
      `on conflict (user_id, date) do update set ${sets.join(', ')} returning *, (xmax = 0) as created`;
    statement = { name: `reference_upsert_${upsertStatements.size}`, text };
    upsertStatements.set(signature, statement);
  }
  return statement;
}

const LIST_SQL =
  'select * from wellness where user_id = $1 and date >= $2 and date <= $3 and ($4::date is null or date > $4) ' +
  'order by date limit $5';

// ---------------------------------------------------------------------------
// Answers.

function send(res: http.ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function problem(res: http.ServerResponse, status: number, code: string, detail: string): void {
  send(res, status, { type: `urn:pacer:problem:${code}`, status, code, detail }, 'application/problem+json');
}

class Refusal extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, detail: string) {
    super(detail);
    this.status = status;
    this.code = code;
  }
}
const invalid = (path: string, message: string) => new Refusal(400, 'validation_failed', `${path}: ${message}`);

// ---------------------------------------------------------------------------
// Checks, written out by hand.

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** Date, time, optional fraction, optional `Z` or `±hh:mm` offset: z.iso.datetime({ offset: true, local: true }). */
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/;

function isCalendarDate(text: string): boolean {
  const match = DATE_ONLY.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const instant = new Date(0);
  instant.setUTCFullYear(year, month - 1, day);
  return instant.getUTCFullYear() === year && instant.getUTCMonth() === month - 1 && instant.getUTCDate() === day;
}

const localDateFormats = new Map<string, Intl.DateTimeFormat>();

function localDateOf(instant: Date, timeZone: string): string {
  let format = localDateFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    localDateFormats.set(timeZone, format);
  }
  return format.format(instant);
}

/** The user's calendar date of a `date` field (Pacer's rules: a `Z` instant is read in the profile's zone). */
function resolveDate(value: unknown, timeZone: string): string {
  if (typeof value !== 'string') throw invalid('date', 'must be a string');
  if (isCalendarDate(value)) return value;
  const match = TIMESTAMP.exec(value);
  if (!match || !isCalendarDate(match[1] as string)) throw invalid('date', 'must be YYYY-MM-DD or an ISO timestamp');
  if (match[2] !== 'Z') return match[1] as string;
  const instant = new Date(value);
  if (Number.isNaN(instant.getTime())) throw invalid('date', 'is not a valid timestamp');
  return localDateOf(instant, timeZone);
}

interface CheckedUpsert {
  readonly date: string;
  readonly columns: string[];
  readonly values: unknown[];
  readonly rawJson: Record<string, unknown> | undefined;
}

function checkUpsert(body: unknown, timeZone: string): CheckedUpsert {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('', 'must be a JSON object');
  const input = body as Record<string, unknown>;
  const columns: string[] = [];
  const values: unknown[] = [];
  let date: string | undefined;
  let rawJson: Record<string, unknown> | undefined;
  for (const key in input) {
    const value = input[key];
    if (key === 'date') {
      date = resolveDate(value, timeZone);
      continue;
    }
    if (key === 'rawJson') {
      if (value === undefined) continue;
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(key, 'must be an object');
      rawJson = value as Record<string, unknown>;
      continue;
    }
    const rule = FIELDS[key];
    if (!rule) throw invalid(key, 'unknown field (send extra data in `rawJson`)');
    if (value === undefined) continue;
    if (value !== null) {
      if (rule.kind === 'text') {
        if (typeof value !== 'string') throw invalid(key, 'must be a string');
        if (value.length > rule.max) throw invalid(key, `at most ${rule.max} characters`);
      } else {
        if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(key, 'must be a number');
        if (rule.kind === 'int' && !Number.isInteger(value)) throw invalid(key, 'must be an integer');
        if (value < rule.min || value > rule.max) throw invalid(key, `must be between ${rule.min} and ${rule.max}`);
      }
    }
    columns.push(rule.column);
    values.push(value);
  }
  if (date === undefined) throw invalid('date', 'is required');
  return { date, columns, values, rawJson };
}

interface WindowQuery {
  readonly from: string;
  readonly to: string;
  readonly after: string | null;
  readonly limit: number;
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

function checkWindow(search: URLSearchParams, timeZone: string): WindowQuery {
  for (const key of search.keys()) {
    if (key !== 'from' && key !== 'to' && key !== 'limit' && key !== 'cursor') throw invalid(key, 'unknown parameter');
  }
  const date = (name: string) => {
    const value = search.get(name);
    if (value !== null && !isCalendarDate(value)) throw invalid(name, 'must be YYYY-MM-DD');
    return value;
  };
  const fromParam = date('from');
  const toParam = date('to');
  const to = toParam ?? (fromParam ? addDays(fromParam, RANGE_DAYS_DEFAULT - 1) : localDateOf(new Date(), timeZone));
  const from = fromParam ?? addDays(to, -(RANGE_DAYS_DEFAULT - 1));
  if (from > to) throw invalid('from', 'must not be after `to`');
  if ((Date.parse(to) - Date.parse(from)) / DAY_MS + 1 > RANGE_DAYS_MAX) throw invalid('to', 'range too large');
  const limitText = search.get('limit');
  const limit = limitText === null ? PAGE_LIMIT_DEFAULT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT_MAX) throw invalid('limit', 'must be 1-200');
  const cursor = search.get('cursor');
  let after: string | null = null;
  if (cursor !== null) {
    try {
      after = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { d?: unknown }).d as string;
    } catch {
      after = null;
    }
    if (typeof after !== 'string' || !isCalendarDate(after)) throw new Refusal(400, 'invalid_cursor', 'bad cursor');
  }
  return { from, to, after, limit };
}

// ---------------------------------------------------------------------------
// Rows to records.

interface WellnessRow extends Record<string, unknown> {
  readonly date: string;
  readonly raw_json: Record<string, unknown>;
  readonly created_at: Date;
  readonly updated_at: Date;
}

function recordOf(row: WellnessRow): Record<string, unknown> {
  const record: Record<string, unknown> = { date: row.date };
  for (const name of FIELD_NAMES) record[name] = row[(FIELDS[name] as FieldRule).column];
  record['rawJsonBySource'] = row.raw_json;
  record['createdAt'] = row.created_at.toISOString();
  record['updatedAt'] = row.updated_at.toISOString();
  return record;
}

// ---------------------------------------------------------------------------
// The two routes.

interface Caller {
  readonly userId: string;
  readonly clientId: string;
  readonly timeZone: string;
}

async function authenticate(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  scope: string,
): Promise<Caller | undefined> {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(req.headers.authorization ?? '');
  if (!match) {
    problem(res, 401, 'unauthorized', 'This endpoint needs an access token.');
    return undefined;
  }
  const tokenHash = createHash('sha256')
    .update(match[1] as string)
    .digest('hex');
  const address = req.socket.remoteAddress ?? 'unknown';
  const ip = address.startsWith('::ffff:') ? address.slice(7) : address;
  const buckets: { key: string; limit: number }[] = [];
  if (PER_IP > 0) buckets.push({ key: `rest:ip:${ip}`, limit: PER_IP });
  if (PER_TOKEN > 0) buckets.push({ key: `rest:requests:token:${tokenHash}`, limit: PER_TOKEN });
  const { rows } = await pool.query<AuthRow>({
    name: 'reference_auth',
    text: AUTH_SQL,
    values: [tokenHash, buckets.map((bucket) => bucket.key), WINDOW_SECS],
  });
  // The tightest window: a refused one first, else the one with the fewest hits left.
  let tightest: { limit: number; remaining: number; resetSecs: number; allowed: boolean } | undefined;
  for (const bucket of buckets) {
    const row = rows.find((candidate) => candidate.key === bucket.key);
    if (!row) throw new Error(`no counter row for ${bucket.key}`);
    const window = {
      limit: bucket.limit,
      remaining: Math.max(0, bucket.limit - row.count),
      resetSecs: row.reset_secs,
      allowed: row.count <= bucket.limit,
    };
    if (!tightest || (tightest.allowed && (!window.allowed || window.remaining < tightest.remaining)))
      tightest = window;
  }
  if (tightest) {
    res.setHeader('RateLimit-Limit', String(tightest.limit));
    res.setHeader('RateLimit-Remaining', String(tightest.remaining));
    res.setHeader('RateLimit-Reset', String(tightest.resetSecs));
    if (!tightest.allowed) {
      res.setHeader('Retry-After', String(tightest.resetSecs));
      problem(res, 429, 'rate_limited', 'Too many requests.');
      return undefined;
    }
  }
  const token = rows[0];
  if (!token || token.user_id === null || token.client_id === null || token.time_zone === null) {
    problem(res, 401, 'invalid_token', 'The access token is not recognised.');
    return undefined;
  }
  if (token.token_revoked_at || token.grant_revoked_at) {
    problem(res, 401, 'invalid_token', 'The access token has been revoked.');
    return undefined;
  }
  if (!token.expires_at || token.expires_at.getTime() <= Date.now()) {
    problem(res, 401, 'invalid_token', 'The access token has expired.');
    return undefined;
  }
  if (!token.user_active) {
    problem(res, 401, 'invalid_token', 'The account behind this token is deactivated.');
    return undefined;
  }
  if (token.resource !== null && token.resource !== BASE_URL) {
    problem(res, 401, 'invalid_token', 'This token is bound to another resource.');
    return undefined;
  }
  if (!token.scopes?.includes(scope)) {
    problem(res, 403, 'insufficient_scope', `The token lacks the scope ${scope}.`);
    return undefined;
  }
  return { userId: token.user_id, clientId: token.client_id, timeZone: token.time_zone };
}

function readJson(req: http.IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') return Promise.reject(new Refusal(415, 'unsupported_media_type', 'Send JSON.'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) {
        reject(new Refusal(413, 'payload_too_large', 'The body is larger than 1 MiB.'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', reject);
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new Refusal(400, 'invalid_json', 'The body is not valid JSON.'));
      }
    });
  });
}

async function upsertWellness(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const caller = await authenticate(req, res, 'health:write');
  if (!caller) return;
  const input = checkUpsert(await readJson(req), caller.timeZone);
  const raw = input.rawJson === undefined ? [] : [JSON.stringify({ [caller.clientId]: input.rawJson })];
  const statement = upsertStatement(input.columns, input.rawJson !== undefined);
  const { rows } = await pool.query<WellnessRow & { created: boolean }>({
    ...statement,
    values: [caller.userId, input.date, ...input.values, ...raw],
  });
  const row = rows[0];
  if (!row) throw new Error('upsert returned no row');
  send(res, row.created ? 201 : 200, recordOf(row));
}

async function listWellness(req: http.IncomingMessage, res: http.ServerResponse, search: URLSearchParams) {
  const caller = await authenticate(req, res, 'health:read');
  if (!caller) return;
  const window = checkWindow(search, caller.timeZone);
  const { rows } = await pool.query<WellnessRow>({
    name: 'reference_list',
    text: LIST_SQL,
    values: [caller.userId, window.from, window.to, window.after, window.limit + 1],
  });
  const items = rows.slice(0, window.limit).map(recordOf);
  const last = items.at(-1);
  const nextCursor =
    rows.length > window.limit && last ? Buffer.from(JSON.stringify({ d: last['date'] })).toString('base64url') : null;
  send(res, 200, { items, nextCursor });
}

const server = http.createServer((req, res) => {
  const [path, query = ''] = (req.url ?? '/').split('?', 2);
  let work: Promise<void> | undefined;
  if (path === '/api/wellness' && req.method === 'POST') work = upsertWellness(req, res);
  else if (path === '/api/wellness' && req.method === 'GET') work = listWellness(req, res, new URLSearchParams(query));
  else if (path === '/readyz') work = pool.query('select 1').then(() => send(res, 200, { status: 'ok' }));
  if (!work) {
    problem(res, 404, 'not_found', `No route for ${req.method} ${path}.`);
    return;
  }
  work.catch((error: unknown) => {
    if (res.headersSent) return;
    if (error instanceof Refusal) problem(res, error.status, error.code, error.message);
    else {
      process.stderr.write(`reference server: ${String(error)}\n`);
      problem(res, 500, 'internal_error', 'Something went wrong.');
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(PORT, '127.0.0.1', () => process.stdout.write(`reference server listening on ${PORT}\n`));

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
    void pool.end().finally(() => process.exit(0));
  });
}

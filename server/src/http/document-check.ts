import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppRoute } from '@ts-rest/core';
import type * as AjvModule from 'ajv/dist/2020.js';
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import type { FormatsPlugin } from 'ajv-formats';

/**
 * PACER_CHECK_RESPONSES, second half: every JSON answer of a contract route is
 * also validated against the committed openapi.json, the document integrators
 * and their contract testers read, so a test whose answer the document does
 * not admit fails (the zod check alone would not see a document that
 * disagrees with its own contract, as `nullable` beside `allOf` did in 3.0).
 *
 * The answer's headers are checked too (`documentHeaderMismatch`): every
 * header the response declares `required` is there, every declared one that
 * is there has a value its schema admits, and no header the document
 * declares somewhere (`Retry-After`, `Idempotent-Replayed`...) appears on an
 * answer that does not declare it.
 *
 * Ajv (JSON Schema 2020-12, the schema dialect of OpenAPI 3.1) compiles each
 * operation's response schema once, on first use, against the whole document
 * so `#/components/...` references resolve. Ajv and its formats are
 * required on that first use, not imported: only a process under
 * PACER_CHECK_RESPONSES checks answers, and the module is imported by every
 * process that serves the API (their ~400 KB of source and their compiled
 * code would stay in an idle server's heap; docs/design.md §2 "Memory").
 */
const DOCUMENT_ID = 'https://pacer.invalid/openapi.json';

type Json = Record<string, unknown>;

function findDocument(): string {
  let directory = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(directory, 'openapi.json');
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(directory);
    if (parent === directory) throw new Error('openapi.json not found above the server sources');
    directory = parent;
  }
}

let ajv: Ajv2020 | undefined;
let document: Json | undefined;
const validators = new Map<string, ValidateFunction | null>();

function load(): { ajv: Ajv2020; document: Json } {
  if (!ajv || !document) {
    document = JSON.parse(readFileSync(findDocument(), 'utf8')) as Json;
    // Both are CommonJS packages, so `require` loads them synchronously, here where the check needs them.
    const require = createRequire(import.meta.url);
    const { Ajv2020 } = require('ajv/dist/2020.js') as typeof AjvModule;
    const addFormats = require('ajv-formats') as { default: FormatsPlugin };
    // `strict: false`: OpenAPI's own keywords (`example`, `discriminator`...) are not JSON Schema's.
    ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats.default(ajv);
    ajv.addFormat('binary', true);
    ajv.addSchema({ ...document, $id: DOCUMENT_ID }, DOCUMENT_ID);
  }
  return { ajv, document };
}

const pointer = (...segments: string[]): string =>
  segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** `/api/workouts/:id` -> `/api/workouts/{id}`, as the document names paths. */
const documentPath = (route: AppRoute): string => route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** The document's responses of `route`, or `undefined` for a route it does not describe. */
function responsesOf(document: Json, route: AppRoute): Record<string, Json> | undefined {
  const paths = document['paths'] as Record<string, Record<string, Json>>;
  return paths[documentPath(route)]?.[route.method.toLowerCase()]?.['responses'] as Record<string, Json> | undefined;
}

/**
 * Why `body` with `status` is not what openapi.json declares for `route`, or
 * `undefined` when it is. The body is checked as it goes on the wire (after
 * JSON serialisation: dates become strings). Non-JSON answers: status only.
 */
export function documentMismatch(route: AppRoute, status: number, body: unknown): string | undefined {
  const { ajv, document } = load();
  const where = `${documentPath(route)} ${route.method} ${String(status)}`;
  let validate = validators.get(where);
  if (validate === undefined) {
    const responses = responsesOf(document, route);
    // A route the document does not describe (a test's own contract) is not its to judge.
    if (!responses) return undefined;
    const response = responses[String(status)];
    if (!response) return `status ${String(status)} is not declared in openapi.json`;
    const content = (response['content'] ?? {}) as Record<string, Json>;
    const json = Object.keys(content).find((type) => type.endsWith('json'));
    validate =
      json === undefined || content[json]?.['schema'] === undefined
        ? null
        : ajv.compile({
            $ref: `${DOCUMENT_ID}#/${pointer('paths', documentPath(route), route.method.toLowerCase(), 'responses', String(status), 'content', json, 'schema')}`,
          });
    validators.set(where, validate);
  }
  if (validate === null || body === undefined) return undefined;
  if (validate(JSON.parse(JSON.stringify(body)))) return undefined;
  return `the ${String(status)} body does not match openapi.json: ${ajv.errorsText(validate.errors)}`;
}

/** A header value as the answer carries it (Node keeps numbers set with `setHeader` as numbers). */
export type HeaderValue = string | number | readonly string[] | undefined;

interface DeclaredHeader {
  readonly name: string;
  readonly required: boolean;
  readonly validate: ValidateFunction;
  /** `integer`/`number`/`boolean`: the wire's text is read as that type first (OpenAPI's `simple` style). */
  readonly type: string | undefined;
}

const declaredHeaders = new Map<string, readonly DeclaredHeader[] | null>();
let documentedHeaderNames: ReadonlySet<string> | undefined;

/** Every header name (lower case) some response in the document declares. */
function allDocumentedHeaders(document: Json): ReadonlySet<string> {
  if (!documentedHeaderNames) {
    const names = new Set<string>();
    for (const item of Object.values(document['paths'] as Record<string, Record<string, Json>>)) {
      for (const operation of Object.values(item)) {
        for (const response of Object.values((operation['responses'] ?? {}) as Record<string, Json>)) {
          for (const name of Object.keys(response['headers'] ?? {})) names.add(name.toLowerCase());
        }
      }
    }
    documentedHeaderNames = names;
  }
  return documentedHeaderNames;
}

function headersDeclaredFor(route: AppRoute, status: number): readonly DeclaredHeader[] | null {
  const where = `${documentPath(route)} ${route.method} ${String(status)}`;
  let declared = declaredHeaders.get(where);
  if (declared === undefined) {
    const { ajv, document } = load();
    const response = responsesOf(document, route)?.[String(status)];
    const operationPointer = ['paths', documentPath(route), route.method.toLowerCase(), 'responses', String(status)];
    declared = response
      ? Object.entries((response['headers'] ?? {}) as Record<string, Json>).map(([name, header]) => ({
          name,
          required: header['required'] === true,
          type: (header['schema'] as Json | undefined)?.['type'] as string | undefined,
          validate: ajv.compile({
            $ref: `${DOCUMENT_ID}#/${pointer(...operationPointer, 'headers', name, 'schema')}`,
          }),
        }))
      : null;
    declaredHeaders.set(where, declared);
  }
  return declared;
}

/** A header's text as the JSON value its schema describes: `"42"` is the integer 42 for an integer header. */
function headerValue(text: string, type: string | undefined): unknown {
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/**
 * Why the headers of an answer with `status` to `route` disagree with the
 * headers openapi.json declares for it, or `undefined` when they agree (or
 * the document does not describe the route or the status: `documentMismatch`
 * names an undeclared status). Header names are matched case-insensitively
 * (RFC 9110 §5.1); headers the document never mentions (`Content-Type`,
 * caching, CORS) are not its to judge.
 */
export function documentHeaderMismatch(
  route: AppRoute,
  status: number,
  headers: Readonly<Record<string, HeaderValue>>,
): string | undefined {
  const declared = headersDeclaredFor(route, status);
  if (!declared) return undefined;
  const sent = new Map(
    Object.entries(headers)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(', ') : String(value)]),
  );
  const problems: string[] = [];
  for (const header of declared) {
    const text = sent.get(header.name.toLowerCase());
    if (text === undefined) {
      if (header.required) problems.push(`required header ${header.name} is missing`);
      continue;
    }
    if (!header.validate(headerValue(text, header.type))) {
      problems.push(`header ${header.name}: ${JSON.stringify(text)} ${load().ajv.errorsText(header.validate.errors)}`);
    }
  }
  const declaredNames = new Set(declared.map((header) => header.name.toLowerCase()));
  for (const name of sent.keys()) {
    if (allDocumentedHeaders(load().document).has(name) && !declaredNames.has(name)) {
      problems.push(`header ${name} is not declared for this answer`);
    }
  }
  if (problems.length === 0) return undefined;
  return `the ${String(status)} headers do not match openapi.json: ${problems.join('; ')}`;
}

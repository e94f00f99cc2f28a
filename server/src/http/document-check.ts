import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppRoute } from '@ts-rest/core';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * PACER_CHECK_RESPONSES, second half: every JSON answer of a contract route is
 * also validated against the committed openapi.json, the document integrators
 * and their contract testers read, so a test whose answer the document does
 * not admit fails (the zod check alone would not see a document that
 * disagrees with its own contract, as `nullable` beside `allOf` did in 3.0).
 *
 * Ajv (JSON Schema 2020-12, the schema dialect of OpenAPI 3.1) compiles each
 * operation's response schema once, on first use, against the whole document
 * so `#/components/...` references resolve.
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
    const paths = document['paths'] as Record<string, Record<string, Json>>;
    const operation = paths[documentPath(route)]?.[route.method.toLowerCase()];
    const responses = operation?.['responses'] as Record<string, Json> | undefined;
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

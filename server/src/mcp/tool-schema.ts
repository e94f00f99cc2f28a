import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

/*
 * The JSON Schemas `tools/list` sends, rendered lean from the contract's zod
 * schemas: hosts put the whole tool list in front of the model on every turn,
 * so every byte here is paid per turn (docs/design.md §3 "MCP / Tools",
 * "Tool list size"). Both sides:
 * - no `$schema`: MCP 2025-11-25 reads a schema without one as JSON Schema
 *   2020-12, and every keyword used here means the same in draft-07 (what
 *   the SDK client's Ajv reads);
 * - a string with a `format` (`date`, `date-time`, `uuid`) loses the regex zod
 *   spells the format out as (40 KB of the list): the name says it once, and the
 *   server validates arguments with the zod schema anyway;
 * - nullable fields as `anyOf` branches with one type each ({@link splitNullableTypes}).
 */

/**
 * A tool's arguments: everything the contract says (types, bounds, defaults,
 * per-field descriptions with units and limits) except the format regexes;
 * an object repeated within them (a step's duration and target) is written
 * once under `$defs` and referenced as `#/$defs/<title>`.
 * `sameShapeAs` maps a top-level argument to words naming the tool whose
 * argument spells out the same shape; that argument is then typed `object`.
 */
export function toolInputSchema(
  schema: z.ZodType,
  sameShapeAs: Readonly<Record<string, string>> = {},
): Tool['inputSchema'] {
  const json = rewrite(renderZod(schema, 'input'), leanInput) as JsonSchema;
  const properties = (json['properties'] ?? {}) as Record<string, JsonSchema>;
  for (const [name, words] of Object.entries(sameShapeAs)) {
    const property = properties[name];
    if (!property) throw new Error(`sameShapeAs names the argument ${name}, which the tool does not take`);
    const described = typeof property['description'] === 'string' ? `${property['description']} ` : '';
    properties[name] = { description: `${described}${words}`, ...objectType(property) };
  }
  return hoistRepeats(json) as Tool['inputSchema'];
}

/**
 * A tool's result (`structuredContent`), which the model reads in full when it
 * calls the tool: the schema names the record's fields with their types,
 * nullability, enums and formats, and which are always present. The record is
 * the result itself, or each entry of a list's `items` (`{items, nextCursor?}`).
 * Objects nested in a record are typed `object`: their shape is in the REST
 * contract (openapi.json) and in the result itself. Per-field descriptions are
 * left out: the tool's description says what the result holds, in its units,
 * and field names carry theirs (`durationSecs`, `distanceMeters`).
 * `sameShapeAs` (words naming the tool whose records have the same fields)
 * types the record `object` with those words.
 */
export function toolOutputSchema(schema: z.ZodType, sameShapeAs?: string): NonNullable<Tool['outputSchema']> {
  const json = rewrite(renderZod(schema, 'output'), leanFormats) as JsonSchema;
  const record = (entry: JsonSchema): JsonSchema =>
    sameShapeAs === undefined ? renderRecord(entry) : { type: 'object', description: sameShapeAs };
  return (isPage(json) ? renderPage(json, record) : record(json)) as NonNullable<Tool['outputSchema']>;
}

function renderZod(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = splitNullableTypes(
    z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }),
  ) as JsonSchema;
  delete json['$schema'];
  return json;
}

/** Keywords that describe the property itself and stay outside the `anyOf`. */
const ANNOTATIONS = ['title', 'description', 'default', 'examples'] as const;

/**
 * zod writes a nullable scalar as `type: ["number", "null"]`. That is valid
 * JSON Schema, but hosts that map tool schemas onto their own (stricter)
 * schema dialects handle `anyOf` with one type per branch better (the MCP
 * Inspector's `--strict` portability check flags the array form), so the
 * array form is rewritten as `anyOf: [{type: "number", …}, {type: "null"}]`.
 */
export function splitNullableTypes(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(splitNullableTypes);
  if (node === null || typeof node !== 'object') return node;
  const schema: JsonSchema = Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, splitNullableTypes(value)]),
  );
  const type = schema['type'];
  if (!Array.isArray(type) || type.length !== 2 || !type.includes('null')) return schema;
  const outside: JsonSchema = {};
  const inside: JsonSchema = { type: type.find((entry) => entry !== 'null') };
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type') continue;
    if ((ANNOTATIONS as readonly string[]).includes(key)) outside[key] = value;
    else inside[key] = value;
  }
  return { ...outside, anyOf: [inside, { type: 'null' }] };
}

/** Keywords whose value maps names to subschemas (not a subschema itself). */
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions', 'patternProperties']);
/** Keywords whose value is data, never a subschema. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'required']);

/** Applies `lean` to every subschema, children first. */
function rewrite(node: unknown, lean: (schema: JsonSchema) => JsonSchema): unknown {
  if (Array.isArray(node)) return node.map((entry) => rewrite(entry, lean));
  if (node === null || typeof node !== 'object') return node;
  const schema: JsonSchema = {};
  for (const [key, value] of Object.entries(node as JsonSchema)) {
    if (DATA_KEYWORDS.has(key)) schema[key] = value;
    else if (SCHEMA_MAPS.has(key) && isSchema(value)) {
      schema[key] = Object.fromEntries(Object.entries(value).map(([name, entry]) => [name, rewrite(entry, lean)]));
    } else schema[key] = rewrite(value, lean);
  }
  return lean(schema);
}

function leanInput(schema: JsonSchema): JsonSchema {
  // Object keys are strings in JSON: saying so again tells nobody anything.
  delete schema['propertyNames'];
  const branches = schema['anyOf'];
  if (typeof schema['description'] === 'string' && Array.isArray(branches)) {
    // A nullable date says what it is once, outside its branches.
    for (const branch of branches) if (isSchema(branch)) delete branch['description'];
  }
  return leanFormats(schema);
}

/** A format stated by its name, and a union of plain strings stated as one string. */
function leanFormats(schema: JsonSchema): JsonSchema {
  if (typeof schema['format'] === 'string') delete schema['pattern'];
  const branches = schema['anyOf'];
  if (Array.isArray(branches) && branches.every(isPlainString)) {
    // A date given as `YYYY-MM-DD` or as a timestamp: the property's description says which.
    delete schema['anyOf'];
    schema['type'] = 'string';
  }
  return schema;
}

const PLAIN_STRING_KEYWORDS = new Set(['type', 'format', 'pattern', 'description']);

function isPlainString(branch: unknown): boolean {
  return (
    branch !== null &&
    typeof branch === 'object' &&
    (branch as JsonSchema)['type'] === 'string' &&
    Object.keys(branch).every((key) => PLAIN_STRING_KEYWORDS.has(key))
  );
}

const isSchema = (value: unknown): value is JsonSchema =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** An object, a union with an object branch, or an array of either. */
function holdsObject(schema: JsonSchema): boolean {
  if (schema['type'] === 'object' || isSchema(schema['properties'])) return true;
  if (schema['type'] === 'array' && isSchema(schema['items'])) return holdsObject(schema['items']);
  const branches = schema['anyOf'] ?? schema['oneOf'];
  return Array.isArray(branches) && branches.some((branch) => isSchema(branch) && holdsObject(branch));
}

/** `object` (or an array of objects), nullable when the schema admits null. */
function objectType(schema: JsonSchema): JsonSchema {
  if (schema['type'] === 'array') return { type: 'array', items: { type: 'object' } };
  const branches = schema['anyOf'] ?? schema['oneOf'];
  const nullable = Array.isArray(branches) && branches.some((branch) => isSchema(branch) && branch['type'] === 'null');
  return nullable ? { anyOf: [{ type: 'object' }, { type: 'null' }] } : { type: 'object' };
}

/** What a field of a result keeps: its type and what its values can be. */
const FIELD_KEYWORDS = new Set(['type', 'enum', 'const', 'format', 'anyOf', 'oneOf', 'items']);

function renderField(schema: JsonSchema): JsonSchema {
  if (holdsObject(schema)) return objectType(schema);
  const field: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!FIELD_KEYWORDS.has(key)) continue;
    field[key] = Array.isArray(value)
      ? (value as unknown[]).map((entry) => (isSchema(entry) ? renderField(entry) : entry))
      : isSchema(value)
        ? renderField(value)
        : value;
  }
  return field;
}

/** A record: each field rendered, `required` kept. */
function renderRecord(schema: JsonSchema): JsonSchema {
  const properties = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(properties).map(([name, field]) => [name, renderField(field)])),
    ...(Array.isArray(schema['required']) ? { required: schema['required'] } : {}),
  };
}

/** A list (`{items, nextCursor?}`): `items` as an array of records rendered by `entry`, `nextCursor` as it is. */
function renderPage(schema: JsonSchema, entry: (record: JsonSchema) => JsonSchema): JsonSchema {
  const properties = schema['properties'] as Record<string, JsonSchema>;
  const page = renderRecord(schema);
  (page['properties'] as Record<string, JsonSchema>)['items'] = {
    type: 'array',
    items: entry(properties['items']?.['items'] as JsonSchema),
  };
  return page;
}

/** A result listing records: `items`, an array of objects, and at most `nextCursor` beside it. */
export function isPage(schema: JsonSchema): boolean {
  const properties = schema['properties'];
  if (!isSchema(properties) || !Object.keys(properties).every((name) => name === 'items' || name === 'nextCursor')) {
    return false;
  }
  const items = properties['items'];
  return (
    isSchema(items) && items['type'] === 'array' && isSchema(items['items']) && isSchema(items['items']['properties'])
  );
}

/** Objects and unions smaller than this stay inline: a `$ref` would save too little. */
const MIN_HOISTED_BYTES = 200;

/**
 * Writes each object (or union) that occurs more than once in `root` once,
 * under `$defs`, named by its zod title, and points every occurrence at it
 * with `$ref` (the same in draft-07 and 2020-12; the SDK client's Ajv
 * resolves it, and the MCP Inspector's portability check accepts local refs).
 */
function hoistRepeats(root: JsonSchema): JsonSchema {
  const counts = new Map<string, number>();
  const count = (node: JsonSchema): void => {
    for (const child of subschemasOf(node)) {
      const key = JSON.stringify(child);
      if (isHoistable(child, key)) counts.set(key, (counts.get(key) ?? 0) + 1);
      count(child);
    }
  };
  count(root);
  const defs: Record<string, JsonSchema> = {};
  const names = new Map<string, string>();
  const replace = (node: JsonSchema): JsonSchema => {
    const key = JSON.stringify(node);
    if ((counts.get(key) ?? 0) < 2) return mapSubschemas(node, replace);
    let name = names.get(key);
    if (name === undefined) {
      const title = node['title'];
      name = typeof title === 'string' && !(title in defs) ? title : `Repeated${String(names.size + 1)}`;
      names.set(key, name);
      // Written whole: whatever repeats inside it repeats only because it does.
      defs[name] = node;
    }
    return { $ref: `#/$defs/${name}` };
  };
  const lean = mapSubschemas(root, replace);
  return Object.keys(defs).length > 0 ? { ...lean, $defs: defs } : lean;
}

function isHoistable(schema: JsonSchema, key: string): boolean {
  return key.length >= MIN_HOISTED_BYTES && (schema['type'] === 'object' || Array.isArray(schema['oneOf']));
}

/** The direct subschemas of `schema`. */
function subschemasOf(schema: JsonSchema): JsonSchema[] {
  const found: JsonSchema[] = [];
  mapSubschemas(schema, (child) => {
    found.push(child);
    return child;
  });
  return found;
}

/** `schema` with each direct subschema replaced by `map(subschema)`. */
function mapSubschemas(schema: JsonSchema, map: (child: JsonSchema) => JsonSchema): JsonSchema {
  const mapped: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DATA_KEYWORDS.has(key)) mapped[key] = value;
    else if (SCHEMA_MAPS.has(key) && isSchema(value)) {
      mapped[key] = Object.fromEntries(
        Object.entries(value).map(([name, entry]) => [name, isSchema(entry) ? map(entry) : entry]),
      );
    } else if (Array.isArray(value))
      mapped[key] = (value as unknown[]).map((entry) => (isSchema(entry) ? map(entry) : entry));
    else mapped[key] = isSchema(value) ? map(value) : value;
  }
  return mapped;
}

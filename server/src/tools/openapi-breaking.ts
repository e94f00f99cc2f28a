/**
 * What an integrator's generated client or contract test would trip over when
 * the OpenAPI document changes: a removed path, a removed method, a removed
 * response field, or a removed enum value (in a parameter, a request body or
 * a response). Additions are never breaking and are not reported.
 */
type Schema = Record<string, unknown>;
type Document = { paths?: Record<string, Record<string, unknown>>; components?: { schemas?: Record<string, Schema> } };

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

interface Shape {
  /** Dotted response field paths, e.g. `GET /api/wellness 200 items[].hrv`. */
  readonly fields: Set<string>;
  /** Enum values by where they are allowed, e.g. `POST /api/x body sport` -> `run`. */
  readonly enums: Map<string, Set<string>>;
}

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null;

function resolve(document: Document, schema: Schema, seen: ReadonlySet<string>): [Schema, ReadonlySet<string>] {
  const ref = schema['$ref'];
  if (typeof ref !== 'string') return [schema, seen];
  const name = ref.replace('#/components/schemas/', '');
  const target = document.components?.schemas?.[name];
  // A recursive schema is walked once per path: the second visit stops.
  if (!target || seen.has(name)) return [{}, seen];
  return resolve(document, target, new Set([...seen, name]));
}

/** Walks one schema, recording its enums under `where` and, for responses, its fields. */
function walk(
  document: Document,
  raw: unknown,
  where: string,
  shape: Shape,
  recordFields: boolean,
  seen: ReadonlySet<string> = new Set(),
): void {
  if (!isSchema(raw)) return;
  const [schema, inside] = resolve(document, raw, seen);
  // A `const` (JSON Schema 2020-12, OpenAPI 3.1) is a one-value enum.
  const allowed = Array.isArray(schema['enum']) ? schema['enum'] : 'const' in schema ? [schema['const']] : undefined;
  if (allowed) {
    const values = shape.enums.get(where) ?? new Set<string>();
    for (const value of allowed) values.add(JSON.stringify(value));
    shape.enums.set(where, values);
  }
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    const parts = schema[key];
    if (Array.isArray(parts)) for (const part of parts) walk(document, part, where, shape, recordFields, inside);
  }
  if (isSchema(schema['items'])) walk(document, schema['items'], `${where}[]`, shape, recordFields, inside);
  const properties = schema['properties'];
  if (isSchema(properties)) {
    for (const [name, property] of Object.entries(properties)) {
      const path = where.endsWith(' ') ? `${where}${name}` : `${where}.${name}`;
      if (recordFields) shape.fields.add(path);
      walk(document, property, path, shape, recordFields, inside);
    }
  }
}

function shapeOf(document: Document): Shape {
  const shape: Shape = { fields: new Set(), enums: new Map() };
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!isSchema(operation)) continue;
      const route = `${method.toUpperCase()} ${path}`;
      const parameters = Array.isArray(operation['parameters']) ? operation['parameters'] : [];
      for (const parameter of parameters.filter(isSchema)) {
        walk(
          document,
          parameter['schema'],
          `${route} ${String(parameter['in'])} ${String(parameter['name'])}`,
          shape,
          false,
        );
      }
      const body = operation['requestBody'];
      if (isSchema(body) && isSchema(body['content'])) {
        for (const [type, media] of Object.entries(body['content'])) {
          if (isSchema(media)) walk(document, media['schema'], `${route} body ${type} `, shape, false);
        }
      }
      const responses = operation['responses'];
      if (!isSchema(responses)) continue;
      for (const [status, response] of Object.entries(responses)) {
        if (!isSchema(response) || !isSchema(response['content'])) continue;
        for (const [type, media] of Object.entries(response['content'])) {
          if (isSchema(media)) walk(document, media['schema'], `${route} ${status} ${type} `, shape, true);
        }
      }
    }
  }
  return shape;
}

/** Each breaking change from `before` to `after`, in words. */
export function breakingChanges(before: Document, after: Document): string[] {
  const changes: string[] = [];
  for (const [path, item] of Object.entries(before.paths ?? {})) {
    const now = after.paths?.[path];
    if (!now) {
      changes.push(`removed path ${path}`);
      continue;
    }
    for (const method of METHODS) {
      if (item[method] !== undefined && now[method] === undefined)
        changes.push(`removed method ${method.toUpperCase()} ${path}`);
    }
  }
  const was = shapeOf(before);
  const is = shapeOf(after);
  for (const field of was.fields) {
    // A field under a removed path or method is already reported above.
    const route = field.split(' ').slice(0, 2).join(' ');
    const [method = '', path = ''] = route.split(' ');
    if (after.paths?.[path]?.[method.toLowerCase()] === undefined) continue;
    if (!is.fields.has(field)) changes.push(`removed response field ${field}`);
  }
  for (const [where, values] of was.enums) {
    const now = is.enums.get(where);
    if (!now) continue; // the field or parameter itself went (reported above) or stopped being an enum (wider)
    for (const value of values) if (!now.has(value)) changes.push(`removed enum value ${value} at ${where.trim()}`);
  }
  return changes;
}

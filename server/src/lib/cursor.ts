import { AppError } from '../errors.ts';

/** A UUID in its text form (any version), as PostgreSQL's `uuid` type prints it. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Keyset cursors of every list: the position where the previous page ended,
 * as base64url JSON with short keys, so clients treat it as opaque.
 */
export function encodeCursor(position: Readonly<Record<string, string>>): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/**
 * The position in `cursor`, as `read` finds it in the decoded string fields;
 * `read` answers `undefined` for anything it does not accept. Anything
 * undecodable or refused is 400 `invalid_cursor` naming the `cursor` field.
 */
export function decodeCursor<T>(cursor: string, read: (fields: Readonly<Record<string, string>>) => T | undefined): T {
  let position: T | undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const fields = Object.fromEntries(
        Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      );
      position = read(fields);
    }
  } catch {
    // not base64url JSON: refused below
  }
  if (position === undefined) {
    throw new AppError('invalid_cursor', 'The cursor is not one this API issued.', {
      errors: [{ path: 'cursor', message: 'not a cursor this API issued' }],
    });
  }
  return position;
}

/** One page of a keyset list, as every list answers it. */
export interface KeysetPage<T> {
  readonly items: T[];
  /** Where the next page starts, or `null` on the last page. */
  readonly nextCursor: string | null;
}

/**
 * The page out of `rows`, which the repository read with `limit + 1`: the
 * extra row is never shown, it only says that a next page exists. The cursor
 * is the position of the last row shown.
 */
export function keysetPage<R, T>(
  rows: readonly R[],
  limit: number,
  toItem: (row: R) => T,
  cursorOf: (last: R) => string,
): KeysetPage<T> {
  const shown = rows.length > limit ? rows.slice(0, limit) : rows;
  const last = shown.at(-1);
  return { items: shown.map(toItem), nextCursor: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}

import { LocalDateSchema } from '@pacer/contract';
import { AppError } from '../../errors.ts';

/**
 * Where the previous page ended, in the list's order: date, then start time
 * (`''` for a workout without one, so it sorts first), then id. Dates alone
 * are not unique here, unlike wellness days, so the cursor carries all three.
 */
export interface PlannedWorkoutPosition {
  readonly date: string;
  readonly time: string;
  readonly id: string;
}

const TIME = /^(?:|\d{2}:\d{2})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** base64url JSON, like the date cursor, so clients treat it as opaque. */
export function encodePlannedWorkoutCursor(position: PlannedWorkoutPosition): string {
  return Buffer.from(JSON.stringify({ d: position.date, t: position.time, i: position.id })).toString('base64url');
}

export function decodePlannedWorkoutCursor(cursor: string): PlannedWorkoutPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (value && typeof value === 'object' && 'd' in value && 't' in value && 'i' in value) {
      const { d, t, i } = value;
      if (
        typeof d === 'string' &&
        LocalDateSchema.safeParse(d).success &&
        typeof t === 'string' &&
        TIME.test(t) &&
        typeof i === 'string' &&
        UUID.test(i)
      ) {
        return { date: d, time: t, id: i };
      }
    }
  } catch {
    // fall through
  }
  throw new AppError('invalid_cursor', 'The cursor is not one this API issued.', {
    errors: [{ path: 'cursor', message: 'not a cursor this API issued' }],
  });
}

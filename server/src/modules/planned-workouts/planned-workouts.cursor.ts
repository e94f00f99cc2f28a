import { LocalDateSchema } from '@pacer/contract';
import { decodeCursor, encodeCursor, UUID_PATTERN } from '../../lib/cursor.ts';

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

export function encodePlannedWorkoutCursor(position: PlannedWorkoutPosition): string {
  return encodeCursor({ d: position.date, t: position.time, i: position.id });
}

export function decodePlannedWorkoutCursor(cursor: string): PlannedWorkoutPosition {
  return decodeCursor(cursor, ({ d, t, i }) =>
    d !== undefined &&
    LocalDateSchema.safeParse(d).success &&
    t !== undefined &&
    TIME.test(t) &&
    i !== undefined &&
    UUID_PATTERN.test(i)
      ? { date: d, time: t, id: i }
      : undefined,
  );
}

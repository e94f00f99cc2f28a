import { DATE_RANGE_MAX_DAYS, type DateRangeQuery } from '@pacer/contract';
import { AppError } from '../errors.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { addDays, daysBetween, localDateOf } from './dates.ts';

export interface DatePage {
  readonly from: string;
  readonly to: string;
  /** Exclusive lower bound from the cursor: rows after this date. */
  readonly after: string | undefined;
  readonly limit: number;
}

const DEFAULT_RANGE_DAYS = 30;

/**
 * Turn `?from&to&limit&cursor` into a bounded range. `to` defaults to today in
 * the user's time zone, `from` to 29 days before `to`; a range over
 * DATE_RANGE_MAX_DAYS days is refused.
 */
export function resolveDatePage(query: DateRangeQuery, timeZone: string): DatePage {
  const to = query.to ?? (query.from ? addDays(query.from, DEFAULT_RANGE_DAYS - 1) : localDateOf(new Date(), timeZone));
  const from = query.from ?? addDays(to, -(DEFAULT_RANGE_DAYS - 1));
  if (from > to) throw AppError.validation('from', 'must not be after `to`');
  if (daysBetween(from, to) + 1 > DATE_RANGE_MAX_DAYS) {
    throw new AppError('date_range_too_large', `A range may span at most ${DATE_RANGE_MAX_DAYS} days.`, {
      errors: [{ path: 'to', message: `at most ${DATE_RANGE_MAX_DAYS} days after \`from\`` }],
    });
  }
  return {
    from,
    to,
    after: query.cursor === undefined ? undefined : decodeDateCursor(query.cursor),
    limit: query.limit,
  };
}

/** Keyset cursor: the last date of the previous page. */
export function encodeDateCursor(lastDate: string): string {
  return encodeCursor({ d: lastDate });
}

function decodeDateCursor(cursor: string): string {
  return decodeCursor(cursor, ({ d }) => (d !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(d) ? d : undefined));
}

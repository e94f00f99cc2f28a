import { AppError } from '../errors.ts';

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** Date part, then time, then an optional `Z` or `±hh:mm` offset. */
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

export function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** One date formatter per zone (building one costs far more than using it). */
const localDateFormats = new Map<string, Intl.DateTimeFormat>();

/** The calendar date (`YYYY-MM-DD`) of an instant in an IANA time zone. */
export function localDateOf(instant: Date, timeZone: string): string {
  let format = localDateFormats.get(timeZone);
  if (!format) {
    // en-CA formats dates as YYYY-MM-DD.
    format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    if (localDateFormats.size > 1000) localDateFormats.clear();
    localDateFormats.set(timeZone, format);
  }
  return format.format(instant);
}

/**
 * Resolve a `date` field to the user's calendar date (docs/design.md §3 "Dates"):
 * - `YYYY-MM-DD` is taken as is;
 * - a timestamp with an offset (`2026-11-20T23:30:00-05:00`) is the date in its
 *   own offset, which is the date written in it;
 * - a `Z` timestamp is an instant in UTC, converted with the profile time zone;
 * - a timestamp without an offset is local wall-clock time: its written date.
 */
export function resolveLocalDate(input: string, profileTimeZone: string, field = 'date'): string {
  if (DATE_ONLY.test(input)) return input;
  const match = TIMESTAMP.exec(input);
  if (!match) throw AppError.validation(field, 'must be YYYY-MM-DD or an ISO 8601 timestamp');
  const [, datePart, offset] = match;
  if (offset?.toUpperCase() === 'Z') {
    const instant = new Date(input);
    if (Number.isNaN(instant.getTime())) throw AppError.validation(field, 'is not a valid timestamp');
    return localDateOf(instant, profileTimeZone);
  }
  return datePart as string;
}

/** Offset of an ISO 8601 timestamp, in minutes east of UTC (`Z` = 0). */
export function offsetMinutesOf(timestamp: string): number {
  const match = /(Z|([+-])(\d{2}):?(\d{2}))$/i.exec(timestamp);
  if (!match || match[1]?.toUpperCase() === 'Z') return 0;
  const sign = match[2] === '-' ? -1 : 1;
  return sign * (Number(match[3]) * 60 + Number(match[4]));
}

/** Format an instant in a fixed offset: `2026-11-20T07:30:00.000+01:00`. */
export function formatWithOffset(instant: Date, offsetMinutes: number): string {
  const shifted = new Date(instant.getTime() + offsetMinutes * 60_000);
  const base = shifted.toISOString().slice(0, -1);
  if (offsetMinutes === 0) return `${base}Z`;
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${base}${sign}${hh}:${mm}`;
}

export function addDays(date: string, days: number): string {
  const instant = new Date(`${date}T00:00:00Z`);
  instant.setUTCDate(instant.getUTCDate() + days);
  return instant.toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (positive when `to` is later). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/** Building an Intl formatter costs far more than using one: one per zone, kept. */
const wallClockFormats = new Map<string, Intl.DateTimeFormat>();

function wallClockFormat(timeZone: string): Intl.DateTimeFormat {
  let format = wallClockFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    if (wallClockFormats.size > 1000) wallClockFormats.clear();
    wallClockFormats.set(timeZone, format);
  }
  return format;
}

/** Minutes east of UTC that an IANA zone is at `instant` (DST included). */
export function zoneOffsetMinutes(instant: Date, timeZone: string): number {
  const parts = wallClockFormat(timeZone).formatToParts(instant);
  const field = (type: string) => Number(parts.find((part) => part.type === type)?.value);
  const wall = Date.UTC(
    field('year'),
    field('month') - 1,
    field('day'),
    field('hour'),
    field('minute'),
    field('second'),
  );
  return Math.round((wall - Math.floor(instant.getTime() / 1000) * 1000) / 60_000);
}

export interface LocalTime {
  readonly date: string;
  readonly time: string;
  readonly weekday: string;
  readonly time_zone: string;
  readonly utc_offset: string;
  readonly now: string;
}

const WEEKDAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

/** The weekday of a calendar date (`YYYY-MM-DD`), in English: the same in every zone, so no formatter is needed. */
export function weekdayOf(date: string): string {
  return WEEKDAY_NAMES[new Date(`${date}T00:00:00Z`).getUTCDay()] as string;
}

/** What `get_current_time` answers: the instant as the athlete's clock and calendar show it. */
export function currentTimeOf(instant: Date, timeZone: string): LocalTime {
  const offset = zoneOffsetMinutes(instant, timeZone);
  const now = formatWithOffset(new Date(Math.floor(instant.getTime() / 1000) * 1000), offset).replace('.000', '');
  const date = now.slice(0, 10);
  return {
    date,
    time: now.slice(11, 19),
    weekday: weekdayOf(date),
    time_zone: timeZone,
    utc_offset: offset === 0 ? '+00:00' : now.slice(19),
    now,
  };
}

/**
 * The instant a local wall-clock time happens in a zone, epoch ms. At a DST
 * gap the time is read with the offset before the change; at an overlap, the
 * first occurrence.
 */
export function zonedTimeMs(date: string, time: string, timeZone: string): number {
  const [hour = 0, minute = 0] = time.split(':').map(Number);
  const wall = Date.parse(`${date}T00:00:00Z`) + (hour * 60 + minute) * 60_000;
  let guess = wall - zoneOffsetMinutes(new Date(wall), timeZone) * 60_000;
  guess = wall - zoneOffsetMinutes(new Date(guess), timeZone) * 60_000;
  return guess;
}

/** Local midnight starting `date` in a zone, epoch ms (a day has 23, 24 or 25 hours). */
export function localMidnightMs(date: string, timeZone: string): number {
  return zonedTimeMs(date, '00:00', timeZone);
}

/** An instant as ISO 8601 with the zone's offset at that instant, seconds precision. */
export function formatInZone(atMs: number, timeZone: string): string {
  const instant = new Date(Math.floor(atMs / 1000) * 1000);
  return formatWithOffset(instant, zoneOffsetMinutes(instant, timeZone)).replace('.000', '');
}

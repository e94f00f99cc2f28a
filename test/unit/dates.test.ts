import { describe, expect, it } from 'vitest';
import { AppError } from '../../server/src/errors.ts';
import { resolveDatePage } from '../../server/src/lib/date-range.ts';
import {
  addDays,
  currentTimeOf,
  formatWithOffset,
  localDateOf,
  offsetMinutesOf,
  resolveLocalDate,
} from '../../server/src/lib/dates.ts';

describe('calendar dates of the user (docs/design.md §3 "Dates")', () => {
  it('keeps YYYY-MM-DD as it is', () => {
    expect(resolveLocalDate('2026-11-20', 'Asia/Tokyo')).toBe('2026-11-20');
  });

  it("uses a timestamp's own offset", () => {
    expect(resolveLocalDate('2026-11-20T23:30:00-05:00', 'Asia/Tokyo')).toBe('2026-11-20');
    expect(resolveLocalDate('2026-11-21T00:30:00+14:00', 'UTC')).toBe('2026-11-21');
  });

  it('converts Z timestamps with the profile time zone, across DST', () => {
    expect(resolveLocalDate('2026-11-21T03:00:00Z', 'America/New_York')).toBe('2026-11-20');
    expect(resolveLocalDate('2026-11-20T23:30:00Z', 'Europe/Berlin')).toBe('2026-11-21');
    // 2026-03-29 01:30Z is 03:30 CEST in Berlin (after the spring change).
    expect(resolveLocalDate('2026-03-28T23:30:00.000Z', 'Europe/Berlin')).toBe('2026-03-29');
  });

  it('takes a timestamp without offset as local wall-clock time', () => {
    expect(resolveLocalDate('2026-11-20T23:30:00', 'Asia/Tokyo')).toBe('2026-11-20');
  });

  it('refuses other shapes', () => {
    expect(() => resolveLocalDate('20.11.2026', 'UTC')).toThrow(AppError);
  });

  it('formats an instant in the offset it was sent in', () => {
    const instant = new Date('2026-11-20T08:30:00Z');
    expect(formatWithOffset(instant, 60)).toBe('2026-11-20T09:30:00.000+01:00');
    expect(formatWithOffset(instant, -330)).toBe('2026-11-20T03:00:00.000-05:30');
    expect(formatWithOffset(instant, 0)).toBe('2026-11-20T08:30:00.000Z');
    expect(offsetMinutesOf('2026-11-20T09:30:00-05:30')).toBe(-330);
    expect(offsetMinutesOf('2026-11-20T09:30:00Z')).toBe(0);
  });

  it('knows today in a zone', () => {
    expect(localDateOf(new Date('2026-01-01T02:00:00Z'), 'America/Los_Angeles')).toBe('2025-12-31');
  });
});

describe('date ranges for lists', () => {
  it('defaults to the 30 days up to today', () => {
    const page = resolveDatePage({ limit: 50 }, 'UTC');
    expect(addDays(page.from, 29)).toBe(page.to);
  });

  it('allows exactly 366 days and refuses 367', () => {
    expect(resolveDatePage({ from: '2024-01-01', to: '2024-12-31', limit: 50 }, 'UTC').to).toBe('2024-12-31');
    expect(() => resolveDatePage({ from: '2024-01-01', to: '2025-01-01', limit: 50 }, 'UTC')).toThrow(
      /at most 366 days/,
    );
  });
});

describe("the athlete's current time (get_current_time, the recommendations' clock)", () => {
  it("gives the local date, time and weekday of an instant in the athlete's zone", () => {
    // Sunday 29 November, 23:30 UTC: already Monday in Auckland (+13:00), still Sunday afternoon in Los Angeles.
    const instant = new Date('2026-11-29T23:30:00Z');
    expect(currentTimeOf(instant, 'Pacific/Auckland')).toEqual({
      date: '2026-11-30',
      time: '12:30:00',
      weekday: 'Monday',
      time_zone: 'Pacific/Auckland',
      utc_offset: '+13:00',
      now: '2026-11-30T12:30:00+13:00',
    });
    expect(currentTimeOf(instant, 'America/Los_Angeles')).toMatchObject({
      date: '2026-11-29',
      time: '15:30:00',
      weekday: 'Sunday',
      utc_offset: '-08:00',
    });
    expect(currentTimeOf(instant, 'UTC')).toMatchObject({ weekday: 'Sunday', utc_offset: '+00:00' });
  });

  it("names the same weekday as the platform's own formatter, hour by hour over a fortnight and across zones", () => {
    const zones = [
      'UTC',
      'Europe/Berlin',
      'Asia/Kolkata',
      'Pacific/Kiritimati',
      'Pacific/Pago_Pago',
      'America/St_Johns',
    ];
    for (let hour = 0; hour < 14 * 24; hour += 1) {
      const instant = new Date(Date.UTC(2026, 2, 20) + hour * 3_600_000);
      for (const timeZone of zones) {
        const expected = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'long' }).format(instant);
        expect([timeZone, instant.toISOString(), currentTimeOf(instant, timeZone).weekday]).toEqual([
          timeZone,
          instant.toISOString(),
          expected,
        ]);
      }
    }
  });
});

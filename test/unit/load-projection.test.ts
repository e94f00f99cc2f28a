/**
 * The load chart's outlook (docs/science.md §1.1): the projection continues
 * the CTL / ATL chain from a stored day with the planned stress, and the form
 * zones band absolute TSB.
 */
import { describe, expect, it } from 'vitest';
import {
  FORM_ZONE_BOUNDS,
  FORM_ZONES,
  formZoneOf,
  projectTrainingLoad,
} from '../../server/src/modules/derived/load-projection.ts';

describe('projectTrainingLoad', () => {
  it('reproduces the worked example: CTL 50, ATL 60, then 100 TSS tomorrow and nothing the day after', () => {
    const days = projectTrainingLoad(
      { date: '2026-03-10', ctl: 50, atl: 60 },
      [{ date: '2026-03-11', tss: 100, method: 'estimate' }],
      2,
    );
    expect(days.map((day) => day.date)).toEqual(['2026-03-11', '2026-03-12']);
    const [tomorrow, after] = days;
    expect(tomorrow?.tss).toBe(100);
    expect(tomorrow?.tsb).toBeCloseTo(-10, 10);
    expect(tomorrow?.ctl).toBeCloseTo(51.1905, 4);
    expect(tomorrow?.atl).toBeCloseTo(65.7143, 4);
    expect(after?.tss).toBe(0);
    expect(after?.tsb).toBeCloseTo(-14.5238, 4);
    expect(after?.ctl).toBeCloseTo(49.9717, 4);
    expect(after?.atl).toBeCloseTo(56.3265, 4);
  });

  it('projects 14 days by default, summing workouts of one day and ignoring stress outside the window', () => {
    const days = projectTrainingLoad({ date: '2026-03-10', ctl: 40, atl: 40 }, [
      { date: '2026-03-10', tss: 500, method: 'estimate' },
      { date: '2026-03-12', tss: 60, method: 'estimate' },
      { date: '2026-03-12', tss: 40, method: 'power' },
      { date: '2026-03-25', tss: 300, method: 'estimate' },
    ]);
    expect(days).toHaveLength(14);
    expect(days[0]?.date).toBe('2026-03-11');
    expect(days.at(-1)?.date).toBe('2026-03-24');
    expect(days[1]?.tss).toBe(100);
    expect(days.reduce((sum, day) => sum + day.tss, 0)).toBe(100);
    // Nothing planned the first day: the chain decays from the stored state.
    expect(days[0]?.ctl).toBeCloseTo(40 * (41 / 42), 12);
  });
});

describe('form zones', () => {
  it('bands absolute TSB as transition > +25, fresh +5..+25, grey −10..+5, optimal −30..−10, high risk < −30', () => {
    expect(formZoneOf(30)).toBe('transition');
    expect(formZoneOf(25)).toBe('transition');
    expect(formZoneOf(10)).toBe('fresh');
    expect(formZoneOf(5)).toBe('fresh');
    expect(formZoneOf(0)).toBe('grey');
    expect(formZoneOf(-10)).toBe('grey');
    expect(formZoneOf(-10.1)).toBe('optimal');
    expect(formZoneOf(-30)).toBe('optimal');
    expect(formZoneOf(-30.1)).toBe('high_risk');
  });

  it('leaves no gap and no overlap between the zones', () => {
    for (let index = 1; index < FORM_ZONES.length; index += 1) {
      const above = FORM_ZONES[index - 1];
      const below = FORM_ZONES[index];
      if (above === undefined || below === undefined) throw new Error('zone missing');
      expect(FORM_ZONE_BOUNDS[below].to).toBe(FORM_ZONE_BOUNDS[above].from);
    }
  });
});

/**
 * The load chart's outlook (docs/science.md §1.1): the projection continues
 * the CTL / ATL chain from a stored day with the planned stress; the form
 * zones (percent of fitness) are the recovery model's.
 */
import { describe, expect, it } from 'vitest';
import { projectTrainingLoad } from '../../server/src/modules/derived/load-projection.ts';
import {
  FORM_ZONE_PERCENT_BOUNDS,
  FORM_ZONES,
  formPercentOf,
  formZoneOfPercent,
} from '../../server/src/modules/derived/recovery.model.ts';

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

describe('form zones (percent of fitness, shared with the recovery model)', () => {
  it('bands form % as transition > +20, fresh +5..+20, grey −10..+5, optimal −30..−10, high risk < −30', () => {
    expect(formZoneOfPercent(30)).toBe('transition');
    expect(formZoneOfPercent(20.1)).toBe('transition');
    expect(formZoneOfPercent(20)).toBe('fresh');
    expect(formZoneOfPercent(5.1)).toBe('fresh');
    expect(formZoneOfPercent(5)).toBe('grey');
    expect(formZoneOfPercent(0)).toBe('grey');
    expect(formZoneOfPercent(-9.9)).toBe('grey');
    expect(formZoneOfPercent(-10)).toBe('optimal');
    expect(formZoneOfPercent(-30)).toBe('optimal');
    expect(formZoneOfPercent(-30.1)).toBe('high_risk');
  });

  it('leaves no gap and no overlap between the zones', () => {
    for (let index = 1; index < FORM_ZONES.length; index += 1) {
      const above = FORM_ZONES[index - 1];
      const below = FORM_ZONES[index];
      if (above === undefined || below === undefined) throw new Error('zone missing');
      expect(FORM_ZONE_PERCENT_BOUNDS[below].to).toBe(FORM_ZONE_PERCENT_BOUNDS[above].from);
    }
  });

  it('reads form as 100 · TSB / max(CTL entering the day, 10): the worked examples of §1.1', () => {
    // CTL 50 the day before, TSB −10: −20 %, optimal.
    expect(formPercentOf(-10, 50)).toBeCloseTo(-20, 12);
    // CTL 58, ATL 88: TSB −30 is −51.72 %, high risk.
    expect(formPercentOf(-30, 58)).toBeCloseTo(-51.7241, 4);
    expect(formZoneOfPercent(formPercentOf(-30, 58))).toBe('high_risk');
    // CTL 5 counts as 10.
    expect(formPercentOf(-4, 5)).toBeCloseTo(-40, 12);
  });
});

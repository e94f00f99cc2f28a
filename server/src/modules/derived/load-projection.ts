/**
 * The load chart's outlook (docs/science.md §1.1): the ramp rate, the form
 * zones, and CTL / ATL / TSB continued over the next days with the planned
 * workouts' stress. Pure functions over the training-load model's own chain
 * (`trainingLoadSeries` started from a stored day): no database, no clock.
 */
import { addDays } from '../../lib/dates.ts';
import { type DatedStress, type TrainingLoadState, trainingLoadSeries } from './training-load.model.ts';

/** Days projected after the last stored day (docs/science.md §1.1). */
export const LOAD_PROJECTION_DAYS = 14;

/** The form (TSB) zones of TrainingPeaks and intervals.icu, in absolute TSB (docs/science.md §1.1). */
export const FORM_ZONES = ['transition', 'fresh', 'grey', 'optimal', 'high_risk'] as const;
export type FormZone = (typeof FORM_ZONES)[number];

/** Each zone's TSB range: `from` inclusive, `to` exclusive; open ends are infinite. */
export const FORM_ZONE_BOUNDS: Readonly<Record<FormZone, { readonly from: number; readonly to: number }>> = {
  transition: { from: 25, to: Number.POSITIVE_INFINITY },
  fresh: { from: 5, to: 25 },
  grey: { from: -10, to: 5 },
  optimal: { from: -30, to: -10 },
  high_risk: { from: Number.NEGATIVE_INFINITY, to: -30 },
};

/** The zone a TSB value falls in (a value on a boundary belongs to the zone above it). */
export function formZoneOf(tsb: number): FormZone {
  return FORM_ZONES.find((zone) => tsb >= FORM_ZONE_BOUNDS[zone].from) ?? 'high_risk';
}

/** One projected day: the planned stress and the chain's numbers, as a stored day has them. */
export interface ProjectedLoadDay {
  readonly date: string;
  readonly tss: number;
  readonly atl: number;
  readonly ctl: number;
  readonly tsb: number;
}

/**
 * CTL, ATL and TSB for the `days` days after `last` (a stored day's end
 * state), with `planned` (per-workout or per-day stress on local dates) as
 * the days' TSS; planned stress outside those days is ignored.
 */
export function projectTrainingLoad(
  last: TrainingLoadState,
  planned: Iterable<DatedStress>,
  days: number = LOAD_PROJECTION_DAYS,
): ProjectedLoadDay[] {
  const fromDate = addDays(last.date, 1);
  const toDate = addDays(last.date, days);
  const inRange = [...planned].filter((item) => item.date >= fromDate && item.date <= toDate);
  return trainingLoadSeries(inRange, { fromDate, toDate, previous: last }).map(({ date, tss, atl, ctl, tsb }) => ({
    date,
    tss,
    atl,
    ctl,
    tsb,
  }));
}

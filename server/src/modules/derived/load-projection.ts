/**
 * The load chart's outlook (docs/science.md §1.1): the ramp rate and CTL /
 * ATL / TSB continued over the next days with the planned
 * workouts' stress. Pure functions over the training-load model's own chain
 * (`trainingLoadSeries` started from a stored day): no database, no clock.
 */
import { addDays } from '../../lib/dates.ts';
import { type DatedStress, type TrainingLoadState, trainingLoadSeries } from './training-load.model.ts';

/** Days projected after the last stored day (docs/science.md §1.1). */
export const LOAD_PROJECTION_DAYS = 14;

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

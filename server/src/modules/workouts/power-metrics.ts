/**
 * Power-based training metrics after Andrew Coggan, as published in H. Allen &
 * A. Coggan, "Training and Racing with a Power Meter" (2nd ed., VeloPress
 * 2010), ch. 7. Pure functions: the FIT decoder worker and the service share
 * them.
 */

/**
 * Gaps up to this long are held at the next sample's value (devices with
 * "smart recording" write every few seconds); longer gaps are pauses and are
 * left out, as NP is computed over recorded (timer) time.
 */
export const MAX_HELD_GAP_SECS = 10;

/** Coggan's rolling window for normalized power. */
export const NP_WINDOW_SECS = 30;

/**
 * A channel as one value per second: a sample stands for the second that
 * ends at it, and for up to MAX_HELD_GAP_SECS seconds before it when the
 * recorder skipped them. `times` (seconds) must be in order; `NaN` values are
 * missing samples; repeated seconds keep the last value. Reads `[from, to)`.
 */
export function perSecond(times: ArrayLike<number>, values: ArrayLike<number>, from = 0, to = times.length): number[] {
  const series: number[] = [];
  let previous: number | undefined;
  for (let i = from; i < to; i += 1) {
    const t = times[i] as number;
    const value = values[i] as number;
    if (Number.isNaN(value)) continue;
    if (previous !== undefined && t <= previous) {
      if (t === previous && series.length > 0) series[series.length - 1] = value;
      continue;
    }
    const gap = previous === undefined ? 1 : t - previous;
    const repeat = gap <= MAX_HELD_GAP_SECS ? Math.max(1, Math.round(gap)) : 1;
    for (let k = 0; k < repeat; k += 1) series.push(value);
    previous = t;
  }
  return series;
}

/**
 * Normalized power (Allen & Coggan 2010): the 30-second rolling average of
 * power, each raised to the fourth power, averaged, and the fourth root taken.
 * The first average is taken once 30 seconds of data exist. `null` for less
 * than 30 seconds of power.
 */
export function normalizedPower(perSecondPower: readonly number[]): number | null {
  if (perSecondPower.length < NP_WINDOW_SECS) return null;
  let windowSum = 0;
  let sumOfFourthPowers = 0;
  let count = 0;
  for (let i = 0; i < perSecondPower.length; i += 1) {
    windowSum += perSecondPower[i] as number;
    if (i >= NP_WINDOW_SECS) windowSum -= perSecondPower[i - NP_WINDOW_SECS] as number;
    if (i >= NP_WINDOW_SECS - 1) {
      sumOfFourthPowers += (windowSum / NP_WINDOW_SECS) ** 4;
      count += 1;
    }
  }
  return (sumOfFourthPowers / count) ** 0.25;
}

/**
 * Training Stress Score (Allen & Coggan 2010):
 * TSS = (secs × NP × IF) / (FTP × 3600) × 100, with intensity factor IF = NP / FTP,
 * so one hour at FTP scores 100. `null` when NP, FTP or the duration is unknown,
 * and for an NP of 0 (a power meter that wrote only zeros): no power-based score
 * from a false zero, as the training load model does (training-load.model.ts).
 */
export function trainingStressScore(options: {
  readonly secs: number | null;
  readonly normalizedPower: number | null;
  readonly ftpWatts: number | null;
}): number | null {
  const { secs, normalizedPower: np, ftpWatts: ftp } = options;
  if (secs === null || np === null || np <= 0 || ftp === null || ftp <= 0 || secs <= 0) return null;
  const intensityFactor = np / ftp;
  return ((secs * np * intensityFactor) / (ftp * 3600)) * 100;
}

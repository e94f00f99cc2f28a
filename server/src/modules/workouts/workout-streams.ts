import type { ActivityStreams } from './fit-activity.ts';

/** The streams as stored in `workout_streams.streams` (built by the decoder worker). */
export type StoredStreams = ActivityStreams;

/** Channels whose down-sampled value is the mean of the bucket: rates and levels. */
const AVERAGED = ['heartRate', 'power', 'cadence', 'speed', 'altitude'] as const;
/** Channels whose down-sampled value is the bucket's first sample: where and when, not how much. */
const FIRST = ['distance', 'latitude', 'longitude'] as const;

function meanOf(values: readonly (number | null)[], from: number, to: number): number | null {
  let sum = 0;
  let count = 0;
  for (let i = from; i < to; i += 1) {
    const value = values[i];
    if (value !== null && value !== undefined) {
      sum += value;
      count += 1;
    }
  }
  return count === 0 ? null : Math.round((sum / count) * 1000) / 1000;
}

/**
 * At most `maxPoints` points: the samples are cut into `maxPoints` runs of
 * consecutive samples (equal counts, ±1); each run becomes one point at its
 * first sample's time. Rates and levels are the run's mean (so average power
 * and the shape of the curve survive); distance and position are the first
 * sample's, so the track stays on the recorded path.
 */
export function downsampleStreams(streams: StoredStreams, maxPoints: number): StoredStreams {
  const total = streams.time.length;
  if (total <= maxPoints) return streams;
  const starts = Array.from({ length: maxPoints }, (_, bucket) => Math.floor((bucket * total) / maxPoints));
  const ends = starts.map((_, bucket) => starts[bucket + 1] ?? total);

  const result: Record<string, unknown> = { time: starts.map((start) => streams.time[start] as number) };
  for (const key of AVERAGED) {
    const values = streams[key];
    result[key] = values === null ? null : starts.map((start, bucket) => meanOf(values, start, ends[bucket] as number));
  }
  for (const key of FIRST) {
    const values = streams[key];
    result[key] = values === null ? null : starts.map((start) => values[start] ?? null);
  }
  return result as unknown as StoredStreams;
}

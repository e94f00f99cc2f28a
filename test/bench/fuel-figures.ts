/**
 * Issue 21's figures for the closing note (`npm run bench` section
 * `fuel-figures`, e.g. `PACER_BENCH_ONLY=fuel-figures npm run bench`): the
 * realistic athlete (test/support/realistic-athlete.ts) seeded through the
 * REST API of a started server, then, as the API answers them:
 * - tomorrow's 2.5 h ride and the untimed 4 h ride: status, limiting store,
 *   liver and muscle grams at the start, at the lowest point and at the end
 *   (and the liver's lowest anywhere in the ride from the timeline), the
 *   advice's plan lines and items;
 * - the liver's drop over a normal night (dinner to breakfast), grams and %;
 * - the stores at 22:00 after each camp day;
 * - GET /api/fuel/timeline for 14 days (today to today + 13): `requests`
 *   sequential requests after a tenth of them as warm-up, p50/p95/max of the
 *   client-side latency;
 * - last (it logs food), both rides again after eating their advice exactly.
 */
import { performance } from 'node:perf_hooks';
import type { FuelTimeline, PlannedWorkoutFuel } from '@pacer/contract';
import { addDays } from '../../server/src/lib/dates.ts';
import { call } from '../support/http.ts';
import { eatAdvice, seedRealisticAthlete, type RealisticAthlete } from '../support/realistic-athlete.ts';
import { round } from './bench-support.ts';

export { REALISTIC_ATHLETE_SCOPES, REALISTIC_ZONE } from '../support/realistic-athlete.ts';

export interface FuelFiguresOptions {
  readonly serverUrl: string;
  /** A token with REALISTIC_ATHLETE_SCOPES for a fresh user. */
  readonly token: string;
  /** Resolves when the user's derived data is recomputed (no change records left). */
  readonly settled: () => Promise<void>;
  /** Measured timeline requests (default 200). */
  readonly requests?: number;
}

async function get<T>(options: FuelFiguresOptions, path: string): Promise<T> {
  const res = await call<T>(options.serverUrl, 'GET', path, { token: options.token });
  if (res.status !== 200) throw new Error(`GET ${path} answered ${String(res.status)}: ${JSON.stringify(res.body)}`);
  return res.body;
}

const g = (value: number) => `${round(value, 1)} g`;
const level = (label: string, at: PlannedWorkoutFuel['start']) =>
  `${label} ${at.at.slice(11, 16)} liver ${g(at.liverG)}, muscle ${g(at.muscleG)} (${round(at.percent, 1)} %)`;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function rideLines(
  options: FuelFiguresOptions,
  label: string,
  id: string,
  horizon: FuelTimeline,
): Promise<{ lines: string[]; fuel: PlannedWorkoutFuel }> {
  const fuel = await get<PlannedWorkoutFuel>(options, `/api/planned-workouts/${id}/fuel`);
  const drawn = horizon.workouts.find((workout) => workout.id === id);
  const inRide = drawn
    ? horizon.points.filter(
        (point) => Date.parse(point.at) > Date.parse(drawn.start) && Date.parse(point.at) <= Date.parse(drawn.end),
      )
    : [];
  const lowestLiver = inRide.length > 0 ? Math.min(...inRide.map((point) => point.liverG)) : Number.NaN;
  const lines = [
    `  ${label}: status ${fuel.status}, limiting store ${fuel.limitingStore ?? '-'}` +
      (drawn ? ` (${drawn.start.slice(0, 16)} to ${drawn.end.slice(11, 16)}, IF ${drawn.intensityFactor})` : ''),
    `    ${level('start', fuel.start)}; ${level('lowest', fuel.minimum)}; ${level('end', fuel.end)}`,
    `    liver's lowest in the ride (timeline): ${g(lowestLiver)}`,
    `    plan (${fuel.plan.length} lines):`,
    ...fuel.plan.map((line) => `      ${line.phase}: ${line.text}`),
    `    advice (${fuel.advice.length} items):`,
    ...fuel.advice.map(
      (item) => `      ${item.phase} ${item.at.slice(11, 16)} ${g(item.carbsG)} ${item.absorptionType}: ${item.reason}`,
    ),
  ];
  return { lines, fuel };
}

function overnightLines(night: FuelTimeline, athlete: RealisticAthlete): string[] {
  const { dinnerDate, breakfastDate } = athlete.normalNight;
  const dinner = night.points.find((point) => point.at.startsWith(`${dinnerDate}T19:00`));
  const breakfast = night.points.find((point) => point.at.startsWith(`${breakfastDate}T07:30`));
  if (!dinner || !breakfast) return ['  (no points at dinner or breakfast)'];
  const evening = night.points.filter((point) => point.at >= dinner.at && point.at.startsWith(dinnerDate));
  const peak = evening.reduce((best, point) => (point.liverG > best.liverG ? point : best), dinner);
  const drop = peak.liverG - breakfast.liverG;
  return [
    `  ${dinnerDate} dinner (19:00) to ${breakfastDate} breakfast (07:30): liver ${g(peak.liverG)} at ${peak.at.slice(11, 16)} -> ${g(breakfast.liverG)}, ` +
      `−${g(drop)} (−${round((100 * drop) / peak.liverG, 1)} %); muscle ${g(peak.muscleG)} -> ${g(breakfast.muscleG)}`,
  ];
}

function campLines(camp: FuelTimeline, athlete: RealisticAthlete): string[] {
  return athlete.campDates.map((date) => {
    const point = camp.points.find((candidate) => candidate.at.startsWith(`${date}T22:00`));
    const ride = athlete.rides.find((candidate) => candidate.date === date);
    const lowest = camp.points
      .filter((candidate) => candidate.at.startsWith(date))
      .reduce((min, candidate) => Math.min(min, candidate.muscleG), Infinity);
    return point
      ? `  ${date} (${round((ride?.movingSecs ?? 0) / 3600, 1)} h at ${ride?.watts ?? '?'} W): 22:00 liver ${g(point.liverG)}, muscle ${g(point.muscleG)}, ${round(point.percent, 1)} %; muscle's lowest that day ${g(lowest)}`
      : `  ${date}: no 22:00 point`;
  });
}

/** Seed, settle, then the figures as printable lines. */
export async function runFuelFigures(options: FuelFiguresOptions): Promise<string[]> {
  const started = performance.now();
  const athlete = await seedRealisticAthlete(options.serverUrl, options.token);
  const seededMs = performance.now() - started;
  await options.settled();
  const settledMs = performance.now() - started;
  const lines = [
    `  seeded through the API in ${round(seededMs / 1000, 1)} s (${Object.entries(athlete.timings)
      .map(([phase, ms]) => `${phase} ${round(ms / 1000, 1)} s`)
      .join(', ')}); derived data settled at ${round(settledMs / 1000, 1)} s`,
    `  today ${athlete.today}; ${athlete.rides.length} rides, ${athlete.meals.length} meal items, camp ${athlete.campDates[0]} to ${athlete.campDates.at(-1)}, bad week from ${athlete.badWeekDates[0]}`,
  ];
  const horizonPath = `/api/fuel/timeline?from=${athlete.today}&to=${addDays(athlete.today, 13)}`;
  const horizon = await get<FuelTimeline>(options, horizonPath);
  lines.push(
    `  next 14 days: ${horizon.meals.length} meals (${horizon.meals.filter((meal) => meal.source === 'assumed').length} assumed), highest ${round(Math.max(...horizon.points.map((point) => point.percent)), 2)} %`,
  );
  const rides = [
    { label: 'Tomorrow 09:00, 2.5 h, IF 0.75', id: athlete.shortRide.id },
    { label: `${athlete.longRide.date}, untimed, 4 h, IF 0.7`, id: athlete.longRide.id },
  ];
  const advised: PlannedWorkoutFuel[] = [];
  for (const ride of rides) {
    const { lines: rideFigures, fuel } = await rideLines(options, ride.label, ride.id, horizon);
    lines.push(...rideFigures);
    advised.push(fuel);
  }
  lines.push("  Liver's overnight drop on a normal night:");
  const night = await get<FuelTimeline>(
    options,
    `/api/fuel/timeline?from=${athlete.normalNight.dinnerDate}&to=${athlete.normalNight.breakfastDate}`,
  );
  lines.push(...overnightLines(night, athlete));
  lines.push('  Stores at 22:00 after each camp day:');
  const camp = await get<FuelTimeline>(
    options,
    `/api/fuel/timeline?from=${athlete.campDates[0]}&to=${athlete.campDates.at(-1)}`,
  );
  lines.push(...campLines(camp, athlete));

  const requests = options.requests ?? 200;
  const once = async () => {
    const begun = performance.now();
    const res = await fetch(`${options.serverUrl}${horizonPath}`, {
      headers: { authorization: `Bearer ${options.token}` },
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET ${horizonPath} answered ${String(res.status)}`);
    return performance.now() - begun;
  };
  for (let i = 0; i < Math.ceil(requests / 10); i += 1) await once();
  const times: number[] = [];
  for (let i = 0; i < requests; i += 1) times.push(await once());
  times.sort((a, b) => a - b);
  lines.push(
    `  GET /api/fuel/timeline, 14 days (${horizon.points.length} points): p50 ${round(percentile(times, 50), 2)} ms, ` +
      `p95 ${round(percentile(times, 95), 2)} ms, max ${round(times.at(-1) ?? Number.NaN, 2)} ms over ${requests} sequential requests (target p50 ≤ 20 ms)`,
  );

  // Last, as it logs food: both rides after eating their advice exactly.
  await eatAdvice(options.serverUrl, options.token, advised);
  await options.settled();
  lines.push('  After eating the advice exactly as given (logged as nutrition items):');
  for (const ride of rides) {
    const fuel = await get<PlannedWorkoutFuel>(options, `/api/planned-workouts/${ride.id}/fuel`);
    lines.push(
      `  ${ride.label}: status ${fuel.status}, limiting store ${fuel.limitingStore ?? '-'}`,
      `    ${level('start', fuel.start)}; ${level('lowest', fuel.minimum)}; ${level('end', fuel.end)}`,
    );
  }
  return lines;
}

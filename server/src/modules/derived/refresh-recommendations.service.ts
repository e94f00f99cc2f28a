import type { PlannedWorkoutFuel } from '@pacer/contract';
import type { DbOrTrx } from '../../db/database.ts';
import { addDays, currentTimeOf } from '../../lib/dates.ts';
import { findUserById } from '../accounts/user.repository.ts';
import { findFirstDataDates, listRecovery, listTrainingLoad } from './analytics.repository.ts';
import { planUpcomingWorkoutsFuel } from './fuel.service.ts';
import { listPlannedWorkouts } from '../planned-workouts/planned-workouts.repository.ts';
import {
  evaluateRecommendationRules,
  LIGHTER_WEEK_DAYS,
  LOOKAHEAD_DAYS,
  RECOVER_STREAK_LOOKBACK_DAYS,
  type PlannedWorkoutInput,
  type RecoveryInput,
} from './recommendation-rules.ts';
import {
  expireOpenRecommendations,
  findLatestDedupeKey,
  upsertOpenRecommendations,
} from './recommendations.repository.ts';

export interface RefreshOutcome {
  /** Recommendations opened, reopened or given new numbers. */
  readonly opened: number;
  readonly expired: number;
}

/** Training load days read for the ramp: the latest and the 7 before it. */
const LOAD_DAYS = 8;
/** Planned workouts read at most for the 7 days the rules look at (a bound, not an expected count). */
const PLANNED_LIMIT = 200;

/**
 * Evaluate the recommendation rules (recommendation-rules.ts) on the stored
 * derived data and bring the user's recommendations in line, in the caller's
 * transaction: the recompute calls this after it has stored training load,
 * recovery and fuel, so the rules read the new numbers and the suggestions
 * commit with them. A new situation opens a recommendation; an open one whose
 * situation no longer holds expires. A handful of small reads, plus the fuel
 * plans of the next days' planned workouts when there are any.
 */
export async function refreshRecommendations(trx: DbOrTrx, userId: string, now: Date): Promise<RefreshOutcome> {
  const user = await findUserById(trx, userId);
  if (!user) return { opened: 0, expired: 0 };
  const clock = currentTimeOf(now, user.timeZone);
  const today = clock.date;
  const [recoveryDays, load, plannedRows, lighterKey, firstData] = await Promise.all([
    // Rule 1 counts the consecutive days in `recover` up to the latest score.
    listRecovery(trx, userId, {
      from: addDays(today, -(RECOVER_STREAK_LOOKBACK_DAYS - 1)),
      to: today,
      after: undefined,
      limit: RECOVER_STREAK_LOOKBACK_DAYS,
    }),
    listTrainingLoad(trx, userId, addDays(today, -(LOAD_DAYS - 1)), today),
    listPlannedWorkouts(trx, userId, {
      from: today,
      to: addDays(today, LIGHTER_WEEK_DAYS - 1),
      after: undefined,
      limit: PLANNED_LIMIT,
    }),
    findLatestDedupeKey(trx, userId, 'lighter_week', `lighter:${addDays(today, -(LIGHTER_WEEK_DAYS - 1))}`),
    findFirstDataDates(trx, userId),
  ]);

  // Today's workouts whose start time has passed are done or missed: no rule acts on them.
  const planned: PlannedWorkoutInput[] = plannedRows
    .filter((row) => row.date > today || row.timeOfDay === null || row.timeOfDay > clock.time.slice(0, 5))
    .map((row) => ({
      id: row.id,
      date: row.date,
      title: row.title,
      sport: row.sport,
      durationSecs: row.durationSecs,
      trainingStress: row.trainingStress,
      structure: row.structure,
    }));

  const lookaheadEnd = addDays(today, LOOKAHEAD_DAYS);
  // The fuel rule follows the athlete's nutrition feature: without food logs every workout looks unfuelled.
  const fuel: PlannedWorkoutFuel[] =
    user.featureFlags.nutrition !== false && planned.some((workout) => workout.date <= lookaheadEnd)
      ? await planUpcomingWorkoutsFuel(trx, userId, { from: today, to: lookaheadEnd }, now)
      : [];

  const suggestions = evaluateRecommendationRules({
    today,
    recovery: latestScored(recoveryDays.filter((day) => day.date >= addDays(today, -1))),
    recentRecovery: recoveryDays.map((day) => ({ date: day.date, status: day.status })),
    firstWorkoutDate: firstData.firstWorkout,
    load,
    planned,
    fuel,
    thresholds: { ftp: user.ftpWatts, thresholdHr: user.thresholdHr },
    lighterWeekStartedOn: lighterKey?.slice('lighter:'.length) ?? null,
  });
  const opened = await upsertOpenRecommendations(trx, userId, suggestions);
  const expired = await expireOpenRecommendations(
    trx,
    userId,
    suggestions.map((suggestion) => suggestion.dedupeKey),
  );
  return { opened, expired };
}

/** The latest of the days that has a score (the caller passes today's and yesterday's). */
function latestScored(
  days: readonly { date: string; score: number | null; status: string }[],
): RecoveryInput | undefined {
  const day = days.filter((candidate) => candidate.score !== null).at(-1);
  return day && day.score !== null ? { date: day.date, score: day.score, status: day.status } : undefined;
}

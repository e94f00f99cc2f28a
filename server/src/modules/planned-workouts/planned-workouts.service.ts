import { keysetPage, type KeysetPage } from '../../lib/cursor.ts';
import type {
  PlannedWorkout,
  PlannedWorkoutCreate,
  PlannedWorkoutListQuery,
  PlannedWorkoutPatch,
} from '@pacer/contract';
import type { Db } from '../../db/database.ts';
import { inTransaction } from '../../db/transaction.ts';
import { type InputWriteDeps, recordChange } from '../changes/changes.repository.ts';
import type { PlannedWorkoutRow } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import { resolveDatePage } from '../../lib/date-range.ts';
import { localDateOf, resolveLocalDate } from '../../lib/dates.ts';
import type { Actor } from '../../lib/actor.ts';
import { decodePlannedWorkoutCursor, encodePlannedWorkoutCursor } from './planned-workouts.cursor.ts';
import {
  deletePlannedWorkout,
  findPlannedWorkout,
  insertPlannedWorkout,
  listPlannedWorkouts,
  updatePlannedWorkout,
  type PlannedWorkoutValues,
} from './planned-workouts.repository.ts';

/** The same answer for an unknown id and another user's id (never a 403 that leaks existence). */
function notFound(id: string): AppError {
  return new AppError('not_found', `No planned workout ${id}.`);
}

/** The optional fields as columns: present overwrite, `null` clears, absent are left out. */
function valuesOf(input: PlannedWorkoutPatch, timeZone: string): PlannedWorkoutValues {
  const values: { -readonly [K in keyof PlannedWorkoutValues]: PlannedWorkoutValues[K] } = {};
  if (input.date !== undefined) values.date = resolveLocalDate(input.date, timeZone);
  if (input.timeOfDay !== undefined) values.timeOfDay = input.timeOfDay;
  if (input.sport !== undefined) values.sport = input.sport;
  if (input.title !== undefined) values.title = input.title;
  if (input.description !== undefined) values.description = input.description;
  if (input.durationSecs !== undefined) values.durationSecs = input.durationSecs;
  if (input.trainingStress !== undefined) values.trainingStress = input.trainingStress;
  if (input.structure !== undefined) {
    values.structure = input.structure === null ? null : JSON.stringify(input.structure);
  }
  return values;
}

/**
 * Plan a workout. The date is the user's calendar date (a timestamp is read
 * as docs/design.md §3 "Dates" says); the calling app is recorded as its source.
 */
export async function createPlannedWorkout(
  deps: InputWriteDeps,
  actor: Actor,
  input: PlannedWorkoutCreate,
): Promise<PlannedWorkout> {
  return inTransaction(deps.db, async (trx) => {
    const row = await insertPlannedWorkout(trx, {
      ...valuesOf(input, actor.timeZone),
      userId: actor.userId,
      date: resolveLocalDate(input.date, actor.timeZone),
      sport: input.sport,
      title: input.title,
      source: actor.source,
    });
    await recordChange(trx, { userId: actor.userId, kind: 'planned_workouts', fromDate: row.date });
    return toPlannedWorkout(row);
  });
}

export async function getPlannedWorkout(db: Db, actor: Actor, id: string): Promise<PlannedWorkout> {
  const row = await findPlannedWorkout(db, actor.userId, id);
  if (!row) throw notFound(id);
  return toPlannedWorkout(row);
}

/** Merge top-level fields; `structure` is replaced whole. An empty patch answers the stored workout. */
export async function patchPlannedWorkout(
  deps: InputWriteDeps,
  actor: Actor,
  id: string,
  patch: PlannedWorkoutPatch,
): Promise<PlannedWorkout> {
  const values = valuesOf(patch, actor.timeZone);
  return inTransaction(deps.db, async (trx) => {
    const before = await findPlannedWorkout(trx, actor.userId, id);
    if (!before) throw notFound(id);
    if (Object.keys(values).length === 0) return toPlannedWorkout(before);
    const row = await updatePlannedWorkout(trx, actor.userId, id, values);
    if (!row) throw notFound(id);
    // The fuel of both its old and its new day changes.
    const fromDate = row.date < before.date ? row.date : before.date;
    await recordChange(trx, { userId: actor.userId, kind: 'planned_workouts', fromDate });
    return toPlannedWorkout(row);
  });
}

export async function removePlannedWorkout(deps: InputWriteDeps, actor: Actor, id: string): Promise<void> {
  await inTransaction(deps.db, async (trx) => {
    const date = await deletePlannedWorkout(trx, actor.userId, id);
    if (date === undefined) throw notFound(id);
    await recordChange(trx, { userId: actor.userId, kind: 'planned_workouts', fromDate: date });
  });
}

/**
 * A page in (date, start time, id) order. With neither bound, the range
 * starts today in the user's time zone: a plan is read ahead, not back.
 */
export async function listPlannedWorkoutPage(
  db: Db,
  actor: Actor,
  query: PlannedWorkoutListQuery,
): Promise<KeysetPage<PlannedWorkout>> {
  const { cursor, ...range } = query;
  const page = resolveDatePage(
    range.from === undefined && range.to === undefined
      ? { ...range, from: localDateOf(new Date(), actor.timeZone) }
      : range,
    actor.timeZone,
  );
  const rows = await listPlannedWorkouts(db, actor.userId, {
    from: page.from,
    to: page.to,
    after: cursor === undefined ? undefined : decodePlannedWorkoutCursor(cursor),
    limit: page.limit,
  });
  return keysetPage(rows, page.limit, toPlannedWorkout, (last) =>
    encodePlannedWorkoutCursor({ date: last.date, time: last.timeOfDay ?? '', id: last.id }),
  );
}

export function toPlannedWorkout(row: PlannedWorkoutRow): PlannedWorkout {
  return {
    id: row.id,
    date: row.date,
    timeOfDay: row.timeOfDay,
    sport: row.sport,
    title: row.title,
    description: row.description,
    durationSecs: row.durationSecs,
    trainingStress: row.trainingStress,
    // Stored only after the contract validated it.
    structure: row.structure,
    source: row.source,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

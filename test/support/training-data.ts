import { createHash } from 'node:crypto';
import type { Db } from '../../server/src/db/database.ts';
import type { User } from '../../server/src/db/tables.ts';
import { upsertWellness } from '../../server/src/modules/wellness/wellness.repository.ts';
import {
  upsertWorkout,
  type NewWorkoutRow,
  type UploadedWorkoutRow,
} from '../../server/src/modules/workouts/workouts.repository.ts';

/** A workout row as the FIT upload would store it; the file hash only has to be unique per user. */
export async function seedWorkout(
  db: Db,
  user: User,
  fields: Partial<NewWorkoutRow> & Pick<NewWorkoutRow, 'startTime' | 'localDate'>,
): Promise<{ id: string; created: boolean }> {
  const startTime = new Date(fields.startTime);
  const sha = createHash('sha256')
    .update(`${user.id}:${startTime.toISOString()}:${String(fields.name)}`)
    .digest('hex');
  return upsertWorkout(
    db,
    { userId: user.id, fileSha256: sha, fileSize: 1000, name: 'Workout', source: 'test', sport: 'cycling', ...fields },
    {},
  );
}

/**
 * A row for `upsertWorkoutWithFile`, which takes every column an upload sets:
 * the given ones, and what an upload stores when the file has no value
 * (null, no laps, an empty metadata object, a whole FIT file).
 */
export function uploadedWorkoutRow(
  fields: Partial<UploadedWorkoutRow> &
    Pick<
      UploadedWorkoutRow,
      'userId' | 'fileSha256' | 'fileSize' | 'name' | 'source' | 'sport' | 'startTime' | 'localDate'
    >,
): UploadedWorkoutRow {
  return {
    fileName: null,
    fileFormat: 'fit',
    metadata: '{}',
    subSport: null,
    utcOffsetMinutes: null,
    elapsedSecs: null,
    movingSecs: null,
    distanceMeters: null,
    ascentMeters: null,
    avgHr: null,
    maxHr: null,
    avgPower: null,
    maxPower: null,
    normalizedPower: null,
    avgCadence: null,
    calories: null,
    trainingStress: null,
    laps: '[]',
    deviceManufacturer: null,
    deviceProduct: null,
    deviceSerial: null,
    truncated: false,
    ...fields,
  };
}

export interface TrainingYearOptions {
  /** The last day of the year of data (a `YYYY-MM-DD` date). */
  readonly endDate: string;
  /** Wellness days ending at `endDate` (default 365). */
  readonly wellnessDays?: number;
  /** Workouts 26 hours apart, the latest at 07:00 UTC on `endDate` (default 300). */
  readonly workouts?: number;
}

/**
 * A year of data for one athlete, written through the repositories: daily
 * wellness (HRV 50..59 repeating, resting HR 50, 8 h sleep) and one-hour rides
 * of training stress 50, 26 hours apart so that a week holds 6 of them.
 */
export async function seedTrainingYear(db: Db, user: User, options: TrainingYearOptions): Promise<void> {
  const days = options.wellnessDays ?? 365;
  const end = Date.parse(`${options.endDate}T00:00:00Z`);
  for (let day = 0; day < days; day += 1) {
    const date = new Date(end - (days - 1 - day) * 86_400_000).toISOString().slice(0, 10);
    await upsertWellness(db, {
      userId: user.id,
      date,
      values: { hrv: 50 + (day % 10), restingHr: 50, sleepSecs: 28800 },
      source: 'test',
      rawJson: undefined,
    });
  }
  for (let index = 0; index < (options.workouts ?? 300); index += 1) {
    const start = new Date(end + 7 * 3600_000 - index * 26 * 3600_000);
    await seedWorkout(db, user, {
      name: `Workout ${String(index)}`,
      startTime: start,
      localDate: start.toISOString().slice(0, 10),
      elapsedSecs: 3600,
      trainingStress: 50,
    });
  }
}

import { HEART_RATE_ORDER, type Profile, type ProfilePatch } from '@pacer/contract';
import type { Db } from '../../db/database.ts';
import { inTransaction } from '../../db/transaction.ts';
import { FROM_THE_BEGINNING, type InputWriteDeps, recordChange } from '../changes/changes.repository.ts';
import type { User } from '../../db/tables.ts';
import { AppError, type FieldError } from '../../errors.ts';
import { isValidTimeZone, localDateOf } from '../../lib/dates.ts';
import { findUserById, updateUser } from '../accounts/user.repository.ts';
import { findUserForUpdate } from './profile.repository.ts';

type HeartRateField = (typeof HEART_RATE_ORDER)[number];

/** The `users` columns behind the profile. */
type ProfileColumns = Pick<
  User,
  | 'name'
  | 'timeZone'
  | 'weightKg'
  | 'ftpWatts'
  | 'maxHr'
  | 'restingHr'
  | 'thresholdHr'
  | 'sex'
  | 'birthDate'
  | 'featureFlags'
>;

/** Profile columns the derived data depends on. */
const MODEL_INPUTS: readonly (keyof ProfileColumns)[] = [
  'timeZone',
  'weightKg',
  'ftpWatts',
  'maxHr',
  'restingHr',
  'thresholdHr',
];

/** The columns a patch changes: present fields overwrite, `null` clears, absent fields are left out. */
function columnsOf(patch: ProfilePatch, stored: User): Partial<ProfileColumns> {
  const update: Partial<ProfileColumns> = {};
  if (patch.name !== undefined) update.name = patch.name;
  if (patch.timeZone !== undefined) update.timeZone = canonicalTimeZone(patch.timeZone);
  if (patch.weight !== undefined) update.weightKg = patch.weight;
  if (patch.ftp !== undefined) update.ftpWatts = patch.ftp;
  if (patch.maxHr !== undefined) update.maxHr = patch.maxHr;
  if (patch.restingHr !== undefined) update.restingHr = patch.restingHr;
  if (patch.thresholdHr !== undefined) update.thresholdHr = patch.thresholdHr;
  if (patch.sex !== undefined) update.sex = patch.sex;
  if (patch.birthDate !== undefined) update.birthDate = patch.birthDate;
  if (patch.featureFlags !== undefined) {
    const flags = { ...stored.featureFlags };
    if (patch.featureFlags.nutrition !== undefined) flags.nutrition = patch.featureFlags.nutrition;
    update.featureFlags = flags;
  }
  return update;
}

export async function getProfile(db: Db, userId: string): Promise<Profile> {
  const user = await findUserById(db, userId);
  if (!user) throw new AppError('not_found', 'The account no longer exists.');
  return toProfile(user);
}

/**
 * Patch the profile (docs/design.md §3 "Sync resources"): fields present
 * overwrite, `null` clears, absent fields keep their value; feature flags
 * merge flag by flag. Rules that span fields are checked on the merged
 * profile, under a row lock, so concurrent patches cannot together store
 * what neither would alone.
 */
export async function updateProfile(deps: InputWriteDeps, userId: string, patch: ProfilePatch): Promise<Profile> {
  return inTransaction(deps.db, async (trx) => {
    const user = await findUserForUpdate(trx, userId);
    if (!user) throw new AppError('not_found', 'The account no longer exists.');
    const update = columnsOf(patch, user);
    const merged: ProfileColumns = { ...user, ...update };
    const errors = [...heartRateErrors(merged, patch), ...birthDateErrors(merged, patch)];
    if (errors.length > 0) {
      throw new AppError('validation_failed', errors.map((error) => `${error.path}: ${error.message}`).join('; '), {
        errors,
      });
    }
    if (Object.keys(update).length === 0) return toProfile(user);
    const updated = await updateUser(trx, userId, update);
    if (!updated) throw new AppError('not_found', 'The account no longer exists.');
    // Thresholds, weight and the time zone enter every day's training load, recovery and fuel.
    if (MODEL_INPUTS.some((column) => column in update)) {
      await recordChange(trx, { userId, kind: 'profile', fromDate: FROM_THE_BEGINNING });
    }
    return toProfile(updated);
  });
}

/**
 * An IANA zone name in its canonical spelling (`america/new_york` ->
 * `America/New_York`). Fixed offsets such as `+01:00`, which `Intl` also
 * accepts, are refused: they do not follow daylight saving time.
 */
function canonicalTimeZone(timeZone: string): string {
  if (!isValidTimeZone(timeZone) || /^[+\-\u2212]/.test(timeZone)) {
    throw AppError.validation('timeZone', 'must be an IANA time zone such as Europe/Berlin');
  }
  return new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
}

/**
 * resting < threshold < max, for each pair where both are known and the
 * patch touched at least one (a profile stored before a rule existed is not
 * refused for an unrelated change). The error names the field the patch
 * sent; when it sent both, the lower one. One error per field.
 */
function heartRateErrors(merged: ProfileColumns, patch: ProfilePatch): FieldError[] {
  const errors: FieldError[] = [];
  for (let i = 0; i < HEART_RATE_ORDER.length; i += 1) {
    for (let j = i + 1; j < HEART_RATE_ORDER.length; j += 1) {
      const lower = HEART_RATE_ORDER[i] as HeartRateField;
      const upper = HEART_RATE_ORDER[j] as HeartRateField;
      const lowerValue = merged[lower];
      const upperValue = merged[upper];
      if (lowerValue === null || upperValue === null || lowerValue < upperValue) continue;
      if (patch[lower] === undefined && patch[upper] === undefined) continue;
      const error =
        patch[lower] !== undefined
          ? { path: lower, message: `must be below ${upper} (${String(upperValue)} bpm)` }
          : { path: upper, message: `must be above ${lower} (${String(lowerValue)} bpm)` };
      if (!errors.some((known) => known.path === error.path)) errors.push(error);
    }
  }
  return errors;
}

/** A birth date may not be after today in the user's (possibly just changed) time zone. */
function birthDateErrors(merged: ProfileColumns, patch: ProfilePatch): FieldError[] {
  if (patch.birthDate === undefined || merged.birthDate === null) return [];
  const today = localDateOf(new Date(), merged.timeZone);
  return merged.birthDate > today ? [{ path: 'birthDate', message: 'must not be in the future' }] : [];
}

export function toProfile(user: User): Profile {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    timeZone: user.timeZone,
    weight: user.weightKg,
    ftp: user.ftpWatts,
    maxHr: user.maxHr,
    restingHr: user.restingHr,
    thresholdHr: user.thresholdHr,
    sex: user.sex,
    birthDate: user.birthDate,
    // Flags missing from an older row take their default (on).
    featureFlags: { nutrition: user.featureFlags.nutrition !== false },
    updatedAt: user.updatedAt.toISOString(),
  };
}

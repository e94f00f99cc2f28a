import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  IdempotencyHeadersSchema,
  LocalDateSchema,
  TimestampSchema,
  problemResponses,
  requireScopes,
  writeProblemResponses,
} from './common.ts';

const c = initContract();

export const SEXES = ['female', 'male', 'other'] as const;
export const SexSchema = z.enum(SEXES);

/** The earliest birth date accepted; anything before is a typo, not an athlete. */
export const BIRTH_DATE_MIN = '1900-01-01';

/**
 * Heart-rate fields must keep their physiological order when more than one
 * is known: resting < threshold < max. The server checks the stored profile
 * after the patch is merged, so a patch of one field is checked against the
 * others' stored values.
 */
export const HEART_RATE_ORDER = ['restingHr', 'thresholdHr', 'maxHr'] as const;

/**
 * Units follow docs/design.md §3 ("in the name or SI"): `weight` is kilograms, as
 * in wellness; `ftp` is watts; heart rates are bpm, as `restingHr` in
 * wellness. A patch field that is present overwrites, `null` clears, absent
 * keeps the stored value.
 */
const num = (min: number, max: number, description: string) =>
  z.number().min(min).max(max).nullable().optional().describe(description);
const int = (min: number, max: number, description: string) =>
  z.number().int().min(min).max(max).nullable().optional().describe(description);

export const FeatureFlagsSchema = z
  .object({
    nutrition: z.boolean().describe('Nutrition logging and the fuel timeline are on.'),
  })
  .meta({ title: 'FeatureFlags' });
export type FeatureFlags = z.infer<typeof FeatureFlagsSchema>;

export const profileFieldShape = {
  name: z.string().trim().min(1).max(200).nullable().optional().describe('Display name, at most 200 characters.'),
  timeZone: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      "IANA time zone, e.g. `Europe/Berlin`. It decides the user's calendar dates (`Z` timestamps, default list ranges). Cannot be cleared; `UTC` is the default.",
    ),
  weight: num(20, 400, 'Body weight, kilograms.'),
  ftp: int(20, 1000, 'Functional threshold power, watts.'),
  maxHr: int(100, 250, 'Maximum heart rate, bpm. Must be above `thresholdHr` and `restingHr` when those are known.'),
  restingHr: int(20, 150, 'Resting heart rate, bpm. Must be below `thresholdHr` and `maxHr` when those are known.'),
  thresholdHr: int(
    60,
    240,
    'Lactate threshold heart rate, bpm. Must be below `maxHr` and above `restingHr` when those are known.',
  ),
  sex: SexSchema.nullable().optional().describe('`female`, `male` or `other`.'),
  birthDate: LocalDateSchema.refine((date) => date >= BIRTH_DATE_MIN, {
    message: `must be ${BIRTH_DATE_MIN} or later`,
    // Only for a well-formed date: one error per field.
    when: (payload) => payload.issues.length === 0,
  })
    .nullable()
    .optional()
    .describe("Birth date, `YYYY-MM-DD`; not in the future (in the user's time zone)."),
  featureFlags: z
    .strictObject({
      nutrition: z.boolean().optional().describe('Turn nutrition logging and the fuel timeline on or off.'),
    })
    .optional()
    .describe('Flags to change; flags not sent keep their value.'),
} as const;
export type ProfileField = keyof typeof profileFieldShape;
export const PROFILE_FIELDS = Object.keys(profileFieldShape) as ProfileField[];

export const ProfilePatchSchema = z
  .strictObject(profileFieldShape)
  .meta({ title: 'ProfilePatch', description: 'The e-mail address is read-only here; sending it is refused.' });
export type ProfilePatch = z.infer<typeof ProfilePatchSchema>;

export const ProfileSchema = z
  .object({
    id: z.uuid().describe('The user id, the same as `sub` from `/api/oauth/userinfo`.'),
    email: z.string().describe('Sign-in e-mail address; read-only through the API.'),
    name: z.string().nullable(),
    timeZone: z.string().describe('IANA time zone.'),
    weight: z.number().nullable().describe('Body weight, kilograms.'),
    ftp: z.number().int().nullable().describe('Functional threshold power, watts.'),
    maxHr: z.number().int().nullable().describe('Maximum heart rate, bpm.'),
    restingHr: z.number().int().nullable().describe('Resting heart rate, bpm.'),
    thresholdHr: z.number().int().nullable().describe('Lactate threshold heart rate, bpm.'),
    sex: SexSchema.nullable(),
    birthDate: LocalDateSchema.nullable(),
    featureFlags: FeatureFlagsSchema,
    updatedAt: TimestampSchema,
  })
  .meta({ title: 'Profile' });
export type Profile = z.infer<typeof ProfileSchema>;

export const profileContract = c.router({
  getProfile: {
    method: 'GET',
    path: '/api/profile',
    summary: "Read the athlete's profile",
    responses: {
      200: ProfileSchema,
      ...problemResponses,
    },
    metadata: requireScopes('profile:read'),
    strictStatusCodes: true,
  },
  updateProfile: {
    method: 'PATCH',
    path: '/api/profile',
    summary: "Change the athlete's profile",
    headers: IdempotencyHeadersSchema,
    description:
      'Fields present overwrite, `null` clears, absent fields keep their stored value; `featureFlags` merges flag by flag. Unknown keys (and `email`, which is read-only) are refused. Answers the stored profile.',
    body: ProfilePatchSchema,
    responses: {
      200: ProfileSchema.describe('The profile as stored after the change.'),
      ...writeProblemResponses,
    },
    metadata: requireScopes('profile:write'),
    strictStatusCodes: true,
  },
});

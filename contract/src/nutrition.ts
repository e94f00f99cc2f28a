import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  DateInputSchema,
  IdempotencyHeadersSchema,
  DateRangeQuerySchema,
  LocalDateSchema,
  RawJsonSchema,
  TimestampSchema,
  TimestampWithOffsetSchema,
  pageOf,
  problemResponses,
  requireScopes,
  writeProblemResponses,
} from './common.ts';

const c = initContract();

/**
 * How fast an item's carbohydrate reaches the blood. RAPID is the value the
 * specification shows; the rest are docs/design.md §3's scale, from gels and sports
 * drinks (RAPID) to large mixed meals (HYPER_LOAD).
 */
export const ABSORPTION_TYPES = ['RAPID', 'FAST', 'BALANCED', 'DENSE', 'HYPER_LOAD'] as const;
export const AbsorptionTypeSchema = z.enum(ABSORPTION_TYPES);
export type AbsorptionType = z.infer<typeof AbsorptionTypeSchema>;
export const MEALS = ['BREAKFAST', 'LUNCH', 'DINNER', 'SNACK', 'OTHER'] as const;
export const MealSchema = z.enum(MEALS);

export const MAX_ITEMS_PER_DAY = 200;

const grams = (description: string) => z.number().min(0).max(2000).optional().describe(description);

export const NutritionItemInputSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200).describe('Item name.'),
    carbs: grams('Carbohydrates, grams.'),
    protein: grams('Protein, grams.'),
    fat: grams('Fat, grams.'),
    fiber: grams('Fibre, grams.'),
    sugar: grams('Sugar, grams.'),
    calories: z.number().min(0).max(20_000).optional().describe('Energy, kcal.'),
    waterMl: z.number().min(0).max(20_000).optional().describe('Water, millilitres.'),
    quantity: z.number().gt(0).max(10_000).optional().describe('Servings eaten (default 1).'),
    meal: MealSchema.optional(),
    logged_at: TimestampWithOffsetSchema.describe(
      'Exact time of intake, ISO 8601 with offset; drives the glycogen timeline.',
    ),
    absorptionType: AbsorptionTypeSchema.default('BALANCED').describe(
      'How fast the carbohydrate is absorbed. Default `BALANCED`.',
    ),
    // Optional rather than `.default(false)`: the exported input types are the schema's output types, and an
    // integrator's object literal must not need a field that has a default (the server reads a missing one as false).
    planned: z
      .boolean()
      .optional()
      .describe(
        'Not eaten yet: a planned item (e.g. an accepted fuel recommendation). The fuel forecast counts it at `logged_at`; the totals do not. Send it again with `false` once eaten. Default `false`.',
      ),
  })
  .meta({ title: 'NutritionItemInput' });
export type NutritionItemInput = z.infer<typeof NutritionItemInputSchema>;

export const NutritionUpsertSchema = z
  .strictObject({
    date: DateInputSchema,
    items: z
      .array(NutritionItemInputSchema)
      .max(MAX_ITEMS_PER_DAY)
      .describe(
        "This app's items for the date. They replace what this app sent before for the date; an empty list clears them. Other apps' items are untouched.",
      ),
    rawJson: RawJsonSchema.optional(),
  })
  .meta({ title: 'NutritionUpsert' });
export type NutritionUpsert = z.infer<typeof NutritionUpsertSchema>;

export const NutritionItemSchema = z
  .object({
    name: z.string(),
    carbs: z.number().nullable(),
    protein: z.number().nullable(),
    fat: z.number().nullable(),
    fiber: z.number().nullable(),
    sugar: z.number().nullable(),
    calories: z.number().nullable(),
    waterMl: z.number().nullable(),
    quantity: z.number().nullable(),
    meal: MealSchema.nullable(),
    logged_at: TimestampWithOffsetSchema,
    absorptionType: AbsorptionTypeSchema,
    planned: z.boolean().describe('Not eaten yet (planned); left out of the totals.'),
    source: z.string().describe('Client id of the app that logged the item.'),
  })
  .meta({ title: 'NutritionItem' });
export type NutritionItem = z.infer<typeof NutritionItemSchema>;

export const NutritionTotalsSchema = z
  .object({
    calories: z.number(),
    carbs: z.number(),
    protein: z.number(),
    fat: z.number(),
    waterMl: z.number(),
  })
  .describe(
    'Sums over the eaten items (grams, kcal, ml; planned items are left out); quantities are already applied by the sender.',
  )
  .meta({ title: 'NutritionTotals' });

export const NutritionSourceSchema = z.object({
  source: z.string().describe('Client id of the app.'),
  rawJson: RawJsonSchema.nullable(),
  updatedAt: TimestampSchema,
});

/** One app's log for one date: what `POST /api/nutrition` answers. */
export const NutritionLogSchema = z
  .object({
    date: LocalDateSchema,
    source: z.string().describe('Client id of the app that owns this log.'),
    items: z.array(NutritionItemSchema),
    totals: NutritionTotalsSchema,
    rawJson: RawJsonSchema.nullable(),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .meta({ title: 'NutritionLog' });
export type NutritionLog = z.infer<typeof NutritionLogSchema>;

/** Every app's items of one date merged: what `GET /api/nutrition` lists. */
export const NutritionDaySchema = z
  .object({
    date: LocalDateSchema,
    items: z.array(NutritionItemSchema).describe("All apps' items, ordered by `logged_at`."),
    totals: NutritionTotalsSchema,
    sources: z.array(NutritionSourceSchema),
  })
  .meta({ title: 'NutritionDay' });
export type NutritionDay = z.infer<typeof NutritionDaySchema>;

export const nutritionContract = c.router({
  upsertNutrition: {
    method: 'POST',
    path: '/api/nutrition',
    summary: "Replace the calling app's nutrition items of one day",
    description: 'Upsert keyed on (date, calling app). Items other apps logged for the same date stay as they are.',
    body: NutritionUpsertSchema,
    headers: IdempotencyHeadersSchema,
    responses: {
      200: NutritionLogSchema.describe("This app's log for the date existed and was replaced."),
      201: NutritionLogSchema.describe("This app's log for the date was created."),
      ...writeProblemResponses,
    },
    metadata: requireScopes('nutrition:write'),
    strictStatusCodes: true,
  },
  listNutrition: {
    method: 'GET',
    path: '/api/nutrition',
    summary: 'List nutrition days (all apps merged) in a date range',
    query: DateRangeQuerySchema,
    responses: {
      200: pageOf(NutritionDaySchema).meta({ title: 'NutritionPage' }),
      ...problemResponses,
    },
    metadata: requireScopes('nutrition:read'),
    strictStatusCodes: true,
  },
});

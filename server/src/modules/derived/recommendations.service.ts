import type {
  AbsorptionType,
  Recommendation,
  RecommendationAction,
  RecommendationList,
  RecommendationListQuery,
} from '@pacer/contract';
import type { Db } from '../../db/database.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { RecommendationRow } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import type { InputWriteDeps } from '../changes/changes.repository.ts';
import { appendNutritionItems } from '../nutrition/nutrition.service.ts';
import type { Actor } from '../../lib/actor.ts';
import { getPlannedWorkout, patchPlannedWorkout } from '../planned-workouts/planned-workouts.service.ts';
import { scalePlannedWorkout } from './recommendation-rules.ts';
import {
  decideRecommendation,
  findRecommendationForUpdate,
  listRecommendations,
} from './recommendations.repository.ts';

/** The same answer for an unknown id and another user's id. */
function notFound(id: string): AppError {
  return new AppError('not_found', `No recommendation ${id}.`);
}

function notOpen(row: RecommendationRow): AppError {
  return new AppError('conflict', `The recommendation ${row.id} is ${row.status}, no longer open.`);
}

export async function listRecommendationsOf(
  db: Db,
  actor: Actor,
  query: RecommendationListQuery,
): Promise<RecommendationList> {
  const rows = await listRecommendations(db, actor.userId, { status: query.status, limit: query.limit });
  return { items: rows.map(toRecommendation) };
}

/**
 * Accept an open recommendation: apply its action and mark it `accepted`,
 * in one transaction. The action goes through the services that own the
 * data (planned workouts, nutrition), as the app's own write would, so each
 * change appends its change record in this transaction too, and is attributed to
 * the calling app. The row stays locked meanwhile, so a concurrent accept or
 * dismiss waits and then finds it decided (`conflict`).
 */
export async function acceptRecommendation(deps: InputWriteDeps, actor: Actor, id: string): Promise<Recommendation> {
  return inTransaction(deps.db, async (trx) => {
    const row = await findRecommendationForUpdate(trx, actor.userId, id);
    if (!row) throw notFound(id);
    if (row.status !== 'open') throw notOpen(row);
    await applyAction({ ...deps, db: trx }, actor, row.action);
    const decided = await decideRecommendation(trx, actor.userId, id, 'accepted');
    if (!decided) throw notOpen(row);
    return toRecommendation(decided);
  });
}

/** Dismiss an open recommendation; nothing else changes, and its situation is not suggested again. */
export async function dismissRecommendation(db: Db, actor: Actor, id: string): Promise<Recommendation> {
  return inTransaction(db, async (trx) => {
    const row = await findRecommendationForUpdate(trx, actor.userId, id);
    if (!row) throw notFound(id);
    const decided = await decideRecommendation(trx, actor.userId, id, 'dismissed');
    if (!decided) throw notOpen(row);
    return toRecommendation(decided);
  });
}

async function applyAction(deps: InputWriteDeps, actor: Actor, action: RecommendationAction): Promise<void> {
  switch (action.type) {
    case 'swap_structure':
      await patchPlannedWorkout(deps, actor, action.plannedWorkoutId, {
        structure: action.structure,
        durationSecs: action.durationSecs,
        trainingStress: action.trainingStress,
      });
      return;
    case 'log_nutrition':
      await logAdvice(deps, actor, action.items);
      return;
    case 'scale_week':
      await scaleWeek(deps, actor, action.plannedWorkoutIds, action.scaleTrainingStress);
      return;
  }
}

/** What an advised item is called in the nutrition log. */
const ADVICE_ITEM_NAMES: Readonly<Record<AbsorptionType, string>> = {
  RAPID: 'Rapid carbohydrate (gel, sports drink)',
  FAST: 'Fast carbohydrate (white bread, rice cakes, banana)',
  BALANCED: 'Carbohydrate (mixed meal)',
  DENSE: 'Carbohydrate (dense meal)',
  HYPER_LOAD: 'Carbohydrate (large meal)',
};

/**
 * Plan the advice as the calling app's items, on each item's own local date
 * (the `at` timestamps carry the athlete's offset, so their first ten
 * characters are that date), added to what the app logged there before.
 * Accepting says "I plan to eat this as advised", never "I ate it": the
 * items are `planned` (the fuel forecast counts them, the totals do not, and
 * the app confirms them once eaten) and tagged OTHER, so they replace none
 * of the usual meals the advice was computed with (docs/science.md §3).
 * Every recompute re-plans open advice from its own time, so the items
 * start no earlier than the athlete's last write.
 */
async function logAdvice(
  deps: InputWriteDeps,
  actor: Actor,
  items: Extract<RecommendationAction, { type: 'log_nutrition' }>['items'],
): Promise<void> {
  const byDate = new Map<string, typeof items>();
  for (const item of items) byDate.set(item.at.slice(0, 10), [...(byDate.get(item.at.slice(0, 10)) ?? []), item]);
  for (const [date, dayItems] of byDate) {
    await appendNutritionItems(
      deps,
      actor,
      date,
      dayItems.map((item) => ({
        name: ADVICE_ITEM_NAMES[item.absorptionType],
        carbs: item.carbsG,
        meal: 'OTHER' as const,
        logged_at: item.at,
        absorptionType: item.absorptionType,
        planned: true,
      })),
    );
  }
}

/** Scale each listed planned workout that still exists (a deleted one is skipped). */
async function scaleWeek(deps: InputWriteDeps, actor: Actor, ids: readonly string[], factor: number): Promise<void> {
  for (const id of ids) {
    let workout;
    try {
      workout = await getPlannedWorkout(deps.db, actor, id);
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') continue;
      throw error;
    }
    const patch = scalePlannedWorkout(workout, factor);
    if (Object.keys(patch).length > 0) await patchPlannedWorkout(deps, actor, id, patch);
  }
}

export function toRecommendation(row: RecommendationRow): Recommendation {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    plannedWorkoutId: row.plannedWorkoutId,
    title: row.title,
    body: row.body,
    // Written only by the rules, from the contract's types.
    evidence: row.evidence,
    action: row.action,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    decidedAt: row.decidedAt ? row.decidedAt.toISOString() : null,
  };
}

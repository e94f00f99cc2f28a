import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';
import type { RecommendationRow, RecommendationsTable } from '../../db/tables.ts';

/** A recommendation as a rule makes it; the table fills in id, status and times. */
export interface RecommendationValues {
  readonly kind: RecommendationsTable['kind'];
  readonly dedupeKey: string;
  readonly plannedWorkoutId: string | null;
  readonly title: string;
  readonly body: string;
  readonly evidence: Record<string, unknown>;
  readonly action: Record<string, unknown>;
}

/**
 * Open each suggestion, one statement for all. A situation that has a row
 * already (same key) is updated only while it is `open` (new numbers) or
 * `expired` (it holds again: reopened); an accepted or dismissed one stays
 * as decided. Unchanged open rows are not rewritten. Returns how many rows
 * were inserted or changed.
 */
export async function upsertOpenRecommendations(
  db: DbOrTrx,
  userId: string,
  suggestions: readonly RecommendationValues[],
): Promise<number> {
  if (suggestions.length === 0) return 0;
  const rows = await db
    .insertInto('recommendations')
    .values(
      suggestions.map((suggestion) => ({
        userId,
        kind: suggestion.kind,
        status: 'open' as const,
        plannedWorkoutId: suggestion.plannedWorkoutId,
        title: suggestion.title,
        body: suggestion.body,
        evidence: JSON.stringify(suggestion.evidence),
        action: JSON.stringify(suggestion.action),
        dedupeKey: suggestion.dedupeKey,
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['userId', 'dedupeKey'])
        .doUpdateSet({
          status: 'open',
          title: sql`excluded.title`,
          body: sql`excluded.body`,
          evidence: sql`excluded.evidence`,
          action: sql`excluded.action`,
          decidedAt: null,
          updatedAt: sql`now()`,
        })
        .where(
          sql<boolean>`recommendations.status = 'expired'
            or (recommendations.status = 'open'
                and (recommendations.evidence, recommendations.action, recommendations.title, recommendations.body)
                    is distinct from (excluded.evidence, excluded.action, excluded.title, excluded.body))`,
        ),
    )
    .returning('id')
    .execute();
  return rows.length;
}

/** Expire the user's open recommendations whose situation is not in `keep`; returns how many. */
export async function expireOpenRecommendations(db: DbOrTrx, userId: string, keep: readonly string[]): Promise<number> {
  let query = db
    .updateTable('recommendations')
    .set({ status: 'expired', decidedAt: sql`now()`, updatedAt: sql`now()` })
    .where('userId', '=', userId)
    .where('status', '=', 'open');
  if (keep.length > 0) query = query.where('dedupeKey', 'not in', keep);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The greatest key of the user's recommendations of `kind` at or after `sinceKey` (keys sort by their date). */
export async function findLatestDedupeKey(
  db: DbOrTrx,
  userId: string,
  kind: RecommendationsTable['kind'],
  sinceKey: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('recommendations')
    .select('dedupeKey')
    .where('userId', '=', userId)
    .where('kind', '=', kind)
    .where('dedupeKey', '>=', sinceKey)
    .orderBy('dedupeKey', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.dedupeKey;
}

export async function listRecommendations(
  db: DbOrTrx,
  userId: string,
  filter: { readonly status: RecommendationsTable['status']; readonly limit: number },
): Promise<RecommendationRow[]> {
  return db
    .selectFrom('recommendations')
    .selectAll()
    .where('userId', '=', userId)
    .where('status', '=', filter.status)
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit)
    .execute();
}

/**
 * Scoped to the owner (another user's id finds nothing, like an unknown id)
 * and locked until the caller's transaction ends, so two decisions on one
 * recommendation run one after the other and the second sees the first.
 */
export async function findRecommendationForUpdate(
  db: DbOrTrx,
  userId: string,
  id: string,
): Promise<RecommendationRow | undefined> {
  return db
    .selectFrom('recommendations')
    .selectAll()
    .where('userId', '=', userId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/** Record the decision on an open recommendation; `undefined` when it is not open (or not the user's). */
export async function decideRecommendation(
  db: DbOrTrx,
  userId: string,
  id: string,
  status: Extract<RecommendationsTable['status'], 'accepted' | 'dismissed'>,
): Promise<RecommendationRow | undefined> {
  return db
    .updateTable('recommendations')
    .set({ status, decidedAt: sql`now()`, updatedAt: sql`now()` })
    .where('userId', '=', userId)
    .where('id', '=', id)
    .where('status', '=', 'open')
    .returningAll()
    .executeTakeFirst();
}

/** One open recommendation, stored as given (the rules go through `upsertOpenRecommendations`). */
export async function insertRecommendation(
  db: DbOrTrx,
  userId: string,
  values: RecommendationValues,
): Promise<RecommendationRow> {
  return db
    .insertInto('recommendations')
    .values({
      userId,
      kind: values.kind,
      status: 'open',
      plannedWorkoutId: values.plannedWorkoutId,
      title: values.title,
      body: values.body,
      evidence: JSON.stringify(values.evidence),
      action: JSON.stringify(values.action),
      dedupeKey: values.dedupeKey,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

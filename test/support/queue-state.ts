import { sql } from 'kysely';
import type { Db } from '../../server/src/db/database.ts';

/** How many of a queue's pg-boss jobs are in each state (`created`, `active`, `retry`, `completed`, ...). */
export async function jobsByState(db: Db, queue: string): Promise<Record<string, number>> {
  const { rows } = await sql<{ state: string; count: number }>`
    SELECT state::text AS state, count(*)::int AS count FROM pgboss.job WHERE name = ${queue} GROUP BY state
  `.execute(db);
  return Object.fromEntries(rows.map((row) => [row.state, row.count]));
}

/** How many of a webhook app's deliveries are in each state (`received`, `queued`, `processed`, ...). */
export async function deliveriesByState(db: Db, clientId: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('webhookDeliveries')
    .select(['state', (eb) => eb.fn.countAll<number>().as('count')])
    .where('clientId', '=', clientId)
    .groupBy('state')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.state, Number(row.count)]));
}

export interface QueueJob {
  readonly id: string;
  readonly state: string;
  readonly retryCount: number;
  readonly data: Record<string, unknown>;
}

/** Every pg-boss job of a queue, with its payload and how often it was retried. */
export async function queueJobs(db: Db, queue: string): Promise<QueueJob[]> {
  const { rows } = await sql<QueueJob>`
    SELECT id::text AS id, state::text AS state, retry_count AS "retryCount", data
    FROM pgboss.job WHERE name = ${queue} ORDER BY created_on, id
  `.execute(db);
  return rows;
}

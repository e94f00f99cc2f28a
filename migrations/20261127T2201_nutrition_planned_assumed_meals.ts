import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // A planned item is not eaten yet (an accepted fuel recommendation, the athlete's own plan): the fuel model counts
  // it at its time, the day's totals do not (docs/science.md §3). Every existing item was sent as eaten.
  await sql`alter table nutrition_items add column planned boolean not null default false`.execute(db);
  // Each stored fuel day keeps the assumed meals (the athlete's usual intake) it was drawn with, and whether there was
  // a usual intake at all (without one, a planned workout with nothing logged before it is `not_logged`). Existing
  // days were drawn without assumed meals: a change record asks each user's fuel chain to be redrawn from their local
  // yesterday (kind `nutrition` feeds fuel only), which the recompute worker serves after the deploy.
  await sql`alter table fuel_days add column assumed_meals jsonb not null default '[]'::jsonb`.execute(db);
  await sql`alter table fuel_days add column usual_intake boolean not null default false`.execute(db);
  await sql`insert into derived_changes (user_id, kind, from_date)
    select u.id, 'nutrition', (now() at time zone u.time_zone)::date - 1
    from users u where exists (select 1 from fuel_days f where f.user_id = u.id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table fuel_days drop column usual_intake`.execute(db);
  await sql`alter table fuel_days drop column assumed_meals`.execute(db);
  await sql`alter table nutrition_items drop column planned`.execute(db);
}

import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // The format of the stored original file, told from its content at upload: every file before this was FIT.
  await sql`
    alter table workouts add column file_format text not null default 'fit'
      constraint workouts_file_format_check check (file_format in ('fit', 'tcx', 'gpx'))
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table workouts drop column file_format`.execute(db);
}

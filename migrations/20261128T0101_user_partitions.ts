import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

/**
 * Optionally, the large tables of users' data hash-partitioned: by `user_id`,
 * and webhook deliveries by the app's `client_id` (20261128T0100_user_keys.ts
 * says why). The count comes from the transaction-local setting
 * `pacer.partitions`, which the migration runner sets from PACER_PARTITIONS;
 * unset or 0 leaves every table as it is. Only this migration reads it, so it
 * takes effect once: when a database is created, or at the upgrade that
 * brings this migration (which then rewrites those tables, rows and all, in
 * the migration's transaction).
 *
 * Each table is rebuilt the same way: the old one renamed, a partitioned one
 * made LIKE it (columns, defaults, CHECKs, compression), its partitions, its
 * rows copied, the old one dropped, then the keys and indexes the old one had
 * (the same names), and the foreign keys.
 */
interface PartitionedTable {
  readonly name: string;
  readonly key: 'user_id' | 'client_id';
  /** Statements that give the new table what the old one had, in order. */
  readonly keys: readonly string[];
}

const TABLES: readonly PartitionedTable[] = [
  {
    name: 'wellness',
    key: 'user_id',
    keys: [
      'alter table wellness add constraint wellness_pkey primary key (user_id, date)',
      'alter table wellness add constraint wellness_user_id_fkey foreign key (user_id) references users (id) on delete cascade',
    ],
  },
  {
    name: 'nutrition_logs',
    key: 'user_id',
    keys: [
      'alter table nutrition_logs add constraint nutrition_logs_pkey primary key (user_id, id)',
      'alter table nutrition_logs add constraint nutrition_logs_user_date_source_key unique (user_id, date, source)',
      'alter table nutrition_logs add constraint nutrition_logs_user_id_fkey foreign key (user_id) references users (id) on delete cascade',
    ],
  },
  {
    name: 'nutrition_items',
    key: 'user_id',
    keys: [
      'alter table nutrition_items add constraint nutrition_items_pkey primary key (user_id, id)',
      'create index nutrition_items_log_idx on nutrition_items (user_id, log_id, position)',
      'create index nutrition_items_user_time_idx on nutrition_items (user_id, logged_at)',
      'alter table nutrition_items add constraint nutrition_items_user_id_fkey foreign key (user_id) references users (id) on delete cascade',
      `alter table nutrition_items add constraint nutrition_items_log_fkey foreign key (user_id, log_id)
         references nutrition_logs (user_id, id) on delete cascade`,
    ],
  },
  {
    name: 'workouts',
    key: 'user_id',
    keys: [
      'alter table workouts add constraint workouts_pkey primary key (user_id, id)',
      'alter table workouts add constraint workouts_user_file_key unique (user_id, file_sha256)',
      'create index workouts_user_date_idx on workouts (user_id, local_date, start_time, id)',
      `create index workouts_user_device_start_idx on workouts (user_id, device_serial, start_time)
         where device_serial is not null`,
      'alter table workouts add constraint workouts_user_id_fkey foreign key (user_id) references users (id) on delete cascade',
    ],
  },
  {
    name: 'workout_files',
    key: 'user_id',
    keys: [
      'alter table workout_files add constraint workout_files_pkey primary key (user_id, workout_id)',
      'alter table workout_files add constraint workout_files_user_id_fkey foreign key (user_id) references users (id) on delete cascade',
      `alter table workout_files add constraint workout_files_workout_fkey foreign key (user_id, workout_id)
         references workouts (user_id, id) on delete cascade`,
    ],
  },
  {
    name: 'workout_streams',
    key: 'user_id',
    keys: [
      'alter table workout_streams add constraint workout_streams_pkey primary key (user_id, workout_id)',
      'alter table workout_streams add constraint workout_streams_user_id_fkey foreign key (user_id) references users (id) on delete cascade',
      `alter table workout_streams add constraint workout_streams_workout_fkey foreign key (user_id, workout_id)
         references workouts (user_id, id) on delete cascade`,
    ],
  },
  {
    name: 'planned_workouts',
    key: 'user_id',
    keys: [
      'alter table planned_workouts add constraint planned_workouts_pkey primary key (user_id, id)',
      `create index planned_workouts_user_order_idx on planned_workouts
         (user_id, date, coalesce(time_of_day, ''), id)`,
      'alter table planned_workouts add constraint planned_workouts_user_id_fkey foreign key (user_id) references users (id) on delete cascade',
    ],
  },
  {
    name: 'webhook_deliveries',
    key: 'client_id',
    keys: [
      'alter table webhook_deliveries add constraint webhook_deliveries_pkey primary key (client_id, id)',
      'create index webhook_deliveries_id_idx on webhook_deliveries (id)',
      'create index webhook_deliveries_client_received_idx on webhook_deliveries (client_id, received_at desc, id desc)',
      `create index webhook_deliveries_client_state_idx on webhook_deliveries
         (client_id, state, received_at desc, id desc)`,
      'create index webhook_deliveries_received_idx on webhook_deliveries (received_at)',
      `alter table webhook_deliveries add constraint webhook_deliveries_client_id_fkey foreign key (client_id)
         references oauth_clients (client_id) on delete cascade`,
    ],
  },
];

/** A table outside the set whose foreign key points into it, dropped with the old table and made again. */
const INCOMING_KEYS: readonly string[] = [
  `alter table recommendations add constraint recommendations_planned_workout_fkey
     foreign key (user_id, planned_workout_id) references planned_workouts (user_id, id) on delete cascade`,
];

/** At most this many partitions per table: past it, planning a query that is not pruned costs more than it saves. */
const MAX_PARTITIONS = 256;

async function requestedPartitions(db: Kysely<any>): Promise<number> {
  const { rows } = await sql<{
    value: string | null;
  }>`select current_setting('pacer.partitions', true) as value`.execute(db);
  const text = rows[0]?.value ?? '';
  if (text === '') return 0;
  const count = Number(text);
  if (!Number.isInteger(count) || count < 0 || count > MAX_PARTITIONS) {
    throw new Error(`pacer.partitions must be a whole number from 0 to ${MAX_PARTITIONS}, not "${text}"`);
  }
  return count;
}

export async function up(db: Kysely<any>): Promise<void> {
  const partitions = await requestedPartitions(db);
  if (partitions === 0) return;
  for (const table of TABLES) {
    const old = `${table.name}_unpartitioned`;
    await sql`alter table ${sql.table(table.name)} rename to ${sql.table(old)}`.execute(db);
    await sql`create table ${sql.table(table.name)} (like ${sql.table(old)} including all excluding indexes)
              partition by hash (${sql.ref(table.key)})`.execute(db);
    for (let remainder = 0; remainder < partitions; remainder += 1) {
      await sql`create table ${sql.table(`${table.name}_p${remainder}`)} partition of ${sql.table(table.name)}
                for values with (modulus ${sql.lit(partitions)}, remainder ${sql.lit(remainder)})`.execute(db);
    }
    await sql`insert into ${sql.table(table.name)} select * from ${sql.table(old)}`.execute(db);
  }
  // A bigserial's sequence belongs to its column: hand it to the new table before the old one goes.
  await sql`alter sequence nutrition_items_id_seq owned by nutrition_items.id`.execute(db);
  for (const table of [...TABLES].reverse()) {
    await sql`drop table ${sql.table(`${table.name}_unpartitioned`)} cascade`.execute(db);
  }
  for (const statement of [...TABLES.flatMap((table) => table.keys), ...INCOMING_KEYS]) {
    await sql.raw(statement).execute(db);
  }
}

export async function down(): Promise<void> {
  // Nothing to undo in place: partitioned or not, the tables have the same columns, keys and names.
}

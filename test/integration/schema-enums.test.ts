import {
  ACTIVITY_FILE_FORMATS,
  ASYNC_JOB_STATUSES,
  ASYNC_JOB_TYPES,
  MCP_EXECUTION_STATUSES,
  PLANNED_SPORTS,
  RECOMMENDATION_KINDS,
  RECOMMENDATION_STATUSES,
  RECOVERY_STATUSES,
  SEXES,
  WEBHOOK_AUTH_METHODS,
  WEBHOOK_DELIVERY_STATES,
} from '@pacer/contract';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneTemplateDatabase, databaseUrlFor, dropDatabase } from '../support/test-server.ts';

/**
 * server/src/db/tables.ts types these columns with the contract's enums, but
 * the frozen migrations restate each enum in a `CHECK (column IN (…))`. A
 * value added to the contract without a migration widening the `CHECK` would
 * typecheck and then fail on insert; this test fails first.
 */
const CONTRACT_ENUM_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  'users.sex': SEXES,
  'planned_workouts.sport': PLANNED_SPORTS,
  'webhook_deliveries.auth_method': WEBHOOK_AUTH_METHODS,
  'webhook_deliveries.state': WEBHOOK_DELIVERY_STATES,
  'async_jobs.type': ASYNC_JOB_TYPES,
  'async_jobs.status': ASYNC_JOB_STATUSES,
  'mcp_executions.status': MCP_EXECUTION_STATUSES,
  'daily_recovery.status': RECOVERY_STATUSES,
  'recommendations.kind': RECOMMENDATION_KINDS,
  'recommendations.status': RECOMMENDATION_STATUSES,
  'workouts.file_format': ACTIVITY_FILE_FORMATS,
};

/** Enum columns the wire never shows: their values live in tables.ts alone. */
const SERVER_ONLY_ENUM_COLUMNS = ['users.role', 'oauth_clients.kind', 'idempotency_keys.state', 'derived_changes.kind'];

let database: string;
let client: pg.Client;
beforeAll(async () => {
  database = await cloneTemplateDatabase();
  client = new pg.Client({ connectionString: databaseUrlFor(database) });
  await client.connect();
});
afterAll(async () => {
  await client.end();
  await dropDatabase(database);
});

/** Every single-column `CHECK (column IN (…))` of the migrated schema, as `table.column` -> its values. */
async function enumChecks(): Promise<Map<string, string[]>> {
  const { rows } = await client.query<{ table: string; column: string; definition: string }>(`
    select c.conrelid::regclass::text as table, a.attname as column, pg_get_constraintdef(c.oid) as definition
    from pg_constraint c
    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
    where c.contype = 'c' and cardinality(c.conkey) = 1 and c.connamespace = 'public'::regnamespace
      and pg_get_constraintdef(c.oid) like '%= ANY (ARRAY[%'`);
  return new Map(
    rows.map((row) => [
      `${row.table}.${row.column}`,
      [...row.definition.matchAll(/'([^']*)'::text/g)].map((match) => match[1] ?? ''),
    ]),
  );
}

describe('enum columns of the schema against the contract', () => {
  it("allows exactly the contract's values in every enum column the contract declares", async () => {
    const checks = await enumChecks();
    for (const [column, values] of Object.entries(CONTRACT_ENUM_COLUMNS)) {
      expect({ column, values: checks.get(column)?.toSorted() }).toEqual({ column, values: values.toSorted() });
    }
  });

  it('knows every enum column of the schema, so a new one is mapped to its contract enum or named server-only', async () => {
    const checks = await enumChecks();
    expect([...checks.keys()].toSorted()).toEqual(
      [...Object.keys(CONTRACT_ENUM_COLUMNS), ...SERVER_ONLY_ENUM_COLUMNS].toSorted(),
    );
  });
});

// Webhook processing against the real server, database and pg-boss worker:
// wellness.upsert / nutrition.upsert / profile.update applied through the REST
// services (visible through GET /api/wellness, /api/nutrition, /api/profile,
// with the app as the source), array bodies applied all-or-nothing,
// validation errors failing at once with the field path and no retry, the
// grant rules (never granted, revoked, missing scope -> no_grant), unknown
// events and non-events ignored, transient failures retried with backoff up to
// PACER_WEBHOOK_MAX_ATTEMPTS then dead-lettered (or recovering on the retry),
// and the retention job purging deliveries older than
// PACER_WEBHOOK_RETENTION_DAYS (default 30).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '@pacer/contract';
import type { Db } from '../../server/src/db/database.ts';
import type { OauthClient, User } from '../../server/src/db/tables.ts';
import { makeUser, makeWebhookApp, mintToken } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import {
  deliver,
  deliveryJobsSettled,
  findDeliveryRow,
  waitFor,
  waitForState,
  type DeliveryRow,
} from '../support/webhooks.ts';

let server: TestServer;

beforeAll(async () => {
  // Two attempts, the first retry after about a second: the transient-failure tests stay short.
  server = await startTestServer({ PACER_WEBHOOK_MAX_ATTEMPTS: '2', PACER_WEBHOOK_RETRY_DELAY_SECONDS: '1' });
});
afterAll(async () => {
  await server.stop();
});

const WRITE_SCOPES: Scope[] = ['health:write', 'nutrition:write', 'profile:write'];
const READ_SCOPES: Scope[] = ['health:read', 'nutrition:read', 'profile:read'];

interface Fixture {
  readonly user: User;
  readonly client: OauthClient;
  readonly clientId: string;
  readonly secret: string;
  readonly grantId: string;
  /** The user's own token for reading the data back through the REST API. */
  readonly readToken: string;
}

/** A user, an app with a webhook secret, and the user's grant of `scopes` to that app. */
async function newFixture(db: Db = server.db, scopes: Scope[] = WRITE_SCOPES): Promise<Fixture> {
  const user = await makeUser(db, { timeZone: 'Europe/Berlin' });
  const { client, webhookSecret } = await makeWebhookApp(db, user);
  const { grantId } = await mintToken(db, user, { scopes, client });
  const readToken = (await mintToken(db, user, { scopes: READ_SCOPES })).token;
  return { user, client, clientId: client.clientId, secret: webhookSecret, grantId, readToken };
}

/** Send a matched delivery and wait until it settles in one of `states`. */
async function deliverAndSettle(
  fixture: Fixture,
  body: unknown,
  states: DeliveryRow['state'][] = ['processed', 'failed', 'ignored', 'dead_letter'],
): Promise<DeliveryRow> {
  const res = await deliver(server, fixture.clientId, body, { secret: fixture.secret });
  expect(res.status).toBe(200);
  expect(res.body['secretMatched']).toBe(true);
  return waitForState(server.db, res.deliveryId ?? '', states);
}

async function get<T>(fixture: Fixture, path: string): Promise<T> {
  const res = await call<T>(server.url, 'GET', path, { token: fixture.readToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function wellnessOn(fixture: Fixture, date: string): Promise<Record<string, unknown> | undefined> {
  return (await get<{ items: Record<string, unknown>[] }>(fixture, `/api/wellness?from=${date}&to=${date}`)).items[0];
}

const event = (name: string, user: User | string, data: unknown) => ({
  event: name,
  user: typeof user === 'string' ? user : user.id,
  data,
});

describe('events applied through the REST services', () => {
  it('wellness.upsert: visible through GET /api/wellness, merged like the REST upsert, rawJson kept per app', async () => {
    const f = await newFixture();
    const first = await deliverAndSettle(
      f,
      event('wellness.upsert', f.user, {
        date: '2026-07-01',
        hrv: 52.5,
        sleepSecs: 27_000,
        rawJson: { device: 'ring' },
      }),
    );
    expect(first).toMatchObject({ state: 'processed', attempts: 1, errorCode: null, lastError: null });
    expect(first.finishedAt).not.toBeNull();
    expect(first.result).toMatchObject({ applied: [{ event: 'wellness.upsert', user: f.user.id, created: true }] });
    // Absent fields keep their value, present ones overwrite, as POST /api/wellness does.
    await deliverAndSettle(f, event('wellness.upsert', f.user, { date: '2026-07-01', restingHr: 48 }));
    const record = await wellnessOn(f, '2026-07-01');
    expect(record).toMatchObject({
      date: '2026-07-01',
      hrv: 52.5,
      sleepSecs: 27_000,
      restingHr: 48,
      rawJsonBySource: { [f.clientId]: { device: 'ring' } },
    });
  });

  it('nutrition.upsert: items visible through GET /api/nutrition with the app as their source', async () => {
    const f = await newFixture();
    const processed = await deliverAndSettle(
      f,
      event('nutrition.upsert', f.user, {
        date: '2026-07-02',
        items: [
          { name: 'Gel', carbs: 25, logged_at: '2026-07-02T09:30:00+02:00', absorptionType: 'RAPID' },
          { name: 'Porridge', carbs: 60, protein: 12, calories: 360, logged_at: '2026-07-02T07:15:00+02:00' },
        ],
        rawJson: { diary: 'v2' },
      }),
    );
    expect(processed.state).toBe('processed');
    const page = await get<{ items: Record<string, unknown>[] }>(f, '/api/nutrition?from=2026-07-02&to=2026-07-02');
    expect(page.items).toHaveLength(1);
    const day = page.items[0] as {
      items: { name: string; source: string; absorptionType: string }[];
      sources: { source: string; rawJson: unknown }[];
      totals: Record<string, number>;
    };
    expect(day.items.map((item) => [item.name, item.source, item.absorptionType])).toEqual([
      ['Porridge', f.clientId, 'BALANCED'],
      ['Gel', f.clientId, 'RAPID'],
    ]);
    expect(day.sources).toEqual([expect.objectContaining({ source: f.clientId, rawJson: { diary: 'v2' } })]);
    expect(day.totals).toMatchObject({ carbs: 85, protein: 12, calories: 360 });
  });

  it('profile.update: visible through GET /api/profile; the service rules (heart-rate order) apply', async () => {
    const f = await newFixture();
    const processed = await deliverAndSettle(
      f,
      event('profile.update', f.user, { ftp: 265, weight: 71.5, maxHr: 190, featureFlags: { nutrition: true } }),
    );
    expect(processed.state).toBe('processed');
    expect(await get(f, '/api/profile')).toMatchObject({
      id: f.user.id,
      ftp: 265,
      weight: 71.5,
      maxHr: 190,
      featureFlags: { nutrition: true },
    });
    // A cross-field rule of the profile service: resting above max is refused, and nothing changes.
    const refused = await deliverAndSettle(f, event('profile.update', f.user, { restingHr: 200, ftp: 300 }));
    expect(refused).toMatchObject({ state: 'failed', errorCode: 'validation_failed', attempts: 1 });
    expect(await get(f, '/api/profile')).toMatchObject({ ftp: 265, restingHr: null });
  });

  it('applies every event of an array body in one delivery, and none when one of them is invalid', async () => {
    const f = await newFixture();
    const both = await deliverAndSettle(f, [
      event('wellness.upsert', f.user, { date: '2026-07-03', steps: 9000 }),
      event('profile.update', f.user, { ftp: 240 }),
      { note: 'not an event, skipped' },
    ]);
    expect(both.state).toBe('processed');
    expect(both.result).toMatchObject({ applied: [{ event: 'wellness.upsert' }, { event: 'profile.update' }] });
    expect(await wellnessOn(f, '2026-07-03')).toMatchObject({ steps: 9000 });
    expect(await get(f, '/api/profile')).toMatchObject({ ftp: 240 });

    const partlyBad = await deliverAndSettle(f, [
      event('wellness.upsert', f.user, { date: '2026-07-04', steps: 1 }),
      event('wellness.upsert', f.user, { date: '2026-07-05', hrv: 'abc' }),
    ]);
    expect(partlyBad).toMatchObject({ state: 'failed', errorCode: 'validation_failed' });
    expect(partlyBad.lastError).toContain('1.data.hrv');
    expect(await wellnessOn(f, '2026-07-04')).toBeUndefined();
  });
});

describe('deliveries that cannot succeed', () => {
  it('fails a validation error at once with the field path, and never retries it', async () => {
    const f = await newFixture();
    const badType = await deliverAndSettle(f, event('wellness.upsert', f.user, { date: '2026-07-10', hrv: 'abc' }));
    expect(badType).toMatchObject({ state: 'failed', errorCode: 'validation_failed', attempts: 1 });
    expect(badType.lastError).toContain('data.hrv');
    expect(badType.result).toMatchObject({ errors: [{ path: 'data.hrv' }] });

    const unknownField = await deliverAndSettle(
      f,
      event('wellness.upsert', f.user, { date: '2026-07-10', hrv: 50, heartbeat: 1 }),
    );
    expect(unknownField).toMatchObject({ state: 'failed', errorCode: 'validation_failed', attempts: 1 });
    expect(unknownField.lastError).toMatch(/data/);
    expect(unknownField.lastError).toContain('heartbeat');

    const badUser = await deliverAndSettle(f, event('wellness.upsert', 'not-a-user-id', { date: '2026-07-10' }));
    expect(badUser).toMatchObject({ state: 'failed', errorCode: 'validation_failed' });
    expect(badUser.lastError).toContain('user');

    // Settled for good: their jobs are done, nothing retries them, and each was attempted once.
    for (const row of [badType, unknownField, badUser]) {
      await waitFor(async () => deliveryJobsSettled(server.db, row.id), `the jobs of delivery ${row.id} to settle`);
    }
    for (const row of [badType, unknownField, badUser]) {
      expect(await findDeliveryRow(server.db, row.id)).toMatchObject({ state: 'failed', attempts: 1 });
    }
    expect(await wellnessOn(f, '2026-07-10')).toBeUndefined();
  });

  it('fails with no_grant for a user who never granted the app', async () => {
    const f = await newFixture();
    const stranger = await makeUser(server.db);
    const row = await deliverAndSettle(f, event('wellness.upsert', stranger, { date: '2026-07-11', hrv: 50 }));
    expect(row).toMatchObject({ state: 'failed', errorCode: 'no_grant', attempts: 1 });
    const unknownUser = await deliverAndSettle(f, event('wellness.upsert', randomUUID(), { date: '2026-07-11' }));
    expect(unknownUser).toMatchObject({ state: 'failed', errorCode: 'no_grant' });
    const strangerToken = (await mintToken(server.db, stranger, { scopes: ['health:read'] })).token;
    const res = await call<{ items: unknown[] }>(server.url, 'GET', '/api/wellness?from=2026-07-11&to=2026-07-11', {
      token: strangerToken,
    });
    expect(res.body.items).toEqual([]);
  });

  it('fails with no_grant once the grant is revoked', async () => {
    const f = await newFixture();
    await deliverAndSettle(f, event('wellness.upsert', f.user, { date: '2026-07-12', hrv: 50 }), ['processed']);
    await server.db.updateTable('oauthGrants').set({ revokedAt: new Date() }).where('id', '=', f.grantId).execute();
    const row = await deliverAndSettle(f, event('wellness.upsert', f.user, { date: '2026-07-12', hrv: 60 }));
    expect(row).toMatchObject({ state: 'failed', errorCode: 'no_grant' });
    expect(await wellnessOn(f, '2026-07-12')).toMatchObject({ hrv: 50 });
  });

  it('fails with no_grant when the grant lacks the scope the event needs', async () => {
    const f = await newFixture(server.db, ['health:write']);
    const nutrition = await deliverAndSettle(
      f,
      event('nutrition.upsert', f.user, {
        date: '2026-07-13',
        items: [{ name: 'Bar', carbs: 40, logged_at: '2026-07-13T10:00:00+02:00' }],
      }),
    );
    expect(nutrition).toMatchObject({ state: 'failed', errorCode: 'no_grant' });
    expect(nutrition.lastError).toContain('nutrition:write');
    const profile = await deliverAndSettle(f, event('profile.update', f.user, { ftp: 300 }));
    expect(profile).toMatchObject({ state: 'failed', errorCode: 'no_grant' });
    expect(await get(f, '/api/profile')).toMatchObject({ ftp: null });
    // The scope it does hold works.
    const wellness = await deliverAndSettle(f, event('wellness.upsert', f.user, { date: '2026-07-13', hrv: 33 }));
    expect(wellness.state).toBe('processed');
  });

  it('ignores an unknown event (unknown_event) and a body without an event (not_an_event)', async () => {
    const f = await newFixture();
    const unknown = await deliverAndSettle(f, event('workout.created', f.user, { id: 1 }));
    expect(unknown).toMatchObject({
      state: 'ignored',
      errorCode: 'unknown_event',
      attempts: 1,
      event: 'workout.created',
    });
    expect(unknown.lastError).toContain('workout.created');
    const noEvent = await deliverAndSettle(f, { user: f.user.id, data: { date: '2026-07-14', hrv: 50 } });
    expect(noEvent).toMatchObject({ state: 'ignored', errorCode: 'not_an_event', attempts: 1, event: null });
    const emptyArray = await deliverAndSettle(f, []);
    expect(emptyArray).toMatchObject({ state: 'ignored', errorCode: 'not_an_event' });
    expect(await wellnessOn(f, '2026-07-14')).toBeUndefined();
  });
});

describe('transient failures (PACER_WEBHOOK_MAX_ATTEMPTS=2, PACER_WEBHOOK_RETRY_DELAY_SECONDS=1)', () => {
  const breakWellness = () => sql`ALTER TABLE wellness RENAME TO wellness_gone`.execute(server.db);
  const repairWellness = () => sql`ALTER TABLE IF EXISTS wellness_gone RENAME TO wellness`.execute(server.db);

  it('retries, then dead-letters the delivery with retries_exhausted once the attempts are spent', async () => {
    const f = await newFixture();
    await breakWellness();
    let row: DeliveryRow;
    try {
      const res = await deliver(server, f.clientId, event('wellness.upsert', f.user, { date: '2026-07-20', hrv: 50 }), {
        secret: f.secret,
      });
      expect(res.body['secretMatched']).toBe(true);
      row = await waitForState(server.db, res.deliveryId ?? '', ['dead_letter', 'processed', 'failed'], 20_000);
    } finally {
      await repairWellness();
    }
    expect(row).toMatchObject({ state: 'dead_letter', attempts: 2, errorCode: 'retries_exhausted' });
    expect(row.lastError).toContain('wellness');
    expect(row.finishedAt).not.toBeNull();
    // Settled for good: no job of it is left to run, so it does not come back now that the table is there again.
    await waitFor(async () => deliveryJobsSettled(server.db, row.id), 'the delivery jobs to settle');
    expect(await findDeliveryRow(server.db, row.id)).toMatchObject({ state: 'dead_letter', attempts: 2 });
    expect(await wellnessOn(f, '2026-07-20')).toBeUndefined();
  });

  it('goes back to queued (transient) after a failed attempt and is processed by the retry', async () => {
    const f = await newFixture();
    await breakWellness();
    let requeued: DeliveryRow;
    try {
      const res = await deliver(server, f.clientId, event('wellness.upsert', f.user, { date: '2026-07-21', hrv: 51 }), {
        secret: f.secret,
      });
      requeued = await waitForState(
        server.db,
        res.deliveryId ?? '',
        ['queued', 'dead_letter', 'processed', 'failed'],
        10_000,
        (row) => row.attempts >= 1,
      );
    } finally {
      await repairWellness();
    }
    expect(requeued).toMatchObject({ state: 'queued', attempts: 1, errorCode: 'transient' });
    expect(requeued.lastError).toContain('wellness');
    const done = await waitForState(server.db, requeued.id, ['processed', 'dead_letter', 'failed'], 20_000);
    expect(done).toMatchObject({ state: 'processed', attempts: 2, errorCode: null, lastError: null });
    expect(await wellnessOn(f, '2026-07-21')).toMatchObject({ hrv: 51 });
  });
});

describe('retention', () => {
  const DAY_MS = 86_400_000;

  async function insertDelivery(db: Db, clientId: string, ageDays: number): Promise<string> {
    const row = await db
      .insertInto('webhookDeliveries')
      .values({
        clientId,
        receivedAt: new Date(Date.now() - ageDays * DAY_MS),
        body: '{"event":"wellness.upsert"}',
        headers: JSON.stringify({ 'content-type': 'application/json' }),
        query: '{}',
        secretMatched: true,
        authMethod: 'header',
        event: 'wellness.upsert',
        state: 'processed',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  const exists = async (db: Db, id: string) =>
    (await db.selectFrom('webhookDeliveries').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

  it('the purge job deletes deliveries older than 30 days (default) and X-Webhook-Id claims older than 7 days', async () => {
    const f = await newFixture();
    const old = await insertDelivery(server.db, f.clientId, 40);
    const recent = await insertDelivery(server.db, f.clientId, 20);
    await server.db
      .insertInto('webhookIds')
      .values([
        {
          clientId: f.clientId,
          webhookId: 'old-claim',
          deliveryId: old,
          receivedAt: new Date(Date.now() - 8 * DAY_MS),
        },
        { clientId: f.clientId, webhookId: 'new-claim', deliveryId: recent, receivedAt: new Date() },
      ])
      .execute();

    await server.runtime.boss.send('maintenance.purge-webhooks', {});
    await waitFor(async () => ((await exists(server.db, old)) ? undefined : true), 'the old delivery to go', 45_000);
    expect(await exists(server.db, recent)).toBe(true);
    const claims = await server.db
      .selectFrom('webhookIds')
      .select('webhookId')
      .where('clientId', '=', f.clientId)
      .execute();
    expect(claims.map((claim) => claim.webhookId)).toEqual(['new-claim']);
  });

  it('honours PACER_WEBHOOK_RETENTION_DAYS', async () => {
    const short = await startTestServer({ PACER_WEBHOOK_RETENTION_DAYS: '5' });
    try {
      const f = await newFixture(short.db);
      const sixDays = await insertDelivery(short.db, f.clientId, 6);
      const fourDays = await insertDelivery(short.db, f.clientId, 4);
      await short.runtime.boss.send('maintenance.purge-webhooks', {});
      await waitFor(
        async () => ((await exists(short.db, sixDays)) ? undefined : true),
        'the 6-day-old delivery to go',
        45_000,
      );
      expect(await exists(short.db, fourDays)).toBe(true);
    } finally {
      await short.stop();
    }
  });
});

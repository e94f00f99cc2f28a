/**
 * Recommendations (issue 10, "Recommendations"), on a real server: the
 * recompute evaluates the rules in its transaction, each rule fires with the
 * numbers that fired it, accepting applies the change through the owning
 * services, dismissing changes nothing else, a decided recommendation stays
 * decided, and an open one expires when its situation goes away. Access:
 * `recommendations:*` scopes, another user's id is not found.
 */
import { randomUUID } from 'node:crypto';
import type {
  NutritionDay,
  PlannedWorkout,
  PlannedWorkoutFuel,
  Problem,
  Recommendation,
  RecommendationList,
  Scope,
  TrainingLoad,
} from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { addDays, localDateOf } from '../../server/src/lib/dates.ts';
import { upsertWellness } from '../../server/src/modules/wellness/wellness.repository.ts';
import { makeUser, mintToken } from '../support/factories.ts';
import { call } from '../support/http.ts';
import { waitForRecompute } from '../support/recompute.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { seedWorkout } from '../support/training-data.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

const ZONE = 'Europe/Berlin';
const today = () => localDateOf(new Date(), ZONE);
const ATHLETE_SCOPES: Scope[] = [
  'profile:write',
  'planning:read',
  'planning:write',
  'nutrition:read',
  'nutrition:write',
  'workout:read',
  'recommendations:read',
  'recommendations:write',
];

interface Athlete {
  readonly user: User;
  readonly token: string;
}

async function athlete(): Promise<Athlete> {
  const user = await makeUser(server.db, { timeZone: ZONE });
  const { token } = await mintToken(server.db, user, { scopes: ATHLETE_SCOPES });
  return { user, token };
}

const settled = (user: User) => waitForRecompute(server.db, user.id);

/** Thresholds and weight; a profile change also recomputes everything from the first data. */
async function setProfile({ token }: Athlete): Promise<void> {
  const res = await call(server.url, 'PATCH', '/api/profile', { token, body: { ftp: 250, weight: 70 } });
  expect(res.status).toBe(200);
}

/**
 * 70 days of wellness whose last `crashDays` crash: HRV from ~62 ms to 30 ms,
 * resting HR from ~49 to 62 bpm, 4 h of sleep. Every component the score has
 * bottoms out, so each of those days is `recover` (and the days before are
 * not).
 */
async function seedRecoveryCrash(user: User, crashDays = 7): Promise<void> {
  const end = today();
  for (let back = 69; back >= 0; back--) {
    const crashed = back < crashDays;
    await upsertWellness(server.db, {
      userId: user.id,
      date: addDays(end, -back),
      values: crashed
        ? { hrv: 30, restingHr: 62, sleepSecs: 4 * 3600 }
        : { hrv: 60 + (back % 5), restingHr: 48 + (back % 3), sleepSecs: 8 * 3600 },
      source: 'test',
      rawJson: undefined,
    });
  }
}

async function plan(token: string, body: Record<string, unknown>): Promise<PlannedWorkout> {
  const res = await call<PlannedWorkout>(server.url, 'POST', '/api/planned-workouts', { token, body });
  expect(res.status).toBe(201);
  return res.body;
}

async function listed(token: string, status = 'open'): Promise<Recommendation[]> {
  const res = await call<RecommendationList>(server.url, 'GET', `/api/recommendations?status=${status}`, { token });
  expect(res.status).toBe(200);
  return res.body.items;
}

async function decide(token: string, id: string, decision: 'accept' | 'dismiss') {
  return call<Recommendation & Partial<Pick<Problem, 'code'>>>(
    server.url,
    'POST',
    `/api/recommendations/${id}/${decision}`,
    { token },
  );
}

function only(items: readonly Recommendation[], kind: Recommendation['kind'], plannedWorkoutId?: string) {
  const found = items.filter(
    (item) => item.kind === kind && (plannedWorkoutId === undefined || item.plannedWorkoutId === plannedWorkoutId),
  );
  expect(found, `${kind} recommendations`).toHaveLength(1);
  return found[0] as Recommendation;
}

async function plannedWorkout(token: string, id: string): Promise<PlannedWorkout> {
  const res = await call<PlannedWorkout>(server.url, 'GET', `/api/planned-workouts/${id}`, { token });
  expect(res.status).toBe(200);
  return res.body;
}

describe('three days in recover before a hard planned workout: rest, or at most 60 minutes easy', () => {
  let owner: Athlete;
  let workout: PlannedWorkout;
  let recommendation: Recommendation;

  beforeAll(async () => {
    owner = await athlete();
    await seedRecoveryCrash(owner.user, 3);
    await setProfile(owner);
    workout = await plan(owner.token, {
      date: addDays(today(), 1),
      timeOfDay: '18:00',
      sport: 'ride',
      title: 'Long ride',
      durationSecs: 9000,
      trainingStress: 130,
    });
    await settled(owner.user);
  });

  it('suggests 60 minutes easy, citing the days in recover, the recovery score and the planned stress', async () => {
    recommendation = only(await listed(owner.token), 'easier_workout', workout.id);

    expect(recommendation.status).toBe('open');
    expect(recommendation.decidedAt).toBeNull();
    expect(recommendation.evidence).toMatchObject({
      rule: 'low_recovery_before_hard_workout',
      recoveryDate: today(),
      recoveryThreshold: 45,
      date: workout.date,
      plannedTss: 130,
      hardTss: 80,
      hardIntensityFactor: 0.85,
      recoverDays: 3,
      recoverSince: addDays(today(), -2),
      restAfterRecoverDays: 3,
    });
    const evidence = recommendation.evidence as { recoveryScore: number };
    expect(evidence.recoveryScore).toBeLessThan(45);
    // The stored days agree: the three days up to today are `recover`, the day before is not.
    const stored = await call<{ items: { date: string; score: number; status: string }[] }>(
      server.url,
      'GET',
      `/api/recovery?from=${addDays(today(), -3)}&to=${today()}`,
      { token: (await mintToken(server.db, owner.user, { scopes: ['health:read'] })).token },
    );
    expect(stored.body.items.map((day) => [day.date, day.status])).toEqual([
      [addDays(today(), -3), expect.not.stringMatching(/^recover$/) as string],
      [addDays(today(), -2), 'recover'],
      [addDays(today(), -1), 'recover'],
      [today(), 'recover'],
    ]);
    expect(stored.body.items.at(-1)?.score).toBeCloseTo(evidence.recoveryScore, 2);
    expect(recommendation.title).toBe('Rest, or make “Long ride” at most 60 minutes easy');
    expect(recommendation.body).toMatch(/^Rest, or at most 60 minutes easy\. /);
    expect(recommendation.action).toMatchObject({
      type: 'swap_structure',
      plannedWorkoutId: workout.id,
      intent: 'recovery',
      durationSecs: 3600,
      trainingStress: 26.3,
    });
    const action = recommendation.action as { structure: { steps: { label?: string }[] } };
    expect(action.structure.steps.map((step) => step.label)).toContain('Steady at 45-55% FTP (113-138 W)');
  });

  it('accepting swaps the planned workout to the easier variant and marks it accepted', async () => {
    const accepted = await decide(owner.token, recommendation.id, 'accept');

    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ id: recommendation.id, status: 'accepted' });
    expect(accepted.body.decidedAt).toEqual(expect.any(String));
    const action = recommendation.action as { structure: unknown; durationSecs: number; trainingStress: number };
    expect(await plannedWorkout(owner.token, workout.id)).toMatchObject({
      structure: action.structure,
      durationSecs: action.durationSecs,
      trainingStress: action.trainingStress,
    });
  });

  it('refuses a second decision with 409 and does not suggest the same workout again', async () => {
    const again = await decide(owner.token, recommendation.id, 'accept');
    const dismissed = await decide(owner.token, recommendation.id, 'dismiss');

    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    expect(dismissed.status).toBe(409);
    await settled(owner.user); // the accepted change asked for a recompute, which refreshed the rules
    expect((await listed(owner.token)).filter((item) => item.kind === 'easier_workout')).toEqual([]);
    expect((await listed(owner.token, 'accepted')).map((item) => item.id)).toEqual([recommendation.id]);
  });
});

describe('a planned workout at risk on fuel', () => {
  let owner: Athlete;
  let workout: PlannedWorkout;
  let recommendation: Recommendation;
  const tomorrow = () => addDays(today(), 1);
  // Something logged before the ride that day: without it (and without a usual intake) the ride is `not_logged`.
  const breakfast = () => ({
    name: 'Toast',
    carbs: 20,
    logged_at: `${tomorrow()}T07:00:00+01:00`,
    absorptionType: 'FAST',
  });

  beforeAll(async () => {
    owner = await athlete();
    await setProfile(owner);
    // The app's own item of that day: accepting must keep it.
    const logged = await call(server.url, 'POST', '/api/nutrition', {
      token: owner.token,
      body: { date: tomorrow(), items: [breakfast()] },
    });
    expect(logged.status).toBe(201);
    workout = await plan(owner.token, {
      date: tomorrow(),
      timeOfDay: '10:00',
      sport: 'ride',
      title: 'Long ride',
      durationSecs: 3 * 3600,
      trainingStress: 192,
    });
    await settled(owner.user);
  });

  it("suggests the fuel model's advice, citing the predicted levels and the store that limits", async () => {
    recommendation = only(await listed(owner.token), 'fuel_advice', workout.id);
    const fuel = await call<PlannedWorkoutFuel>(server.url, 'GET', `/api/planned-workouts/${workout.id}/fuel`, {
      token: owner.token,
    });

    expect(fuel.body.status).toBe('at_risk');
    expect(recommendation.evidence).toEqual({
      rule: 'fuel_at_risk',
      date: tomorrow(),
      status: 'at_risk',
      limitingStore: fuel.body.limitingStore,
      startPercent: fuel.body.start.percent,
      minPercent: fuel.body.minimum.percent,
      startLiverG: fuel.body.start.liverG,
      startMuscleG: fuel.body.start.muscleG,
      lowestLiverG: fuel.body.minimum.liverG,
      startThreshold: 50,
      minimumThreshold: 20,
    });
    expect(fuel.body.limitingStore).not.toBeNull();
    expect(recommendation.body).toContain(`the ${String(fuel.body.limitingStore)} limiting`);
    expect(recommendation.action).toEqual({
      type: 'log_nutrition',
      plannedWorkoutId: workout.id,
      items: fuel.body.advice.map(({ phase: _phase, ...item }) => item),
    });
    // The body: the reason, then the plan's lines.
    expect(recommendation.body.split('\n').slice(1)).toEqual(fuel.body.plan.map((line) => line.text));
    expect(fuel.body.advice.length).toBeGreaterThan(0);
  });

  it("accepting plans the advice next to the app's own items, never as eaten, and the workout becomes ready", async () => {
    const accepted = await decide(owner.token, recommendation.id, 'accept');
    expect(accepted.status).toBe(200);
    expect(accepted.body.status).toBe('accepted');

    const advice = (recommendation.action as { items: { at: string; carbsG: number; absorptionType: string }[] }).items;
    const res = await call<{ items: NutritionDay[] }>(
      server.url,
      'GET',
      `/api/nutrition?from=${tomorrow()}&to=${tomorrow()}`,
      { token: owner.token },
    );
    const items = res.body.items[0]?.items ?? [];
    expect(items.map((item) => item.name)).toContain('Toast');
    const logged = items.filter((item) => item.name !== 'Toast');
    const entry = (at: string, carbs: number | null, type: string) =>
      `${String(Date.parse(at))} ${String(carbs)} ${type}`;
    expect(logged.map((item) => entry(item.logged_at, item.carbs, item.absorptionType)).sort()).toEqual(
      advice.map((item) => entry(item.at, item.carbsG, item.absorptionType)).sort(),
    );
    // Planned (not eaten) as the calling app's own items, tagged OTHER, in the same log as its toast.
    const toast = items.find((item) => item.name === 'Toast');
    expect(toast?.planned).toBe(false);
    expect(logged.every((item) => item.planned && item.meal === 'OTHER' && item.source === toast?.source)).toBe(true);
    // The totals say what was eaten: the toast, not the plan.
    expect(res.body.items[0]?.totals.carbs).toBe(20);

    await settled(owner.user);
    const fuel = await call<PlannedWorkoutFuel>(server.url, 'GET', `/api/planned-workouts/${workout.id}/fuel`, {
      token: owner.token,
    });
    expect(fuel.body.status).toBe('ready');
    expect((await listed(owner.token)).filter((item) => item.kind === 'fuel_advice')).toEqual([]);
  });
});

describe('a CTL ramp over the limit', () => {
  let owner: Athlete;
  let inWeek: PlannedWorkout[];
  let later: PlannedWorkout;
  let recommendation: Recommendation;

  beforeAll(async () => {
    owner = await athlete();
    // An easy hour 60 days ago starts the training history (the ramp needs 42 days of it), then
    // two weeks of daily 3-hour rides at NP 200 W (IF 0.8 at FTP 250: TSS 192 a day), ending yesterday.
    const first = addDays(today(), -60);
    await seedWorkout(server.db, owner.user, {
      name: 'First ride',
      startTime: new Date(`${first}T06:00:00Z`),
      localDate: first,
      elapsedSecs: 3600,
      movingSecs: 3600,
      normalizedPower: 150,
    });
    for (let back = 14; back >= 1; back--) {
      const date = addDays(today(), -back);
      await seedWorkout(server.db, owner.user, {
        name: `Ride ${String(back)}`,
        startTime: new Date(`${date}T06:00:00Z`),
        localDate: date,
        elapsedSecs: 3 * 3600,
        movingSecs: 3 * 3600,
        normalizedPower: 200,
      });
    }
    await setProfile(owner);
    inWeek = [
      await plan(owner.token, {
        date: addDays(today(), 3),
        timeOfDay: '07:00',
        sport: 'ride',
        title: 'Tempo',
        durationSecs: 3600,
        trainingStress: 100,
        structure: {
          steps: [
            { type: 'warmup', duration: { type: 'time', secs: 600 } },
            {
              type: 'interval',
              repeat: 2,
              steps: [
                {
                  type: 'work',
                  duration: { type: 'time', secs: 1200 },
                  target: { type: 'power', minPercentFtp: 76, maxPercentFtp: 90 },
                },
              ],
            },
            { type: 'cooldown', duration: { type: 'time', secs: 600 } },
          ],
        },
      }),
      await plan(owner.token, {
        date: addDays(today(), 5),
        sport: 'run',
        title: 'Easy run',
        durationSecs: 5400,
        trainingStress: 60,
      }),
    ];
    later = await plan(owner.token, {
      date: addDays(today(), 9),
      sport: 'ride',
      title: 'Next block',
      durationSecs: 3600,
      trainingStress: 70,
    });
    await settled(owner.user);
  });

  it('suggests a lighter week, citing the CTL rise and the limit of 8', async () => {
    recommendation = only(await listed(owner.token), 'lighter_week');
    const load = await call<TrainingLoad>(
      server.url,
      'GET',
      `/api/training-load?from=${addDays(today(), -7)}&to=${today()}`,
      { token: owner.token },
    );
    const [weekBefore, latest] = [load.body.items[0], load.body.items.at(-1)];

    expect(latest?.date).toBe(today());
    expect(recommendation.evidence).toMatchObject({ rule: 'ctl_ramp_too_steep', date: today(), threshold: 8 });
    const evidence = recommendation.evidence as { ctl: number; ctlWeekBefore: number; ctlRamp: number };
    expect(evidence.ctl).toBeCloseTo(latest?.ctl ?? Number.NaN, 2);
    expect(evidence.ctlWeekBefore).toBeCloseTo(weekBefore?.ctl ?? Number.NaN, 2);
    expect(evidence.ctlRamp).toBeGreaterThan(8);
    expect(evidence.ctlRamp).toBeCloseTo(evidence.ctl - evidence.ctlWeekBefore, 1);
    expect(recommendation.plannedWorkoutId).toBeNull();
    expect(recommendation.action).toEqual({
      type: 'scale_week',
      scaleTrainingStress: 0.8,
      from: today(),
      to: addDays(today(), 6),
      plannedWorkoutIds: inWeek.map((workout) => workout.id),
    });
  });

  it("accepting scales the week's planned workouts to 80 % of their stress, duration and steps", async () => {
    const accepted = await decide(owner.token, recommendation.id, 'accept');
    expect(accepted.status).toBe(200);
    expect(accepted.body.status).toBe('accepted');

    const [tempo, run] = await Promise.all(inWeek.map((workout) => plannedWorkout(owner.token, workout.id)));
    expect(tempo).toMatchObject({ trainingStress: 80, durationSecs: 2880 });
    expect(tempo?.structure?.steps).toEqual([
      { type: 'warmup', duration: { type: 'time', secs: 480 } },
      {
        type: 'interval',
        repeat: 2,
        steps: [
          {
            type: 'work',
            duration: { type: 'time', secs: 960 },
            target: { type: 'power', minPercentFtp: 76, maxPercentFtp: 90 },
          },
        ],
      },
      { type: 'cooldown', duration: { type: 'time', secs: 480 } },
    ]);
    expect(run).toMatchObject({ trainingStress: 48, durationSecs: 4320, structure: null });
    expect(await plannedWorkout(owner.token, later.id)).toMatchObject({ trainingStress: 70, durationSecs: 3600 });

    // The ramp still holds after the recompute, but the week was decided: no second scaling.
    await settled(owner.user);
    expect((await listed(owner.token)).filter((item) => item.kind === 'lighter_week')).toEqual([]);
  });
});

describe('dismissing, expiry and access', () => {
  let owner: Athlete;
  let kept: PlannedWorkout;
  let changed: PlannedWorkout;

  beforeAll(async () => {
    owner = await athlete();
    await seedRecoveryCrash(owner.user);
    await setProfile(owner);
    const hard = { sport: 'run', durationSecs: 3600, trainingStress: 90 } as const;
    kept = await plan(owner.token, { ...hard, date: addDays(today(), 1), title: 'Threshold run' });
    changed = await plan(owner.token, { ...hard, date: addDays(today(), 2), title: 'Hill repeats' });
    await settled(owner.user);
  });

  it('dismissing marks it dismissed, changes nothing else and is not undone by a recompute', async () => {
    const recommendation = only(await listed(owner.token), 'easier_workout', kept.id);

    const dismissed = await decide(owner.token, recommendation.id, 'dismiss');

    expect(dismissed.status).toBe(200);
    expect(dismissed.body).toMatchObject({ id: recommendation.id, status: 'dismissed' });
    expect(dismissed.body.decidedAt).toEqual(expect.any(String));
    expect(await plannedWorkout(owner.token, kept.id)).toEqual(kept);
    expect((await decide(owner.token, recommendation.id, 'dismiss')).status).toBe(409);
    expect((await decide(owner.token, recommendation.id, 'accept')).status).toBe(409);
    // Another write recomputes: the situation still holds, but it was decided.
    const renamed = await call(server.url, 'PATCH', `/api/planned-workouts/${kept.id}`, {
      token: owner.token,
      body: { description: 'Legs feel heavy' },
    });
    expect(renamed.status).toBe(200);
    await settled(owner.user);
    expect(
      (await listed(owner.token)).filter((item) => item.kind === 'easier_workout' && item.plannedWorkoutId === kept.id),
    ).toEqual([]);
    expect((await listed(owner.token, 'dismissed')).map((item) => item.id)).toEqual([recommendation.id]);
  });

  it('expires an open recommendation when its condition no longer holds', async () => {
    const recommendation = only(await listed(owner.token), 'easier_workout', changed.id);

    const easier = await call(server.url, 'PATCH', `/api/planned-workouts/${changed.id}`, {
      token: owner.token,
      body: { durationSecs: 2400, trainingStress: 30 },
    });
    expect(easier.status).toBe(200);
    await settled(owner.user);

    expect((await listed(owner.token)).map((item) => item.id)).not.toContain(recommendation.id);
    const expired = (await listed(owner.token, 'expired')).find((item) => item.id === recommendation.id);
    expect(expired).toMatchObject({ status: 'expired', decidedAt: expect.any(String) });
    expect((await decide(owner.token, recommendation.id, 'accept')).status).toBe(409);
  });

  it("answers 404 for another user's recommendation and for an unknown id", async () => {
    const stranger = await athlete();
    const [theirs] = await listed(owner.token, 'dismissed');
    if (!theirs) throw new Error('the owner has a dismissed recommendation from the test above');

    for (const decision of ['accept', 'dismiss'] as const) {
      const foreign = await decide(stranger.token, theirs.id, decision);
      expect(foreign.status, decision).toBe(404);
      expect(foreign.body.code).toBe('not_found');
      expect((await decide(stranger.token, randomUUID(), decision)).status).toBe(404);
    }
    expect(await listed(stranger.token, 'dismissed')).toEqual([]);
  });

  it('answers 403 without the recommendations scopes', async () => {
    const { token } = await mintToken(server.db, owner.user, { scopes: ['planning:read', 'planning:write'] });
    const readOnly = await mintToken(server.db, owner.user, { scopes: ['recommendations:read'] });

    const list = await call(server.url, 'GET', '/api/recommendations', { token });
    const accept = await decide(readOnly.token, randomUUID(), 'accept');
    const dismiss = await decide(token, randomUUID(), 'dismiss');

    expect(list.status).toBe(403);
    expect(list.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(accept.status).toBe(403);
    expect(dismiss.status).toBe(403);
  });
});

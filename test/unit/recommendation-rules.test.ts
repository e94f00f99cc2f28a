import type { PlannedWorkoutFuel } from '@pacer/contract';
import { describe, expect, it } from 'vitest';
import { addDays } from '../../server/src/lib/dates.ts';
import { trainingLoadSeries } from '../../server/src/modules/derived/training-load.model.ts';
import {
  easierWorkoutSuggestions,
  evaluateRecommendationRules,
  fuelAdviceSuggestions,
  lighterWeekSuggestions,
  recoverStreak,
  scalePlannedWorkout,
  type PlannedWorkoutInput,
  type RuleInputs,
} from '../../server/src/modules/derived/recommendation-rules.ts';

const TODAY = '2026-11-24';

function workout(fields: Partial<PlannedWorkoutInput> = {}): PlannedWorkoutInput {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    date: addDays(TODAY, 1),
    title: 'Intervals',
    sport: 'ride',
    durationSecs: 3600,
    trainingStress: null,
    structure: null,
    ...fields,
  };
}

function inputs(fields: Partial<RuleInputs> = {}): RuleInputs {
  return {
    today: TODAY,
    recovery: { date: TODAY, score: 30, status: 'recover' },
    recentRecovery: [],
    firstWorkoutDate: addDays(TODAY, -100),
    load: [],
    planned: [],
    fuel: [],
    thresholds: { ftp: 250, thresholdHr: 170 },
    lighterWeekStartedOn: null,
    ...fields,
  };
}

/** Daily stress `tss` from `days` days before today through yesterday, as stored load days. */
function loadOf(tss: number, days: number) {
  const stress = Array.from({ length: days }, (_, index) => ({
    date: addDays(TODAY, -days + index),
    tss,
    method: 'power' as const,
  }));
  return trainingLoadSeries(stress, { fromDate: addDays(TODAY, -days), toDate: TODAY }).slice(-8);
}

describe('rule 1: low recovery before a hard planned workout', () => {
  it('fires at planned stress 80, not 79.9, when the recovery is below 45', () => {
    // 75 minutes: IF 0.80 at stress 80, below the intensity threshold, so the stress decides.
    const at = (trainingStress: number) => workout({ durationSecs: 4500, trainingStress });
    expect(easierWorkoutSuggestions(inputs({ planned: [at(80)] }))).toHaveLength(1);
    expect(easierWorkoutSuggestions(inputs({ planned: [at(79.9)] }))).toEqual([]);
  });

  it('fires at intensity factor 0.85 from the steps even when the stress is low', () => {
    const structure = {
      steps: [
        {
          type: 'work' as const,
          duration: { type: 'time' as const, secs: 1800 },
          target: { type: 'power' as const, minPercentFtp: 85, maxPercentFtp: 85 },
        },
      ],
    };
    const [suggestion] = easierWorkoutSuggestions(
      inputs({ planned: [workout({ durationSecs: 1800, trainingStress: 40, structure })] }),
    );
    expect(suggestion?.evidence).toMatchObject({ plannedTss: 40, intensityFactor: 0.85 });
  });

  it('does not fire in the maintain band, beyond 2 days, or when the variant is not easier', () => {
    const hard = workout({ trainingStress: 95 });
    expect(
      easierWorkoutSuggestions(inputs({ recovery: { date: TODAY, score: 50, status: 'maintain' }, planned: [hard] })),
    ).toEqual([]);
    expect(easierWorkoutSuggestions(inputs({ planned: [{ ...hard, date: addDays(TODAY, 3) }] }))).toEqual([]);
    // A 4-hour steady ride is hard by volume; an endurance ride of 4 hours is not 10 % easier.
    expect(
      easierWorkoutSuggestions(inputs({ planned: [workout({ durationSecs: 4 * 3600, trainingStress: 180 })] })),
    ).toEqual([]);
  });

  it('keys the situation by the workout and its date', () => {
    const [suggestion] = easierWorkoutSuggestions(inputs({ planned: [workout({ trainingStress: 95 })] }));
    expect(suggestion?.dedupeKey).toBe(`easier:${workout().id}:${addDays(TODAY, 1)}`);
    expect(suggestion?.action).toMatchObject({ type: 'swap_structure', intent: 'endurance', durationSecs: 3600 });
  });
});

/** Stored recovery days: `statuses` end on `latest`, one a day (oldest first). */
function recoveryRun(statuses: readonly string[], latest = TODAY) {
  return statuses.map((status, index) => ({ date: addDays(latest, index - statuses.length + 1), status }));
}

describe('rule 1 after 3 or more days in recover: rest, or at most 60 minutes easy', () => {
  const threeDays = recoveryRun(['maintain', 'recover', 'recover', 'recover']);

  it('counts the consecutive days in recover up to the latest score; a gap or another status ends the run', () => {
    expect(recoverStreak(threeDays, TODAY)).toEqual({ days: 3, since: addDays(TODAY, -2) });
    expect(recoverStreak(recoveryRun(['recover', 'maintain', 'recover', 'recover']), TODAY)).toEqual({
      days: 2,
      since: addDays(TODAY, -1),
    });
    const gap = recoveryRun(['recover', 'recover', 'recover']).filter((day) => day.date !== addDays(TODAY, -1));
    expect(recoverStreak(gap, TODAY)).toEqual({ days: 1, since: TODAY });
    expect(recoverStreak([], TODAY)).toEqual({ days: 1, since: TODAY });
    // Yesterday's score is the latest: the run ends there.
    expect(
      recoverStreak(recoveryRun(['recover', 'recover', 'recover'], addDays(TODAY, -1)), addDays(TODAY, -1)),
    ).toEqual({ days: 3, since: addDays(TODAY, -3) });
  });

  it('swaps a hard session for 60 minutes easy, its stress from the steps, citing the days in recover', () => {
    // The case: a 2.5-hour ride of stress 130 after days in recover.
    const ride = workout({ title: 'Long ride', durationSecs: 9000, trainingStress: 130 });
    const [suggestion] = easierWorkoutSuggestions(inputs({ recentRecovery: threeDays, planned: [ride] }));

    expect(suggestion?.kind).toBe('easier_workout');
    expect(suggestion?.title).toBe('Rest, or make “Long ride” at most 60 minutes easy');
    expect(suggestion?.body).toMatch(/^Rest, or at most 60 minutes easy\. /);
    expect(suggestion?.body).toContain(`for 3 days in a row (since ${addDays(TODAY, -2)}; 30 on ${TODAY})`);
    expect(suggestion?.evidence).toEqual({
      rule: 'low_recovery_before_hard_workout',
      recoveryDate: TODAY,
      recoveryScore: 30,
      recoveryThreshold: 45,
      date: ride.date,
      plannedTss: 130,
      intensityFactor: expect.any(Number) as number,
      hardTss: 80,
      hardIntensityFactor: 0.85,
      recoverDays: 3,
      recoverSince: addDays(TODAY, -2),
      restAfterRecoverDays: 3,
    });
    // 9 min warm-up and 6 min cool-down at 50-60 % FTP, 45 min at 45-55 %: Σ hours × IF² × 100.
    const stress = (540 / 3600) * 0.55 ** 2 * 100 + (2700 / 3600) * 0.5 ** 2 * 100 + (360 / 3600) * 0.55 ** 2 * 100;
    expect(suggestion?.action).toMatchObject({
      type: 'swap_structure',
      plannedWorkoutId: ride.id,
      intent: 'recovery',
      durationSecs: 3600,
      trainingStress: Math.round(stress * 10) / 10,
    });
    expect((suggestion?.action as { trainingStress: number }).trainingStress).toBe(26.3);
    const steps = (suggestion?.action as { structure: { steps: { label?: string }[] } }).structure.steps;
    expect(steps.map((step) => step.label)).toEqual([
      'Warm up at 50-60% FTP (125-150 W)',
      'Steady at 45-55% FTP (113-138 W)',
      'Cool down at 50-60% FTP (125-150 W)',
    ]);
    expect(suggestion?.dedupeKey).toBe(`easier-rest:${ride.id}:${ride.date}`);
  });

  it('keeps a hard session shorter than an hour at its own length, easy', () => {
    const short = workout({ durationSecs: 45 * 60, trainingStress: 70, title: 'VO2max' });
    const structure = {
      steps: [
        {
          type: 'work' as const,
          duration: { type: 'time' as const, secs: 45 * 60 },
          target: { type: 'power' as const, minPercentFtp: 100, maxPercentFtp: 110 },
        },
      ],
    };
    const [suggestion] = easierWorkoutSuggestions(
      inputs({ recentRecovery: recoveryRun(Array(6).fill('recover')), planned: [{ ...short, structure }] }),
    );
    expect(suggestion?.action).toMatchObject({ intent: 'recovery', durationSecs: 45 * 60 });
    expect(suggestion?.evidence).toMatchObject({ recoverDays: 6, recoverSince: addDays(TODAY, -5) });
  });

  it('with 2 days in recover keeps the endurance session of the same length', () => {
    const ride = workout({ durationSecs: 9000, trainingStress: 130 });
    const [suggestion] = easierWorkoutSuggestions(
      inputs({ recentRecovery: recoveryRun(['ready', 'recover', 'recover']), planned: [ride] }),
    );
    expect(suggestion?.title).toBe('Make “Intervals” an easy endurance session');
    expect(suggestion?.action).toMatchObject({ intent: 'endurance', durationSecs: 9000 });
    expect((suggestion?.action as { trainingStress: number }).trainingStress).toBeGreaterThan(60);
    expect(suggestion?.evidence).toMatchObject({ recoverDays: 2, recoverSince: addDays(TODAY, -1) });
    expect(suggestion?.body).not.toMatch(/60 minutes/);
    expect(suggestion?.dedupeKey).toBe(`easier:${ride.id}:${ride.date}`);
  });

  it('does not suggest anything for an easy session, however long recovery has been low', () => {
    const easy = workout({ durationSecs: 3600, trainingStress: 40 });
    expect(easierWorkoutSuggestions(inputs({ recentRecovery: threeDays, planned: [easy] }))).toEqual([]);
  });
});

describe('rule 2: fuel short (at_risk or top_up)', () => {
  const lines: PlannedWorkoutFuel['plan'] = [
    { phase: 'before', text: 'Before: 70 g of carbohydrate at 07:00.' },
    { phase: 'during', text: 'During: 45 g/h from 10:20, 15 g every 20 min.' },
    { phase: 'after', text: 'After: carbohydrate-rich meals.' },
  ];
  const plan = (status: PlannedWorkoutFuel['status'], advice: PlannedWorkoutFuel['advice']): PlannedWorkoutFuel => ({
    plannedWorkoutId: workout().id,
    plan: lines,
    start: { at: `${addDays(TODAY, 1)}T10:00:00+01:00`, liverG: 40, muscleG: 260, totalG: 300, percent: 57.69 },
    end: { at: `${addDays(TODAY, 1)}T13:00:00+01:00`, liverG: 0, muscleG: 105, totalG: 105, percent: 20.19 },
    minimum: { at: `${addDays(TODAY, 1)}T13:00:00+01:00`, liverG: 0, muscleG: 105, totalG: 105, percent: 20.19 },
    status,
    limitingStore: status === 'ready' ? null : 'liver',
    advice,
    assumptions: [],
  });
  const advice = [
    {
      at: `${addDays(TODAY, 1)}T08:30:00+01:00`,
      phase: 'before' as const,
      carbsG: 40,
      absorptionType: 'FAST' as const,
      reason: 'x',
    },
  ];

  it('suggests the advice of an at_risk workout, citing its levels', () => {
    const [suggestion] = fuelAdviceSuggestions(inputs({ planned: [workout()], fuel: [plan('at_risk', advice)] }));
    expect(suggestion?.evidence).toEqual({
      rule: 'fuel_at_risk',
      date: addDays(TODAY, 1),
      status: 'at_risk',
      limitingStore: 'liver',
      startPercent: 57.69,
      minPercent: 20.19,
      startLiverG: 40,
      startMuscleG: 260,
      lowestLiverG: 0,
      startThreshold: 50,
      minimumThreshold: 20,
    });
    expect(suggestion?.action).toEqual({
      type: 'log_nutrition',
      plannedWorkoutId: workout().id,
      items: advice.map(({ phase: _phase, ...item }) => item),
    });
  });

  it('writes the reason in one line and then the plan, one line each', () => {
    const [suggestion] = fuelAdviceSuggestions(inputs({ planned: [workout()], fuel: [plan('at_risk', advice)] }));
    const body = suggestion?.body.split('\n') ?? [];
    expect(body).toHaveLength(1 + lines.length);
    expect(body[0]).toMatch(/^“Intervals” on 2026-11-25 is at risk, the liver limiting: it falls below 20 g/);
    expect(body[0]).toContain('57.69 % at the start and 20.19 % at the lowest point');
    expect(body.slice(1)).toEqual(lines.map((line) => line.text));
  });

  it('suggests the advice of a top_up workout too, naming the muscle', () => {
    const [suggestion] = fuelAdviceSuggestions(inputs({ planned: [workout()], fuel: [plan('top_up', advice)] }));
    expect(suggestion?.evidence).toMatchObject({ rule: 'fuel_at_risk', status: 'top_up' });
    expect(suggestion?.body.split('\n')[0]).toContain('needs a top-up: muscle glycogen starts below 70 %');
  });

  it('ignores ready and not_logged workouts, though a long ride has advice, and advice that is empty', () => {
    expect(fuelAdviceSuggestions(inputs({ planned: [workout()], fuel: [plan('ready', advice)] }))).toEqual([]);
    expect(fuelAdviceSuggestions(inputs({ planned: [workout()], fuel: [plan('not_logged', advice)] }))).toEqual([]);
    expect(fuelAdviceSuggestions(inputs({ planned: [workout()], fuel: [plan('at_risk', [])] }))).toEqual([]);
  });

  it('ignores workouts past the lookahead and before today', () => {
    const far = workout({ date: addDays(TODAY, 3) });
    const past = workout({ date: addDays(TODAY, -1) });
    expect(fuelAdviceSuggestions(inputs({ planned: [far], fuel: [plan('at_risk', advice)] }))).toEqual([]);
    expect(fuelAdviceSuggestions(inputs({ planned: [past], fuel: [plan('at_risk', advice)] }))).toEqual([]);
  });
});

describe('rule 3: CTL ramp over 8 a week', () => {
  const week = [workout({ date: addDays(TODAY, 2) }), workout({ id: 'later', date: addDays(TODAY, 7) })];

  it('fires above 8 with the days from today through 6 days ahead', () => {
    const load = loadOf(150, 14);
    const [suggestion] = lighterWeekSuggestions(inputs({ load, planned: week }));
    expect(suggestion?.evidence).toMatchObject({ rule: 'ctl_ramp_too_steep', date: TODAY, threshold: 8 });
    expect((suggestion?.evidence as { ctlRamp: number }).ctlRamp).toBeGreaterThan(8);
    expect(suggestion?.action).toEqual({
      type: 'scale_week',
      scaleTrainingStress: 0.8,
      from: TODAY,
      to: addDays(TODAY, 6),
      plannedWorkoutIds: [workout().id],
    });
    expect(suggestion?.dedupeKey).toBe(`lighter:${TODAY}`);
  });

  it('keeps the week of an earlier suggestion while it runs', () => {
    const startedOn = addDays(TODAY, -3);
    const [suggestion] = lighterWeekSuggestions(
      inputs({ load: loadOf(150, 14), planned: week, lighterWeekStartedOn: startedOn }),
    );
    expect(suggestion?.dedupeKey).toBe(`lighter:${startedOn}`);
    expect(suggestion?.action).toMatchObject({ from: TODAY, to: addDays(startedOn, 6) });
  });

  it("does not read a new athlete's first week of 5 × 100 TSS as a ramp: it needs 42 days of history", () => {
    const days = 5;
    const stress = Array.from({ length: days }, (_, index) => ({
      date: addDays(TODAY, -days + 1 + index),
      tss: 100,
      method: 'power' as const,
    }));
    const load = trainingLoadSeries(stress, { fromDate: addDays(TODAY, -days - 2), toDate: TODAY });
    const firstWorkoutDate = addDays(TODAY, -days + 1);
    expect(lighterWeekSuggestions(inputs({ load, planned: week, firstWorkoutDate }))).toEqual([]);
    expect(lighterWeekSuggestions(inputs({ load, planned: week, firstWorkoutDate: null }))).toEqual([]);
    // The same CTL rise with 42 days of history is a ramp too steep.
    expect(lighterWeekSuggestions(inputs({ load, planned: week, firstWorkoutDate: addDays(TODAY, -42) }))).toHaveLength(
      1,
    );
    expect(lighterWeekSuggestions(inputs({ load, planned: week, firstWorkoutDate: addDays(TODAY, -41) }))).toEqual([]);
  });

  it('does not fire at a steady load, without 8 days of load, or without planned workouts', () => {
    expect(lighterWeekSuggestions(inputs({ load: loadOf(40, 200), planned: week }))).toEqual([]);
    expect(lighterWeekSuggestions(inputs({ load: loadOf(150, 14).slice(-7), planned: week }))).toEqual([]);
    expect(lighterWeekSuggestions(inputs({ load: loadOf(150, 14), planned: [] }))).toEqual([]);
  });
});

describe('a lighter planned workout', () => {
  it('scales stress, duration and every step by the factor, intensities unchanged', () => {
    const scaled = scalePlannedWorkout(
      {
        durationSecs: 3600,
        trainingStress: 77,
        structure: {
          steps: [
            { type: 'warmup', duration: { type: 'time', secs: 601 } },
            {
              type: 'interval',
              repeat: 3,
              steps: [
                {
                  type: 'work',
                  duration: { type: 'distance', meters: 1000 },
                  target: { type: 'pace', minSecsPerKm: 240, maxSecsPerKm: 250 },
                },
              ],
            },
          ],
        },
      },
      0.8,
    );
    expect(scaled).toEqual({
      durationSecs: 2880,
      trainingStress: 61.6,
      structure: {
        steps: [
          { type: 'warmup', duration: { type: 'time', secs: 481 } },
          {
            type: 'interval',
            repeat: 3,
            steps: [
              {
                type: 'work',
                duration: { type: 'distance', meters: 800 },
                target: { type: 'pace', minSecsPerKm: 240, maxSecsPerKm: 250 },
              },
            ],
          },
        ],
      },
    });
    expect(scalePlannedWorkout({ durationSecs: null, trainingStress: null, structure: null }, 0.8)).toEqual({});
  });
});

describe('all rules', () => {
  it('name each situation once', () => {
    const hard = workout({ trainingStress: 95 });
    const suggestions = evaluateRecommendationRules(inputs({ planned: [hard, hard], load: loadOf(150, 14) }));
    expect(suggestions.map((suggestion) => suggestion.kind).sort()).toEqual(['easier_workout', 'lighter_week']);
  });
});

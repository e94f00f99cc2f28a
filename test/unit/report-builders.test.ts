import { describe, expect, it } from 'vitest';
import { localMidnightMs, zonedTimeMs } from '../../server/src/lib/dates.ts';
import { exerciseFromBlocks, plannedWorkoutIntensity } from '../../server/src/modules/derived/exercise.ts';
import { planWorkoutFuel } from '../../server/src/modules/derived/fuel-plan.ts';
import { STEP_MS } from '../../server/src/modules/derived/glycogen.constants.ts';
import { capacityFor, initialState, simulateGlycogen } from '../../server/src/modules/derived/glycogen.model.ts';
import {
  buildLastWorkoutsReport,
  buildWeeklyNutritionReport,
  buildWeeklyTrainingReport,
  type PlannedWorkoutFuelFigures,
  type ReportFuelInput,
  type ReportLoadDay,
  type ReportNutritionItem,
  type ReportPlannedWorkout,
  type ReportRecoveryDay,
  type ReportWellnessDay,
  type ReportWorkout,
} from '../../server/src/modules/reports/report-generation.service.ts';

const END_DATE = '2026-11-20'; // a Friday: the week is Sat 2026-11-14 .. Fri 2026-11-20

function workout(fields: Partial<ReportWorkout> & Pick<ReportWorkout, 'id' | 'sport' | 'localDate'>): ReportWorkout {
  return {
    name: `${fields.sport} on ${fields.localDate}`,
    startTime: new Date(`${fields.localDate}T07:00:00Z`),
    elapsedSecs: null,
    movingSecs: null,
    distanceMeters: null,
    ascentMeters: null,
    avgHr: null,
    maxHr: null,
    avgPower: null,
    normalizedPower: null,
    trainingStress: null,
    calories: null,
    deviceSerial: null,
    createdAt: new Date('2026-11-21T00:00:00Z'),
    ...fields,
  };
}

const longRide = workout({
  id: '00000000-0000-4000-8000-000000000001',
  name: 'Long | windy ride',
  sport: 'cycling',
  localDate: '2026-11-15',
  startTime: new Date('2026-11-15T08:00:00Z'),
  elapsedSecs: 5400,
  movingSecs: 5100,
  distanceMeters: 45210.4,
  ascentMeters: 350.6,
  avgHr: 142,
  maxHr: 171,
  avgPower: 210.4,
  normalizedPower: 225.2,
  trainingStress: 85.25,
  calories: 950,
  deviceSerial: 'A1',
});
const tempoRun = workout({
  id: '00000000-0000-4000-8000-000000000002',
  name: 'Tempo run',
  sport: 'running',
  localDate: '2026-11-17',
  startTime: new Date('2026-11-17T06:30:00Z'),
  elapsedSecs: 2700,
  movingSecs: 2650,
  distanceMeters: 8000,
  ascentMeters: 45,
  avgHr: 150,
  trainingStress: 40,
  deviceSerial: 'B2',
});
const shortRide = workout({
  id: '00000000-0000-4000-8000-000000000003',
  name: 'Recovery spin',
  sport: 'cycling',
  localDate: '2026-11-19',
  startTime: new Date('2026-11-19T17:00:00Z'),
  elapsedSecs: 3600,
  distanceMeters: 30000,
  ascentMeters: 200,
  trainingStress: 60.5,
  deviceSerial: 'A1',
  createdAt: new Date('2026-11-19T19:00:00Z'),
});
/** The same activity uploaded again later (another app): counted once. */
const shortRideAgain = {
  ...shortRide,
  id: '00000000-0000-4000-8000-000000000004',
  createdAt: new Date('2026-11-20T09:00:00Z'),
};
const dayBefore = workout({
  id: '00000000-0000-4000-8000-000000000005',
  sport: 'cycling',
  localDate: '2026-11-13',
  elapsedSecs: 7200,
  trainingStress: 100,
});
const dayAfter = workout({
  id: '00000000-0000-4000-8000-000000000006',
  sport: 'running',
  localDate: '2026-11-21',
  elapsedSecs: 1800,
});
const workouts = [dayAfter, shortRideAgain, shortRide, tempoRun, longRide, dayBefore];

const wellness: ReportWellnessDay[] = [
  { date: '2026-11-13', hrv: 100, restingHr: 40, sleepSecs: 36000 },
  { date: '2026-11-14', hrv: 60, restingHr: 50, sleepSecs: 25200 },
  { date: '2026-11-15', hrv: 65.5, restingHr: 48, sleepSecs: 28800 },
  { date: '2026-11-16', hrv: null, restingHr: 49, sleepSecs: null },
];

const food: ReportNutritionItem[] = [
  { date: '2026-11-13', calories: 9999, carbs: 999, protein: 999, fat: 999 },
  { date: '2026-11-14', calories: 500.4, carbs: 60, protein: 20.2, fat: 15 },
  { date: '2026-11-14', calories: 700, carbs: 80.5, protein: 30, fat: null },
  { date: '2026-11-16', calories: 2000, carbs: 250, protein: 100, fat: 70 },
  { date: '2026-11-21', calories: 9999, carbs: 999, protein: 999, fat: 999 },
];

/** No derived data stored yet: the sections that read it say so. */
const noDerivedData = { trainingLoad: [], recovery: [] };
const noFuel: ReportFuelInput = {
  timeZone: 'UTC',
  capacity: capacityFor(70),
  days: [],
  carbMealTimesMs: [],
  plannedWorkouts: [],
};

const trainingWeek = { endDate: END_DATE, workouts, wellness, ...noDerivedData };
const notStoredRecovery = {
  days: ['2026-11-14', '2026-11-15', '2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20'].map(
    (date) => ({ date, score: null, status: null }),
  ),
  latest: null,
};

describe('WEEKLY_TRAINING', () => {
  it('sums the 7 days ending at the end date, per sport and per day, counting a duplicate upload once', () => {
    const report = buildWeeklyTrainingReport(trainingWeek);
    expect(report).toMatchObject({
      title: 'Weekly training: 2026-11-14 to 2026-11-20',
      periodFrom: '2026-11-14',
      periodTo: '2026-11-20',
    });
    const rest = { workouts: 0, durationSecs: 0, distanceMeters: 0, ascentMeters: 0, trainingStress: 0 };
    expect(report.data).toEqual({
      totals: { workouts: 3, durationSecs: 11700, distanceMeters: 83210.4, ascentMeters: 595.6, trainingStress: 185.8 },
      bySport: [
        {
          sport: 'cycling',
          workouts: 2,
          durationSecs: 9000,
          distanceMeters: 75210.4,
          ascentMeters: 550.6,
          trainingStress: 145.8,
        },
        {
          sport: 'running',
          workouts: 1,
          durationSecs: 2700,
          distanceMeters: 8000,
          ascentMeters: 45,
          trainingStress: 40,
        },
      ],
      days: [
        { date: '2026-11-14', ...rest },
        {
          date: '2026-11-15',
          workouts: 1,
          durationSecs: 5400,
          distanceMeters: 45210.4,
          ascentMeters: 350.6,
          trainingStress: 85.3,
        },
        { date: '2026-11-16', ...rest },
        {
          date: '2026-11-17',
          workouts: 1,
          durationSecs: 2700,
          distanceMeters: 8000,
          ascentMeters: 45,
          trainingStress: 40,
        },
        { date: '2026-11-18', ...rest },
        {
          date: '2026-11-19',
          workouts: 1,
          durationSecs: 3600,
          distanceMeters: 30000,
          ascentMeters: 200,
          trainingStress: 60.5,
        },
        { date: '2026-11-20', ...rest },
      ],
      wellness: {
        hrv: { average: 62.8, days: 2 },
        restingHr: { average: 49, days: 3 },
        sleepSecs: { average: 27000, days: 2 },
      },
      possibleDuplicatesExcluded: 1,
      trainingLoad: { days: 0, trainingStress: 0, endOfWeek: null },
      recovery: notStoredRecovery,
    });
  });

  it('writes the figures as Markdown with units, from the same rounded values as the data', () => {
    expect(buildWeeklyTrainingReport(trainingWeek).markdown).toBe(
      [
        '# Weekly training: 2026-11-14 to 2026-11-20',
        '',
        '## Training',
        '',
        '- Workouts: 3',
        '- Duration: 3:15 (h:mm)',
        '- Distance: 83.2 km',
        '- Ascent: 596 m',
        '- Training stress: 186',
        '',
        '1 possible duplicate upload (same device and start time) not counted.',
        '',
        '### By sport',
        '',
        '| Sport | Workouts | Duration (h:mm) | Distance | Ascent | Training stress |',
        '| --- | ---: | ---: | ---: | ---: | ---: |',
        '| cycling | 2 | 2:30 | 75.2 km | 551 m | 146 |',
        '| running | 1 | 0:45 | 8.0 km | 45 m | 40 |',
        '',
        '### By day',
        '',
        '| Date | Day | Workouts | Duration (h:mm) | Distance | Ascent | Training stress |',
        '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
        '| 2026-11-14 | Sat | 0 | 0:00 | 0.0 km | 0 m | 0 |',
        '| 2026-11-15 | Sun | 1 | 1:30 | 45.2 km | 351 m | 85 |',
        '| 2026-11-16 | Mon | 0 | 0:00 | 0.0 km | 0 m | 0 |',
        '| 2026-11-17 | Tue | 1 | 0:45 | 8.0 km | 45 m | 40 |',
        '| 2026-11-18 | Wed | 0 | 0:00 | 0.0 km | 0 m | 0 |',
        '| 2026-11-19 | Thu | 1 | 1:00 | 30.0 km | 200 m | 61 |',
        '| 2026-11-20 | Fri | 0 | 0:00 | 0.0 km | 0 m | 0 |',
        '',
        '## Training load',
        '',
        'No training load stored between 2026-11-14 and 2026-11-20.',
        '',
        '## Wellness',
        '',
        '| Measure | Average | Days with data |',
        '| --- | ---: | ---: |',
        '| HRV (rMSSD) | 62.8 ms | 2 of 7 |',
        '| Resting heart rate | 49.0 bpm | 3 of 7 |',
        '| Sleep | 7.5 h | 2 of 7 |',
        '',
        '## Recovery',
        '',
        'No recovery scores stored between 2026-11-14 and 2026-11-20.',
        '',
      ].join('\n'),
    );
  });

  it('says so when the week has no workouts and no wellness data', () => {
    const report = buildWeeklyTrainingReport({ endDate: '2026-10-01', workouts, wellness, ...noDerivedData });
    expect(report.markdown).toBe(
      [
        '# Weekly training: 2026-09-25 to 2026-10-01',
        '',
        '## Training',
        '',
        'No workouts recorded between 2026-09-25 and 2026-10-01.',
        '',
        '## Training load',
        '',
        'No training load stored between 2026-09-25 and 2026-10-01.',
        '',
        '## Wellness',
        '',
        'No wellness data recorded between 2026-09-25 and 2026-10-01.',
        '',
        '## Recovery',
        '',
        'No recovery scores stored between 2026-09-25 and 2026-10-01.',
        '',
      ].join('\n'),
    );
    expect(report.data).toMatchObject({
      totals: { workouts: 0, durationSecs: 0, distanceMeters: 0, ascentMeters: 0, trainingStress: 0 },
      bySport: [],
      wellness: {
        hrv: { average: null, days: 0 },
        restingHr: { average: null, days: 0 },
        sleepSecs: { average: null, days: 0 },
      },
      possibleDuplicatesExcluded: 0,
    });
    expect(report.data['days']).toHaveLength(7);
  });

  it('shows a measure without data as such while the others have averages', () => {
    const report = buildWeeklyTrainingReport({
      endDate: END_DATE,
      workouts: [],
      wellness: [{ date: '2026-11-18', hrv: null, restingHr: 52, sleepSecs: null }],
      ...noDerivedData,
    });
    expect(report.markdown).toContain('| HRV (rMSSD) | no data | 0 of 7 |');
    expect(report.markdown).toContain('| Resting heart rate | 52.0 bpm | 1 of 7 |');
    expect(report.markdown).toContain('No workouts recorded between 2026-11-14 and 2026-11-20.');
  });
});

describe('LAST_3_WORKOUTS', () => {
  it('lists the three latest workouts on or before the end date, newest first, with their key figures', () => {
    const report = buildLastWorkoutsReport({ endDate: END_DATE, workouts });
    expect(report).toMatchObject({
      title: 'Last 3 workouts up to 2026-11-20',
      periodFrom: '2026-11-15',
      periodTo: '2026-11-20',
    });
    expect(report.data).toEqual({
      workouts: [
        {
          id: shortRide.id,
          name: 'Recovery spin',
          sport: 'cycling',
          startTime: '2026-11-19T17:00:00.000Z',
          localDate: '2026-11-19',
          durationSecs: 3600,
          movingSecs: null,
          distanceMeters: 30000,
          ascentMeters: 200,
          avgHr: null,
          maxHr: null,
          avgPower: null,
          normalizedPower: null,
          trainingStress: 60.5,
          calories: null,
        },
        expect.objectContaining({ id: tempoRun.id, durationSecs: 2700, movingSecs: 2650, avgHr: 150 }),
        {
          id: longRide.id,
          name: 'Long | windy ride',
          sport: 'cycling',
          startTime: '2026-11-15T08:00:00.000Z',
          localDate: '2026-11-15',
          durationSecs: 5400,
          movingSecs: 5100,
          distanceMeters: 45210.4,
          ascentMeters: 350.6,
          avgHr: 142,
          maxHr: 171,
          avgPower: 210,
          normalizedPower: 225,
          trainingStress: 85.3,
          calories: 950,
        },
      ],
    });
    expect(report.markdown).toBe(
      [
        '# Last 3 workouts up to 2026-11-20',
        '',
        'The 3 most recent workouts on or before 2026-11-20, newest first.',
        '',
        '## 1. Recovery spin (2026-11-19)',
        '',
        '- Sport: cycling',
        '- Duration: 1:00 (h:mm)',
        '- Distance: 30.0 km',
        '- Ascent: 200 m',
        '- Training stress: 61',
        '',
        '## 2. Tempo run (2026-11-17)',
        '',
        '- Sport: running',
        '- Duration: 0:45 (h:mm), moving 0:44',
        '- Distance: 8.0 km',
        '- Ascent: 45 m',
        '- Heart rate: 150 bpm average',
        '- Training stress: 40',
        '',
        '## 3. Long \\| windy ride (2026-11-15)',
        '',
        '- Sport: cycling',
        '- Duration: 1:30 (h:mm), moving 1:25',
        '- Distance: 45.2 km',
        '- Ascent: 351 m',
        '- Heart rate: 142 bpm average, 171 bpm max',
        '- Power: 210 W average, 225 W normalized',
        '- Training stress: 85',
        '- Energy: 950 kcal',
        '',
      ].join('\n'),
    );
  });

  it('lists fewer when fewer exist, and says so', () => {
    const report = buildLastWorkoutsReport({ endDate: '2026-11-16', workouts });
    expect((report.data['workouts'] as { id: string }[]).map((w) => w.id)).toEqual([longRide.id, dayBefore.id]);
    expect(report.markdown).toContain('Only 2 workouts were recorded on or before 2026-11-16, newest first.');
    expect(report.periodFrom).toBe('2026-11-13');
  });

  it('says so when there is no workout on or before the end date', () => {
    const report = buildLastWorkoutsReport({ endDate: '2026-01-01', workouts });
    expect(report).toEqual({
      title: 'Last 3 workouts up to 2026-01-01',
      periodFrom: '2026-01-01',
      periodTo: '2026-01-01',
      markdown: '# Last 3 workouts up to 2026-01-01\n\nNo workouts recorded on or before 2026-01-01.\n',
      data: { workouts: [] },
    });
  });
});

describe('WEEKLY_NUTRITION', () => {
  it('totals each day of the week and averages over the logged days', () => {
    const report = buildWeeklyNutritionReport({ endDate: END_DATE, items: food, fuel: noFuel });
    const notLogged = (date: string) => ({
      date,
      logged: false,
      calories: null,
      carbs: null,
      protein: null,
      fat: null,
    });
    expect(report).toMatchObject({
      title: 'Weekly nutrition: 2026-11-14 to 2026-11-20',
      periodFrom: '2026-11-14',
      periodTo: '2026-11-20',
    });
    expect(report.data).toEqual({
      loggedDays: 2,
      totals: { calories: 3200.4, carbs: 390.5, protein: 150.2, fat: 85 },
      averages: { calories: 1600.2, carbs: 195.3, protein: 75.1, fat: 42.5 },
      days: [
        { date: '2026-11-14', logged: true, calories: 1200.4, carbs: 140.5, protein: 50.2, fat: 15 },
        notLogged('2026-11-15'),
        { date: '2026-11-16', logged: true, calories: 2000, carbs: 250, protein: 100, fat: 70 },
        notLogged('2026-11-17'),
        notLogged('2026-11-18'),
        notLogged('2026-11-19'),
        notLogged('2026-11-20'),
      ],
      fuel: {
        capacityG: 520,
        days: notStoredRecovery.days.map(({ date }) => ({
          date,
          lowestPercent: null,
          lowestTotalG: null,
          lowestAt: null,
          constant: null,
        })),
        plannedWorkouts: [],
      },
    });
    expect(report.markdown).toBe(
      [
        '# Weekly nutrition: 2026-11-14 to 2026-11-20',
        '',
        '## Summary',
        '',
        '- Logged days: 2 of 7',
        '- Average per logged day: 1600 kcal, 195 g carbohydrate, 75 g protein, 43 g fat',
        '- Total: 3200 kcal, 391 g carbohydrate, 150 g protein, 85 g fat',
        '',
        '## By day',
        '',
        '| Date | Day | Energy | Carbohydrate | Protein | Fat |',
        '| --- | --- | ---: | ---: | ---: | ---: |',
        '| 2026-11-14 | Sat | 1200 kcal | 141 g | 50 g | 15 g |',
        '| 2026-11-15 | Sun | not logged | – | – | – |',
        '| 2026-11-16 | Mon | 2000 kcal | 250 g | 100 g | 70 g |',
        '| 2026-11-17 | Tue | not logged | – | – | – |',
        '| 2026-11-18 | Wed | not logged | – | – | – |',
        '| 2026-11-19 | Thu | not logged | – | – | – |',
        '| 2026-11-20 | Fri | not logged | – | – | – |',
        '',
        '## Fuel',
        '',
        'No fuel timeline stored between 2026-11-14 and 2026-11-20.',
        '',
        '### Planned workouts',
        '',
        'No planned workouts in the week.',
        '',
      ].join('\n'),
    );
  });

  it('says so when nothing was logged in the week', () => {
    const report = buildWeeklyNutritionReport({ endDate: '2026-12-31', items: food, fuel: noFuel });
    expect(report.markdown).toBe(
      '# Weekly nutrition: 2026-12-25 to 2026-12-31\n\n## Summary\n\nNo nutrition logged between 2026-12-25 and 2026-12-31.\n\n' +
        '## Fuel\n\nNo fuel timeline stored between 2026-12-25 and 2026-12-31.\n\n' +
        '### Planned workouts\n\nNo planned workouts in the week.\n',
    );
    expect(report.data).toMatchObject({
      loggedDays: 0,
      totals: { calories: 0, carbs: 0, protein: 0, fat: 0 },
      averages: null,
    });
  });
});

// ---------------------------------------------------------------------------
// Derived data: stored training load, recovery and the fuel timeline.

const loadDays: ReportLoadDay[] = [
  { date: '2026-11-13', tss: 100, atl: 50, ctl: 40, tsb: -5 },
  { date: '2026-11-14', tss: 0, atl: 43.7, ctl: 39, tsb: -10 },
  { date: '2026-11-15', tss: 85.2, atl: 49.1, ctl: 40.1, tsb: -4.7 },
  { date: '2026-11-16', tss: 0, atl: 43, ctl: 39.2, tsb: -9 },
  { date: '2026-11-17', tss: 40.1, atl: 42.6, ctl: 39.2, tsb: -3.8 },
  { date: '2026-11-18', tss: 0, atl: 37.3, ctl: 38.3, tsb: -3.4 },
  { date: '2026-11-19', tss: 60.5, atl: 40.2, ctl: 38.9, tsb: 1 },
  { date: '2026-11-20', tss: 0, atl: 52.345, ctl: 45.678, tsb: -6.66 },
  { date: '2026-11-21', tss: 999, atl: 99, ctl: 99, tsb: 99 },
];

const recoveryDays: ReportRecoveryDay[] = [
  { date: '2026-11-13', score: 90, status: 'ready', explanation: 'Before the week.' },
  { date: '2026-11-14', score: 81.46, status: 'ready', explanation: 'HRV is in your normal range.' },
  { date: '2026-11-15', score: null, status: 'insufficient_data', explanation: 'Not enough data for a score yet.' },
  { date: '2026-11-17', score: 32.14, status: 'recover', explanation: 'Resting heart rate is 6 bpm above normal.' },
  { date: '2026-11-18', score: 55.56, status: 'maintain', explanation: 'Sleep was a little short.' },
  { date: '2026-11-19', score: 60, status: 'maintain', explanation: 'Training load is high.' },
  { date: '2026-11-20', score: 48.04, status: 'recover', explanation: 'Sleep was 5.5 h | short of the 8 h you need.' },
  { date: '2026-11-21', score: 99, status: 'ready', explanation: 'After the week.' },
];

const derivedWeek = { ...trainingWeek, trainingLoad: loadDays, recovery: recoveryDays };

describe('WEEKLY_TRAINING: training load and recovery', () => {
  it("reads the week's stored load: CTL, ATL and TSB of its last day and the week's training stress", () => {
    const report = buildWeeklyTrainingReport(derivedWeek);
    expect(report.data['trainingLoad']).toEqual({
      days: 7,
      trainingStress: 185.8,
      endOfWeek: { date: '2026-11-20', ctl: 45.7, atl: 52.3, tsb: -6.7 },
    });
    expect(report.markdown).toContain(
      [
        '## Training load',
        '',
        'On 2026-11-20, the last day of the week:',
        '',
        '- Fitness (CTL): 45.7',
        '- Fatigue (ATL): 52.3',
        '- Form (TSB): -6.7',
        '- Training stress of the week: 186 (7 of 7 days stored)',
        '',
        'The load model scores every workout (from power, else heart rate, else sport and duration); the training stress under Training is what the devices recorded.',
        '',
        '## Wellness',
      ].join('\n'),
    );
  });

  it('says which day the figures are of when the stored load stops before the end of the week', () => {
    const report = buildWeeklyTrainingReport({
      ...derivedWeek,
      trainingLoad: loadDays.filter((day) => day.date <= '2026-11-18'),
    });
    expect(report.data['trainingLoad']).toEqual({
      days: 5,
      trainingStress: 125.3,
      endOfWeek: { date: '2026-11-18', ctl: 38.3, atl: 37.3, tsb: -3.4 },
    });
    expect(report.markdown).toContain('On 2026-11-18, the latest day of the week stored:');
    expect(report.markdown).toContain('- Training stress of the week: 125 (5 of 7 days stored)');
  });

  it("lists each day's stored recovery score and status, and the latest explanation", () => {
    const report = buildWeeklyTrainingReport(derivedWeek);
    expect(report.data['recovery']).toEqual({
      days: [
        { date: '2026-11-14', score: 81.46, status: 'ready' },
        { date: '2026-11-15', score: null, status: 'insufficient_data' },
        { date: '2026-11-16', score: null, status: null },
        { date: '2026-11-17', score: 32.14, status: 'recover' },
        { date: '2026-11-18', score: 55.56, status: 'maintain' },
        { date: '2026-11-19', score: 60, status: 'maintain' },
        { date: '2026-11-20', score: 48.04, status: 'recover' },
      ],
      latest: {
        date: '2026-11-20',
        score: 48.04,
        status: 'recover',
        explanation: 'Sleep was 5.5 h | short of the 8 h you need.',
      },
    });
    expect(
      report.markdown.endsWith(
        [
          '## Recovery',
          '',
          '| Date | Day | Score | Status |',
          '| --- | --- | ---: | --- |',
          '| 2026-11-14 | Sat | 81 | ready |',
          '| 2026-11-15 | Sun | – | insufficient data |',
          '| 2026-11-16 | Mon | not computed | – |',
          '| 2026-11-17 | Tue | 32 | recover |',
          '| 2026-11-18 | Wed | 56 | maintain |',
          '| 2026-11-19 | Thu | 60 | maintain |',
          '| 2026-11-20 | Fri | 48 | recover |',
          '',
          'Latest (2026-11-20): Sleep was 5.5 h \\| short of the 8 h you need.',
          '',
        ].join('\n'),
      ),
    ).toBe(true);
  });

  it('keeps the training and wellness sections as they were', () => {
    const withDerived = buildWeeklyTrainingReport(derivedWeek);
    const without = buildWeeklyTrainingReport(trainingWeek);
    for (const key of ['totals', 'bySport', 'days', 'wellness', 'possibleDuplicatesExcluded']) {
      expect(withDerived.data[key]).toEqual(without.data[key]);
    }
    const training = (markdown: string) => markdown.slice(0, markdown.indexOf('## Training load'));
    expect(training(withDerived.markdown)).toBe(training(without.markdown));
  });
});

const ZONE = 'Europe/Berlin';
const CAPACITY = capacityFor(70); // 100 g liver + 420 g muscle

/** A stored fuel day: 96 points with 100 g in the liver and `muscleG` in the muscle, except at the given steps. */
function fuelDay(date: string, muscleG: number, dips: Readonly<Record<number, number>> = {}, usualIntake = true) {
  const midnight = localMidnightMs(date, ZONE);
  return {
    date,
    usualIntake,
    points: Array.from({ length: 96 }, (_, step): [number, number, number, number] => [
      midnight + (step + 1) * STEP_MS,
      100,
      dips[step] ?? muscleG,
      0,
    ]),
  };
}

function planned(
  fields: Partial<ReportPlannedWorkout> & Pick<ReportPlannedWorkout, 'id' | 'date' | 'title'>,
): ReportPlannedWorkout {
  return {
    timeOfDay: null,
    sport: 'ride',
    durationSecs: 3600,
    trainingStress: null,
    structure: null,
    ...fields,
  };
}

const power = (min: number, max = min) => ({ type: 'power' as const, minPercentFtp: min, maxPercentFtp: max });
const plannedWorkouts: ReportPlannedWorkout[] = [
  planned({ id: 'p8', date: '2026-11-21', timeOfDay: '10:00', title: 'After the week' }),
  planned({ id: 'p6', date: '2026-11-20', timeOfDay: '23:30', title: 'Midnight ride' }),
  planned({ id: 'p4', date: '2026-11-19', sport: 'run', durationSecs: 2700, title: 'Anytime run' }),
  planned({ id: 'p5', date: '2026-11-19', timeOfDay: '08:00', sport: 'strength', durationSecs: null, title: 'Gym' }),
  planned({ id: 'p3', date: '2026-11-18', timeOfDay: '06:00', durationSecs: 5400, title: 'Fasted ride' }),
  planned({
    id: 'p2',
    date: '2026-11-17',
    timeOfDay: '07:10',
    sport: 'run',
    durationSecs: 1800,
    trainingStress: 40,
    title: 'Tempo run',
  }),
  planned({
    id: 'p1',
    date: '2026-11-16',
    timeOfDay: '10:00',
    // The structure's time (1 h) wins over the planned 1:30, as in the fuel model.
    durationSecs: 5400,
    title: 'VO2 | intervals',
    structure: {
      steps: [
        { type: 'warmup', duration: { type: 'time', secs: 600 }, target: power(55, 65) },
        {
          type: 'interval',
          repeat: 3,
          steps: [
            { type: 'work', duration: { type: 'time', secs: 480 }, target: power(105, 110) },
            { type: 'recovery', duration: { type: 'time', secs: 240 }, target: power(50) },
          ],
        },
        { type: 'cooldown', duration: { type: 'time', secs: 840 }, target: power(50) },
      ],
    },
  }),
  planned({ id: 'p7', date: '2026-11-15', timeOfDay: '09:00', title: 'Easy spin' }),
  planned({ id: 'p0', date: '2026-11-13', timeOfDay: '09:00', title: 'Before the week' }),
];

/**
 * Steps are numbered from 0 (00:00-00:15, its point at 00:15): step 39 ends
 * at 10:00, step 95 at midnight. 11-15 is not stored.
 */
const fuel: ReportFuelInput = {
  timeZone: ZONE,
  capacity: CAPACITY,
  days: [
    fuelDay('2026-11-13', 300),
    fuelDay('2026-11-14', 300, { 71: 130, 80: 130 }),
    fuelDay('2026-11-16', 320, { 41: 200, 95: 150 }),
    fuelDay('2026-11-17', 220),
    fuelDay('2026-11-18', 300, { 23: 150, 26: 60 }),
    fuelDay('2026-11-19', 300),
    fuelDay('2026-11-20', 300, { 95: 50 }),
    fuelDay('2026-11-21', 300),
  ],
  carbMealTimesMs: [],
  plannedWorkouts,
};

describe('WEEKLY_NUTRITION: fuel', () => {
  it("gives the lowest stored level of each day and when, in the athlete's time", () => {
    const report = buildWeeklyNutritionReport({ endDate: END_DATE, items: food, fuel });
    const summary = report.data['fuel'] as { capacityG: number; days: unknown[] };
    expect(summary.capacityG).toBe(520);
    expect(summary.days).toEqual([
      // Two steps at the lowest: the first counts.
      {
        date: '2026-11-14',
        lowestPercent: 44.2,
        lowestTotalG: 230,
        lowestAt: '2026-11-14T18:00:00+01:00',
        constant: false,
      },
      { date: '2026-11-15', lowestPercent: null, lowestTotalG: null, lowestAt: null, constant: null },
      // At the end of the day: the next midnight.
      {
        date: '2026-11-16',
        lowestPercent: 48.1,
        lowestTotalG: 250,
        lowestAt: '2026-11-17T00:00:00+01:00',
        constant: false,
      },
      {
        date: '2026-11-17',
        lowestPercent: 61.5,
        lowestTotalG: 320,
        lowestAt: '2026-11-17T00:15:00+01:00',
        constant: true,
      },
      {
        date: '2026-11-18',
        lowestPercent: 30.8,
        lowestTotalG: 160,
        lowestAt: '2026-11-18T06:45:00+01:00',
        constant: false,
      },
      {
        date: '2026-11-19',
        lowestPercent: 76.9,
        lowestTotalG: 400,
        lowestAt: '2026-11-19T00:15:00+01:00',
        constant: true,
      },
      {
        date: '2026-11-20',
        lowestPercent: 28.8,
        lowestTotalG: 150,
        lowestAt: '2026-11-21T00:00:00+01:00',
        constant: false,
      },
    ]);
  });

  it("rates the week's planned workouts on the stored timeline, and says why one has no rating", () => {
    const report = buildWeeklyNutritionReport({ endDate: END_DATE, items: food, fuel });
    const rated = (report.data['fuel'] as { plannedWorkouts: Record<string, unknown>[] }).plannedWorkouts;
    expect(
      rated.map(({ id, start, durationSecs, startPercent, minPercent, status, limitingStore, unrated }) => ({
        id,
        start,
        durationSecs,
        startPercent,
        minPercent,
        status,
        limitingStore,
        unrated,
      })),
    ).toEqual([
      {
        id: 'p7',
        start: '2026-11-15T09:00:00+01:00',
        durationSecs: 3600,
        startPercent: null,
        minPercent: null,
        status: null,
        limitingStore: null,
        unrated: 'not_stored',
      },
      {
        id: 'p1',
        start: '2026-11-16T10:00:00+01:00',
        durationSecs: 3600,
        startPercent: 80.8,
        minPercent: 57.7,
        status: 'ready',
        limitingStore: null,
        unrated: null,
      },
      {
        id: 'p2',
        start: '2026-11-17T07:10:00+01:00',
        durationSecs: 1800,
        startPercent: 61.5,
        minPercent: 61.5,
        status: 'top_up',
        limitingStore: 'muscle',
        unrated: null,
      },
      {
        id: 'p3',
        start: '2026-11-18T06:00:00+01:00',
        durationSecs: 5400,
        startPercent: 48.1,
        minPercent: 30.8,
        status: 'at_risk',
        limitingStore: 'muscle',
        unrated: null,
      },
      {
        id: 'p5',
        start: '2026-11-19T08:00:00+01:00',
        durationSecs: null,
        startPercent: null,
        minPercent: null,
        status: null,
        limitingStore: null,
        unrated: 'no_duration',
      },
      {
        id: 'p4',
        start: null,
        durationSecs: 2700,
        startPercent: null,
        minPercent: null,
        status: null,
        limitingStore: null,
        unrated: 'no_start_time',
      },
      // Across midnight: the day after the week is read too.
      {
        id: 'p6',
        start: '2026-11-20T23:30:00+01:00',
        durationSecs: 3600,
        startPercent: 76.9,
        minPercent: 28.8,
        status: 'at_risk', // muscle dips to 50 g at 23:45, below its 105 g floor
        limitingStore: 'muscle',
        unrated: null,
      },
    ]);
  });

  it('writes the fuel section after the intake, with the rule it rates by', () => {
    const report = buildWeeklyNutritionReport({ endDate: END_DATE, items: food, fuel });
    const section = report.markdown.slice(report.markdown.indexOf('## Fuel'));
    expect(section).toBe(
      [
        '## Fuel',
        '',
        'Lowest glycogen (liver and muscle) of each day, from the stored timeline; 100 % is 520 g.',
        '',
        '| Date | Day | Lowest | At |',
        '| --- | --- | ---: | --- |',
        '| 2026-11-14 | Sat | 44 % (230 g) | 18:00 |',
        '| 2026-11-15 | Sun | not computed | – |',
        '| 2026-11-16 | Mon | 48 % (250 g) | 24:00 |',
        '| 2026-11-17 | Tue | 62 % (320 g) | all day |',
        '| 2026-11-18 | Wed | 31 % (160 g) | 06:45 |',
        '| 2026-11-19 | Thu | 77 % (400 g) | all day |',
        '| 2026-11-20 | Fri | 29 % (150 g) | 24:00 |',
        '',
        '### Planned workouts',
        '',
        '| Date | Start | Workout | Duration (h:mm) | At start | Lowest | Fuel |',
        '| --- | --- | --- | ---: | ---: | ---: | --- |',
        '| 2026-11-15 | 09:00 | Easy spin | 1:00 | – | – | no stored timeline |',
        '| 2026-11-16 | 10:00 | VO2 \\| intervals | 1:00 | 81 % | 58 % | fuelled |',
        '| 2026-11-17 | 07:10 | Tempo run | 0:30 | 62 % | 62 % | top up |',
        '| 2026-11-18 | 06:00 | Fasted ride | 1:30 | 48 % | 31 % | at risk |',
        '| 2026-11-19 | 08:00 | Gym | – | – | – | no duration |',
        '| 2026-11-19 | – | Anytime run | 0:45 | – | – | no start time |',
        '| 2026-11-20 | 23:30 | Midnight ride | 1:00 | 77 % | 29 % | at risk |',
        '',
        'Fuel as the fuel service rates a planned workout, liver and muscle judged apart: at risk when the liver falls below 20 g or muscle reaches its floor (25 % of its capacity) at any point, or muscle starts below 50 % of its capacity; top up when muscle starts below 70 %; ready otherwise; not logged, whatever the stores say, when there was no usual intake (fewer than 3 days with food logged in the 14 before) and nothing with carbohydrate is logged or planned that day before the start. Read from the stored timeline, which for a day already past when it was computed follows the recorded workouts, not the plan. A workout without a start time is placed only when its own fuel is asked for, so it is not rated here.',
        '',
      ].join('\n'),
    );
    expect(report.markdown.indexOf('## By day')).toBeLessThan(report.markdown.indexOf('## Fuel'));
  });

  it('rates a planned workout as the fuel service does on the day the model simulated', () => {
    const date = '2026-11-18';
    const plan = planned({
      id: 'long',
      date,
      timeOfDay: '16:00',
      durationSecs: 4 * 3600,
      trainingStress: 280,
      title: 'Long ride',
    });
    const intensity = plannedWorkoutIntensity({ ...plan, structure: null });
    if (!intensity) throw new Error('the plan has a duration');
    const startMs = zonedTimeMs(date, '16:00', ZONE);
    const simulation = {
      capacity: CAPACITY,
      start: initialState(CAPACITY),
      startAt: localMidnightMs(date, ZONE),
      meals: [{ atMs: zonedTimeMs(date, '07:30', ZONE), carbsG: 90, absorptionType: 'BALANCED' as const }],
      exercise: exerciseFromBlocks(startMs, intensity.blocks, 250),
    };
    const day = simulateGlycogen({ ...simulation, steps: 96 });
    // Stored as recomputeFuel stores it: grams to 2 decimals.
    const round2 = (value: number) => Math.round(value * 100) / 100;
    const stored = {
      date,
      usualIntake: true,
      points: day.points.map((point): [number, number, number, number] => [
        point.atMs,
        round2(point.liverG),
        round2(point.muscleG),
        round2(point.gutG),
      ]),
    };
    const expected = planWorkoutFuel({ simulation, workout: { startMs, endMs: startMs + 4 * 3600_000 } });
    expect(expected.status).toBe('at_risk'); // a 4-hour ride at 280 TSS on one breakfast: the floor is reached
    const report = buildWeeklyNutritionReport({
      endDate: END_DATE,
      items: [],
      fuel: {
        timeZone: ZONE,
        capacity: CAPACITY,
        days: [fuelDay('2026-11-17', 300), stored],
        carbMealTimesMs: [],
        plannedWorkouts: [plan],
      },
    });
    const [rated] = (
      report.data['fuel'] as { plannedWorkouts: { status: string; startPercent: number; minPercent: number }[] }
    ).plannedWorkouts;
    expect(rated?.status).toBe(expected.status);
    expect(rated?.startPercent).toBeCloseTo(expected.startPercent, 1);
    expect(rated?.minPercent).toBeCloseTo(expected.minPercent, 1);
  });
});

describe('WEEKLY_NUTRITION: not_logged, as the fuel API decides it', () => {
  // p3, the 06:00 "Fasted ride" on 11-18, is at risk on the stored levels (muscle starts at 48.1 %).
  const ratedP3 = (usualIntake: boolean, carbMealTimesMs: readonly number[]) => {
    const days = fuel.days.map((day) =>
      day.date === '2026-11-18' ? fuelDay('2026-11-18', 300, { 23: 150, 26: 60 }, usualIntake) : day,
    );
    const report = buildWeeklyNutritionReport({
      endDate: END_DATE,
      items: food,
      fuel: { ...fuel, days, carbMealTimesMs },
    });
    const rated = (report.data['fuel'] as { plannedWorkouts: PlannedWorkoutFuelFigures[] }).plannedWorkouts;
    const p3 = rated.find((plan) => plan.id === 'p3');
    return { status: p3?.status, limitingStore: p3?.limitingStore, markdown: report.markdown };
  };

  it('says not logged, not at risk, when the day had no usual intake and nothing was logged before the start', () => {
    const rated = ratedP3(false, []);
    expect(rated).toMatchObject({ status: 'not_logged', limitingStore: null });
    expect(rated.markdown).toContain('not logged (log or plan meals for a fuel status)');
    expect(rated.markdown).not.toMatch(/Fasted ride[^\n]*at risk/);
  });

  it('judges the stores once carbohydrate is logged or planned that day before the start, or with a usual intake', () => {
    // The evening before does not count: it is not the workout's day.
    expect(ratedP3(false, [zonedTimeMs('2026-11-17', '20:00', ZONE)]).status).toBe('not_logged');
    // At the start is not before it.
    expect(ratedP3(false, [zonedTimeMs('2026-11-18', '06:00', ZONE)]).status).toBe('not_logged');
    expect(ratedP3(false, [zonedTimeMs('2026-11-18', '05:00', ZONE)])).toMatchObject({
      status: 'at_risk',
      limitingStore: 'muscle',
    });
    expect(ratedP3(true, [])).toMatchObject({ status: 'at_risk', limitingStore: 'muscle' });
  });
});

describe('determinism', () => {
  /** A fixed permutation: rows from the database may come in another order, never with other values. */
  const reversed = <T>(rows: readonly T[]): T[] => [...rows].reverse();

  it('gives identical Markdown and data for the same rows in any order', () => {
    const floats: ReportNutritionItem[] = [0.1, 0.2, 0.3, 0.7, 1.1].map((carbs, index) => ({
      date: '2026-11-18',
      calories: carbs * 10 + index,
      carbs,
      protein: null,
      fat: 0.05 * index,
    }));
    const builds = [
      () =>
        buildWeeklyTrainingReport({
          endDate: END_DATE,
          workouts: reversed(workouts),
          wellness: reversed(wellness),
          trainingLoad: reversed(loadDays),
          recovery: reversed(recoveryDays),
        }),
      () => buildLastWorkoutsReport({ endDate: END_DATE, workouts: reversed(workouts) }),
      () =>
        buildWeeklyNutritionReport({
          endDate: END_DATE,
          items: reversed([...food, ...floats]),
          fuel: { ...fuel, days: reversed(fuel.days), plannedWorkouts: reversed(fuel.plannedWorkouts) },
        }),
    ];
    const originals = [
      buildWeeklyTrainingReport(derivedWeek),
      buildLastWorkoutsReport({ endDate: END_DATE, workouts }),
      buildWeeklyNutritionReport({ endDate: END_DATE, items: [...food, ...floats], fuel }),
    ];
    builds.forEach((build, index) => {
      const again = build();
      expect(again.markdown).toBe(originals[index]?.markdown);
      expect(JSON.stringify(again.data)).toBe(JSON.stringify(originals[index]?.data));
    });
  });
});

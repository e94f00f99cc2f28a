import { describe, expect, it } from 'vitest';
import {
  buildLastWorkoutsReport,
  buildWeeklyNutritionReport,
  buildWeeklyTrainingReport,
  type ReportNutritionItem,
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

const trainingWeek = { endDate: END_DATE, workouts, wellness };

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
        '## Wellness',
        '',
        '| Measure | Average | Days with data |',
        '| --- | ---: | ---: |',
        '| HRV (rMSSD) | 62.8 ms | 2 of 7 |',
        '| Resting heart rate | 49.0 bpm | 3 of 7 |',
        '| Sleep | 7.5 h | 2 of 7 |',
        '',
      ].join('\n'),
    );
  });

  it('says so when the week has no workouts and no wellness data', () => {
    const report = buildWeeklyTrainingReport({ endDate: '2026-10-01', workouts, wellness });
    expect(report.markdown).toBe(
      [
        '# Weekly training: 2026-09-25 to 2026-10-01',
        '',
        '## Training',
        '',
        'No workouts recorded between 2026-09-25 and 2026-10-01.',
        '',
        '## Wellness',
        '',
        'No wellness data recorded between 2026-09-25 and 2026-10-01.',
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
    const report = buildWeeklyNutritionReport({ endDate: END_DATE, items: food });
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
      ].join('\n'),
    );
  });

  it('says so when nothing was logged in the week', () => {
    const report = buildWeeklyNutritionReport({ endDate: '2026-12-31', items: food });
    expect(report.markdown).toBe(
      '# Weekly nutrition: 2026-12-25 to 2026-12-31\n\n## Summary\n\nNo nutrition logged between 2026-12-25 and 2026-12-31.\n',
    );
    expect(report.data).toMatchObject({
      loggedDays: 0,
      totals: { calories: 0, carbs: 0, protein: 0, fat: 0 },
      averages: null,
    });
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
        buildWeeklyTrainingReport({ endDate: END_DATE, workouts: reversed(workouts), wellness: reversed(wellness) }),
      () => buildLastWorkoutsReport({ endDate: END_DATE, workouts: reversed(workouts) }),
      () => buildWeeklyNutritionReport({ endDate: END_DATE, items: reversed([...food, ...floats]) }),
    ];
    const originals = [
      buildWeeklyTrainingReport(trainingWeek),
      buildLastWorkoutsReport({ endDate: END_DATE, workouts }),
      buildWeeklyNutritionReport({ endDate: END_DATE, items: [...food, ...floats] }),
    ];
    builds.forEach((build, index) => {
      const again = build();
      expect(again.markdown).toBe(originals[index]?.markdown);
      expect(JSON.stringify(again.data)).toBe(JSON.stringify(originals[index]?.data));
    });
  });
});

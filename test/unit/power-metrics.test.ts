import { describe, expect, it } from 'vitest';
import { normalizedPower, perSecond, trainingStressScore } from '../../server/src/modules/workouts/power-metrics.ts';
import { downsampleStreams, type StoredStreams } from '../../server/src/modules/workouts/workout-streams.ts';

describe('normalized power (Allen & Coggan)', () => {
  it('equals the power of a steady effort', () => {
    expect(normalizedPower(Array.from({ length: 600 }, () => 200))).toBeCloseTo(200, 9);
  });

  it('weights hard efforts: 300 W / 100 W blocks of 5 min average 200 W but normalize near 250 W', () => {
    const power = Array.from({ length: 3600 }, (_, t) => (Math.floor(t / 300) % 2 === 0 ? 300 : 100));
    const np = normalizedPower(power) as number;
    // Without the 30 s ramps between blocks it would be ((300^4 + 100^4) / 2)^(1/4) = 253.0 W.
    expect(np).toBeGreaterThan(248);
    expect(np).toBeLessThan(253.1);
  });

  it('needs 30 seconds of power', () => {
    expect(normalizedPower(Array.from({ length: 29 }, () => 250))).toBeNull();
    expect(normalizedPower(Array.from({ length: 30 }, () => 250))).toBe(250);
  });
});

describe('perSecond', () => {
  it('holds a value over the seconds smart recording skipped, and leaves pauses out', () => {
    const times = [0, 1, 4, 5, 65, 66];
    const values = [100, 110, 140, 150, 0, 90];
    // t=4 stands for 2, 3 and 4; the 60 s gap before t=65 is a pause: one second.
    expect(perSecond(times, values)).toEqual([100, 110, 140, 140, 140, 150, 0, 90]);
  });

  it('skips missing samples (NaN) and keeps the last of repeated seconds', () => {
    expect(perSecond([0, 1, 1, 2, 3], [10, 20, 25, Number.NaN, 40])).toEqual([10, 25, 40, 40]);
  });
});

describe('training stress score', () => {
  it('scores one hour at FTP as 100', () => {
    expect(trainingStressScore({ secs: 3600, normalizedPower: 250, ftpWatts: 250 })).toBeCloseTo(100, 9);
  });

  it('scales with time and with the square of the intensity factor', () => {
    expect(trainingStressScore({ secs: 7200, normalizedPower: 200, ftpWatts: 250 })).toBeCloseTo(2 * 0.8 ** 2 * 100, 9);
  });

  it('is unknown without FTP or normalized power', () => {
    expect(trainingStressScore({ secs: 3600, normalizedPower: 250, ftpWatts: null })).toBeNull();
    expect(trainingStressScore({ secs: 3600, normalizedPower: null, ftpWatts: 250 })).toBeNull();
  });
});

describe('downsampleStreams', () => {
  const streams: StoredStreams = {
    time: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    heartRate: [100, 101, 102, 103, 104, 105, 106, 107, 108, 109],
    power: [0, 300, null, 100, 100, 100, 0, 0, 0, 400],
    cadence: null,
    speed: null,
    altitude: null,
    distance: [0, 5, 10, 15, 20, 25, 30, 35, 40, 45],
    latitude: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    longitude: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  };

  it('averages rates over runs of samples and keeps the first time, distance and position of each', () => {
    const sampled = downsampleStreams(streams, 3);
    expect(sampled.time).toEqual([0, 3, 6]);
    expect(sampled.heartRate).toEqual([101, 104, 107.5]);
    // Missing samples do not count as zeros.
    expect(sampled.power).toEqual([150, 100, 100]);
    expect(sampled.distance).toEqual([0, 15, 30]);
    expect(sampled.latitude).toEqual([1, 4, 7]);
    expect(sampled.cadence).toBeNull();
  });

  it('leaves streams that already fit unchanged', () => {
    expect(downsampleStreams(streams, 10)).toBe(streams);
  });
});

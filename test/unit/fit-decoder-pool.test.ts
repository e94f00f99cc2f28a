import { describe, expect, it } from 'vitest';
import { FitDecoderPool } from '../../server/src/modules/workouts/fit-decoder.pool.ts';
import { oneHourRide } from '../support/fit-fixtures.ts';

const LIMITS = { maxRecords: 1_000_000, timeoutMs: 60_000 };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('FitDecoderPool', () => {
  it('starts a worker on first use, lets it exit once idle, and starts another for the next file', async () => {
    const pool = new FitDecoderPool({ size: 1, idleTimeoutMs: 300 });
    try {
      const { bytes } = oneHourRide();
      expect(pool.workers).toBe(0);
      expect((await pool.decodeActivity(bytes, LIMITS)).ok).toBe(true);
      expect(pool.workers).toBe(1);
      for (let waited = 0; pool.workers > 0 && waited < 10_000; waited += 50) await sleep(50);
      expect(pool.workers).toBe(0);
      expect((await pool.decodeActivity(bytes, LIMITS)).ok).toBe(true);
      expect(pool.workers).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it('keeps a worker that is given work before its idle time runs out', async () => {
    const pool = new FitDecoderPool({ size: 1, idleTimeoutMs: 2_000 });
    try {
      const { bytes } = oneHourRide();
      await pool.decodeActivity(bytes, LIMITS);
      await sleep(1_000);
      await pool.decodeActivity(bytes, LIMITS);
      await sleep(1_500);
      // 2.5 s after the first decode, 1.5 s after the second: the timer restarted with the second.
      expect(pool.workers).toBe(1);
    } finally {
      await pool.close();
    }
  });
});

describe('FitDecoderPool beyond its workers', () => {
  it('queues the files its workers cannot take yet, decodes each in turn, and leaves the callers their bytes', async () => {
    const pool = new FitDecoderPool({ size: 1 });
    try {
      const files = [1, 2, 3].map((n) => oneHourRide({ serialNumber: 3_900_000_000 + n }).bytes);
      const lengths = files.map((bytes) => bytes.length);
      const decodes = files.map((bytes) => pool.decodeActivity(bytes, LIMITS));
      // All three were handed over at once: one worker takes the first, the others wait for it.
      expect(pool.workers).toBe(1);
      expect(pool.waiting).toBe(2);
      const outcomes = await Promise.all(decodes);
      expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true, true]);
      expect(outcomes.map((outcome) => (outcome.ok ? outcome.activity.device.serial : null))).toEqual([
        '3900000001',
        '3900000002',
        '3900000003',
      ]);
      expect(pool.workers).toBe(1);
      expect(pool.waiting).toBe(0);
      // The worker decoded (and freed) a copy of its own: the callers' bytes are whole, e.g. to be stored.
      expect(files.map((bytes) => bytes.length)).toEqual(lengths);
      expect(files.map((bytes) => bytes.buffer.byteLength > 0)).toEqual([true, true, true]);
    } finally {
      await pool.close();
    }
  });
});

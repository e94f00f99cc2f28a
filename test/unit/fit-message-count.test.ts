import { Decoder, Stream } from '@garmin/fitsdk';
import { describe, expect, it } from 'vitest';
import { hasMoreDataMessagesThan } from '../../server/src/modules/workouts/fit-message-count.ts';
import { notFit, oneHourRide, runWithPositions, tinyRecordFlood, truncated } from '../support/fit-fixtures.ts';

/** Data messages as the Garmin decoder counts them: every message it hands to `mesgListener`. */
function decodedMessages(bytes: Uint8Array): number {
  let count = 0;
  new Decoder(Stream.fromByteArray(bytes)).read({ mesgListener: () => (count += 1) });
  return count;
}

describe('hasMoreDataMessagesThan (the record limit, checked before decoding)', () => {
  it.each([
    ['a 1-hour ride', () => oneHourRide().bytes],
    ['a run with positions', () => runWithPositions().bytes],
    ['a flood of 10 000 tiny records', () => tinyRecordFlood(10_000)],
  ])('counts %s exactly as the decoder does', (_what, bytes) => {
    const file = bytes();
    const messages = decodedMessages(file);
    expect(messages).toBeGreaterThan(100);
    expect(hasMoreDataMessagesThan(file, messages)).toBe(false);
    expect(hasMoreDataMessagesThan(file, messages - 1)).toBe(true);
  });

  it('counts chained files together, as the decoder reads them', () => {
    const one = oneHourRide().bytes;
    const chained = new Uint8Array(one.length * 2);
    chained.set(one);
    chained.set(one, one.length);
    const messages = decodedMessages(chained);
    expect(messages).toBe(2 * decodedMessages(one));
    expect(hasMoreDataMessagesThan(chained, messages)).toBe(false);
    expect(hasMoreDataMessagesThan(chained, messages - 1)).toBe(true);
  });

  it('stops, without counting past it, where the decoder would fail', () => {
    expect(hasMoreDataMessagesThan(notFit(), 0)).toBe(false);
    expect(hasMoreDataMessagesThan(truncated(tinyRecordFlood(10_000), 0.5), 4_000)).toBe(true);
    expect(hasMoreDataMessagesThan(truncated(tinyRecordFlood(10_000), 0.5), 6_000)).toBe(false);
  });
});

/**
 * The SDK re-exports the contract's types wholesale: a type added to the
 * contract is in the SDK without anyone listing it (a hand-picked list once
 * left the analytics types out).
 */
import type * as Contract from '@pacer/contract';
import type { AsyncJobStatus, Recommendation, RecoveryDay, TrainingLoad, WellnessRecord } from '@pacer/client-sdk';
import { describe, expectTypeOf, it } from 'vitest';

describe('@pacer/client-sdk exports', () => {
  it("re-exports the contract's types, including ones no list names", () => {
    expectTypeOf<RecoveryDay>().toEqualTypeOf<Contract.RecoveryDay>();
    expectTypeOf<TrainingLoad>().toEqualTypeOf<Contract.TrainingLoad>();
    expectTypeOf<Recommendation>().toEqualTypeOf<Contract.Recommendation>();
    expectTypeOf<AsyncJobStatus>().toEqualTypeOf<Contract.AsyncJobStatus>();
    expectTypeOf<WellnessRecord>().toEqualTypeOf<Contract.WellnessRecord>();
  });
});

import { WellnessUpsertSchema } from '@pacer/contract';
import { describe, expect, it } from 'vitest';
import { AppError, ERROR_STATUS } from '../../server/src/errors.ts';
import { fieldErrorsOf, toProblem } from '../../server/src/http/problem.ts';

describe('problem documents (RFC 9457)', () => {
  it('maps each unknown key and each bad field to its own path', () => {
    const result = WellnessUpsertSchema.safeParse({ date: '2026-01-01', hrv: 'high', extra: 1, other: 2 });
    expect(result.success).toBe(false);
    const errors = fieldErrorsOf(result.error?.issues ?? []);
    expect(errors.map((error) => error.path).sort()).toEqual(['extra', 'hrv', 'other']);
  });

  it('renders code, status, title and type from the one code table', () => {
    const problem = toProblem(new AppError('insufficient_scope', 'needs health:write'), 'req-1');
    expect(problem).toEqual({
      type: 'urn:pacer:problem:insufficient_scope',
      title: 'Insufficient scope',
      status: 403,
      detail: 'needs health:write',
      code: 'insufficient_scope',
      requestId: 'req-1',
    });
    expect(ERROR_STATUS.payload_too_large).toBe(413);
  });
});

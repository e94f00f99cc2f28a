import type { Problem } from '@pacer/contract';
import type { Response } from 'express';
import type { z } from 'zod';
import { type AppError, ERROR_TITLES, formatIssuePath, type FieldError } from '../errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Problem `type` URIs are stable URNs, one per error code. */
export function problemType(code: string): string {
  return `urn:pacer:problem:${code}`;
}

export function toProblem(error: AppError, requestId: string | undefined): Problem {
  return {
    type: problemType(error.code),
    title: ERROR_TITLES[error.code],
    status: error.status,
    detail: error.message,
    code: error.code,
    ...(requestId ? { requestId } : {}),
    ...(error.errors && error.errors.length > 0 ? { errors: [...error.errors] } : {}),
  };
}

export function sendProblem(res: Response, error: AppError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const requestId = typeof res.locals.requestId === 'string' ? res.locals.requestId : undefined;
  res
    .status(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(toProblem(error, requestId)));
}

/**
 * Each zod issue as a field error. An unknown key becomes one error per key,
 * at that key's own path, so a client sees exactly which field to remove.
 */
export function fieldErrorsOf(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): FieldError[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        path: formatIssuePath([...path, key]),
        message: 'unknown field (send extra data in `rawJson`)',
      }));
    }
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      return [{ path: formatIssuePath(path), message: issue.message }];
    }
    return [{ path: formatIssuePath(path), message: issue.message }];
  });
}

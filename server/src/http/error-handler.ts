import { RequestValidationError } from '@ts-rest/express';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { z } from 'zod';
import { AppError, type FieldError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { JSON_TOO_DEEP, jsonTooDeep } from './json-body.ts';
import { fieldErrorsOf, sendProblem, toProblem } from './problem.ts';
import { problemMismatch } from './response-check.ts';

/** Errors body-parser raises carry a `type` and an HTTP status. */
interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

function fromValidation(error: RequestValidationError): AppError {
  const parts: [string, unknown][] = [
    ['params', error.pathParams],
    ['headers', error.headers],
    ['query', error.query],
    ['body', error.body],
  ];
  const errors: FieldError[] = [];
  for (const [, part] of parts) {
    if (part instanceof z.ZodError) errors.push(...fieldErrorsOf(part.issues));
    else if (part && typeof part === 'object' && 'issues' in part && Array.isArray(part.issues)) {
      errors.push(...fieldErrorsOf(part.issues as z.core.$ZodIssue[]));
    }
  }
  const summary = errors.map((entry) => (entry.path ? `${entry.path}: ${entry.message}` : entry.message)).join('; ');
  return new AppError('validation_failed', summary || 'The request is invalid.', { errors });
}

function fromBodyParser(error: BodyParserError): AppError | undefined {
  switch (error.type) {
    case 'entity.too.large':
      return new AppError('payload_too_large', 'The body is larger than the 1 MiB this endpoint accepts.');
    case 'entity.parse.failed':
      return new AppError('invalid_json', 'The body is not valid JSON.', {
        errors: [{ path: '', message: 'invalid JSON' }],
      });
    case JSON_TOO_DEEP:
      return jsonTooDeep('The body');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', error.message);
    case 'request.aborted':
      return new AppError('validation_failed', 'The request was aborted before its body arrived.');
    default:
      return undefined;
  }
}

/**
 * The last middleware: every error becomes a problem document. Unknown
 * errors are bugs: logged with their stack, answered as a 500 that carries
 * only the request id. The process keeps serving.
 */
export function errorHandler(logger: Logger, options: { readonly checkResponses?: boolean } = {}): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    let appError: AppError | undefined;
    if (error instanceof AppError) appError = error;
    else if (error instanceof RequestValidationError) appError = fromValidation(error);
    else if (error instanceof Error) appError = fromBodyParser(error);
    if (!appError) {
      logger.error(
        { err: error, requestId: res.locals.requestId, method: req.method, path: req.path },
        'unhandled error',
      );
      appError = new AppError(
        'internal_error',
        'Something went wrong on our side. Quote the request id when reporting it.',
      );
    }
    if (options.checkResponses) {
      // Under test (PACER_CHECK_RESPONSES): a problem the route's contract does not declare fails the request.
      const mismatch = problemMismatch(req, appError.status, toProblem(appError, undefined), {
        ...res.getHeaders(),
        ...appError.headers,
      });
      if (mismatch) {
        logger.error({ requestId: res.locals.requestId, mismatch }, 'answer disagrees with the contract');
        appError = new AppError('internal_error', `The answer disagrees with the contract: ${mismatch}`);
      }
    }
    sendProblem(res, appError);
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  sendProblem(res, new AppError('not_found', `No route for ${req.method} ${req.path}.`));
};

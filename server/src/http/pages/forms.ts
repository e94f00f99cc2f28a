import express, { type Request, type RequestHandler } from 'express';
import type { AppError } from '../../errors.ts';
import { requireCsrf } from './csrf.ts';

/** What runs before the handler of a form POST: the urlencoded body (at most `limit`), then the CSRF check. */
export function formPost(limit = '16kb'): RequestHandler {
  const parse = express.urlencoded({ extended: false, limit });
  const csrf = requireCsrf();
  return (req, res, next) => {
    parse(req, res, (error?: unknown) => {
      if (error) next(error);
      else csrf(req, res, next);
    });
  };
}

function formValue(req: Request, name: string): unknown {
  return (req.body as Record<string, unknown> | undefined)?.[name];
}

/** One text field of the posted form: '' when it is missing (or was sent more than once). */
export function formText(req: Request, name: string): string {
  const value = formValue(req, name);
  return typeof value === 'string' ? value : '';
}

/** Every value of a field that may repeat (a group of checkboxes). */
export function formTexts(req: Request, name: string): string[] {
  const value = formValue(req, name);
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((entry): entry is string => typeof entry === 'string');
  return [];
}

/** A validation error's messages by field (for fieldError in html.ts). */
export function fieldErrorsOf(error: AppError): Record<string, string> {
  return Object.fromEntries((error.errors ?? []).map((entry) => [entry.path, entry.message]));
}

/** The fixed notice that `?notice=<key>` names after a redirect: the query picks one, never carries text. */
export function noticeOf(req: Request, notices: Readonly<Record<string, string>>): string | undefined {
  const key = req.query['notice'];
  return typeof key === 'string' && Object.hasOwn(notices, key) ? notices[key] : undefined;
}

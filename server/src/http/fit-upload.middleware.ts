import { createHash } from 'node:crypto';
import { WORKOUT_METADATA_MAX_BYTES, WORKOUT_NAME_MAX } from '@pacer/contract';
import busboy from 'busboy';
import type { RequestHandler } from 'express';
import { AppError, type FieldError } from '../errors.ts';
import type { FitUpload } from '../modules/workouts/workouts.service.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's own augmentation point
  namespace Express {
    interface Locals {
      fitUpload?: FitUpload;
    }
  }
}

export interface FitUploadOptions {
  /** `PACER_MAX_UPLOAD_BYTES`: the largest file accepted. */
  readonly maxBytes: number;
}

const TEXT_FIELDS = new Set(['name', 'metadata']);
/** Room for the text fields, part headers and boundaries around the file. */
const FORM_OVERHEAD_BYTES = WORKOUT_METADATA_MAX_BYTES + 16 * 1024;

function tooLarge(maxBytes: number): AppError {
  return new AppError('payload_too_large', `The file is larger than the ${maxBytes} bytes this server accepts.`, {
    errors: [{ path: 'file', message: `larger than ${maxBytes} bytes` }],
  });
}

/**
 * The typed client (ts-rest) JSON-encodes every text part of a multipart
 * body, so `name` may arrive as `"Morning ride"` with the quotes: take the
 * string inside.
 */
function unwrapJsonString(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    try {
      const inner: unknown = JSON.parse(value);
      if (typeof inner === 'string') return inner;
    } catch {
      // Not JSON: the quotes belong to the name.
    }
  }
  return value;
}

/** The `metadata` field as an object, or why it is not one. */
function parseMetadata(
  raw: string,
): { readonly ok: true; readonly value: Record<string, unknown> } | { readonly ok: false; readonly error: FieldError } {
  let value: unknown;
  try {
    value = JSON.parse(raw);
    // A JSON object that was encoded once more (a string holding it).
    if (typeof value === 'string') value = JSON.parse(value);
  } catch {
    return {
      ok: false,
      error: { path: 'metadata', message: 'must be a JSON object in a string; it is not valid JSON' },
    };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: { path: 'metadata', message: 'must be a JSON object' } };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * Route middleware of `POST /api/workouts/upload-fit` (docs/design.md §5: ts-rest
 * drops multipart file fields from handler types). Streams the body through
 * busboy: the `file` part is hashed (SHA-256) as it arrives and kept in
 * memory up to `maxBytes` (the decoder needs all of it); one byte more is a
 * 413 and nothing is kept. It runs after authentication, so an anonymous
 * caller never makes us read a body.
 *
 * On success `res.locals.fitUpload` holds the upload and `req.body` the text
 * fields, which ts-rest then validates against the contract.
 */
export function parseFitUpload(options: FitUploadOptions): RequestHandler {
  const { maxBytes } = options;
  return (req, res, next) => {
    const contentType = req.headers['content-type'] ?? '';
    if (!/^multipart\/form-data\s*;/i.test(contentType)) {
      next(
        new AppError('unsupported_media_type', 'Send the upload as `multipart/form-data` with a `file` part.', {
          errors: [{ path: '', message: `content type ${contentType || '(none)'} is not multipart/form-data` }],
        }),
      );
      return;
    }
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    let size = 0;
    let fileName: string | null = null;
    let sawFile = false;
    let finished = false;
    const texts = new Map<string, string>();
    const problems: FieldError[] = [];

    function fail(error: AppError): void {
      if (finished) return;
      finished = true;
      chunks.length = 0;
      req.unpipe();
      // Read and discard whatever is still coming, and close the connection
      // after the answer so the rest of a large body is not drained.
      req.resume();
      next(new AppError(error.code, error.message, { errors: error.errors, headers: { Connection: 'close' } }));
    }

    const declaredLength = Number(req.headers['content-length']);
    if (Number.isFinite(declaredLength) && declaredLength > maxBytes + FORM_OVERHEAD_BYTES) {
      // Refused before a byte is read; the connection closes rather than drain the body.
      fail(tooLarge(maxBytes));
      return;
    }

    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // File names as browsers and fetch send them: UTF-8 (busboy's default is latin1).
        defParamCharset: 'utf8',
        // Busboy reports a limit when a part reaches it: one byte over ours.
        limits: {
          fileSize: maxBytes + 1,
          fieldSize: WORKOUT_METADATA_MAX_BYTES + 1,
          files: 1,
          fields: 8,
          parts: 10,
        },
      });
    } catch (error) {
      next(
        AppError.validation('', `the multipart body cannot be parsed: ${error instanceof Error ? error.message : ''}`),
      );
      return;
    }

    parser.on('file', (field, stream, info) => {
      if (field !== 'file') {
        problems.push({ path: field, message: 'unknown field: send the FIT file as `file`' });
        stream.resume();
        return;
      }
      sawFile = true;
      fileName = info.filename ?? null;
      stream.on('data', (chunk: Buffer) => {
        if (finished) return;
        hash.update(chunk);
        chunks.push(chunk);
        size += chunk.length;
      });
      stream.on('limit', () => fail(tooLarge(maxBytes)));
    });
    parser.on('field', (field, value, info) => {
      if (!TEXT_FIELDS.has(field)) {
        problems.push({ path: field, message: 'unknown field (the form takes `file`, `name` and `metadata`)' });
        return;
      }
      if (info.valueTruncated) {
        const limit = field === 'metadata' ? `${WORKOUT_METADATA_MAX_BYTES} bytes` : `${WORKOUT_NAME_MAX} characters`;
        fail(
          new AppError('payload_too_large', `\`${field}\` is longer than ${limit}.`, {
            errors: [{ path: field, message: `longer than ${limit}` }],
          }),
        );
        return;
      }
      texts.set(field, value);
    });
    parser.on('filesLimit', () => problems.push({ path: 'file', message: 'send exactly one file' }));
    parser.on('fieldsLimit', () => problems.push({ path: '', message: 'too many form fields' }));
    parser.on('partsLimit', () => problems.push({ path: '', message: 'too many form parts' }));
    parser.on('error', (error: Error) => {
      fail(AppError.validation('', `the multipart body is malformed: ${error.message}`));
    });
    parser.on('close', () => {
      if (finished) return;
      if (!sawFile) problems.push({ path: 'file', message: 'required: the FIT file as a file part named `file`' });
      const name = texts.has('name') ? unwrapJsonString(texts.get('name') as string).trim() : '';
      const rawMetadata = texts.get('metadata')?.trim() ?? '';
      let metadata: Record<string, unknown> | undefined;
      if (rawMetadata !== '') {
        const parsed = parseMetadata(rawMetadata);
        if (parsed.ok) metadata = parsed.value;
        else problems.push(parsed.error);
      }
      if (problems.length > 0) {
        finished = true;
        const summary = problems.map((problem) => (problem.path ? `${problem.path}: ` : '') + problem.message);
        next(new AppError('validation_failed', summary.join('; '), { errors: problems }));
        return;
      }
      finished = true;
      const upload: FitUpload = {
        bytes: Buffer.concat(chunks, size),
        sha256: hash.digest('hex'),
        fileName,
        // An empty text field is what a browser form sends for a blank input: not given.
        name: name === '' ? undefined : name,
        metadata,
      };
      res.locals.fitUpload = upload;
      // Read by the Idempotency-Key middleware's stored fingerprint.
      res.locals.uploadSha256 = upload.sha256;
      // What ts-rest validates against the contract. `file` is a stand-in: the
      // bytes travel in res.locals, ts-rest's handler types have no file field.
      req.body = {
        file: { name: fileName, size, sha256: upload.sha256 },
        ...(upload.name === undefined ? {} : { name: upload.name }),
        ...(metadata ? { metadata } : {}),
      };
      next();
    });
    req.pipe(parser);
  };
}

import { FIT_MEDIA_TYPE } from '@pacer/contract';
import { createPacerClient, type PacerClient, type PacerClientOptions } from './client.ts';
import { readFilePath } from './read-file.ts';

export interface UploadFitInput {
  /**
   * The FIT file: a `Blob`/`File` (browsers, Node 20+), a Node `Buffer` or any
   * `Uint8Array`, or (Node only) a path to read it from.
   */
  readonly file: Blob | Uint8Array | string;
  /** Sent as the part's file name (default: a `File`'s own name, else `activity.fit`). */
  readonly fileName?: string;
  /** Display name; absent on a re-upload keeps the stored one. */
  readonly name?: string;
  /** Free-form JSON object (e.g. app version, device id); sent as a string part holding JSON. */
  readonly metadata?: Record<string, unknown>;
  /** Cancels the upload (and its retries): it then throws `PacerError` with code `aborted`. */
  readonly signal?: AbortSignal;
  /** Default: a fresh random UUID, reused by the client's retries of this upload. */
  readonly idempotencyKey?: string;
  /** Default: a fresh random UUID per request. */
  readonly requestId?: string;
  /** Extra headers for this upload. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Either a client made with `createPacerClient`, or what it takes. */
export type UploadFitTarget = PacerClient | PacerClientOptions;

/**
 * The multipart form of `POST /api/workouts/upload-fit` with plain text
 * parts. (The generated method, given an object, JSON-encodes every text part
 * and accepts only a `File` for the file; this form needs neither.)
 */
export function buildFitUploadForm(input: UploadFitInput & { readonly file: Blob | Uint8Array }): FormData {
  return buildUploadForm(input, { type: FIT_MEDIA_TYPE, fileName: 'activity.fit' });
}

/** The form of either upload route; bytes go as a Blob of `defaults.type`. */
function buildUploadForm(
  input: UploadFitInput & { readonly file: Blob | Uint8Array },
  defaults: { readonly type: string; readonly fileName: string },
): FormData {
  const form = new FormData();
  const blob =
    input.file instanceof Blob
      ? input.file
      : new Blob([input.file as Uint8Array<ArrayBuffer>], { type: defaults.type });
  const ownName = typeof File !== 'undefined' && input.file instanceof File ? input.file.name : undefined;
  form.append('file', blob, input.fileName ?? ownName ?? defaults.fileName);
  if (input.name !== undefined) form.append('name', input.name);
  if (input.metadata !== undefined) form.append('metadata', JSON.stringify(input.metadata));
  return form;
}

/**
 * Upload a FIT file. Resolves to the typed response: 201 (a new workout),
 * 200 (the same bytes were uploaded before: name and metadata updated, same
 * id), or a problem document (413 too large, 422 not a valid FIT file, ...).
 *
 * ```ts
 * const res = await uploadFit(pacer, { file: await readFile('ride.fit'), fileName: 'ride.fit', name: 'Morning ride' });
 * if (res.status === 201 || res.status === 200) console.log(res.body.id, res.body.normalizedPower);
 * ```
 */
export async function uploadFit(target: UploadFitTarget, input: UploadFitInput) {
  const client = 'workouts' in target ? target : createPacerClient(target);
  const { call, body } = await uploadRequest(input, { type: FIT_MEDIA_TYPE, fileName: 'activity.fit' });
  return client.workouts.uploadFit({ ...call, body });
}

/** What `uploadActivity` takes: the same as `uploadFit`, for a FIT, TCX or GPX file, raw or gzip-compressed. */
export type UploadActivityInput = UploadFitInput;

/**
 * Upload an activity file: FIT, TCX or GPX, each raw or gzip-compressed
 * (`POST /api/workouts/upload`; the server tells the format from the content,
 * not the name). Resolves like `uploadFit`: 201, 200 (the same file before,
 * raw or compressed: same id), or a problem document (422 with a code such as
 * `gpx_no_times`, `activity_format_unknown`, ...).
 *
 * ```ts
 * const res = await uploadActivity(pacer, { file: 'exports/morning-run.gpx.gz' });
 * if (res.status === 201 || res.status === 200) console.log(res.body.id, res.body.file.format);
 * ```
 */
export async function uploadActivity(target: UploadFitTarget, input: UploadActivityInput) {
  const client = 'workouts' in target ? target : createPacerClient(target);
  const { call, body } = await uploadRequest(input, { type: 'application/octet-stream', fileName: 'activity' });
  return client.workouts.uploadActivity({ ...call, body });
}

async function uploadRequest(input: UploadFitInput, defaults: { readonly type: string; readonly fileName: string }) {
  const call = {
    ...(input.idempotencyKey === undefined ? {} : { headers: { 'idempotency-key': input.idempotencyKey } }),
    extraHeaders: { ...input.headers, ...(input.requestId === undefined ? {} : { 'x-request-id': input.requestId }) },
    ...(input.signal === undefined ? {} : { fetchOptions: { signal: input.signal } }),
  };
  if (typeof input.file === 'string') {
    // Node only: the browser build swaps read-file.ts for a stub that says so.
    const { bytes, baseName } = await readFilePath(input.file, input.signal);
    return { call, body: buildUploadForm({ ...input, file: bytes, fileName: input.fileName ?? baseName }, defaults) };
  }
  return { call, body: buildUploadForm({ ...input, file: input.file }, defaults) };
}

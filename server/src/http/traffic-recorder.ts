import { appendFileSync } from 'node:fs';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { RequestHandler } from 'express';

/**
 * PACER_RECORD_TRAFFIC (tests only): every exchange on the REST API's paths is
 * appended to a JSON Lines file once its answer has gone out, so a contract
 * tester can replay the suite's traffic against openapi.json afterwards
 * (`test/tools/prism-traffic.ts` runs Prism's own validator over it). JSON
 * bodies are kept; binary and other bodies are recorded as skipped, as are
 * bodies past `MAX_RECORDED_BODY_BYTES`. Credentials never reach the file.
 */
export interface RecordedExchange {
  readonly method: string;
  /** Path and query, as the client sent them. */
  readonly url: string;
  readonly request: RecordedMessage;
  readonly response: RecordedMessage & { readonly status: number };
}

export interface RecordedMessage {
  readonly headers: Record<string, string>;
  /** The parsed JSON body, when there was one and it was JSON. */
  readonly body?: unknown;
  /** Why the body is not here: not JSON, or too large to keep. */
  readonly bodySkipped?: 'not-json' | 'too-large';
}

/** An answer's body is kept up to this size (the suite's largest JSON answer, a 10-hour ride's streams, is 2.5 MB). */
export const MAX_RECORDED_BODY_BYTES = 16 * 1024 * 1024;

/** Header values that carry credentials: their names are kept, their values are not. */
const SECRET_HEADERS = new Set(['authorization', 'cookie', 'set-cookie', 'x-webhook-secret', 'x-csrf-token']);

const isJson = (contentType: string | undefined): boolean => /[/+]json\b/i.test(contentType ?? '');

function headerText(headers: IncomingHttpHeaders | OutgoingHttpHeaders): Record<string, string> {
  const text: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    text[lower] = SECRET_HEADERS.has(lower) ? '[redacted]' : Array.isArray(value) ? value.join(', ') : String(value);
  }
  return text;
}

function parsedBody(raw: Buffer | undefined, contentType: string | undefined): Partial<RecordedMessage> {
  if (raw === undefined) return { bodySkipped: 'too-large' };
  if (raw.length === 0) return {};
  if (!isJson(contentType)) return { bodySkipped: 'not-json' };
  try {
    return { body: JSON.parse(raw.toString('utf8')) as unknown };
  } catch {
    return { bodySkipped: 'not-json' };
  }
}

export function recordTraffic(file: string): RequestHandler {
  return (req, res, next) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const collect = (chunk: unknown, encoding: unknown): void => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function' || size > MAX_RECORDED_BODY_BYTES) {
        return;
      }
      const bytes =
        typeof chunk === 'string'
          ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
          : Buffer.from(chunk as Uint8Array);
      size += bytes.length;
      if (size <= MAX_RECORDED_BODY_BYTES) chunks.push(bytes);
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      collect(chunk, rest[0]);
      return write(chunk, ...rest);
    }) as typeof res.write;
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      collect(chunk, rest[0]);
      return end(chunk, ...rest);
    }) as typeof res.end;
    res.once('finish', () => {
      const requestType = req.headers['content-type'];
      const sentBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
      // The parsed body (json-body.ts); one that did not parse, or was no JSON, is recorded as skipped.
      const requestBody: Partial<RecordedMessage> = !sentBody
        ? {}
        : isJson(requestType) && req.body !== undefined
          ? { body: req.body as unknown }
          : { bodySkipped: 'not-json' };
      const responseHeaders = res.getHeaders();
      const exchange: RecordedExchange = {
        method: req.method,
        url: req.originalUrl,
        request: { headers: headerText(req.headers), ...requestBody },
        response: {
          status: res.statusCode,
          headers: headerText(responseHeaders),
          ...parsedBody(
            size > MAX_RECORDED_BODY_BYTES ? undefined : Buffer.concat(chunks),
            String(responseHeaders['content-type'] ?? ''),
          ),
        },
      };
      appendFileSync(file, `${JSON.stringify(exchange)}\n`);
    });
    next();
  };
}

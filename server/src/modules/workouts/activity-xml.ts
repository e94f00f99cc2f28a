/**
 * The XML half of activity decoding (TCX, GPX): the bytes as text, read by
 * saxes (a streaming, non-validating parser) into element events. Runs in the
 * decoder worker threads, like FIT decoding.
 *
 * Bounds (docs/design.md §3 "Sync resources": every format is bounded as FIT
 * is): the file is at most `PACER_MAX_UPLOAD_BYTES`, checked before it gets
 * here; the readers count track points against `PACER_FIT_MAX_RECORDS` as
 * they go and stop at the first one too many; elements nest at most
 * `MAX_DEPTH` deep; an element's text is kept up to `MAX_TEXT_CHARS` (every
 * value we read is a number, a time or a short name). No DTD is read: saxes
 * never expands entities beyond XML's five predefined ones and character
 * references, and a DOCTYPE declaration is refused outright, so an entity
 * bomb has nothing to expand.
 */
import { TextDecoder } from 'node:util';
import { SaxesParser, type SaxesTagPlain } from 'saxes';

/** Why a TCX or GPX file is refused: each is a stable error code of the API (errors.ts). */
export type XmlRefusalCode =
  | 'activity_file_empty'
  | 'activity_format_unknown'
  | 'activity_xml_malformed'
  | 'activity_too_many_records'
  | 'gpx_no_track'
  | 'gpx_no_times'
  | 'tcx_no_activity';

/** Thrown by the readers to stop at the first reason to refuse the file. */
export class XmlActivityError extends Error {
  override readonly name = 'XmlActivityError';
  readonly code: XmlRefusalCode;

  constructor(code: XmlRefusalCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Deeper than any TCX or GPX file nests (about 8 levels). */
const MAX_DEPTH = 64;
/** Longer than any number, time or device name we read; the rest of a longer text is dropped. */
const MAX_TEXT_CHARS = 1024;

/** What a reader does with the document's elements, by local name (namespace prefix dropped). */
export interface XmlVisitor {
  open(name: string, parent: string | undefined, attributes: Readonly<Record<string, string>>): void;
  /** `text`: the element's own text, trimmed. */
  close(name: string, parent: string | undefined, text: string): void;
}

const localName = (name: string): string => name.slice(name.indexOf(':') + 1);

/**
 * The text of an XML file. The encoding is the byte order mark's (UTF-16),
 * else the one the XML declaration names (XML 1.0 §4.3.3, Appendix F), else
 * UTF-8; bytes that are not valid in it make the file malformed.
 */
export function xmlText(bytes: Uint8Array): string {
  let encoding = 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) encoding = 'utf-16le';
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) encoding = 'utf-16be';
  else {
    const head = new TextDecoder('latin1').decode(bytes.subarray(0, 200));
    const declared = /^(?:\uFEFF|\u00EF\u00BB\u00BF)?<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head);
    if (declared?.[1]) encoding = declared[1];
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(encoding, { fatal: true });
  } catch {
    throw new XmlActivityError('activity_xml_malformed', `the XML declares an unknown encoding (${encoding})`);
  }
  try {
    return decoder.decode(bytes);
  } catch {
    throw new XmlActivityError('activity_xml_malformed', `the file is not valid ${encoding} text`);
  }
}

/** Whether the text starts as an XML document does: with markup, after an optional byte order mark and white space. */
export function looksLikeXml(text: string): boolean {
  return /^\uFEFF?\s*</.test(text);
}

/**
 * Read `text` as XML: the first element (the root) picks the visitor that
 * gets every element, `visitorFor` throws (an `XmlActivityError`) for a root
 * it does not know. Malformed XML throws `activity_xml_malformed`.
 */
export function readXml(
  text: string,
  visitorFor: (root: string, attributes: Readonly<Record<string, string>>) => XmlVisitor,
): void {
  const parser = new SaxesParser({ xmlns: false, position: true } as const);
  const stack: string[] = [];
  let visitor: XmlVisitor | undefined;
  let buffer = '';
  const keepText = (chunk: string) => {
    if (buffer.length < MAX_TEXT_CHARS) buffer += chunk.slice(0, MAX_TEXT_CHARS - buffer.length);
  };
  parser.on('doctype', () => {
    throw new XmlActivityError('activity_xml_malformed', 'the file has a DOCTYPE declaration, which is not accepted');
  });
  parser.on('opentag', (tag: SaxesTagPlain) => {
    const name = localName(tag.name);
    if (stack.length >= MAX_DEPTH) {
      throw new XmlActivityError('activity_xml_malformed', `elements nest deeper than ${MAX_DEPTH} levels`);
    }
    visitor ??= visitorFor(name, tag.attributes);
    visitor.open(name, stack.at(-1), tag.attributes);
    stack.push(name);
    buffer = '';
  });
  parser.on('text', keepText);
  parser.on('cdata', keepText);
  parser.on('closetag', () => {
    const name = stack.pop() as string;
    visitor?.close(name, stack.at(-1), buffer.trim());
    buffer = '';
  });
  try {
    parser.write(text).close();
  } catch (error) {
    if (error instanceof XmlActivityError) throw error;
    // saxes reports well-formedness errors by throwing (no error handler is set, so it never goes on past one).
    const reason = error instanceof Error ? error.message : String(error);
    throw new XmlActivityError('activity_xml_malformed', `the XML is malformed: ${reason}`);
  }
}

const ISO_8601_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * An `xsd:dateTime` (TCX `Time`, GPX `time`) as milliseconds since the epoch,
 * `NaN` when it is not one. GPX 1.1 says times are UTC; a time without a
 * zone is read as UTC, not as the server's local time.
 */
export function parseXmlTime(text: string): number {
  const match = ISO_8601_TIME.exec(text);
  if (!match) return Number.NaN;
  return Date.parse(match[1] === undefined ? `${text}Z` : text);
}

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** An `xsd:decimal` or `xsd:double` written as digits, `NaN` when the text is not one (or is out of range). */
export function parseXmlNumber(text: string): number {
  if (!DECIMAL.test(text)) return Number.NaN;
  const value = Number(text);
  return Number.isFinite(value) ? value : Number.NaN;
}

/** A measure that cannot be negative (heart rate, power, cadence, speed, a lap's totals); `NaN` when it is. */
export function parseXmlMeasure(text: string): number {
  const value = parseXmlNumber(text);
  return value >= 0 ? value : Number.NaN;
}

/** A latitude (`limit` 90) or longitude (`limit` 180) in degrees; `NaN` outside its range. */
export function parseXmlDegrees(text: string, limit: 90 | 180): number {
  const value = parseXmlNumber(text);
  return Math.abs(value) <= limit ? value : Number.NaN;
}

import { createHash } from 'node:crypto';
import { jsonNestsDeeperThan } from '../../lib/json-depth.ts';

/**
 * What is kept of a delivery whose secret did not match: the start of its
 * text, so its owner can tell what was sent, and never the whole payload
 * (anyone can post to a public client id).
 */
export const PAYLOAD_PREVIEW_BYTES = 4 * 1024;

/** The first `maxBytes` of UTF-8 `bytes`, cut before a character that would not fit whole. */
export function utf8Prefix(bytes: Uint8Array, maxBytes: number = PAYLOAD_PREVIEW_BYTES): string {
  if (bytes.length <= maxBytes) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
  let end = maxBytes;
  // A continuation byte (10xxxxxx) at the cut belongs to a character that started before it.
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return Buffer.from(bytes.buffer, bytes.byteOffset, end).toString('utf8');
}

export function sha256HexOf(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** How a stored payload is shown: parsed, or (kept in part, or too deep to parse safely) the start of its text. */
export interface ShownPayload {
  readonly payload: unknown;
  readonly payloadPreview: string | null;
}

/**
 * A stored body for display, never re-serialising what could not be sent back
 * safely: a complete body within the depth limit is parsed; anything else
 * (a preview, a body stored before deep JSON was refused, damaged text) is
 * shown as the start of its text.
 */
export function shownPayload(body: string, complete: boolean): ShownPayload {
  if (complete && !jsonNestsDeeperThan(body)) {
    try {
      return { payload: JSON.parse(body) as unknown, payloadPreview: null };
    } catch {
      // Not JSON (ingest refuses such bodies; a stored one can only be damaged): shown as text below.
    }
  }
  return { payload: null, payloadPreview: utf8Prefix(Buffer.from(body, 'utf8')) };
}

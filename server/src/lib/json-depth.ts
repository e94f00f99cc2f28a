/**
 * How deep a JSON text nests, read from its characters before it is parsed.
 *
 * `JSON.parse` builds every level as an object, and what later walks the
 * value recursively (`JSON.stringify`, zod, our own code) can run out of
 * stack on a few thousand levels: a 400 KB body of `[[[[…` is enough. So
 * every JSON body we accept is measured first and refused when it nests
 * deeper than `MAX_JSON_DEPTH` (docs/design.md §3 "REST conventions").
 * The scan is one pass over the text with no allocation; brackets inside
 * strings (and escaped quotes) do not count.
 */

/** The deepest nesting accepted: no real payload of ours comes near it (webhook events nest 3-4 levels). */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether `text` (UTF-8 bytes or a string) opens more than `max` objects or
 * arrays inside one another. Only the structure is read: a text that is not
 * valid JSON is left for the parser to refuse.
 */
export function jsonNestsDeeperThan(text: Uint8Array | string, max: number = MAX_JSON_DEPTH): boolean {
  const length = text.length;
  const at = typeof text === 'string' ? (index: number) => text.charCodeAt(index) : (index: number) => text[index];
  let depth = 0;
  let inString = false;
  for (let index = 0; index < length; index++) {
    const code = at(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth++;
      if (depth > max) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

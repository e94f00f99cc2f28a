/**
 * Whether pg (through pg-connection-string) can parse `value`. It is more
 * lenient than `new URL`: it percent-encodes spaces and stray `%` first, and
 * accepts an empty host (`postgres://user@/db?host=/var/run/postgresql`) by
 * parsing again with a placeholder host. We accept exactly what it accepts,
 * so a URL that works with psql-style tools is not refused here.
 */
export function isParsableConnectionUrl(value: string): boolean {
  const encoded = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(value)
    ? encodeURI(value).replace(/%25(\d\d)/g, '%$1')
    : value;
  return (
    URL.canParse(encoded, 'postgres://base') || URL.canParse(encoded.replace('@/', '@___DUMMY___/'), 'postgres://base')
  );
}

/** `postgres://user:secret@host/db` -> `postgres://user:***@host/db`, for messages. */
export function redactConnectionUrl(value: string): string {
  // The authority ends at the first `/`, `?` or `#`; its last `@` ends the user info (as in `new URL`).
  return value.replace(/^([a-z]+:\/\/[^:/?#@]*:)[^/?#]*@/i, '$1***@');
}

import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';

/**
 * Node's half of `uploadFit({ file: '<path>' })` and `uploadActivity`. The package's `node` export
 * condition ships this file; every other condition (browsers, bundlers for the
 * web) gets read-file.browser.ts instead, so no `node:*` import reaches them.
 */
export async function readFilePath(
  filePath: string,
  signal: AbortSignal | undefined,
): Promise<{ bytes: Uint8Array; baseName: string }> {
  const bytes = await readFile(filePath, signal === undefined ? {} : { signal });
  return { bytes, baseName: basename(filePath) };
}

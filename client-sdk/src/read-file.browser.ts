/**
 * The non-Node half of `uploadFit({ file: '<path>' })` and `uploadActivity` (see read-file.ts): a
 * browser has no file system to read a path from, so it is told to pass the
 * bytes (`Blob`, `File` or `Uint8Array`) instead.
 */
export function readFilePath(
  filePath: string,
  signal: AbortSignal | undefined,
): Promise<{ bytes: Uint8Array; baseName: string }> {
  void signal;
  return Promise.reject(
    new TypeError(
      `uploadFit, uploadActivity: a file path (${filePath}) can only be read under Node.js; pass a Blob, File or Uint8Array instead`,
    ),
  );
}

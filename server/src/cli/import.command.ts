import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { createPacerClient, uploadFit, type Problem } from '@pacer/client-sdk';

/**
 * `npm run pacer -- import <folder-or-files...> --token T`: uploads FIT files
 * through the SDK, as an integrator's importer would. Files with the same
 * bytes as one already in this run are skipped; the server's upsert answers
 * 201 (created) or 200 (the same bytes were there: updated).
 */
export interface ImportOptions {
  readonly baseUrl: string;
  readonly token: string;
  readonly paths: readonly string[];
  readonly concurrency: number;
  /** Called after each file, for the progress display. */
  readonly onProgress: (progress: ImportProgress) => void;
}

export interface ImportFailure {
  readonly file: string;
  readonly status: number | undefined;
  readonly reason: string;
}

export interface ImportProgress {
  readonly total: number;
  readonly done: number;
  readonly created: number;
  readonly updated: number;
  readonly skipped: number;
  readonly failed: readonly ImportFailure[];
}

async function collectFitFiles(paths: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  const visit = async (entry: string): Promise<void> => {
    const info = await stat(entry);
    if (info.isDirectory()) {
      const children = await readdir(entry);
      for (const child of children.sort()) await visit(path.join(entry, child));
    } else if (info.isFile() && entry.toLowerCase().endsWith('.fit')) {
      found.push(entry);
    }
  };
  for (const entry of paths) await visit(path.resolve(entry));
  return [...new Set(found)];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MAX_RATE_LIMIT_WAITS = 10;

export async function importFitFiles(options: ImportOptions): Promise<ImportProgress> {
  const files = await collectFitFiles(options.paths);
  const client = createPacerClient({ baseUrl: options.baseUrl, accessToken: options.token });
  const seen = new Set<string>();
  const progress = { total: files.length, done: 0, created: 0, updated: 0, skipped: 0, failed: [] as ImportFailure[] };
  const report = () => options.onProgress({ ...progress, failed: [...progress.failed] });

  const importOne = async (file: string) => {
    const bytes = await readFile(file);
    const sha = createHash('sha256').update(bytes).digest('hex');
    if (seen.has(sha)) {
      progress.skipped += 1;
      return;
    }
    seen.add(sha);
    for (let waits = 0; ;) {
      const res = await uploadFit(client, { file: bytes, fileName: path.basename(file) });
      // The server decodes one file per user at a time: with --concurrency above 1 the others wait their turn,
      // which always comes, so these waits are not counted against the rate-limit waits.
      const ownTurn =
        res.status === 429 && (res.body as Partial<Problem> | undefined)?.code === 'fit_decode_in_progress';
      if (res.status === 201) progress.created += 1;
      else if (res.status === 200) progress.updated += 1;
      else if (res.status === 429 && (ownTurn || waits < MAX_RATE_LIMIT_WAITS)) {
        if (!ownTurn) waits += 1;
        // The uploads bucket is small: wait as the server says and try again.
        // The response headers are a Fetch `Headers` (typed by the DOM lib the server does not load).
        const headers = res.headers as unknown as { get(name: string): string | null };
        const retryAfter = Number(headers.get('retry-after') ?? '1');
        await sleep(Math.max(1, Number.isFinite(retryAfter) ? retryAfter : 1) * 1000);
        continue;
      } else {
        const problem = res.body as Partial<Problem> | undefined;
        progress.failed.push({
          file,
          status: res.status,
          reason: problem?.detail ?? problem?.title ?? `HTTP ${res.status}`,
        });
      }
      return;
    }
  };

  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next] as string;
      next += 1;
      try {
        await importOne(file);
      } catch (error) {
        progress.failed.push({
          file,
          status: undefined,
          reason: error instanceof Error ? error.message : String(error),
        });
      }
      progress.done += 1;
      report();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, () => worker()));
  return { ...progress, failed: [...progress.failed] };
}

/** One line: `[########------------]  12/40  created 10  updated 1  skipped 0  failed 1`. */
export function progressLine(progress: ImportProgress, width = 24): string {
  const filled = progress.total === 0 ? width : Math.round((progress.done / progress.total) * width);
  const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
  return `[${bar}] ${String(progress.done).padStart(String(progress.total).length)}/${progress.total}  created ${progress.created}  updated ${progress.updated}  skipped ${progress.skipped}  failed ${progress.failed.length}`;
}

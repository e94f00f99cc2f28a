/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`, e.g. the hot-path
 * server of `PACER_BENCH_CPU_PROF_DIR=... npm run bench`): self time by
 * function and by package (a dependency under node_modules, Pacer's own
 * server/contract code, Node's internals, GC), as a share of the busy time
 * (everything but idle).
 *
 *   node --experimental-strip-types test/bench/cpu-profile-summary.ts <file.cpuprofile> [--top N] [--inclusive]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Who owns a frame: the npm package its file belongs to, Pacer's own workspace, Node, or V8's pseudo-frames. */
export function ownerOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node';
  const file = url.startsWith('file://') ? decodeURIComponent(new URL(url).pathname) : url;
  const modules = file.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [first = '', second = ''] = file.slice(modules + '/node_modules/'.length).split('/');
    return first.startsWith('@') ? `${first}/${second}` : first;
  }
  const relative = path.relative(ROOT, file);
  if (!relative.startsWith('..')) return `pacer:${relative.split(path.sep)[0] ?? ''}`;
  return 'other';
}

function labelOf(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  if (frame.url === '') return name;
  const file = frame.url.startsWith('file://') ? decodeURIComponent(new URL(frame.url).pathname) : frame.url;
  const modules = file.lastIndexOf('/node_modules/');
  const short = modules >= 0 ? file.slice(modules + '/node_modules/'.length) : path.relative(ROOT, file);
  return `${name} ${short}:${frame.lineNumber + 1}`;
}

export interface ProfileSummary {
  readonly totalMs: number;
  readonly busyMs: number;
  readonly byPackage: readonly { readonly owner: string; readonly ms: number; readonly share: number }[];
  readonly byFunction: readonly FunctionTime[];
  /** Time with the function anywhere on the stack (each sample counted once per function). */
  readonly inclusive: readonly FunctionTime[];
}

interface FunctionTime {
  readonly label: string;
  readonly owner: string;
  readonly ms: number;
  readonly share: number;
}

export function summarize(profile: CpuProfile): ProfileSummary {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const selfMs = new Map<number, number>();
  let totalMs = 0;
  // timeDeltas[i] is the time before sample i; it is charged to that sample's node.
  profile.samples.forEach((id, index) => {
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
    totalMs += ms;
    selfMs.set(id, (selfMs.get(id) ?? 0) + ms);
  });
  const byOwner = new Map<string, number>();
  const byLabel = new Map<string, { owner: string; ms: number }>();
  let idleMs = 0;
  for (const [id, ms] of selfMs) {
    const frame = frames.get(id);
    if (!frame) continue;
    if (frame.functionName === '(idle)') {
      idleMs += ms;
      continue;
    }
    const owner = ownerOf(frame);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + ms);
    const label = labelOf(frame);
    const entry = byLabel.get(label) ?? { owner, ms: 0 };
    entry.ms += ms;
    byLabel.set(label, entry);
  }
  const busyMs = totalMs - idleMs;
  const share = (ms: number) => Math.round((1000 * ms) / Math.max(busyMs, 1e-9)) / 10;
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const inclusive = new Map<string, { owner: string; ms: number }>();
  for (const [id, ms] of selfMs) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const frame = frames.get(at);
      if (!frame || frame.functionName === '(idle)' || frame.functionName === '(root)') continue;
      const label = labelOf(frame);
      if (seen.has(label)) continue;
      seen.add(label);
      const entry = inclusive.get(label) ?? { owner: ownerOf(frame), ms: 0 };
      entry.ms += ms;
      inclusive.set(label, entry);
    }
  }
  const ranked = (entries: Map<string, { owner: string; ms: number }>) =>
    [...entries]
      .map(([label, entry]) => ({ label, owner: entry.owner, ms: Math.round(entry.ms), share: share(entry.ms) }))
      .sort((a, b) => b.ms - a.ms);
  return {
    totalMs: Math.round(totalMs),
    busyMs: Math.round(busyMs),
    byPackage: [...byOwner]
      .map(([owner, ms]) => ({ owner, ms: Math.round(ms), share: share(ms) }))
      .sort((a, b) => b.ms - a.ms),
    byFunction: ranked(byLabel),
    inclusive: ranked(inclusive),
  };
}

function main(argv: readonly string[]): void {
  const file = argv.find((arg) => !arg.startsWith('--'));
  const topIndex = argv.indexOf('--top');
  const top = topIndex >= 0 ? Number(argv[topIndex + 1]) : 15;
  const withInclusive = argv.includes('--inclusive');
  if (!file || !Number.isInteger(top) || top < 1) {
    process.stderr.write('usage: cpu-profile-summary.ts <file.cpuprofile> [--top N] [--inclusive]\n');
    process.exit(2);
  }
  const summary = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
  const out = [
    `${file}: ${summary.totalMs} ms sampled, ${summary.busyMs} ms busy (shares below are of the busy time)`,
    '',
    'self time by package',
    ...summary.byPackage.map(
      (entry) => `  ${String(entry.share).padStart(5)}%  ${String(entry.ms).padStart(7)} ms  ${entry.owner}`,
    ),
    '',
    `self time by function, top ${top}`,
    ...summary.byFunction
      .slice(0, top)
      .map(
        (entry) =>
          `  ${String(entry.share).padStart(5)}%  ${String(entry.ms).padStart(7)} ms  [${entry.owner}] ${entry.label}`,
      ),
  ];
  if (withInclusive) {
    out.push(
      '',
      `time with the function on the stack, top ${top}`,
      ...summary.inclusive
        .slice(0, top)
        .map(
          (entry) =>
            `  ${String(entry.share).padStart(5)}%  ${String(entry.ms).padStart(7)} ms  [${entry.owner}] ${entry.label}`,
        ),
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

if (import.meta.filename === path.resolve(process.argv[1] ?? '')) main(process.argv.slice(2));

import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../http/openapi.ts';
import { breakingChanges } from './openapi-breaking.ts';

/**
 * `npm run openapi` writes openapi.json from the contract;
 * `npm run check:generated` fails when the committed file differs, or when it
 * breaks integrators against its previous version on this branch (see
 * `checkBreakingChanges`).
 */
const target = fileURLToPath(new URL('../../../openapi.json', import.meta.url));
const root = fileURLToPath(new URL('../../../', import.meta.url));
const generated = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

/** A commit message line that owns up to a breaking change (Conventional Commits' footer). */
const ACKNOWLEDGED = /^BREAKING[ -]CHANGE: /m;

function git(args: readonly string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
}

/**
 * The previous openapi.json: HEAD's while the file has uncommitted changes,
 * otherwise the one before the newest commit that changed it. A breaking
 * change against it fails unless a commit since then says `BREAKING CHANGE:
 * <why>` in its message. Without git history (an exported tree, a shallow
 * clone that lacks the commit) there is nothing to compare.
 */
function checkBreakingChanges(): boolean {
  let previous: string;
  let acknowledged: boolean;
  try {
    const head = git(['show', 'HEAD:openapi.json']);
    if (head !== generated) {
      previous = head;
      acknowledged = false;
    } else {
      const [, before] = git(['log', '-n', '2', '--format=%H', '--', 'openapi.json']).trim().split('\n');
      if (!before) {
        process.stdout.write('openapi.json has no earlier version in git: no breaking-change check.\n');
        return true;
      }
      previous = git(['show', `${before}:openapi.json`]);
      acknowledged = ACKNOWLEDGED.test(git(['log', '--format=%B', `${before}..HEAD`]));
    }
  } catch {
    process.stdout.write('no git history here: openapi.json is not compared with its previous version.\n');
    return true;
  }
  const changes = breakingChanges(JSON.parse(previous) as object, JSON.parse(generated) as object);
  if (changes.length === 0) {
    process.stdout.write('openapi.json has no breaking change against its previous version.\n');
    return true;
  }
  const list = changes.map((change) => `  - ${change}`).join('\n');
  if (acknowledged) {
    process.stdout.write(`openapi.json breaks its previous version, as a commit message says:\n${list}\n`);
    return true;
  }
  process.stderr.write(
    `openapi.json breaks integrators against its previous version:\n${list}\n` +
      'Restore what was removed, or commit with "BREAKING CHANGE: <why>" in the message and check again.\n',
  );
  return false;
}

if (process.argv.includes('--check')) {
  const committed = await readFile(target, 'utf8').catch(() => '');
  if (committed !== generated) {
    process.stderr.write('openapi.json is out of date with the contract: run `npm run openapi` and commit it.\n');
    process.exit(1);
  }
  process.stdout.write('openapi.json matches the contract.\n');
  if (!checkBreakingChanges()) process.exit(1);
} else {
  await writeFile(target, generated);
  process.stdout.write(`wrote ${target}\n`);
}

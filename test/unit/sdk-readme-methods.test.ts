/**
 * client-sdk/README.md lists every method of the contract with its scope,
 * and marks with `paginate` exactly the lists whose answer pages by
 * `nextCursor` (the ones `paginate` accepts).
 */
import { readFileSync } from 'node:fs';
import { contract } from '@pacer/contract';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../../client-sdk/README.md', import.meta.url), 'utf8');

function routes(router: AppRouter, prefix = ''): [string, AppRoute][] {
  return Object.entries(router).flatMap(([name, node]): [string, AppRoute][] =>
    isAppRoute(node) ? [[`${prefix}${name}`, node]] : routes(node, `${prefix}${name}.`),
  );
}

function pagesByCursor(route: AppRoute): boolean {
  const ok = route.responses[200] as { shape?: Record<string, unknown> } | undefined;
  return ok?.shape !== undefined && 'nextCursor' in ok.shape && 'items' in ok.shape;
}

describe('client-sdk README method table', () => {
  const all = routes(contract);

  it('has a row for every method of the contract', () => {
    expect(all.length).toBeGreaterThan(30);
    for (const [name, route] of all) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${name}\``));
      expect(row, name).toBeDefined();
      expect(row).toContain(`\`${route.method} ${route.path}\``);
    }
  });

  it('marks exactly the cursor lists with paginate', () => {
    const marked = readme
      .split('\n')
      .filter((line) => /^\| `[\w.]+` \(`paginate`\)/.test(line))
      .map((line) => /^\| `([\w.]+)`/.exec(line)![1]);
    const cursorLists = all.filter(([, route]) => pagesByCursor(route)).map(([name]) => name);
    expect(cursorLists.length).toBeGreaterThan(5);
    expect(marked.sort()).toEqual(cursorLists.sort());
  });
});

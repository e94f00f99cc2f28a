import { defineConfig, type Options } from 'tsup';

/**
 * The published build (see README "Package formats"). tsc -b still type-checks
 * src/ for the monorepo (into build/, never shipped); this writes dist/:
 *
 * - dist/*.js: ESM for Node (the `node` + `import` condition), one module per
 *   source file with shared chunks, so a bundler keeps only what is imported
 *   (`sideEffects: false`).
 * - dist/browser/*.js: the same ESM with read-file.ts swapped for
 *   read-file.browser.ts, so no `node:*` import is ever seen by a web bundle.
 * - dist/index.cjs: one CommonJS file for `require` (Node).
 * - dist/browser/index.cjs: the same for `require` outside Node (bundlers of old CommonJS apps).
 * - dist/index.d.ts / dist/index.d.cts: the declarations, one per format.
 *
 * @pacer/contract is a workspace package that is not published: it is bundled
 * in (code and types). zod and @ts-rest/core stay imports (peer/regular dependencies).
 */
const entry = [
  'src/index.ts',
  'src/client.ts',
  'src/errors.ts',
  'src/oauth.ts',
  'src/paginate.ts',
  'src/webhooks.ts',
  'src/workouts.ts',
];

const browserFiles = {
  name: 'pacer-browser-files',
  setup(build: {
    onResolve: (o: { filter: RegExp }, cb: (a: { path: string; resolveDir: string }) => { path: string }) => void;
  }) {
    build.onResolve({ filter: /[\\/]read-file\.ts$/ }, (args) => ({
      path: `${args.resolveDir}/read-file.browser.ts`,
    }));
  },
};

/** Where to write: scripts/bundle.mjs builds into a scratch folder and swaps it in as dist/. */
const out = process.env['PACER_SDK_OUT'] ?? 'dist';

const common: Options = {
  tsconfig: 'tsconfig.bundle.json',
  target: 'es2022',
  sourcemap: false,
  minify: false,
  noExternal: ['@pacer/contract'],
  external: ['zod', '@ts-rest/core'],
  shims: false,
  splitting: true,
  removeNodeProtocol: false,
};

export default defineConfig([
  {
    ...common,
    entry,
    format: ['esm'],
    platform: 'node',
    outDir: out,
    dts: { entry: { index: 'src/index.ts' }, resolve: ['@pacer/contract'] },
  },
  { ...common, entry: ['src/index.ts'], format: ['cjs'], platform: 'node', outDir: out },
  { ...common, entry, format: ['esm'], platform: 'browser', outDir: `${out}/browser`, esbuildPlugins: [browserFiles] },
  {
    ...common,
    entry: ['src/index.ts'],
    format: ['cjs'],
    platform: 'browser',
    outDir: `${out}/browser`,
    esbuildPlugins: [browserFiles],
  },
]);

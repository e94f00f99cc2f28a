// One lint setup for the whole workspace: typescript-eslint with type-aware
// rules (no-floating-promises and friends), Prettier for formatting.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The folders of server/src/modules, from the bottom up: each may import only
 * those before it, so they form no import cycle (docs/design.md §2). Inputs
 * write their rows and a change record (changes/); derived/ reads them and
 * sits above; reports/ and webhooks/ read and write through both.
 */
const MODULE_ORDER = [
  'idempotency',
  'mcp-audit',
  'rate-limit',
  'changes',
  'accounts',
  'oauth',
  'memories',
  'async-jobs',
  'profile',
  'wellness',
  'nutrition',
  'workouts',
  'planned-workouts',
  'derived',
  'reports',
  'webhooks',
  'maintenance',
];
const moduleFolders = readdirSync(path.join(import.meta.dirname, 'server/src/modules'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const unordered = moduleFolders.filter((name) => !MODULE_ORDER.includes(name));
if (unordered.length > 0) {
  throw new Error(`eslint.config.js: add server/src/modules/${unordered.join(', ')} to MODULE_ORDER`);
}

/** modules/ know nothing of the transports above them or of the process wiring. */
const ABOVE_MODULES = {
  regex: '^(\\.\\./)+(http|mcp|cli|tools)/|(^|/)(runtime|job-handlers|main)\\.ts$',
  message:
    'modules/ sit below the transports: move HTTP- or MCP-shaped code to http/ or mcp/, wiring beside runtime.ts.',
};

/** The rule for one module folder: no transports, and no module folder after it in MODULE_ORDER. */
function moduleLayer(name, index) {
  const above = MODULE_ORDER.slice(index + 1);
  const patterns = [ABOVE_MODULES];
  if (above.length > 0) {
    patterns.push({
      regex: `^(\\.\\./)+(modules/)?(${above.join('|')})/`,
      message: `modules/${name} sits below ${above.join(', ')} (MODULE_ORDER in eslint.config.js): pass what it needs in, or move the code up.`,
    });
  }
  return { files: [`server/src/modules/${name}/**/*.ts`], rules: { 'no-restricted-imports': ['error', { patterns }] } };
}

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      'client-sdk/build/**',
      'client-sdk/.dist-*/**',
      '**/node_modules/**',
      'openapi.json',
      '.pacer/**',
      'coverage/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'error',
    },
  },
  // The SDK's packaging scripts sit outside every tsconfig project: linted without type information.
  { files: ['client-sdk/tsup.config.ts', 'client-sdk/scripts/*.mjs'], ...tseslint.configs.disableTypeChecked },
  // Layers (docs/design.md §2): a module knows nothing of the transports above it, nor of the modules above it.
  ...MODULE_ORDER.map(moduleLayer),
  {
    // The foundations (database, queue, helpers) sit below the modules.
    files: ['server/src/db/**/*.ts', 'server/src/lib/**/*.ts', 'server/src/queue/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(modules|http|mcp|cli|tools)/|(^|/)(runtime|job-handlers|main)\\.ts$',
              message:
                'db/, lib/ and queue/ sit below the modules: pass what they need in, or move the wiring beside runtime.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    // The contract imports nothing of ours; the SDK imports the contract only.
    files: ['contract/src/**/*.ts', 'client-sdk/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)(server|client-sdk)/|^@pacer/(server|client-sdk)$',
              message: 'contract/ imports nothing of ours and client-sdk/ only the contract (docs/design.md §2).',
            },
          ],
        },
      ],
    },
  },
  {
    // Migrations are frozen in time and typed against Kysely<any> (Kysely's own advice).
    files: ['migrations/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests read JSON printed by child processes and documents typed as `any` by their libraries.
    files: ['test/**/*.ts', 'vitest.config.ts'],
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    files: ['eslint.config.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);

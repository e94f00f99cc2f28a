// One lint setup for the whole workspace: typescript-eslint with type-aware
// rules (no-floating-promises and friends), Prettier for formatting.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'openapi.json', '.pacer/**', 'coverage/**'] },
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
  {
    // Layers (docs/design.md §2): a module (services, repositories, models, workers)
    // knows nothing of the transports above it or of the process wiring.
    files: ['server/src/modules/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(http|mcp|cli|tools)/|(^|/)(runtime|job-handlers|main)\\.ts$',
              message:
                'modules/ sit below the transports: move HTTP- or MCP-shaped code to http/ or mcp/, wiring beside runtime.ts.',
            },
          ],
        },
      ],
    },
  },
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

import { defineConfig } from 'vitest/config';

/**
 * `npm test` runs both projects. Integration tests run against a real
 * PostgreSQL: DATABASE_URL when set, otherwise an embedded one (see
 * test/support/global-setup.ts). They import the built SDK and contract
 * (`npm test` builds them first), exactly as an integrator would.
 */
export default defineConfig({
  test: {
    // CI also writes a JSON report; .ci/run prints its "N passed, N failed" line.
    reporters: process.env['CI'] ? ['default', ['json', { outputFile: '.ci-results/vitest.json' }]] : ['default'],
    // CI tries a failed test once more, and .ci/run names every test that needed it (it still counts as
    // passed): a test that fails once in a thousand suites on a loaded machine should not keep a change from
    // landing, nor go unseen. A test that fails twice fails the run.
    retry: process.env['CI'] ? 1 : 0,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/global-setup.ts'],
          pool: 'forks',
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});

import { defineConfig } from 'vitest/config';

/**
 * `npm run test:cluster`: Herald on the production shape (cli/cluster/), started once by the
 * suite itself. Apart from vitest.config.ts so that `npm test` does not build and run it. The
 * hook timeout allows the one-time build of the Temporal server on a fresh machine.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          pool: 'forks',
          fileParallelism: false,
          testTimeout: 240_000,
          hookTimeout: 1_200_000,
        },
      },
    ],
  },
});

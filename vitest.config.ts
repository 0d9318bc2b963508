import { defineConfig } from 'vitest/config';

const stack = {
  globalSetup: ['test/support/global-setup.ts'],
  pool: 'forks' as const,
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      // Workflow logic on Temporal's time-skipping test server with mocked activities: no Postgres.
      {
        test: {
          name: 'workflows',
          include: ['test/time-skipping/**/*.test.ts'],
          pool: 'forks' as const,
          testTimeout: 60_000,
          hookTimeout: 240_000,
        },
      },
      // One project, so the real Postgres and Temporal dev server start once per run.
      {
        test: {
          name: 'stack',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          ...stack,
        },
      },
    ],
  },
});

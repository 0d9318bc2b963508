import { defineConfig } from 'vitest/config';
import { isDatabaseUnavailable } from './db/unavailable.js';

const stack = {
  globalSetup: ['test/support/global-setup.ts'],
  pool: 'forks' as const,
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    // As the service's own handler does (cli/commands/serve.ts): postgres.js can reject a
    // promise nothing awaits when a session is killed under a transaction (the losing side of
    // its begin's race). The service logs it and goes on; so does a test process.
    onUnhandledError: (error) => (isDatabaseUnavailable(error) ? false : undefined),
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

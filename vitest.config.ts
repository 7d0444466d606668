import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/run-temp-folder.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests start servers and child processes; two cores, two workers.
    maxWorkers: 2,
  },
});

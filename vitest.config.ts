import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/run-temp-folder.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests start servers and child processes; two cores, two workers.
    maxWorkers: 2,
    // `npm run test:unit` runs the first alone, with no build; `npm test` runs them all. Every test
    // file outside test/unit/ is an integration test, so that a new folder of tests cannot drop out.
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/unit/**'],
        },
      },
    ],
  },
});

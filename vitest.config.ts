import { fileURLToPath } from 'node:url';

import { configDefaults, defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(`packages/${path}`, import.meta.url));

/**
 * The workspace packages as their sources, so that a test needs no build of them (tsc reads the same
 * files through the packages' `source` export condition). A package's own subpath exports map to
 * the source file of that name.
 */
export const packageAliases = [
  { find: /^token-rotator-emulator$/, replacement: source('emulator/src/index.ts') },
  { find: /^token-rotator-kubernetes-double$/, replacement: source('kubernetes-double/src/index.ts') },
  { find: /^token-rotator-kubernetes-double\/([\w-]+)$/, replacement: source('kubernetes-double/src/$1.ts') },
];

export default defineConfig({
  resolve: { alias: packageAliases },
  test: {
    globalSetup: ['test/run-temp-folder.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests start servers and child processes; two cores, two workers.
    maxWorkers: 2,
    // `npm run test:unit` runs the first alone, with no build; `npm test` runs them all. Every test
    // file outside test/unit/ is an integration test, so that a new folder of tests cannot drop out;
    // the workspace packages' own tests are a project of their own.
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
      { extends: true, test: { name: 'packages', include: ['packages/*/test/**/*.test.ts'] } },
    ],
  },
});

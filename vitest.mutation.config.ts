import { defineConfig } from 'vitest/config';

import { packageAliases } from './vitest.config.js';

// The tests mutation testing runs: those that import src/ and finish in milliseconds (fakes, real
// files, real local servers in-process). Tests of the built CLI cannot see a mutant (they run dist/).
export default defineConfig({
  // api-client and oauth start the emulator: from its sources, as in the main configuration.
  resolve: { alias: packageAliases },
  test: {
    include: [
      'test/unit/**/*.test.ts',
      'test/integration/api-client.test.ts',
      'test/integration/oauth.test.ts',
      'test/integration/signed-webhook-retry.test.ts',
      'test/integration/verify-probe.test.ts',
      'test/integration/vault-rotation.test.ts',
    ],
    exclude: [
      // Child processes of the exec sink: none of the mutated files, and 20 s of the run.
      'test/unit/run-program.test.ts',
      'test/unit/left-behind.test.ts',
      // Runs a child as another user, who cannot read Stryker's sandbox; not a mutated file either.
      'test/unit/file-sink-preflight.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});

// @ts-check
/**
 * Mutation testing of the safety code: the rotation protocol, the policy decisions, the locks and
 * records of the state backends, the HTTP guards and the secret wrapper. `npm run mutation` runs it
 * and then scripts/mutation/gate.mjs, which fails when any file scores below its threshold.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: [
    'src/policy/**/*.ts',
    'src/rotation/**/*.ts',
    'src/state/name-locks.ts',
    'src/state/state-record.ts',
    'src/state/record-codec.ts',
    'src/state/backends/file/file-locks.ts',
    'src/state/backends/file/lock-record.ts',
    'src/state/backends/file/process-identity.ts',
    'src/state/backends/file/record-file.ts',
    // The Kubernetes backend's lease rules (pure); its Lease client is tested against the API double
    // with real lease timings, seconds per test: too slow to run for each mutant.
    'src/state/backends/kubernetes/lease-rules.ts',
    'src/http/**/*.ts',
    'src/secret.ts',
  ],
  plugins: ['@stryker-mutator/vitest-runner', './scripts/mutation/ignore-log-calls.mjs'],
  ignorers: ['log-calls'],
  reporters: ['clear-text', 'progress', 'json', 'html'],
  clearTextReporter: { allowEmojis: false, logTests: false, reportScoreTable: true },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  concurrency: 2,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};

// A test preload (`node --import ./test/hooks/failpoint.mjs`): with ROTATOR_TEST_FAILPOINT=step[:n]
// the process is killed (SIGKILL, as a crash would) the n-th time it reaches `step`. Only the
// crash-safety tests use it. No build of the product contains this file: the product looks for the
// factory under this global symbol (src/compose/rotation-deps.ts), and without the preload the
// variable does nothing but say so.

/** @param {string} spec @returns {(reached: string) => void} */
function failpointFrom(spec) {
  const [step, nth] = spec.split(':');
  let seen = 0;
  return (reached) => {
    if (reached === step && ++seen >= Number(nth ?? 1)) process.kill(process.pid, 'SIGKILL');
  };
}

globalThis[Symbol.for('token-rotator.test-failpoint')] = failpointFrom;

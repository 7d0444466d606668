import type { Failpoint } from '../rotation/deps.js';

/**
 * `ROTATOR_TEST_FAILPOINT=step[:n]` kills the process (SIGKILL, as a crash would) the n-th time it
 * reaches `step`. Only the crash-safety tests set it. This file is left out of production builds
 * (tsconfig.production.json, the container image, the npm package), so there the variable does nothing.
 */
export function failpointFrom(spec: string): (step: Failpoint) => void {
  const [step, nth] = spec.split(':');
  let seen = 0;
  return (reached) => {
    if (reached === step && ++seen >= Number(nth ?? 1)) process.kill(process.pid, 'SIGKILL');
  };
}

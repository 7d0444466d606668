import type { Failpoint } from '../rotation/deps.js';

/**
 * `ROTATOR_TEST_FAILPOINT=step[:n]` kills the process (SIGKILL, as a crash would) the n-th time it
 * reaches `step`. Only the crash-safety tests set it. The bundled CLI loads this file by URL, so the
 * production build (scripts/bundle.mjs --production, the container image) has no copy of it and there
 * the variable does nothing.
 */
export function failpointFrom(spec: string): (step: Failpoint) => void {
  const [step, nth] = spec.split(':');
  let seen = 0;
  return (reached) => {
    if (reached === step && ++seen >= Number(nth ?? 1)) process.kill(process.pid, 'SIGKILL');
  };
}

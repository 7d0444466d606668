import type { RotatorError } from '../../errors.js';
import type { SharedProblem } from './envelope.js';
import { plural } from './expiry.js';

/**
 * The shared failure of a run (see `dependency-breaker.ts`) as one problem, with the tokens it
 * stopped: those whose error is that very failure.
 */
export function sharedProblems(
  tripped: RotatorError | undefined,
  items: Array<{ name: string; error?: { message: string } }>,
): SharedProblem[] {
  const failure = tripped?.dependencyFailure;
  if (!tripped || !failure) return [];
  return [
    {
      dependency: failure.dependency,
      kind: failure.kind,
      target: failure.target,
      message: tripped.message,
      check: failure.check,
      tokens: items.filter((i) => i.error?.message === tripped.message).map((i) => i.name),
    },
  ];
}

/** Whether a line's failure is the shared one: said above the table, not again on the line. */
export function isShared(problems: SharedProblem[], error: { message: string } | undefined): SharedProblem | undefined {
  return error ? problems.find((p) => p.message === error.message) : undefined;
}

/** How many names a line lists before it says how many more: the JSON has them all. */
const NAMES_SHOWN = 8;

/** The block above a table: what failed for everyone, once, the tokens it stopped, and what to check. */
export function formatProblems(problems: SharedProblem[], total: number): string {
  return problems
    .map((p) => {
      const shown =
        p.tokens.slice(0, NAMES_SHOWN).join(', ') + (p.tokens.length > NAMES_SHOWN ? `, and ${p.tokens.length - NAMES_SHOWN} more` : '');
      return `${p.message}\n  ${p.tokens.length} of ${plural(total, 'token')} not checked: ${shown}\n  check: ${p.check}\n\n`;
    })
    .join('');
}

import type { RotatorError } from '../../errors.js';
import type { SharedProblem } from './envelope.js';
import { plural } from './expiry.js';

/**
 * The shared failure of a run (see `dependency-breaker.ts`) as one problem, with the tokens it
 * stopped: those whose error is that very failure.
 */
export function sharedProblems(tripped: RotatorError | undefined, items: Array<{ name: string; error?: LineError }>): SharedProblem[] {
  const failure = tripped?.dependencyFailure;
  if (!tripped || !failure) return [];
  return [
    {
      dependency: failure.dependency,
      kind: failure.kind,
      target: failure.target,
      message: tripped.message,
      check: failure.check,
      tokens: items.filter((i) => stoppedBy(failure.kind, tripped.message, i.error)).map((i) => i.name),
    },
  ];
}

/** What a line's failure is, as far as telling it for the shared one goes. */
type LineError = { message: string; status?: number };

/**
 * A line failed of the shared failure when it carries that very error (the breaker threw it), or,
 * for a wrong base path found once every token had answered, when it is one of those 404s.
 */
function stoppedBy(kind: SharedProblem['kind'], message: string, error: LineError | undefined): boolean {
  return error !== undefined && (error.message === message || (kind === 'wrong-base-path' && error.status === 404));
}

/** Whether a line's failure is the shared one: said above the table, not again on the line. */
export function isShared(problems: SharedProblem[], error: LineError | undefined): SharedProblem | undefined {
  return problems.find((p) => stoppedBy(p.kind, p.message, error));
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

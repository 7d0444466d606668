import { closest, distance } from 'fastest-levenshtein';

import type { ConfigIssue } from '../errors.js';

/**
 * The names a repeatable option gives (`--name a --name b,c`), each once, in the order given.
 * Empty parts (`a,,b`, a trailing comma) are dropped.
 */
export function givenNames(values: readonly string[] | undefined): string[] {
  return [
    ...new Set(
      (values ?? [])
        .flatMap((v) => v.split(','))
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    ),
  ];
}

/** Close enough to be a slip of the keyboard: a third of the name at most, and at least one edit. */
function nearest(name: string, known: readonly string[]): string | undefined {
  if (known.length === 0) return undefined;
  const best = closest(name, known);
  return distance(name, best) <= Math.max(1, Math.floor(best.length / 3)) ? best : undefined;
}

/** A name not among `known`, with the nearest known one when there is a close one. */
export function unknownNameIssue(path: string, name: string, known: readonly string[], where: string): ConfigIssue {
  const near = nearest(name, known);
  return {
    path,
    message: `no token named "${name}" in ${where}${near ? `; did you mean "${near}"?` : `; known: ${known.join(', ') || '(none)'}`}`,
  };
}

import { nearestName } from '../common/nearest-name.js';
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

/** A name not among `known`, with the nearest known one when there is a close one. */
export function unknownNameIssue(path: string, name: string, known: readonly string[], where: string): ConfigIssue {
  const near = nearestName(name, known);
  return {
    path,
    message: `no token named "${name}" in ${where}${near ? `; did you mean "${near}"?` : `; known: ${known.join(', ') || '(none)'}`}`,
  };
}

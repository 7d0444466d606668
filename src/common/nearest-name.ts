import { distance } from 'fastest-levenshtein';

/** Beyond this many edits a guess is more likely to mislead than to help (commander stops at 3 too). */
const MAX_EDITS = 3;

/**
 * The known name a mistyped one most likely meant, for a "did you mean" hint: compared without
 * case (`renewbefore` is `renewBefore`), within a few edits and never more than a third of the
 * name, so that a short name is not "corrected" into an unrelated one. Undefined when none is close.
 */
export function nearestName(word: string, known: Iterable<string>): string | undefined {
  const limit = Math.min(MAX_EDITS, Math.max(1, Math.floor(word.length / 3)));
  let best: { name: string; edits: number } | undefined;
  for (const name of known) {
    if (name === word) continue;
    const edits = distance(word.toLowerCase(), name.toLowerCase());
    if (edits <= limit && (!best || edits < best.edits)) best = { name, edits };
  }
  return best?.name;
}

/** `; did you mean renewBefore?`, or nothing when no known name is close. */
export function didYouMean(word: string, known: Iterable<string>): string {
  const nearest = nearestName(word, known);
  return nearest === undefined ? '' : `; did you mean ${nearest}?`;
}

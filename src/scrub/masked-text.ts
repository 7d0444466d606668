import { separatorAt } from './separators.js';

/**
 * Turning what the matcher found into marks: the text it found a secret in may be a JSON document
 * (a log line, `--json` output, a notification), which must stay one, so no mark cuts an escape,
 * takes a string's quote or splits a character made of two UTF-16 units.
 */

export const REDACTED = '[REDACTED]';

/** `text` with the ranges found replaced, each run of overlapping ranges (or ranges apart by separators only) by one mark. */
export function masked(text: string, found: number[]): string {
  const ranges: Array<[number, number]> = [];
  for (let i = 0; i < found.length; i += 2) ranges.push(whole(text, found[i]!, found[i + 1]!));
  ranges.sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  for (let i = 0; i < ranges.length;) {
    const from = ranges[i]![0];
    let to = ranges[i++]![1];
    while (i < ranges.length && (ranges[i]![0] < to || onlySeparators(text, to, ranges[i]![0]))) to = Math.max(to, ranges[i++]![1]);
    out += text.slice(at, from) + maskedRange(text, from, to);
    at = to;
  }
  return out + text.slice(at);
}

const QUOTE = 34;

/**
 * The mark for a range. A double quote not escaped may end a JSON string (of a log line, a `--json`
 * document, a notification): the mark leaves it, and what is only JSON punctuation beside it, so
 * that a piece of a secret with a quote in it, found across a document's strings, never breaks it.
 */
function maskedRange(text: string, from: number, to: number): string {
  let out = '';
  let part = from;
  for (let i = from; i <= to; i++) {
    if (i < to && (text.charCodeAt(i) !== QUOTE || backslashesBefore(text, i) % 2 === 1)) continue;
    out += onlyPunctuation(text, part, i) ? text.slice(part, i) : REDACTED;
    if (i < to) out += '"';
    part = i + 1;
  }
  return out;
}

/** JSON's punctuation and separators, or nothing. */
function onlyPunctuation(text: string, from: number, to: number): boolean {
  for (let i = from; i < to;) {
    const skip = separatorAt(text, i);
    if (skip > 0) i += skip;
    else if (',:[]{}'.includes(text[i]!)) i++;
    else return false;
  }
  return true;
}

function onlySeparators(text: string, from: number, to: number): boolean {
  if (from >= to) return false;
  for (let i = from; i < to;) {
    const skip = separatorAt(text, i);
    if (skip === 0) return false;
    i += skip;
  }
  return true;
}

const BACKSLASH = 92;
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** How many backslashes end just before `at`. */
export function backslashesBefore(text: string, at: number): number {
  let count = 0;
  while (at - count > 0 && text.charCodeAt(at - count - 1) === BACKSLASH) count++;
  return count;
}

/**
 * A range widened so as not to cut a JSON escape (a backslash left before the mark, or cut from what
 * it escapes, would break a `--json` document or a log line) or a character made of two UTF-16 units.
 */
function whole(text: string, from: number, to: number): [number, number] {
  // An odd run of backslashes escapes the character after it.
  if (backslashesBefore(text, from) % 2 === 1) from--;
  if (to < text.length && backslashesBefore(text, to) % 2 === 1) to++;
  if (from > 0 && isLowSurrogate(text.charCodeAt(from)) && isHighSurrogate(text.charCodeAt(from - 1))) from--;
  if (to < text.length && isHighSurrogate(text.charCodeAt(to - 1)) && isLowSurrogate(text.charCodeAt(to))) to++;
  return [from, to];
}

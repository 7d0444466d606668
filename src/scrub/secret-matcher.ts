import { backslashesBefore, masked } from './masked-text.js';
import { PieceIndex } from './piece-index.js';
import { formsOf, type SecretForm } from './secret-forms.js';
import { nextCharacter, previousCharacter, separatorAt, separatorEndingAt } from './separators.js';

/**
 * Forms are found by their pieces of PIECE characters: a piece of the text is looked up by its hash
 * (slid along the text a character at a time, a few integer operations and no allocation each) and
 * compared with the form around the piece found. A form of key material is indexed at every
 * `minFragment - PIECE + 1` characters, so every run of minFragment of its characters holds exactly
 * one indexed piece, and one run found is checked by comparing at most minFragment characters:
 * however long or many the secrets, a text costs a bounded amount per character (no regular
 * expression to backtrack). A form of words is indexed by its first piece and masked only whole.
 */
const PIECE = 7;
const HASH_BASE = 31;
/** HASH_BASE to the power PIECE - 1 (mod 2^32): the weight of the character that leaves the piece. */
const LEAVING_WEIGHT = Array.from({ length: PIECE - 1 }).reduce<number>((weight) => Math.imul(weight, HASH_BASE), 1);
/**
 * A piece more known forms than this share is structure, not secret (a token type's prefix and a
 * character or two): not indexed for more, so that no text costs more than this many comparisons at
 * a character. A piece in the very same surroundings as one indexed already (a JWT's header, a
 * private key's ASN.1 prefix) is not indexed again: it would be masked the same. Forms of words are
 * indexed whole regardless, as ever.
 */
const MAX_SHARING = 16;
/**
 * Entries are 32-bit integers: a piece is `slot + SLOTS * offset`, a whole form `-1 - slot`. A thousand
 * known secrets have some seven thousand forms; a form is indexed in its first 128 Ki characters.
 */
const SLOTS = 1 << 14;
const MAX_OFFSET = 2 ** 31 / SLOTS - 1;

/** One word, in lower case, capitalised or in capitals (not only the letters of hex). */
const WORD = /^(?=.*[g-zG-Z])(?:[A-Z]?[a-z]+|[A-Z]+)$/;
/** The positions of the text's last PIECE characters (not separators), in a ring; scrubbing is synchronous. */
const ring = new Int32Array(PIECE);
/** Where the last character a match compared equal is: matchForward's and matchBackward's second answer. */
let lastMatched = 0;

function pieceHash(text: string, at: number): number {
  let hash = 0;
  for (let i = at; i < at + PIECE; i++) hash = (Math.imul(hash, HASH_BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

/** How many of `form`'s characters from `at` on the text's from `i` on match (separators skipped), up to `max`. */
function matchForward(text: string, i: number, form: string, at: number, max: number): number {
  let matched = 0;
  while (matched < max && i < text.length) {
    const skip = separatorAt(text, i);
    if (skip > 0) {
      i += skip;
      continue;
    }
    if (text.charCodeAt(i) !== form.charCodeAt(at + matched)) break;
    lastMatched = i++;
    matched++;
  }
  return matched;
}

/** The same backwards: `form`'s characters from `at` down against the text's from `i` down. */
function matchBackward(text: string, i: number, form: string, at: number, max: number): number {
  let matched = 0;
  while (matched < max && i >= 0) {
    const skip = separatorEndingAt(text, i);
    if (skip > 0) {
      i -= skip;
      continue;
    }
    if (text.charCodeAt(i) !== form.charCodeAt(at - matched)) break;
    lastMatched = i--;
    matched++;
  }
  return matched;
}

/**
 * Finds every known secret in a text, in each of its printed forms, also broken by separators or
 * cut to a piece, and masks what it finds. One matcher holds a changing set of secrets: adding or
 * removing one touches its own entries only.
 */
export class SecretMatcher {
  /** The forms by slot; a slot is reused once its secret is removed. */
  readonly #forms: Array<SecretForm | undefined> = [];
  readonly #freeSlots: number[] = [];
  readonly #slotsOf = new Map<string, number[]>();
  /** Entries by their piece's hash. */
  readonly #index = new PieceIndex();

  add(value: string): void {
    if (this.#slotsOf.has(value)) return;
    const slots: number[] = [];
    for (const form of formsOf(value)) {
      const slot = this.#freeSlots.pop() ?? this.#forms.length;
      if (slot >= SLOTS) break; // far beyond any bounded set of secrets: the rest is masked by no form
      this.#forms[slot] = form;
      slots.push(slot);
      forEachEntry(form, slot, (hash, entry) => this.#insert(hash, entry));
    }
    this.#slotsOf.set(value, slots);
  }

  delete(value: string): void {
    for (const slot of this.#slotsOf.get(value) ?? []) {
      forEachEntry(this.#forms[slot]!, slot, (hash, entry) => this.#index.delete(hash, entry));
      this.#forms[slot] = undefined;
      this.#freeSlots.push(slot);
    }
    this.#slotsOf.delete(value);
  }

  /** `text` with every known secret found replaced by [REDACTED]. */
  scrub(text: string): string {
    if (this.#index.size === 0) return text;
    const found: number[] = [];
    let seen = 0;
    let hash = 0;
    for (let i = 0; i < text.length;) {
      const skip = separatorAt(text, i);
      if (skip > 0) {
        i += skip;
        continue;
      }
      const at = seen % PIECE;
      // Slide the piece one character: take out the leaving one, shift, add the entering one.
      if (seen >= PIECE) hash = (hash - Math.imul(text.charCodeAt(ring[at]!), LEAVING_WEIGHT)) | 0;
      hash = (Math.imul(hash, HASH_BASE) + text.charCodeAt(i)) | 0;
      ring[at] = i++;
      if (++seen < PIECE) continue;
      const index = this.#index;
      for (let place = index.first(hash); place !== -1; place = index.next(hash, place)) {
        this.#check(text, ring[seen % PIECE]!, index.entryAt(place), found);
      }
    }
    return found.length === 0 ? text : masked(text, found);
  }

  /** Whether the entry's form is in the text around the piece at `start`; adds what to mask to `found` (start, end pairs). */
  #check(text: string, start: number, entry: number, found: number[]): void {
    if (entry < 0) {
      const form = this.#forms[-1 - entry]!.text;
      if (matchForward(text, start, form, 0, form.length) === form.length) addRange(found, start, lastMatched + 1);
      return;
    }
    const slot = entry % SLOTS;
    const offset = (entry - slot) / SLOTS;
    const { text: form, minFragment } = this.#forms[slot]!;
    // The piece itself, since hashes collide; then as far each way as a run of minFragment can reach.
    if (matchForward(text, start, form, offset, PIECE) < PIECE) return;
    const pieceEnd = lastMatched;
    const reach = minFragment - PIECE;
    const before = matchBackward(text, start - 1, form, offset - 1, Math.min(reach, offset));
    let from = before > 0 ? lastMatched : start;
    const after = matchForward(text, pieceEnd + 1, form, offset + PIECE, Math.min(reach, form.length - offset - PIECE));
    let to = after > 0 ? lastMatched : pieceEnd;
    // Not half of an escape of the form (`\"` in a JSON-escaped one): the quote it escapes may be the text's own.
    let low = offset - before;
    let high = offset + PIECE + after;
    if (backslashesBefore(form, low) % 2 === 1) {
      low++;
      from = nextCharacter(text, from);
    }
    if (backslashesBefore(form, high) % 2 === 1) {
      high--;
      to = previousCharacter(text, to);
    }
    if (high - low < minFragment) return;
    // A key chosen by a person may hold a word ("Password"): that word in a message is not its piece.
    if (!WORD.test(form.slice(low, high))) addRange(found, from, to + 1);
  }

  #insert(hash: number, entry: number): void {
    const index = this.#index;
    let sharing = 0;
    for (let place = entry < 0 ? -1 : index.first(hash); place !== -1; place = index.next(hash, place)) {
      const other = index.entryAt(place);
      if (other >= 0 && (++sharing >= MAX_SHARING || this.#sameSurroundings(other, entry))) return;
    }
    index.add(hash, entry);
  }

  /** Whether two piece entries match the same texts: the same characters as far as a check compares, and the same form ends. */
  #sameSurroundings(a: number, b: number): boolean {
    const slotA = a % SLOTS;
    const slotB = b % SLOTS;
    const formA = this.#forms[slotA]!;
    const formB = this.#forms[slotB]!;
    if (formA.minFragment !== formB.minFragment) return false;
    const reach = formA.minFragment - PIECE;
    const offsetA = (a - slotA) / SLOTS;
    const offsetB = (b - slotB) / SLOTS;
    const before = Math.min(reach, offsetA);
    const after = Math.min(reach, formA.text.length - offsetA - PIECE);
    if (before !== Math.min(reach, offsetB) || after !== Math.min(reach, formB.text.length - offsetB - PIECE)) return false;
    for (let i = -before; i < PIECE + after; i++)
      if (formA.text.charCodeAt(offsetA + i) !== formB.text.charCodeAt(offsetB + i)) return false;
    return true;
  }
}

/** A form's entries: its first piece if it is masked whole only, else a piece every `minFragment - PIECE + 1` characters. */
function forEachEntry(form: SecretForm, slot: number, visit: (hash: number, entry: number) => void): void {
  if (form.wholeOnly) {
    visit(pieceHash(form.text, 0), -1 - slot);
    return;
  }
  const stride = form.minFragment - PIECE + 1;
  for (let offset = 0; offset + PIECE <= form.text.length && offset <= MAX_OFFSET; offset += stride) {
    visit(pieceHash(form.text, offset), slot + SLOTS * offset);
  }
}

/** Adds a range to mask to `found` (start, end pairs), into the last one when it overlaps it: a long run is one range, not one per piece. */
function addRange(found: number[], from: number, to: number): void {
  const last = found.length - 1;
  if (last > 0 && from >= found[last - 1]! && from < found[last]!) found[last] = Math.max(found[last]!, to);
  else found.push(from, to);
}

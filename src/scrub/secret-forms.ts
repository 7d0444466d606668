import { withoutSeparators } from './separators.js';

/** Fewer characters of a secret tell a reader little, and would make ordinary words match. */
export const MIN_FRAGMENT = 8;
/** Base64 and hex pieces carrying as many bytes as MIN_FRAGMENT characters (12 base64 characters hold 9 bytes). */
const MIN_BASE64_FRAGMENT = 12;
const MIN_HEX_FRAGMENT = 2 * MIN_FRAGMENT;
/**
 * The base64 of a longer text holding the secret (a program that encodes all of its input) holds the
 * secret's whole encoding, so a longer piece of it is enough: it costs fewer entries in the index.
 */
const MIN_EMBEDDED_BASE64_FRAGMENT = 16;

/** One way a secret may be printed, and how much of it counts as a leak. */
export interface SecretForm {
  /** As printed, without separators (see separators.ts). */
  text: string;
  /** A piece this long or longer is masked. */
  minFragment: number;
  /** Only the whole form is masked, not its pieces: a secret made of words (see looksLikeKeyMaterial). */
  wholeOnly: boolean;
}

/**
 * Whether `text` is mostly key material rather than words, numbers, hosts and paths: at least half
 * of its letters and digits are in runs that mix letters with digits, have an upper case letter right
 * after a lower case one, or are 8 hex digits or more. A token (`xaat-` and a UUID, even one whose
 * short groups are all digits or all letters; base64, hex, a JWT, a Vault token) is;
 * `token-rotator-preflight`, `http://127.0.0.1:8080/hook` and a passphrase are not, and a piece of
 * one of those in an ordinary message (`token-rotator`, `http://127.0.0.1:`) must not be masked.
 */
export function looksLikeKeyMaterial(text: string): boolean {
  let characters = 0;
  let random = 0;
  for (const run of text.match(/[A-Za-z0-9]+/g) ?? []) {
    characters += run.length;
    const mixed = /[0-9]/.test(run) && /[A-Za-z]/.test(run);
    if (mixed || /[a-z][A-Z]/.test(run) || /^(?:[0-9a-f]{8,}|[0-9A-F]{8,})$/.test(run)) random += run.length;
  }
  return characters > 0 && random * 2 >= characters;
}

/**
 * Longer secrets are credentials the rotator holds rather than delivers (a JWT bearer, a private
 * key): no program is given them to encode, and a daemon holds a thousand of them over weeks of
 * refreshes. They are indexed as printed only, a piece counting from a sixteenth of their length, so
 * that each costs about as much as a short one.
 */
const LONG_SECRET = 128;
const LONG_SECRET_PIECES = 16;

/**
 * The forms of `value` that programs commonly print: itself, as a JSON string escapes it, its
 * base64 (as `base64` prints it, and from its second and third byte on, as the base64 of a longer
 * text holding it would, `format: json` for one) and its hex as `od`, `xxd -p` and `hexdump` print it.
 * None when the value is too short to scrub without mangling ordinary words.
 */
export function formsOf(value: string): SecretForm[] {
  const plain = withoutSeparators(value);
  if (plain.length < MIN_FRAGMENT) return [];
  const wholeOnly = !looksLikeKeyMaterial(plain);
  const long = plain.length > LONG_SECRET;
  const minFragment = long ? Math.ceil(plain.length / LONG_SECRET_PIECES) : MIN_FRAGMENT;
  const forms: SecretForm[] = [
    { text: plain, minFragment, wholeOnly },
    { text: withoutSeparators(JSON.stringify(value).slice(1, -1)), minFragment, wholeOnly },
  ];
  if (!long) {
    const bytes = Buffer.from(value, 'utf8');
    const hex = bytes.toString('hex');
    forms.push(
      { text: bytes.toString('base64'), minFragment: MIN_BASE64_FRAGMENT, wholeOnly: false },
      ...[1, 2].map((skip) => ({
        text: bytes.subarray(skip).toString('base64'),
        minFragment: MIN_EMBEDDED_BASE64_FRAGMENT,
        wholeOnly: false,
      })),
      { text: hex, minFragment: MIN_HEX_FRAGMENT, wholeOnly: false },
    );
  }
  return forms.filter((form, i) => form.text.length >= form.minFragment && forms.findIndex((f) => f.text === form.text) === i);
}

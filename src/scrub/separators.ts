/**
 * What a printer may put between a secret's characters without changing them: any ASCII whitespace
 * (`fold`, `base64 -w`, `od` and CRLF line ends), and the escaped line breaks and tab of a JSON
 * string (a log line or a `--json` document that carries such text). Scrubbing reads a text as its
 * characters without these.
 */

const BACKSLASH = 92;

function isWhitespace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13);
}

/** `\n`, `\r`, `\t` in JSON. */
function isEscapedWhitespace(code: number): boolean {
  return code === 110 || code === 114 || code === 116;
}

/** How many characters of separator start at `i` (0: a character of content). */
export function separatorAt(text: string, i: number): number {
  const code = text.charCodeAt(i);
  if (isWhitespace(code)) return 1;
  return code === BACKSLASH && isEscapedWhitespace(text.charCodeAt(i + 1)) ? 2 : 0;
}

/**
 * How many characters of separator end at `i`, read backwards. It agrees with separatorAt: a
 * backslash is never the end of a separator, so the one before an `n` always starts one.
 */
export function separatorEndingAt(text: string, i: number): number {
  const code = text.charCodeAt(i);
  if (isWhitespace(code)) return 1;
  return isEscapedWhitespace(code) && i > 0 && text.charCodeAt(i - 1) === BACKSLASH ? 2 : 0;
}

/** `text` without its separators: the characters a reader sees. */
export function withoutSeparators(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length;) {
    const length = separatorAt(text, i);
    if (length === 0) {
      i += 1;
      continue;
    }
    out += text.slice(from, i);
    i += length;
    from = i;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Where the character after the one at `i` is, separators skipped. */
export function nextCharacter(text: string, i: number): number {
  i++;
  for (let skip = separatorAt(text, i); skip > 0; skip = separatorAt(text, i)) i += skip;
  return i;
}

/** Where the character before the one at `i` is, separators skipped. */
export function previousCharacter(text: string, i: number): number {
  i--;
  for (let skip = separatorEndingAt(text, i); skip > 0; skip = separatorEndingAt(text, i)) i -= skip;
  return i;
}

/**
 * Checks a string the way Go's base64.StdEncoding.Decode reads it (padding required, CR and LF
 * skipped), which is how the API server decodes a Secret's `data`. Answers undefined when the
 * value decodes, else the offset Go's CorruptInputError reports.
 */
export function goBase64ErrorOffset(text: string): number | undefined {
  const src = Buffer.from(text, 'utf8');
  const PAD = 0x3d;
  const isNewline = (c: number | undefined) => c === 0x0a || c === 0x0d;
  let si = 0;
  while (si < src.length) {
    let j = 0;
    for (; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return undefined;
        return si - j;
      }
      const c = src[si]!;
      si++;
      if (isAlphabet(c)) continue;
      if (isNewline(c)) {
        j--;
        continue;
      }
      if (c !== PAD) return si - 1;
      // Padding: only after two or three characters of a quantum, and only at the end.
      if (j === 0 || j === 1) return si - 1;
      if (j === 2) {
        while (si < src.length && isNewline(src[si])) si++;
        if (si === src.length) return src.length;
        if (src[si] !== PAD) return si - 1;
        si++;
      }
      while (si < src.length && isNewline(src[si])) si++;
      if (si < src.length) return si;
      return undefined;
    }
  }
  return undefined;
}

function isAlphabet(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f;
}

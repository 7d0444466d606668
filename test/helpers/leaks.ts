import { expect } from 'vitest';

/** Asserts that none of `secrets` appears in any of `outputs`, naming which output leaked. */
export function expectNoLeak(outputs: Record<string, string>, secrets: readonly string[]): void {
  expect(secrets.length, 'a leak check needs secrets to look for').toBeGreaterThan(0);
  for (const [where, text] of Object.entries(outputs)) {
    for (const secret of secrets) {
      expect(text.includes(secret), `a secret leaked into ${where}`).toBe(false);
    }
  }
}

/**
 * Every piece of `secret` a reader could use: each run of `length` characters of it, and of its
 * base64 (at each byte alignment, as a longer text around it would encode it) and its hex, at the
 * lengths that carry as much of it. The runs of the secret itself are taken without its hyphens (and
 * the text is searched without any): in a UUID-shaped secret (`xaat-<uuid>`) a run across two hyphens
 * and the version digit holds only five random characters, which any other UUID in the text (a
 * journal record's rotationId) matches about once in a million tries, and a test makes thousands.
 */
function piecesOf(secret: string, length: number): string[] {
  const runs = (text: string, size: number) =>
    Array.from({ length: Math.max(0, text.length - size + 1) }, (_, i) => text.slice(i, i + size));
  const bytes = Buffer.from(secret, 'utf8');
  const base64 = [0, 1, 2].map((skip) => bytes.subarray(skip).toString('base64').replace(/=+$/, ''));
  const hex = bytes.toString('hex');
  return [
    ...runs(secret.replaceAll('-', ''), length),
    ...base64.flatMap((encoded) => runs(encoded.slice(0, -2), Math.ceil((length * 4) / 3) + 1)),
    ...runs(hex, length * 2),
    ...runs(hex.toUpperCase(), length * 2),
  ];
}

/**
 * Asserts that no piece of any of `secrets` (see piecesOf) appears in any of `outputs`, however the
 * output broke it over lines or spaces (whitespace, JSON's escaped whitespace and hyphens are ignored).
 */
export function expectNoFragment(outputs: Record<string, string>, secrets: readonly string[], length = 8): void {
  expect(secrets.length, 'a leak check needs secrets to look for').toBeGreaterThan(0);
  for (const [where, text] of Object.entries(outputs)) {
    const squeezed = text.replace(/\\[nrt]|\s|-/g, '');
    for (const secret of secrets) {
      const leaked = piecesOf(secret, length).find((piece) => squeezed.includes(piece));
      expect(leaked, `a piece of a secret leaked into ${where}`).toBeUndefined();
    }
  }
}

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

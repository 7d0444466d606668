import { expect } from 'vitest';

/** The items of a `--json` envelope (see schema/output.schema.json), after checking it is one of the expected kind. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function itemsOf<T = any>(stdout: string, kind?: string): T[] {
  const parsed = JSON.parse(stdout) as { apiVersion: string; kind: string; items: T[] };
  expect(parsed.apiVersion).toBe('token-rotator/v2');
  if (kind) expect(parsed.kind).toBe(kind);
  return parsed.items;
}

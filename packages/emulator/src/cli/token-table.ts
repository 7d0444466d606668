import type { EmulatedToken } from '../token-store.js';

/** `2026-11-24T12:24Z`, or `never`: minutes are enough to read the table. */
function shortDate(at: Date | null): string {
  return at === null ? 'never' : `${at.toISOString().slice(0, 16)}Z`;
}

/** The seeded tokens as plain aligned columns, as the product prints its own tables. */
export function tokenTable(tokens: readonly EmulatedToken[]): string {
  const headers = ['TOKEN', 'ID', 'EXPIRES'];
  const rows = tokens.map((t) => [t.name, t.id, shortDate(t.expiresAt)]);
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

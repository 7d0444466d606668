/** Plain aligned columns for a terminal; the JSON output is for machines. */
export function formatTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** `2026-11-24T12:24Z`: minutes are enough to read a table; the JSON keeps full precision. */
export function shortDate(iso: string | null | undefined): string {
  if (iso === undefined) return '-';
  if (iso === null) return 'never';
  return `${iso.slice(0, 16)}Z`;
}

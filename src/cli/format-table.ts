export { shortDate } from './output/expiry.js';

export interface TableOptions {
  /** The terminal's width: the free-text columns are shortened to fit it. None: nothing is cut (a pipe, a file). */
  width?: number | undefined;
  /** The columns that may be shortened (free text), by index; by default the last one. */
  flexible?: number[];
}

/** A shortened column keeps at least this much, or its header: below that a cut cell says nothing. */
const MIN_FLEXIBLE_WIDTH = 20;

/** Plain aligned columns for a terminal; the JSON output is for machines and is never cut. */
export function formatTable(headers: string[], rows: string[][], options: TableOptions = {}): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  if (options.width !== undefined) fitWidths(headers, widths, options.width, options.flexible ?? [headers.length - 1]);
  const line = (cells: string[]) =>
    cells
      .map((c, i) => {
        const cell = cut(c, widths[i]!);
        return i === cells.length - 1 ? cell : cell.padEnd(widths[i]!);
      })
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** Takes from the widest flexible column until the table fits, never below what stays readable. */
function fitWidths(headers: string[], widths: number[], width: number, flexible: number[]): void {
  const total = () => widths.reduce((a, w) => a + w, 0) + 2 * (widths.length - 1);
  const floor = (i: number) => Math.max(MIN_FLEXIBLE_WIDTH, headers[i]!.length);
  while (total() > width) {
    const candidates = flexible.filter((i) => widths[i]! > floor(i));
    if (candidates.length === 0) return;
    const widest = candidates.reduce((a, i) => (widths[i]! > widths[a]! ? i : a));
    const others = candidates.filter((i) => i !== widest).map((i) => widths[i]!);
    // Down to the next widest (or to what fits), so two long columns end up sharing the room.
    const target = Math.max(floor(widest), Math.max(...others, 0), widths[widest]! - (total() - width));
    widths[widest] = target < widths[widest]! ? target : widths[widest]! - 1;
  }
}

function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** The width to fit tables to: the terminal's, and only on a terminal. */
export function terminalWidth(stream: { isTTY?: boolean; columns?: number }): number | undefined {
  return stream.isTTY && typeof stream.columns === 'number' && stream.columns > 0 ? stream.columns : undefined;
}

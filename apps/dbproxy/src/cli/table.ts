// Aligned plain-text tables for the operator commands: a header row, columns padded to their
// widest cell, numbers right-aligned.

export interface Column<Row> {
  readonly header: string;
  readonly cell: (row: Row) => string;
  readonly align?: 'left' | 'right';
}

/** `-` for absent values, so every cell has something to align. */
export const orDash = (value: string | number | null | undefined): string => (value === null || value === undefined || value === '' ? '-' : String(value));

/** Lines of the table (no trailing spaces); only the header when there are no rows. */
export function formatTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string[] {
  const cells = rows.map((row) => columns.map((c) => c.cell(row).replace(/[\r\n\t]/g, ' ')));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => (r[i] as string).length)));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => (columns[i]?.align === 'right' ? v.padStart(widths[i] as number) : v.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)];
}

/** Cuts a line to `width` characters (a full-screen view must not wrap). */
export function fit(line: string, width: number): string {
  return line.length <= width ? line : `${line.slice(0, Math.max(0, width - 1))}…`;
}

export function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${Math.floor(seconds)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(Math.floor(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * Aligned text tables and label/value lists for the terminal. Cells may carry colour (their
 * escape codes take no columns); the last column is never padded, so a long value (a TXT
 * record) wraps at the terminal's edge instead of pushing every row wider.
 */
import { type Style, visibleWidth } from './style.js';

export type Row = readonly string[];

const GAP = '  ';

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - visibleWidth(text)));
}

/** Rows under a header, columns as wide as their widest cell. */
export function table(style: Style, header: Row, rows: readonly Row[], indent = ''): string[] {
  const all = [header.map((h) => style.bold(h)), ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => visibleWidth(row[i] ?? ''))));
  return all.map(
    (row) =>
      indent +
      row
        .map((cell, i) => (i === row.length - 1 ? cell : pad(cell, widths[i] ?? 0)))
        .join(GAP)
        .trimEnd(),
  );
}

/** A value to show, or nothing: null, undefined and '' leave their row out, as the site does. */
export type Fact = readonly [label: string, value: string | null | undefined];

/** `Label   value` lines, values aligned; rows without a value are left out. */
export function facts(style: Style, rows: readonly Fact[], indent = ''): string[] {
  const shown = rows.filter(
    (r): r is readonly [string, string] => r[1] !== null && r[1] !== undefined && r[1] !== '',
  );
  const width = Math.max(0, ...shown.map(([label]) => visibleWidth(label)));
  return shown.map(([label, value]) => `${indent}${style.dim(pad(label, width))}${GAP}${value}`);
}

/** A section heading and its lines, with a blank line before it; nothing when it has no lines. */
export function section(style: Style, title: string, lines: readonly string[]): string[] {
  return lines.length === 0 ? [] : ['', style.bold(title), ...lines];
}

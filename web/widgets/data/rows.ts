// A metric widget's rows: the legacy `path`/`paths` fields or Trifle's `series` rows, resolved
// against the series into named entries (one per matched leaf path) with one value per column.
// Expression rows combine earlier rows per binding (the part a wildcard matched), as Trifle App does:
// `a / b` over `errors.*` and `requests.*` divides errors.api by requests.api, and so on.
import { evaluate, parseExpression, rowLetter, ExpressionError } from '../../../src/shared/expression';

export interface SeriesRow {
  kind: 'path' | 'expression';
  path: string;
  expression: string;
  label: string;
  visible: boolean;
  /** a CSS colour, `palette:<n>` for a fixed palette slot, or null to rotate through the palette */
  color: string | null;
}

export interface Entry {
  /** what a wildcard matched ('' for a plain path or a single-valued expression) */
  binding: string;
  name: string;
  /** the concrete path, or `a + b` style text for an expression */
  source: string;
  values: Array<number | null>;
  color: string | null;
}

export interface ResolvedRow {
  row: SeriesRow;
  letter: string;
  entries: Entry[];
  /** why an expression row produced nothing it could have (a parse error) */
  error: string | null;
}

/** For a path pattern: the matched concrete paths with their bindings and one value per column. */
export type PathSource = (pattern: string) => Array<{ path: string; binding: string; values: Array<number | null> }>;

const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');
const SINGLE_PATH_TYPES = new Set(['kpi', 'list', 'category']);

/** Trifle colour selectors: `custom.#rrggbb`, `<palette>.<n>` (fixed slot), `<palette>.*` (rotate). */
export function rowColor(raw: Record<string, unknown>): string | null {
  const color = str(raw.color);
  if (color) return color;
  const selector = str(raw.color_selector);
  const custom = /^custom\.(#[0-9a-fA-F]{6})$/.exec(selector);
  if (custom) return custom[1]!;
  const fixed = /^[a-z0-9_-]+\.(\d+)$/.exec(selector);
  return fixed ? `palette:${fixed[1]}` : null;
}

function rowFrom(raw: unknown): SeriesRow | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  const kind = str(r.kind).toLowerCase() === 'expression' ? 'expression' : 'path';
  const row: SeriesRow = {
    kind,
    path: kind === 'path' ? str(r.path) : '',
    expression: kind === 'expression' ? str(r.expression) : '',
    label: str(r.label),
    visible: r.visible !== false && r.visible !== 'false' && r.visible !== 0,
    color: rowColor(r),
  };
  // Trifle drops rows with neither a path (or expression) nor a label; so do we.
  return (kind === 'path' ? row.path : row.expression) || row.label ? row : null;
}

const pathRow = (path: unknown): SeriesRow | null =>
  rowFrom({ kind: 'path', path, visible: true });

/** The widget's rows: `series` when it holds any, else its `path` or `paths`. */
export function widgetRows(widget: Record<string, unknown>): SeriesRow[] {
  const series = widget.series;
  const list: Array<SeriesRow | null> = [];
  if (Array.isArray(series) && series.length > 0) list.push(...series.map(rowFrom));
  else if (SINGLE_PATH_TYPES.has(String(widget.type)) && widget.path !== undefined) list.push(pathRow(widget.path));
  else if (Array.isArray(widget.paths)) list.push(...widget.paths.map(pathRow));
  else if (widget.path !== undefined) list.push(pathRow(widget.path));
  return list.filter((row): row is SeriesRow => row !== null);
}

/** The paths a widget reads, for its empty-state message. */
export function rowPaths(rows: readonly SeriesRow[]): string[] {
  return rows.filter((r) => r.kind === 'path' && r.path).map((r) => r.path);
}

function entryName(row: SeriesRow, letter: string, binding: string, fallback: string): string {
  const base = row.label || (row.kind === 'expression' ? letter : '');
  if (!base) return fallback;
  return binding ? `${base}: ${binding}` : base;
}

function resolvePathRow(row: SeriesRow, letter: string, source: PathSource): ResolvedRow {
  const entries = source(row.path).map(({ path, binding, values }) => ({
    binding,
    name: entryName(row, letter, binding, path),
    source: path,
    values,
    color: row.color,
  }));
  return { row, letter, entries, error: null };
}

// Trifle's rule: with any wildcard rows before it, an expression is evaluated once per binding;
// a row with one entry takes part in every binding.
function bindingsOf(prior: readonly ResolvedRow[]): string[] {
  const keys = new Set<string>();
  for (const r of prior) for (const e of r.entries) keys.add(e.binding);
  const wild = [...keys].filter((k) => k !== '');
  return wild.length ? wild.sort() : keys.size ? [''] : [];
}

function entryFor(resolved: ResolvedRow, binding: string): Entry | null {
  const exact = resolved.entries.find((e) => e.binding === binding);
  if (exact) return exact;
  return resolved.entries.length === 1 ? resolved.entries[0]! : null;
}

function resolveExpressionRow(row: SeriesRow, index: number, prior: readonly ResolvedRow[], width: number): ResolvedRow {
  const letter = rowLetter(index);
  let ast;
  try {
    ast = parseExpression(row.expression, index);
  } catch (err) {
    if (!(err instanceof ExpressionError)) throw err;
    return { row, letter, entries: [], error: `Row ${letter} (${row.expression || 'empty'}): ${err.message}` };
  }
  const entries: Entry[] = [];
  for (const binding of bindingsOf(prior)) {
    const inputs = prior.map((r) => entryFor(r, binding));
    const values = Array.from({ length: width }, (_, col) => {
      const env: Record<string, number | null> = {};
      inputs.forEach((entry, i) => (env[rowLetter(i)] = entry?.values[col] ?? null));
      return evaluate(ast, env);
    });
    if (values.every((v) => v === null)) continue;
    entries.push({ binding, name: entryName(row, letter, binding, letter), source: row.expression, values, color: row.color });
  }
  return { row, letter, entries, error: null };
}

/** Resolves every row in order; `width` is the number of columns (buckets, or 1 for range totals). */
export function resolveRows(rows: readonly SeriesRow[], source: PathSource, width: number): ResolvedRow[] {
  const resolved: ResolvedRow[] = [];
  rows.forEach((row, index) => {
    resolved.push(
      row.kind === 'path' ? resolvePathRow(row, rowLetter(index), source) : resolveExpressionRow(row, index, resolved, width),
    );
  });
  return resolved;
}

/** The entries that are drawn: those of visible rows, in row order. */
export function visibleEntries(resolved: readonly ResolvedRow[]): Entry[] {
  return resolved.filter((r) => r.row.visible).flatMap((r) => r.entries);
}

/** The first expression error among visible rows, shown as the widget's error. */
export function rowsError(resolved: readonly ResolvedRow[]): string | null {
  return resolved.find((r) => r.error)?.error ?? null;
}

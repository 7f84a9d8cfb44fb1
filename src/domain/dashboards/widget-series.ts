// Trifle's `series` form of metric widgets (SPEC 6): an ordered list of rows
// `{kind: "path"|"expression", path?, expression?, label?, visible?, color?}`. Rows are kept as
// sent; these checks refuse what no renderer could draw, with the row's position in the field name
// (`payload.grid[ts].series[2].expression`). Expressions are parsed by the same module the web
// widgets evaluate them with, so the server accepts exactly what the interface can compute.
import * as v from 'valibot';
import { expressionProblem } from '../../shared/expression';
import type { ErrorBag } from './issues';

const text = v.string('must be a string');

export const SERIES_ROW = v.looseObject(
  {
    kind: v.optional(v.picklist(['path', 'expression'], 'must be one of path, expression')),
    path: v.optional(text),
    expression: v.optional(text),
    label: v.optional(text),
    visible: v.optional(v.boolean('must be true or false')),
    // Trifle App writes `color_selector` (`default.*`, `default.3`, `custom.#aabbcc`); SPEC 6 names `color`.
    color: v.optional(v.nullable(text)),
    color_selector: v.optional(v.nullable(text)),
  },
  'must be a series row object',
);

export const SERIES = v.optional(v.array(SERIES_ROW, 'must be a list of series rows'));

/**
 * A series row's path: dot segments, where a whole segment may be `*` (Trifle App matches
 * `*.count` and `country.*` alike); `*` alone or inside a segment (`a*`) is refused.
 */
export function isSeriesPath(path: string): boolean {
  if (path.length === 0 || path.length > 255 || path === '*') return false;
  return path.split('.').every((segment) => segment !== '' && (segment === '*' || !segment.includes('*')));
}

type Row = Record<string, unknown>;
const filled = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/** Checks what the schema cannot: each row against its kind and the rows before it. */
export function checkSeriesRows(rows: readonly unknown[], field: string, bag: ErrorBag): void {
  rows.forEach((raw, index) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return; // the schema reports it
    const row = raw as Row;
    const at = `${field}[${index}]`;
    const labelled = filled(row.label);
    if (row.kind === 'expression') {
      if (filled(row.expression)) {
        const problem = expressionProblem(row.expression.trim(), index);
        if (problem) bag.add(`${at}.expression`, problem);
      } else if (!labelled) bag.add(`${at}.expression`, 'is required in an expression row');
      return;
    }
    if (filled(row.path)) {
      if (!isSeriesPath(row.path.trim()))
        bag.add(`${at}.path`, 'must be a dot path such as count or country.*; * only as a whole segment');
    } else if (!labelled) bag.add(`${at}.path`, 'is required in a path row');
  });
}

/**
 * True when the widget names something to draw: a path, paths or at least one series row. A field
 * that was sent but is broken counts (its own error is reported, not also "is required").
 */
export function hasMetric(widget: Row): boolean {
  const emptySeries =
    widget.series === undefined || (Array.isArray(widget.series) && widget.series.length === 0);
  return widget.path !== undefined || widget.paths !== undefined || !emptySeries;
}

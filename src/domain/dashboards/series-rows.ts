// Trifle's current widget form (SPEC 6): `series`, an ordered list of rows
// `{kind: "path"|"expression", path?, expression?, label?, visible?, color?}`. An expression row
// combines earlier rows, named a, b, c, ... in order, with + - * /, parentheses, numbers and the
// functions sum, mean, avg, min, max, sqrt. Rows are checked here so that a payload the interface
// cannot evaluate is refused with the row's field named (`payload.grid[w].series[2].expression`)
// instead of drawing nothing. Other row fields are kept as sent.
import * as v from 'valibot';
import type { ErrorBag } from './issues';

const FUNCTIONS = new Set(['sum', 'mean', 'avg', 'min', 'max', 'sqrt']);
const MAX_EXPRESSION = 1000;
const TOKEN = /\s*(?:(\d+(?:\.\d+)?|\.\d+)|([A-Za-z_]\w*)|([-+*/(),]))/y;

const ROW = v.looseObject(
  {
    kind: v.picklist(['path', 'expression'], 'must be one of path, expression'),
    path: v.optional(v.string('must be a string')),
    expression: v.optional(v.string('must be a string')),
    label: v.optional(v.nullable(v.string('must be a string'))),
    visible: v.optional(v.boolean('must be true or false')),
    color: v.optional(v.nullable(v.string('must be a string'))),
  },
  'must be a series row object',
);

/**
 * Why `expression` cannot be evaluated with `rows` earlier rows, or null when it can: tokens,
 * balanced parentheses, names that are earlier rows (a = the first row) or functions called.
 */
export function expressionProblem(expression: string, rows: number): string | null {
  if (expression.trim() === '') return 'must not be empty';
  if (expression.length > MAX_EXPRESSION) return `must be at most ${MAX_EXPRESSION} characters`;
  let depth = 0;
  let expectOperand = true;
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expression.length) {
    if (expression.slice(TOKEN.lastIndex).trim() === '') break;
    const start = TOKEN.lastIndex;
    const m = TOKEN.exec(expression);
    if (!m) return `cannot be read at "${expression.slice(start).trim().slice(0, 20)}"`;
    const [, number, name, symbol] = m;
    if (number !== undefined || name !== undefined) {
      if (!expectOperand) return `needs an operator before "${number ?? name}"`;
      if (name !== undefined && FUNCTIONS.has(name.toLowerCase())) {
        if (!/^\s*\(/.test(expression.slice(TOKEN.lastIndex))) return `must call ${name} with parentheses`;
        continue; // the "(" that follows opens its arguments
      }
      if (name !== undefined && !(name.length === 1 && name >= 'a' && name.charCodeAt(0) - 97 < rows)) {
        return `may only name earlier rows (${rows === 0 ? 'none yet' : `a..${String.fromCharCode(96 + rows)}`}) and the functions ${[...FUNCTIONS].join(', ')}; found "${name}"`;
      }
      expectOperand = false;
    } else if (symbol === '(') {
      if (!expectOperand) return 'needs an operator before "("';
      depth += 1;
    } else if (symbol === ')') {
      if (expectOperand || depth === 0) return 'has an unbalanced or empty ")"';
      depth -= 1;
    } else if (symbol === ',') {
      if (expectOperand || depth === 0) return 'has a "," outside a function call';
      expectOperand = true;
    } else {
      // a leading + or - is a sign; otherwise an operator needs an operand on its left
      if (expectOperand && symbol !== '-' && symbol !== '+') return `has "${symbol}" without a left operand`;
      expectOperand = true;
    }
  }
  if (depth !== 0) return 'has an unclosed "("';
  if (expectOperand) return 'ends without an operand';
  return null;
}

/**
 * Checks a widget's `series` (a list of rows) with `isPath` for path rows; problems go to `bag`
 * under `field` (`payload.grid[w].series`). Returns how many rows there are (0 when not a list).
 */
export function checkSeriesRows(series: unknown, field: string, bag: ErrorBag, isPath: (p: string) => boolean): number {
  if (!Array.isArray(series)) {
    bag.add(field, 'must be a list of series rows');
    return 0;
  }
  series.forEach((raw, index) => {
    const rowField = `${field}[${index}]`;
    const result = v.safeParse(ROW, raw, { abortEarly: false });
    if (!result.success) return bag.addIssues(rowField, result.issues);
    const row = result.output;
    if (row.kind === 'path') {
      if (row.path === undefined) bag.add(`${rowField}.path`, 'is required');
      else if (!isPath(row.path)) bag.add(`${rowField}.path`, 'must be a dot path such as count or country.US; only a final .* wildcard is allowed');
    } else if (row.expression === undefined) {
      bag.add(`${rowField}.expression`, 'is required');
    } else {
      const problem = expressionProblem(row.expression, index);
      if (problem) bag.add(`${rowField}.expression`, problem);
    }
  });
  return series.length;
}

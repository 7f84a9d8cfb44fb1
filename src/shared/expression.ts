// The expression language of widget series rows and of transponders (SPEC 15): `a`, `b`, `c`...
// name the earlier rows (or a transponder's paths, in order); `+ - * /`, unary minus, parentheses,
// numbers and sum, mean, avg, min, max, sqrt. A hand-written recursive-descent parser (no eval, no
// Function), the one implementation used by the browser's widgets, the server's payload check and
// the server's transponders, so all agree on what parses and what it computes. Evaluation is
// null-propagating: a missing input, a null argument or a division by zero gives null (no value).

export type Expr =
  | { kind: 'num'; value: number }
  | { kind: 'var'; name: string }
  | { kind: 'neg'; arg: Expr }
  | { kind: 'bin'; op: '+' | '-' | '*' | '/'; left: Expr; right: Expr }
  | { kind: 'call'; name: FunctionName; args: Expr[] };

export const FUNCTIONS = ['sum', 'mean', 'avg', 'min', 'max', 'sqrt'] as const;
export type FunctionName = (typeof FUNCTIONS)[number];

export class ExpressionError extends Error {}

type Token = { t: 'num'; v: number } | { t: 'id'; v: string } | { t: 'op'; v: string };

const MAX_LENGTH = 1000;
const MAX_DEPTH = 64;

/** The variable name of row `index` (0 → a, 25 → z, 26 → aa, as spreadsheet columns). */
export function rowLetter(index: number): string {
  let n = index + 1;
  let name = '';
  while (n > 0) {
    const rem = (n - 1) % 26;
    name = String.fromCharCode(97 + rem) + name;
    n = Math.floor((n - 1) / 26);
  }
  return name;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i += 1;
    } else if ('+-*/(),'.includes(c)) {
      tokens.push({ t: 'op', v: c });
      i += 1;
    } else if (/[0-9.]/.test(c)) {
      const match = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(text.slice(i));
      if (!match) throw new ExpressionError(`Invalid number at position ${i + 1}`);
      tokens.push({ t: 'num', v: Number(match[0]) });
      i += match[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))!;
      tokens.push({ t: 'id', v: match[0] });
      i += match[0].length;
    } else {
      throw new ExpressionError(`Unexpected character "${c}" at position ${i + 1}`);
    }
  }
  return tokens;
}

class Parser {
  private pos = 0;
  private depth = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly vars: ReadonlySet<string>,
    private readonly varsName: string,
  ) {}

  parse(): Expr {
    if (this.tokens.length === 0) throw new ExpressionError('Expression is empty');
    const expr = this.sum();
    const rest = this.tokens[this.pos];
    if (rest) throw new ExpressionError(`Unexpected "${rest.v}"`);
    return expr;
  }

  private peekOp(...ops: string[]): string | null {
    const token = this.tokens[this.pos];
    return token?.t === 'op' && ops.includes(token.v) ? token.v : null;
  }

  private expectOp(op: string, message: string): void {
    if (!this.peekOp(op)) throw new ExpressionError(message);
    this.pos += 1;
  }

  private sum(): Expr {
    let left = this.product();
    for (let op = this.peekOp('+', '-'); op; op = this.peekOp('+', '-')) {
      this.pos += 1;
      left = { kind: 'bin', op: op as '+' | '-', left, right: this.product() };
    }
    return left;
  }

  private product(): Expr {
    let left = this.unary();
    for (let op = this.peekOp('*', '/'); op; op = this.peekOp('*', '/')) {
      this.pos += 1;
      left = { kind: 'bin', op: op as '*' | '/', left, right: this.unary() };
    }
    return left;
  }

  // Depth is bounded so that a hostile "((((((..." cannot exhaust the stack.
  private unary(): Expr {
    if (++this.depth > MAX_DEPTH) throw new ExpressionError('Expression is nested too deeply');
    try {
      const op = this.peekOp('+', '-');
      if (!op) return this.atom();
      this.pos += 1;
      const arg = this.unary();
      return op === '-' ? { kind: 'neg', arg } : arg;
    } finally {
      this.depth -= 1;
    }
  }

  private atom(): Expr {
    const token = this.tokens[this.pos];
    if (!token) throw new ExpressionError('Unexpected end of expression');
    this.pos += 1;
    if (token.t === 'num') return { kind: 'num', value: token.v };
    if (token.t === 'id') return this.peekOp('(') ? this.call(token.v) : this.variable(token.v);
    if (token.v === '(') {
      const inner = this.sum();
      this.expectOp(')', 'Missing closing parenthesis');
      return inner;
    }
    throw new ExpressionError(`Unexpected "${token.v}"`);
  }

  private variable(name: string): Expr {
    if (!this.vars.has(name))
      throw new ExpressionError(
        `Unknown variable ${name}: only ${this.varsName} (${[...this.vars].join(', ') || 'none'}) can be used`,
      );
    return { kind: 'var', name };
  }

  private call(name: string): Expr {
    const fn = FUNCTIONS.find((f) => f === name);
    if (!fn) throw new ExpressionError(`Unknown function ${name} (use ${FUNCTIONS.join(', ')})`);
    this.pos += 1; // (
    const args: Expr[] = [];
    if (!this.peekOp(')')) {
      args.push(this.sum());
      while (this.peekOp(',')) {
        this.pos += 1;
        args.push(this.sum());
      }
    }
    this.expectOp(')', `Missing closing parenthesis after the arguments of ${name}`);
    if (args.length === 0) throw new ExpressionError(`Function ${name} needs at least one argument`);
    if (fn === 'sqrt' && args.length !== 1) throw new ExpressionError('Function sqrt takes one argument');
    return { kind: 'call', name: fn, args };
  }
}

/**
 * Parses `text`, allowing the variables of the first `rowCount` rows (`varsName` says what the
 * variables stand for in error messages: earlier rows, or a transponder's paths). Throws ExpressionError.
 */
export function parseExpression(text: string, rowCount: number, varsName = 'earlier rows'): Expr {
  if (text.length > MAX_LENGTH)
    throw new ExpressionError(`Expression is longer than ${MAX_LENGTH} characters`);
  const vars = new Set(Array.from({ length: rowCount }, (_, i) => rowLetter(i)));
  return new Parser(tokenize(text), vars, varsName).parse();
}

/** The parse error of `text`, or null when it parses. */
export function expressionProblem(text: string, rowCount: number, varsName?: string): string | null {
  try {
    parseExpression(text, rowCount, varsName);
    return null;
  } catch (err) {
    if (err instanceof ExpressionError) return err.message;
    throw err;
  }
}

/** A transponder's expression has one variable per path, `a`..`z`: at most 26 paths. */
export const MAX_TRANSPONDER_PATHS = 26;

/** Parses a transponder's expression over `pathCount` paths (variables a.. in path order). */
export const parseTransponderExpression = (text: string, pathCount: number): Expr =>
  parseExpression(text, Math.min(pathCount, MAX_TRANSPONDER_PATHS), "the paths' variables");

/** Evaluates `expr` with variable i bound to values[i] (a, b, c...); null when there is no value. */
export function evaluateWith(expr: Expr, values: ReadonlyArray<number | null | undefined>): number | null {
  const env: Record<string, number | null | undefined> = {};
  for (let i = 0; i < values.length; i++) env[rowLetter(i)] = values[i];
  return evaluate(expr, env);
}

type Env = Readonly<Record<string, number | null | undefined>>;

const finite = (n: number): number | null => (Number.isFinite(n) ? n : null);

function applyCall(name: FunctionName, values: number[]): number | null {
  switch (name) {
    case 'sum':
      return values.reduce((a, b) => a + b, 0);
    case 'mean':
    case 'avg':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'min':
      return Math.min(...values);
    case 'max':
      return Math.max(...values);
    case 'sqrt':
      return values[0]! < 0 ? null : Math.sqrt(values[0]!);
  }
}

/** The value of `expr` with the rows' values in `env`; null when an input is missing or the result is not finite. */
export function evaluate(expr: Expr, env: Env): number | null {
  switch (expr.kind) {
    case 'num':
      return expr.value;
    case 'var': {
      const v = env[expr.name];
      return v === undefined || v === null ? null : finite(v); // an infinite input is no figure either
    }
    case 'neg': {
      const v = evaluate(expr.arg, env);
      return v === null ? null : -v;
    }
    case 'bin': {
      const l = evaluate(expr.left, env);
      const r = evaluate(expr.right, env);
      if (l === null || r === null) return null;
      if (expr.op === '/') return r === 0 ? null : finite(l / r);
      return finite(expr.op === '+' ? l + r : expr.op === '-' ? l - r : l * r);
    }
    case 'call': {
      const values = expr.args.map((arg) => evaluate(arg, env));
      if (values.some((v) => v === null)) return null;
      return finite(applyCall(expr.name, values as number[]) ?? NaN);
    }
  }
}

/**
 * `expr` compiled once into a function over columns: variable i is `columns[i]`, one number per
 * bucket with NaN for no value (an infinite input counts as none), and the result is a new column
 * of `length` with NaN where `evaluate` gives null. The same rules as `evaluate` (a null input or
 * argument, a division by zero, the square root of a negative number, a non-finite result: no
 * value), computed a whole column per node, so a read of many buckets walks the tree once rather
 * than once per bucket. Variables are read in place and a constant stays a number: only the
 * operations make columns, each reusing an operand's column where it made one.
 */
export function compileColumns(
  expr: Expr,
): (columns: ReadonlyArray<Float64Array>, length: number) => Float64Array {
  const run = compileNode(expr);
  return (columns, length) => {
    const result = run(columns, length);
    if (typeof result === 'number') return new Float64Array(length).fill(finiteOrNaN(result));
    const out = result.owned ? result.v : new Float64Array(length);
    const v = result.v;
    for (let i = 0; i < length; i++) out[i] = finiteOrNaN(v[i]!);
    return out;
  };
}

/** A node's value: a constant, or a column (`owned`: made by this evaluation, free to overwrite). */
type ColumnValue = number | { v: Float64Array; owned: boolean };
type ColumnNode = (columns: ReadonlyArray<Float64Array>, length: number) => ColumnValue;

const NO_COLUMN = new Float64Array(0);

/** A column to write `length` results into: `a`'s or `b`'s when owned, else a new one. */
function target(a: ColumnValue, b: ColumnValue, length: number): Float64Array {
  if (typeof a !== 'number' && a.owned) return a.v;
  if (typeof b !== 'number' && b.owned) return b.v;
  return new Float64Array(length);
}

function binary(op: '+' | '-' | '*' | '/', l: ColumnValue, r: ColumnValue, length: number): ColumnValue {
  if (typeof l === 'number' && typeof r === 'number') {
    if (op === '/') return r === 0 ? NaN : finiteOrNaN(l / r);
    return finiteOrNaN(op === '+' ? l + r : op === '-' ? l - r : l * r);
  }
  const out = target(l, r, length);
  // NaN (no value) propagates through the arithmetic; non-finite results become NaN
  if (typeof r === 'number') {
    const a = (l as { v: Float64Array }).v;
    if (op === '+') for (let i = 0; i < length; i++) out[i] = finiteOrNaN(a[i]! + r);
    else if (op === '-') for (let i = 0; i < length; i++) out[i] = finiteOrNaN(a[i]! - r);
    else if (op === '*') for (let i = 0; i < length; i++) out[i] = finiteOrNaN(a[i]! * r);
    else if (r === 0) out.fill(NaN, 0, length);
    else for (let i = 0; i < length; i++) out[i] = finiteOrNaN(a[i]! / r);
  } else if (typeof l === 'number') {
    const b = r.v;
    if (op === '+') for (let i = 0; i < length; i++) out[i] = finiteOrNaN(l + b[i]!);
    else if (op === '-') for (let i = 0; i < length; i++) out[i] = finiteOrNaN(l - b[i]!);
    else if (op === '*') for (let i = 0; i < length; i++) out[i] = finiteOrNaN(l * b[i]!);
    else
      for (let i = 0; i < length; i++) {
        const d = b[i]!;
        out[i] = d === 0 ? NaN : finiteOrNaN(l / d);
      }
  } else {
    const a = l.v;
    const b = r.v;
    if (op === '+') for (let i = 0; i < length; i++) out[i] = finiteOrNaN(a[i]! + b[i]!);
    else if (op === '-') for (let i = 0; i < length; i++) out[i] = finiteOrNaN(a[i]! - b[i]!);
    else if (op === '*') for (let i = 0; i < length; i++) out[i] = finiteOrNaN(a[i]! * b[i]!);
    else
      for (let i = 0; i < length; i++) {
        const d = b[i]!;
        out[i] = d === 0 ? NaN : finiteOrNaN(a[i]! / d);
      }
  }
  return { v: out, owned: true };
}

function compileNode(expr: Expr): ColumnNode {
  switch (expr.kind) {
    case 'num': {
      const value = expr.value;
      return () => value;
    }
    case 'var': {
      const index = expr.name.length === 1 ? expr.name.charCodeAt(0) - 97 : -1;
      return (columns, length) => {
        const v = (index >= 0 ? columns[index] : undefined) ?? NO_COLUMN;
        if (v.length >= length) {
          let clean = true; // an infinite input is no figure: copied without it (rare)
          for (let i = 0; i < length && clean; i++) if (v[i]! - v[i]! !== 0 && v[i] === v[i]) clean = false;
          if (clean) return { v, owned: false };
        }
        const out = new Float64Array(length);
        for (let i = 0; i < length; i++) out[i] = i < v.length ? finiteOrNaN(v[i]!) : NaN;
        return { v: out, owned: true };
      };
    }
    case 'neg': {
      const arg = compileNode(expr.arg);
      return (columns, length) => binary('*', arg(columns, length), -1, length);
    }
    case 'bin': {
      const left = compileNode(expr.left);
      const right = compileNode(expr.right);
      const op = expr.op;
      return (columns, length) => binary(op, left(columns, length), right(columns, length), length);
    }
    case 'call': {
      const args = expr.args.map(compileNode);
      const name = expr.name;
      return (columns, length) => {
        let acc = args[0]!(columns, length);
        if (name === 'sqrt') {
          if (typeof acc === 'number') return acc < 0 ? NaN : Math.sqrt(acc);
          const out = acc.owned ? acc.v : new Float64Array(length);
          const v = acc.v;
          for (let i = 0; i < length; i++) out[i] = Math.sqrt(v[i]!); // NaN below zero
          return { v: out, owned: true };
        }
        // NaN arguments propagate through + and Math.min/max alike
        for (let a = 1; a < args.length; a++) {
          const next = args[a]!(columns, length);
          acc =
            name === 'min' || name === 'max' ? extreme(name, acc, next, length) : sumOf(acc, next, length);
        }
        if (name === 'mean' || name === 'avg') acc = binary('/', acc, args.length, length);
        return finiteValue(acc, length);
      };
    }
  }
}

/** The running sum of a call: unlike `+` in the language, not checked until the call's end. */
function sumOf(a: ColumnValue, b: ColumnValue, length: number): ColumnValue {
  if (typeof a === 'number' && typeof b === 'number') return a + b;
  const out = target(a, b, length);
  for (let i = 0; i < length; i++)
    out[i] = (typeof a === 'number' ? a : a.v[i]!) + (typeof b === 'number' ? b : b.v[i]!);
  return { v: out, owned: true };
}

function extreme(name: 'min' | 'max', a: ColumnValue, b: ColumnValue, length: number): ColumnValue {
  const pick = name === 'min' ? Math.min : Math.max;
  if (typeof a === 'number' && typeof b === 'number') return pick(a, b);
  const out = target(a, b, length);
  for (let i = 0; i < length; i++)
    out[i] = pick(typeof a === 'number' ? a : a.v[i]!, typeof b === 'number' ? b : b.v[i]!);
  return { v: out, owned: true };
}

function finiteValue(value: ColumnValue, length: number): ColumnValue {
  if (typeof value === 'number') return finiteOrNaN(value);
  const out = value.owned ? value.v : new Float64Array(length);
  for (let i = 0; i < length; i++) out[i] = finiteOrNaN(value.v[i]!);
  return { v: out, owned: true };
}

const finiteOrNaN = (n: number): number => (n - n === 0 ? n : NaN);

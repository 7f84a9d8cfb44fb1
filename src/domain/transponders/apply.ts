// Transponders at read time (SPEC 15): for each bucket the variables a..z take the numbers at the
// transponder's paths (missing or not a number -> null), the expression is evaluated with the
// shared language (src/shared/expression.ts), and a value is written at `response`, creating the
// maps on the way. No value (a null input, a division by zero) leaves the bucket as it was. They
// run in `order`, so a later one can read an earlier one's response. A transponder that fails
// (its expression no longer parses, its key pattern is refused, its response path runs into a
// number or names a map) is skipped whole and reported, never failing the read.
import { ExpressionError, evaluateWith, parseTransponderExpression, type Expr } from '../../shared/expression';
import type { Transponder } from '../../storage/transponders';
import { keyMatches } from './key-pattern';

export interface TransponderError {
  id: string;
  name: string;
  error: string;
}

type Bucket = Record<string, unknown>;

function valueAt(bucket: Bucket, path: readonly string[]): number | null {
  let node: unknown = bucket;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return null;
    node = (node as Bucket)[part];
  }
  return typeof node === 'number' && Number.isFinite(node) ? node : null;
}

/** Why `value` cannot be written at `path` in `bucket`, or null when it can. */
function placeProblem(bucket: Bucket, path: readonly string[]): string | null {
  let node: unknown = bucket;
  for (let i = 0; i < path.length; i++) {
    const next = (node as Bucket)[path[i]!];
    if (next === undefined) return null;
    if (i === path.length - 1) {
      return typeof next === 'number' ? null : `response path ${path.join('.')} names a map of values`;
    }
    if (typeof next !== 'object' || next === null) return `response path ${path.join('.')} runs into the value at ${path.slice(0, i + 1).join('.')}`;
    node = next;
  }
  return null;
}

function place(bucket: Bucket, path: readonly string[], value: number): void {
  let node = bucket;
  for (let i = 0; i < path.length - 1; i++) {
    const part = path[i]!;
    let next = node[part] as Bucket | undefined;
    if (next === undefined) {
      next = {};
      node[part] = next;
    }
    node = next;
  }
  node[path[path.length - 1]!] = value;
}

/** The transponders among `list` whose key applies to `key`; a refused pattern is an error. */
export function matching(list: readonly Transponder[], key: string, errors: TransponderError[]): Transponder[] {
  const out: Transponder[] = [];
  for (const t of list) {
    try {
      if (keyMatches(t.key, key)) out.push(t);
    } catch (err) {
      errors.push({ id: t.id, name: t.name, error: (err as Error).message });
    }
  }
  return out;
}

/** Applies `list` (already matched, in order) to the parsed buckets in place. */
export function applyToBuckets(list: readonly Transponder[], buckets: Bucket[], errors: TransponderError[]): void {
  for (const t of list) {
    let expr: Expr;
    try {
      if (t.paths.length === 0) throw new ExpressionError('transponder has no paths');
      expr = parseTransponderExpression(t.expression, t.paths.length);
    } catch (err) {
      errors.push({ id: t.id, name: t.name, error: `expression: ${(err as Error).message}` });
      continue;
    }
    const paths = t.paths.map((p) => p.split('.'));
    const response = t.response.split('.');
    const results: Array<number | null> = new Array(buckets.length);
    let problem: string | null = null;
    for (let i = 0; i < buckets.length && problem === null; i++) {
      const bucket = buckets[i]!;
      const value = evaluateWith(expr, paths.map((p) => valueAt(bucket, p)));
      results[i] = value;
      if (value !== null) problem = placeProblem(bucket, response);
    }
    if (problem !== null) {
      errors.push({ id: t.id, name: t.name, error: problem });
      continue;
    }
    for (let i = 0; i < buckets.length; i++) {
      const value = results[i]!;
      if (value !== null) place(buckets[i]!, response, value);
    }
  }
}

/**
 * The series' bucket texts with `list` applied (those whose key matches `key`), or the texts as
 * they were when none applies. `errors` collects the transponders that were skipped.
 */
export function applyToTexts(
  list: readonly Transponder[],
  key: string,
  values: string[],
  errors: TransponderError[],
): string[] {
  const applied = matching(list, key, errors);
  if (applied.length === 0) return values;
  const buckets = values.map((text) => JSON.parse(text) as Bucket);
  applyToBuckets(applied, buckets, errors);
  return buckets.map((b) => JSON.stringify(b));
}

// Transponders at read time (SPEC 15): for each bucket the variables a..z take the numbers at the
// transponder's paths (missing or not a number -> null), the expression is evaluated with the
// shared language (src/shared/expression.ts), and a value is written at `response`, creating the
// maps on the way. No value (a null input, a division by zero) leaves the bucket as it was. They
// run in `order`, so a later one can read an earlier one's response. A transponder that fails
// (its expression no longer parses, its key pattern is refused, its response path runs into a
// number or names a map) is skipped whole and reported, never failing the read.
import {
  ExpressionError,
  evaluate,
  parseTransponderExpression,
  rowLetter,
  type Expr,
} from '../../shared/expression';
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
    if (typeof next !== 'object' || next === null)
      return `response path ${path.join('.')} runs into the value at ${path.slice(0, i + 1).join('.')}`;
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
export function matching(
  list: readonly Transponder[],
  key: string,
  errors: TransponderError[],
): Transponder[] {
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
export function applyToBuckets(
  list: readonly Transponder[],
  buckets: Bucket[],
  errors: TransponderError[],
): void {
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
    const letters = paths.map((_, i) => rowLetter(i));
    const env: Record<string, number | null> = {}; // one per transponder, refilled for each bucket
    const results: Array<number | null> = new Array(buckets.length);
    let problem: string | null = null;
    for (let i = 0; i < buckets.length && problem === null; i++) {
      const bucket = buckets[i]!;
      for (let v = 0; v < paths.length; v++) env[letters[v]!] = valueAt(bucket, paths[v]!);
      const value = evaluate(expr, env);
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
 * The series' buckets with `list` applied (those whose key matches `key`), or null when none
 * applies. `errors` collects the transponders that were skipped.
 */
export function applyToSeries(
  list: readonly Transponder[],
  key: string,
  values: readonly string[],
  errors: TransponderError[],
): Bucket[] | null {
  const applied = matching(list, key, errors);
  if (applied.length === 0) return null;
  const buckets = values.map((text) => JSON.parse(text) as Bucket);
  applyToBuckets(applied, buckets, errors);
  return buckets;
}

/**
 * The buckets' texts after applyToSeries. The derived values mostly land under top-level names
 * the bucket did not have (`derived.rate`): those are spliced onto the stored text, which already
 * holds every other member in the same order, instead of writing the whole bucket again (JSON
 * text of a year of hourly buckets costs more than the transponders themselves). A bucket whose
 * existing members changed is written whole.
 */
export function textsOf(
  list: readonly Transponder[],
  original: readonly string[],
  buckets: readonly Bucket[],
): string[] {
  const tops = [...new Set(list.map((t) => t.response.split('.')[0]!))];
  const out: string[] = new Array(buckets.length);
  for (let i = 0; i < buckets.length; i++) {
    const text = original[i]!;
    const bucket = buckets[i]!;
    let added = '';
    let whole = false;
    for (const top of tops) {
      if (!(top in bucket)) continue;
      if (text.includes(JSON.stringify(top))) {
        whole = true; // may be an existing member the transponders wrote into: written whole
        break;
      }
      added += (added === '' ? '' : ',') + JSON.stringify(top) + ':' + JSON.stringify(bucket[top]);
    }
    if (whole) out[i] = JSON.stringify(bucket);
    else if (added === '') out[i] = text;
    else out[i] = text.length <= 2 ? `{${added}}` : `${text.slice(0, -1)},${added}}`;
  }
  return out;
}

/** applyToSeries as texts: the same array when no transponder applies. */
export function applyToTexts(
  list: readonly Transponder[],
  key: string,
  values: string[],
  errors: TransponderError[],
): string[] {
  const buckets = applyToSeries(list, key, values, errors);
  return buckets ? textsOf(list, values, buckets) : values;
}

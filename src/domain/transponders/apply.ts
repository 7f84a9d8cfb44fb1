// Transponders at read time (SPEC 15): for each bucket the variables a..z take the numbers at the
// transponder's paths (missing or not a number -> null), the expression is evaluated with the
// shared language (src/shared/expression.ts), and a value is written at `response`, creating the
// maps on the way. No value (a null input, a division by zero) leaves the bucket as it was. They
// run in `order`, so a later one can read an earlier one's response. A transponder that fails
// (its expression no longer parses, its key pattern is refused, its response path runs into a
// number or names a map) is skipped whole and reported, never failing the read.
//
// A read applies them through columns (applyToTexts, scanWithTransponders): each expression is
// parsed and compiled once per read, the buckets' texts are scanned once for the paths the
// transponders read (the query scanner's text path, no JSON.parse), the expression runs a whole
// column at a time, and the results are spliced onto the stored texts (or merged into the query's
// columns). What a read derived is kept for the next read of the same texts by the same
// transponders (Derivations): a dashboard's refresh and its widgets on one key scan nothing again,
// and a read whose texts differ in a few buckets (a live range) derives, formats and composes only
// those (patchDerivation, patchCells, patchComposed).
// A read where a response path could run into a stored value or name a stored map, or
// into another transponder's response, takes the bucket-by-bucket path (applyToBuckets), whose
// checks decide exactly which transponder fails.
import {
  ExpressionError,
  compileColumns,
  evaluate,
  parseTransponderExpression,
  rowLetter,
  type Expr,
} from '../../shared/expression';
import type { Transponder } from '../../storage/transponders';
import { scanSeries, type Column, type Scan } from '../metrics/query/columns';
import { keyMatches } from '../../shared/key-pattern';

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

/** A transponder ready for a read: its expression compiled once. */
interface Prepared {
  t: Transponder;
  run: (columns: ReadonlyArray<Float64Array>, length: number) => Float64Array;
}

/** A path's values after the transponders, one per bucket, NaN where there is none. */
export interface DerivedColumn {
  path: string;
  values: Float64Array;
}

/** Compiled expressions (or their error) of the transponders of recent reads: the repo keeps their objects. */
const compiled = new WeakMap<Transponder, Prepared | string>();

function prepare(list: readonly Transponder[], errors: TransponderError[]): Prepared[] {
  const out: Prepared[] = [];
  for (const t of list) {
    let made = compiled.get(t);
    if (made === undefined) {
      try {
        if (t.paths.length === 0) throw new ExpressionError('transponder has no paths');
        made = { t, run: compileColumns(parseTransponderExpression(t.expression, t.paths.length)) };
      } catch (err) {
        made = `expression: ${(err as Error).message}`;
      }
      compiled.set(t, made);
    }
    if (typeof made === 'string') errors.push({ id: t.id, name: t.name, error: made });
    else out.push(made);
  }
  return out;
}

/** The stored paths the transponders read, and those they write (a stored number there is kept where they give no value). */
function pathsNeeded(prepared: readonly Prepared[]): Set<string> {
  const need = new Set<string>();
  for (const { t } of prepared) {
    for (const path of t.paths) need.add(path);
    need.add(t.response);
  }
  return need;
}

const dense = (column: Column | undefined, length: number): Float64Array => {
  const out = new Float64Array(length).fill(NaN);
  if (column) for (let k = 0; k < column.size; k++) out[column.index[k]!] = column.value[k]!;
  return out;
};

/**
 * The transponders over a scan that selected pathsNeeded: the derived columns in the order of
 * their first response, or null when a response may run into or name a stored value or map, or
 * another response (the bucket-by-bucket path then decides).
 */
function derive(prepared: readonly Prepared[], scan: Scan, length: number): DerivedColumn[] | null {
  const leaves = new Set(scan.availablePaths);
  const maps = new Set(scan.mapPaths);
  const stored = new Map(scan.columns.map((c) => [c.path, c]));
  const current = new Map<string, Float64Array>();
  const densed = new Map<string, Float64Array>(); // each stored column made dense once per read
  const column = (path: string): Float64Array => {
    const made = current.get(path) ?? densed.get(path);
    if (made) return made;
    const fresh = dense(stored.get(path), length);
    densed.set(path, fresh);
    return fresh;
  };
  for (const { t, run } of prepared) {
    const response = t.response;
    if (maps.has(response)) return null;
    for (let dot = response.indexOf('.'); dot > 0; dot = response.indexOf('.', dot + 1))
      if (leaves.has(response.slice(0, dot))) return null;
    for (const path of current.keys())
      if (path.startsWith(`${response}.`) || response.startsWith(`${path}.`)) return null;
    const result = run(t.paths.map(column), length);
    const base = current.get(response) ?? (leaves.has(response) ? column(response) : null);
    for (let i = 0; i < length; i++) {
      const v = result[i]!;
      // a literal beyond the range of a double is no value either; no value keeps what was there
      if (v - v !== 0) result[i] = base ? base[i]! : NaN;
    }
    current.set(response, result);
  }
  return [...current].map(([path, values]) => ({ path, values }));
}

/**
 * The derived members of every bucket, appended by the writer of the response (http/present/
 * metrics.ts) after the bucket's stored members, as bytes: each derived column is formatted once
 * per read, with one JSON.stringify of the whole column (a number per bucket; formatting numbers
 * one by one, and building a text per bucket, cost several times more in allocation alone), and
 * its cells are copied from there. No string is made per bucket.
 */
export interface DerivedMembers {
  /** the most bytes `write` adds to one bucket */
  readonly bytes: number;
  /**
   * Writes bucket `i`'s derived members into `out` at `n`, after its stored members (`empty`: it
   * has none, so no leading comma); returns the new end. Writes nothing for a bucket whose text
   * was written whole.
   */
  write(out: Uint8Array, n: number, i: number, empty: boolean): number;
}

/** A node of the derived members' tree: a leaf holds one column's cells. */
interface OutNode {
  prefix: Uint8Array; // `"name":` as UTF-8
  /** whether bucket i has a value here (a map: under it) */
  has: Uint8Array;
  cells: Uint8Array | null; // a leaf: the column as JSON numbers, comma-separated
  starts: Int32Array | null; // a leaf: where cell i starts; cell i ends one byte before starts[i + 1]
  children: Map<string, OutNode>;
}

const COMMA = 0x2c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;

/** A column formatted as JSON numbers: the cells, where each starts, the longest's length. */
interface Cells {
  hash: string;
  values: Float64Array;
  cells: Uint8Array;
  starts: Int32Array;
  longest: number;
}

function formatCells(values: Float64Array, hash: string): Cells {
  const length = values.length;
  const numbers: Array<number | null> = new Array(length);
  for (let i = 0; i < length; i++) {
    const v = values[i]!;
    numbers[i] = v === v ? v : null;
  }
  const json = JSON.stringify(numbers); // `[1.5,null,2]`: ASCII
  const cells = Buffer.from(json.slice(1, -1) + ',', 'latin1');
  const starts = new Int32Array(length + 1);
  let at = 0;
  let longest = 0;
  for (let i = 0; i < length; i++) {
    starts[i] = at;
    let next = at;
    while (cells[next] !== COMMA) next++;
    next++;
    if (next - at > longest) longest = next - at;
    at = next;
  }
  starts[length] = at;
  return { hash, values, cells, starts, longest };
}

/**
 * Formatted columns of recent reads, found by their numbers (a hash, then compared in full): a
 * dashboard's widgets on one key, and a refresh of a range whose buckets did not change, format
 * each derived column once. Formatting is most of a read's cost with transponders (about 90 ns a
 * number). Bounded by bytes; the least recently used go first. Holding only numbers and their text,
 * it cannot show one source's data to another: equal numbers have equal text.
 */
class ByteBoundCache<T> {
  private readonly map = new Map<string, { value: T; bytes: number }>();
  private bytes = 0;
  constructor(private readonly limit: number) {}

  get(key: string): T | undefined {
    const kept = this.map.get(key);
    if (!kept) return undefined;
    this.map.delete(key); // most recently used goes last
    this.map.set(key, kept);
    return kept.value;
  }

  set(key: string, value: T, bytes: number): void {
    if (bytes > this.limit / 4) return;
    const old = this.map.get(key);
    if (old) {
      this.map.delete(key);
      this.bytes -= old.bytes;
    }
    this.map.set(key, { value, bytes });
    this.bytes += bytes;
    for (const [k, v] of this.map) {
      if (this.bytes <= this.limit) break;
      this.map.delete(k);
      this.bytes -= v.bytes;
    }
  }
}

const cellsCache = new ByteBoundCache<Cells>(16 * 1024 * 1024);

function columnHash(values: Float64Array): string {
  const words = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
  let h1 = 0x811c9dc5;
  let h2 = 0x1b873593;
  const n = words.length;
  for (let k = 0; k < n; k++) {
    const w = words[k]! | 0;
    h1 = Math.imul(h1 ^ w, 0x01000193);
    h2 = Math.imul((h2 + w) | 0, 0x5bd1e995) ^ (h2 >>> 13); // kept in int32: no doubles in the loop
  }
  return `${values.length}:${h1 >>> 0}:${h2 >>> 0}`;
}

function sameValues(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y && (x === x || y === y)) return false; // NaN equals NaN here
    if (x === 0 && 1 / x !== 1 / y) return false; // -0 is written as 0 but kept apart anyway
  }
  return true;
}

/**
 * The last column formatted for each derived path (and length): a read of a range whose last
 * buckets changed (new points on a live range) gives a column of mostly the same numbers, whose
 * cells are copied from it and only the changed ones formatted. A cell's text follows from its
 * number alone, so whichever read formatted it, the copy is what formatting would write.
 */
const lastCells = new Map<string, Cells>();
const LAST_CELLS = 256;

function cellsOf(values: Float64Array, path: string): Cells {
  const hash = columnHash(values);
  const kept = cellsCache.get(hash);
  const slot = `${values.length}:${path}`;
  if (kept && sameValues(kept.values, values)) {
    lastCells.set(slot, kept);
    return kept;
  }
  const before = lastCells.get(slot);
  const made = (before && patchCells(before, values, hash)) ?? formatCells(values, hash);
  cellsCache.set(hash, made, made.values.byteLength + made.cells.byteLength + made.starts.byteLength);
  if (lastCells.size >= LAST_CELLS && !lastCells.has(slot)) lastCells.clear();
  lastCells.set(slot, made);
  return made;
}

/** The longest cell: a number as JavaScript writes it (`-1.2345678901234567e-300`) and its comma. */
const LONGEST_CELL = 26;

/**
 * `values` formatted from `before` (a column of the same length): runs of equal numbers copied,
 * the others formatted as JSON.stringify writes them (a finite number as String does, anything
 * else null). Null when more than an eighth of the numbers changed (formatting it whole is as cheap).
 */
function patchCells(before: Cells, values: Float64Array, hash: string): Cells | null {
  const length = values.length;
  const old = before.values;
  if (old.length !== length) return null;
  let changed = 0;
  for (let i = 0; i < length; i++) {
    const x = old[i]!;
    const y = values[i]!;
    if (x !== y && (x === x || y === y) && ++changed > (length >> 3) + 8) return null;
  }
  const from = before.cells;
  const fromStarts = before.starts;
  const cells = Buffer.allocUnsafe(from.length + changed * LONGEST_CELL);
  const starts = new Int32Array(length + 1);
  let n = 0;
  let longest = 0;
  let i = 0;
  while (i < length) {
    const x = old[i]!;
    const y = values[i]!;
    if (x === y || (x !== x && y !== y)) {
      // a run of equal numbers: one copy, the starts shifted by the same amount
      let end = i + 1;
      for (; end < length; end++) {
        const a = old[end]!;
        const b = values[end]!;
        if (a !== b && (a === a || b === b)) break;
      }
      const shift = n - fromStarts[i]!;
      for (let k = i; k < end; k++) {
        starts[k] = fromStarts[k]! + shift;
        const size = fromStarts[k + 1]! - fromStarts[k]!;
        if (size > longest) longest = size;
      }
      cells.set(from.subarray(fromStarts[i]!, fromStarts[end]!), n);
      n += fromStarts[end]! - fromStarts[i]!;
      i = end;
      continue;
    }
    starts[i] = n;
    n += cells.write(Number.isFinite(y) ? String(y) : 'null', n, 'latin1');
    cells[n++] = COMMA;
    if (n - starts[i]! > longest) longest = n - starts[i]!;
    i++;
  }
  starts[length] = n;
  return { hash, values, cells: cells.subarray(0, n), starts, longest };
}

/** Fills a leaf's cells. */
function leafCells(node: OutNode, values: Float64Array, path: string): Cells {
  const length = values.length;
  for (let i = 0; i < length; i++) {
    const v = values[i]!;
    node.has[i] = v === v ? 1 : 0;
  }
  const made = cellsOf(values, path);
  node.cells = made.cells;
  node.starts = made.starts;
  return made;
}

/** The derived paths as a tree of members, by top-level name (no path is a prefix of another: derive checked). */
function outTree(
  derived: readonly DerivedColumn[],
  length: number,
): { tops: OutNode[]; bytes: number; leaves: Cells[] } {
  const leaves: Cells[] = [];
  const root = new Map<string, OutNode>();
  let bytes = 0;
  const nodes: OutNode[] = [];
  for (const { path, values } of derived) {
    let siblings = root;
    let node: OutNode | undefined;
    for (const part of path.split('.')) {
      node = siblings.get(part);
      if (!node) {
        node = {
          prefix: Buffer.from(`${JSON.stringify(part)}:`, 'utf8'),
          has: new Uint8Array(length),
          cells: null,
          starts: null,
          children: new Map(),
        };
        siblings.set(part, node);
        nodes.push(node);
      }
      siblings = node.children;
    }
    const cells = leafCells(node!, values, path);
    leaves.push(cells);
    bytes += cells.longest;
  }
  // per bucket at most: every prefix, a comma and braces per node
  for (const node of nodes) bytes += node.prefix.length + 3;
  const tops = [...root.values()];
  for (const top of tops) mapHas(top);
  return { tops, bytes, leaves };
}

function mapHas(node: OutNode): Uint8Array {
  if (node.cells) return node.has;
  for (const child of node.children.values()) {
    const has = mapHas(child);
    for (let i = 0; i < has.length; i++) node.has[i] = node.has[i]! | has[i]!;
  }
  return node.has;
}

function writeNode(node: OutNode, i: number, out: Uint8Array, n: number): number {
  const prefix = node.prefix;
  for (let k = 0; k < prefix.length; k++) out[n++] = prefix[k]!;
  if (node.cells) {
    const cells = node.cells;
    const end = node.starts![i + 1]! - 1;
    for (let k = node.starts![i]!; k < end; k++) out[n++] = cells[k]!;
    return n;
  }
  out[n++] = LBRACE;
  let first = true;
  for (const child of node.children.values()) {
    if (!child.has[i]) continue;
    if (!first) out[n++] = COMMA;
    first = false;
    n = writeNode(child, i, out, n);
  }
  out[n++] = RBRACE;
  return n;
}

/**
 * The derived columns for the writer of the response. A bucket that may hold the top-level name
 * of a derived path (its quoted name appears in the text, and the scan met that name) is parsed,
 * given its values and written whole into `values` instead; the others keep their stored text.
 */
function derivedMembers(
  values: string[],
  derived: readonly DerivedColumn[],
  scan: StoredPaths,
): DerivedMembers {
  const length = values.length;
  const known = new Set<string>();
  for (const path of scan.availablePaths) known.add(path.split('.', 1)[0]!);
  for (const path of scan.mapPaths) known.add(path.split('.', 1)[0]!);
  const storedTops = [...new Set(derived.map((d) => d.path.split('.', 1)[0]!))]
    .filter((top) => known.has(top))
    .map((top) => JSON.stringify(top));
  const whole = new Uint8Array(length);
  if (storedTops.length > 0) {
    for (let i = 0; i < length; i++) {
      const text = values[i]!;
      if (!storedTops.some((quoted) => text.includes(quoted))) continue;
      const bucket = JSON.parse(text) as Bucket;
      for (const { path, values: column } of derived) {
        const v = column[i]!;
        if (v === v) place(bucket, path.split('.'), v);
      }
      values[i] = JSON.stringify(bucket);
      whole[i] = 1;
    }
  }
  const { cells, starts, bytes } = composed(derived, length);
  return {
    bytes,
    write(out, n, i, empty) {
      const start = starts[i]!;
      const end = starts[i + 1]!;
      if (whole[i] || start === end) return n;
      if (!empty) out[n++] = COMMA;
      // a loop: Buffer#copy makes a view of the source for every call, which cost more than
      // copying the hundred-odd bytes of a bucket's members
      for (let k = start; k < end; k++) out[n++] = cells[k]!;
      return n;
    },
  };
}

/** Every bucket's derived members as one run of bytes (`"d":{"x":1,"y":2}`), where each bucket's start. */
interface Composed {
  cells: Buffer;
  starts: Int32Array;
  bytes: number;
  leaves: Cells[];
}

/** Compositions of recent reads, found by the paths and their formatted columns. */
const composedCache = new ByteBoundCache<Composed>(16 * 1024 * 1024);

/**
 * The members of each bucket composed once per read (one copy per bucket when writing, rather
 * than one per member), kept with the columns they were made of: a read whose columns all came
 * from the cells cache reuses the composition too.
 */
function composed(derived: readonly DerivedColumn[], length: number): Composed {
  const { tops, bytes, leaves } = outTree(derived, length);
  const paths = derived.map((d) => d.path).join('\0');
  const key = `${paths}\0${leaves.map((c) => c.hash).join('\0')}`;
  const kept = composedCache.get(key);
  if (kept && kept.leaves.every((c, k) => c === leaves[k])) return kept;
  const slot = `${length}\0${paths}`;
  const before = lastComposed.get(slot);
  const made =
    (before && patchComposed(before, tops, bytes, leaves, length)) ?? composeAll(tops, bytes, leaves, length);
  composedCache.set(key, made, made.cells.buffer.byteLength + made.starts.byteLength);
  if (lastComposed.size >= LAST_CELLS && !lastComposed.has(slot)) lastComposed.clear();
  lastComposed.set(slot, made);
  return made;
}

/** The last composition of each list of derived paths (and length): patched when a few buckets changed (lastCells). */
const lastComposed = new Map<string, Composed>();

/** Bucket i's members written at `n` in `cells`; returns the new end. */
function composeBucket(tops: readonly OutNode[], i: number, cells: Uint8Array, n: number): number {
  let first = true;
  for (const top of tops) {
    if (!top.has[i]) continue;
    if (!first) cells[n++] = COMMA;
    first = false;
    n = writeNode(top, i, cells, n);
  }
  return n;
}

function composeAll(tops: readonly OutNode[], bytes: number, leaves: Cells[], length: number): Composed {
  const cells = Buffer.allocUnsafe(bytes * length);
  const starts = new Int32Array(length + 1);
  let n = 0;
  for (let i = 0; i < length; i++) {
    starts[i] = n;
    n = composeBucket(tops, i, cells, n);
  }
  starts[length] = n;
  return { cells: cells.subarray(0, n), starts, bytes, leaves };
}

/**
 * The composition from `before` (of the same paths and length): the buckets whose numbers are all
 * the same copied (their members' bytes follow from the numbers alone), the others composed. Null
 * when more than an eighth of the buckets changed.
 */
function patchComposed(
  before: Composed,
  tops: readonly OutNode[],
  bytes: number,
  leaves: Cells[],
  length: number,
): Composed | null {
  if (before.leaves.length !== leaves.length || before.starts.length !== length + 1) return null;
  const changed = new Uint8Array(length);
  let count = 0;
  for (let k = 0; k < leaves.length; k++) {
    const old = before.leaves[k]!.values;
    const now = leaves[k]!.values;
    if (old === now) continue;
    if (old.length !== length || now.length !== length) return null;
    for (let i = 0; i < length; i++) {
      const x = old[i]!;
      const y = now[i]!;
      if (x !== y && (x === x || y === y) && changed[i] === 0) {
        changed[i] = 1;
        if (++count > (length >> 3) + 8) return null;
      }
    }
  }
  const from = before.cells;
  const fromStarts = before.starts;
  const cells = Buffer.allocUnsafe(from.length + count * bytes);
  const starts = new Int32Array(length + 1);
  let n = 0;
  let i = 0;
  while (i < length) {
    if (changed[i] === 0) {
      let end = i + 1;
      while (end < length && changed[end] === 0) end++;
      const shift = n - fromStarts[i]!;
      for (let k = i; k < end; k++) starts[k] = fromStarts[k]! + shift;
      n += from.copy(cells, n, fromStarts[i]!, fromStarts[end]!);
      i = end;
      continue;
    }
    starts[i] = n;
    n = composeBucket(tops, i, cells, n);
    i++;
  }
  starts[length] = n;
  return { cells: cells.subarray(0, n), starts, bytes, leaves };
}

/** The paths a scan met: the leaves, and every path leaf or map (derive and derivedMembers check against them). */
type StoredPaths = Pick<Scan, 'availablePaths' | 'mapPaths'>;

/** What the transponders made of one read's texts. */
interface Derivation {
  applied: readonly Transponder[];
  texts: readonly string[];
  /** about the memory the texts hold */
  bytes: number;
  /** the derived columns, or null when a response may run into a stored value (the bucket-by-bucket path) */
  derived: DerivedColumn[] | null;
  paths: StoredPaths;
  /** applyToRead's answer, made by the first such read: the texts (a bucket written whole replaced) and the members */
  read?: { values: string[]; members: DerivedMembers; reads: number; whole?: string[] };
}

/**
 * The derivations of recent reads, found by their transponders (the same objects: the repo makes
 * new ones on any change) and their texts (compared in full, one string comparison per bucket).
 * A dashboard's widgets on one key and a refresh of a range whose buckets did not change scan
 * nothing again: the scan of the stored texts for the paths' numbers is most of the cost of a
 * read with transponders. The derived values follow from the texts and the transponders alone,
 * so equal texts give equal values and no source sees another's. Bounded by the texts' memory;
 * the least recently used go first.
 */
class Derivations {
  private readonly entries: Derivation[] = [];
  private bytes = 0;
  constructor(
    private readonly limit: number,
    private readonly most: number,
  ) {}

  find(applied: readonly Transponder[], texts: readonly string[]): Derivation | undefined {
    for (let e = 0; e < this.entries.length; e++) {
      const kept = this.entries[e]!;
      if (!sameList(kept.applied, applied) || !sameTexts(kept.texts, texts)) continue;
      if (e > 0) {
        this.entries.splice(e, 1);
        this.entries.unshift(kept);
      }
      return kept;
    }
    return undefined;
  }

  add(
    applied: readonly Transponder[],
    texts: readonly string[],
    derived: DerivedColumn[] | null,
    scan: StoredPaths,
  ): Derivation {
    let bytes = 64 + texts.length * 8;
    for (let i = 0; i < texts.length; i++) bytes += texts[i]!.length + 16;
    const made: Derivation = {
      applied: applied.slice(),
      texts: texts.slice(),
      bytes,
      derived,
      paths: { availablePaths: scan.availablePaths, mapPaths: scan.mapPaths },
    };
    if (bytes > this.limit / 4) return made;
    this.entries.unshift(made);
    this.bytes += bytes;
    this.trim();
    return made;
  }

  /** Counts `bytes` more for `kept` (its whole texts), if it is still kept. */
  grow(kept: Derivation, bytes: number): void {
    kept.bytes += bytes;
    if (!this.entries.includes(kept)) return;
    this.bytes += bytes;
    this.trim();
  }

  private trim(): void {
    while (this.entries.length > this.most || this.bytes > this.limit)
      this.bytes -= this.entries.pop()!.bytes;
  }

  /**
   * A derivation by the same transponders of as many texts, all but a few of them equal at the
   * same places (a live range: its last buckets took new points), and the places that differ.
   */
  near(
    applied: readonly Transponder[],
    texts: readonly string[],
  ): { kept: Derivation; changed: number[] } | undefined {
    const length = texts.length;
    const most = (length >> 3) + 8;
    search: for (const kept of this.entries) {
      if (kept.derived === null || kept.texts.length !== length || !sameList(kept.applied, applied)) continue;
      const changed: number[] = [];
      for (let i = length - 1; i >= 0; i--) {
        if (kept.texts[i] === texts[i]) continue;
        if (changed.length === most) continue search;
        changed.push(i);
      }
      return { kept, changed: changed.reverse() };
    }
    return undefined;
  }
}

const samePaths = (a: readonly string[], b: readonly string[]) => {
  if (a.length !== b.length) return false;
  const x = [...a].sort();
  const y = [...b].sort();
  return x.every((path, k) => path === y[k]);
};

/**
 * The derivation of `values` from `kept`, which differs from it only in the buckets `changed`:
 * those are scanned and derived, the other buckets' values copied. Only when the changed buckets
 * held the same paths before and after (so every path the whole read meets, which decides where
 * the responses may go, is the same as `kept`'s); null otherwise.
 */
function patchDerivation(
  kept: Derivation,
  changed: readonly number[],
  prepared: readonly Prepared[],
  values: readonly string[],
  need: ReadonlySet<string>,
): { derived: DerivedColumn[]; paths: StoredPaths } | null {
  const keptDerived = kept.derived;
  if (keptDerived === null) return null;
  const selects = (path: string) => need.has(path);
  const before = scanSeries(
    changed.map((i) => kept.texts[i]!),
    selects,
  );
  const after = scanSeries(
    changed.map((i) => values[i]!),
    selects,
  );
  if (!samePaths(before.availablePaths, after.availablePaths) || !samePaths(before.mapPaths, after.mapPaths))
    return null;
  const sub = derive(prepared, { ...kept.paths, columns: after.columns }, changed.length);
  if (sub === null || sub.length !== keptDerived.length) return null;
  const derived: DerivedColumn[] = [];
  for (let k = 0; k < sub.length; k++) {
    const { path, values: old } = keptDerived[k]!;
    if (sub[k]!.path !== path) return null;
    const column = old.slice();
    const fresh = sub[k]!.values;
    for (let j = 0; j < changed.length; j++) column[changed[j]!] = fresh[j]!;
    derived.push({ path, values: column });
  }
  return { derived, paths: kept.paths };
}

function sameList(a: readonly Transponder[], b: readonly Transponder[]): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/** Whether two reads' texts are equal: the last buckets first (where a range's data changes). */
function sameTexts(a: readonly string[], b: readonly string[]): boolean {
  const length = a.length;
  if (length !== b.length) return false;
  for (let i = length - 1; i >= 0; i--) if (a[i] !== b[i]) return false;
  return true;
}

const derivations = new Derivations(32 * 1024 * 1024, 16);

/** The derivation of `values` by `prepared` (`applied`, matched): kept, or made from `scan` (one that selected pathsNeeded). */
function derivation(
  applied: readonly Transponder[],
  prepared: readonly Prepared[],
  values: readonly string[],
  scan: () => Scan,
  need: ReadonlySet<string>,
): Derivation {
  const kept = derivations.find(applied, values);
  if (kept) return kept;
  const near = derivations.near(applied, values);
  const patched = near && patchDerivation(near.kept, near.changed, prepared, values, need);
  if (patched) return derivations.add(applied, values, patched.derived, patched.paths);
  const made = scan();
  return derivations.add(applied, values, derive(prepared, made, values.length), made);
}

/** The texts of `values` with `derived` written in (for callers that need each bucket's whole text). */
export function withDerived(values: readonly string[], derived: DerivedMembers | undefined): string[] {
  if (!derived) return values as string[];
  return values.map((text, i) => {
    const out = Buffer.allocUnsafe(text.length * 3 + derived.bytes);
    let n = out.write(text, 0, 'utf8') - 1; // before the closing brace
    n = derived.write(out, n, i, text.length <= 2);
    out[n++] = RBRACE;
    return out.toString('utf8', 0, n);
  });
}

/**
 * withDerived for a derivation read again: the texts written into one buffer and each made a
 * string from there (flat strings, no piece per member), with the bytes they hold.
 */
function wholeTexts(values: readonly string[], derived: DerivedMembers): { texts: string[]; bytes: number } {
  const length = values.length;
  let room = 0;
  for (let i = 0; i < length; i++) room += values[i]!.length * 3 + derived.bytes;
  const out = Buffer.allocUnsafe(room);
  const starts = new Int32Array(length + 1);
  let n = 0;
  for (let i = 0; i < length; i++) {
    const text = values[i]!;
    starts[i] = n;
    n += out.write(text, n, 'utf8') - 1; // before the closing brace
    n = derived.write(out, n, i, text.length <= 2);
    out[n++] = RBRACE;
  }
  starts[length] = n;
  const texts: string[] = new Array(length);
  for (let i = 0; i < length; i++) texts[i] = out.toString('utf8', starts[i]!, starts[i + 1]!);
  return { texts, bytes: n + length * 16 };
}

/**
 * The transponders applied to the texts of one read (those whose key matches `key`), or null when
 * none applies: `values` is the texts (a bucket written whole replaced), `derived` what the writer
 * of the response appends to each. `errors` collects the transponders that were skipped.
 */
export function applyToRead(
  list: readonly Transponder[],
  key: string,
  values: string[],
  errors: TransponderError[],
): { values: string[]; derived?: DerivedMembers } | null {
  const applied = matching(list, key, errors);
  if (applied.length === 0) return null;
  const own: TransponderError[] = [];
  const prepared = prepare(applied, own);
  if (prepared.length === 0) {
    errors.push(...own);
    return { values };
  }
  const need = pathsNeeded(prepared);
  const made = derivation(
    applied,
    prepared,
    values,
    () => scanSeries(values, (path) => need.has(path)),
    need,
  );
  const derived = made.derived;
  if (derived === null) {
    const buckets = values.map((text) => JSON.parse(text) as Bucket);
    applyToBuckets(applied, buckets, errors);
    return { values: textsOf(applied, values, buckets) };
  }
  errors.push(...own);
  if (derived.length === 0) return { values };
  if (!made.read) {
    const copy = values.slice();
    made.read = { values: copy, members: derivedMembers(copy, derived, made.paths), reads: 0 };
  }
  const read = made.read;
  // Read a second time (a refresh, a dashboard's widgets, a repeated read): the whole texts are
  // made once and kept, and the writer of the response copies each bucket's text as without
  // transponders, rather than its stored text and then its members (a write per bucket costs more
  // than its bytes). A first read does not pay for them: a range that changed is a new derivation.
  if (++read.reads === 1) return { values: read.values.slice(), derived: read.members };
  if (!read.whole) {
    const whole = wholeTexts(read.values, read.members);
    read.whole = whole.texts;
    derivations.grow(made, whole.bytes);
  }
  return { values: read.whole.slice() };
}

/** applyToRead as whole texts: the same array when no transponder applies. */
export function applyToTexts(
  list: readonly Transponder[],
  key: string,
  values: string[],
  errors: TransponderError[],
): string[] {
  const read = applyToRead(list, key, values, errors);
  return read ? withDerived(read.values, read.derived) : values;
}

/** A derived column as a query column: the buckets that have a value. */
function sparse(path: string, values: Float64Array): Column {
  let size = 0;
  for (let i = 0; i < values.length; i++) if (values[i] === values[i]) size++;
  const column: Column = {
    path,
    size,
    index: new Int32Array(Math.max(size, 1)),
    value: new Float64Array(Math.max(size, 1)),
  };
  let k = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v !== v) continue;
    column.index[k] = i;
    column.value[k++] = v;
  }
  return column;
}

const byPath = (a: Column, b: Column) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/**
 * For the query maths: a scan of `values` (selecting what the query selects) that sees the
 * transponders' responses as if they were stored, in one pass over the texts; null when no
 * transponder applies to `key`. `errors` is filled when the scan runs.
 */
export function scanWithTransponders(
  list: readonly Transponder[],
  key: string,
  values: ReadonlyArray<string>,
  errors: TransponderError[],
): ((selects: (path: string) => boolean) => Scan) | null {
  const applied = matching(list, key, errors);
  if (applied.length === 0) return null;
  return (selects) => {
    const own: TransponderError[] = [];
    const prepared = prepare(applied, own);
    if (prepared.length === 0) {
      errors.push(...own);
      return scanSeries(values, selects);
    }
    const need = pathsNeeded(prepared);
    // a kept (or patched) derivation leaves the query's own scan; otherwise one scan selects both
    let scan: Scan | null = null;
    const made = derivation(
      applied,
      prepared,
      values,
      () => {
        scan = scanSeries(values, (path) => selects(path) || need.has(path));
        return scan;
      },
      need,
    );
    scan ??= scanSeries(values, selects);
    const derived = made.derived;
    if (derived === null) {
      const buckets = values.map((text) => JSON.parse(text) as Bucket);
      applyToBuckets(applied, buckets, errors);
      return scanSeries(buckets, selects);
    }
    errors.push(...own);
    const leaves = new Set(scan.availablePaths);
    const columns = new Map(scan.columns.filter((c) => selects(c.path)).map((c) => [c.path, c]));
    let added = false;
    for (const { path, values: column } of derived) {
      const made = sparse(path, column);
      if (made.size === 0) continue;
      if (!leaves.has(path)) {
        leaves.add(path);
        added = true;
      }
      if (selects(path)) columns.set(path, made);
    }
    return {
      availablePaths: added ? [...leaves].sort() : scan.availablePaths,
      columns: [...columns.values()].sort(byPath),
      mapPaths: scan.mapPaths,
    };
  };
}

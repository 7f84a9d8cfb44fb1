// The numeric core of a query: one pass over the buckets collects every leaf path (for
// `available_paths`) and, for the selected paths only, sparse columns of (bucket, value). Memory
// stays proportional to the data read. Path strings are built once per distinct path, not per
// bucket: a trie mirrors the nesting met so far, so each leaf costs one Map lookup.
//
// Buckets come as JSON texts (what the stores return) or as parsed maps. A text in the plain form
// the stores write (objects of numbers, keys without escapes or dots, no whitespace) is scanned
// as it is, without building its objects: on a year of hourly buckets that is several times
// cheaper than JSON.parse and a walk. Anything else in a text (an array, a string, a duplicate
// key, a nesting deeper than MAX_PATH_DEPTH) sends that bucket down the JSON.parse path, so both
// read every bucket the same. Later buckets of a shape already scanned are matched against it
// rather than scanned (domain/metrics/query/text-shapes.ts).

import { MAX_PATH_DEPTH, isMap } from '../../../model/paths';
import { TextShapes } from './text-shapes';

/**
 * The values of one leaf path, sparse: the first `size` entries of `index` are ascending bucket
 * positions, `value` holds the leaf alongside. Typed arrays grown by doubling: far cheaper than
 * pushing to plain arrays on long ranges.
 */
export interface Column {
  path: string;
  size: number;
  index: Int32Array;
  value: Float64Array;
}

const newColumn = (path: string): Column => ({
  path,
  size: 0,
  index: new Int32Array(16),
  value: new Float64Array(16),
});

/**
 * Makes room in `column`, read up to bucket `bucket` of `buckets`: at least twice the room, and as
 * much as the column would need at the rate it has filled so far (a dense column of a year of
 * hourly buckets grows once instead of ten times), never more than one entry per bucket.
 */
function grow(column: Column, bucket: number, buckets: number): void {
  const rate = Math.ceil(((column.size + 1) * buckets) / (bucket + 1));
  const room = Math.max(column.index.length * 2, Math.min(rate + 16, buckets));
  const index = new Int32Array(room);
  index.set(column.index);
  column.index = index;
  const value = new Float64Array(room);
  value.set(column.value);
  column.value = value;
}

export interface Scan {
  availablePaths: string[];
  columns: Column[]; // sorted by path
  /** every path met, leaf or map (transponders check where their responses may be written) */
  mapPaths: string[];
}

/** What is known of one dot path; shared by the trie nodes that spell it (`a.b` vs `a: {b}`). */
interface PathInfo {
  path: string;
  isLeaf: boolean;
  /** a map in some bucket */
  isMap: boolean;
  column: Column | null; // null when the query does not select this path
}

interface TrieNode {
  info: PathInfo;
  /** the key of this node has a dot (a text holding it takes the JSON.parse path) */
  dotted: boolean;
  /** the object (a number per object met in a text) in which this key was last seen: finds duplicates */
  seenIn: number;
  children: Map<string, TrieNode>;
  // Buckets usually repeat their key order: the keys and children met at each position last
  // time make a fast path that skips the Map lookup.
  lastKeys: string[];
  lastChildren: TrieNode[];
}

const newNode = (info: PathInfo, key: string): TrieNode => ({
  info,
  dotted: key.includes('.'),
  seenIn: 0,
  children: new Map(),
  lastKeys: [],
  lastChildren: [],
});

class SeriesScanner {
  private readonly infos = new Map<string, PathInfo>();
  private readonly root: TrieNode;
  private bucket = 0;
  /** the number of buckets of the scan */
  private buckets = 0;
  /** the shapes of texts scanned so far, to match later buckets against (domain/metrics/query/text-shapes.ts) */
  private readonly shapes = new TextShapes<PathInfo>();
  private readonly recordLeaf = (info: PathInfo, leaf: number) => this.record(info, leaf);
  private readonly selectedInfo = (path: string): PathInfo | null => {
    const info = this.infos.get(path);
    return info?.column ? info : null;
  };

  constructor(private readonly selects: (path: string) => boolean) {
    this.root = newNode({ path: '', isLeaf: false, isMap: true, column: null }, '');
  }

  scan(values: ReadonlyArray<string | unknown>): Scan {
    this.buckets = values.length;
    for (this.bucket = 0; this.bucket < values.length; this.bucket++) {
      let value = values[this.bucket];
      if (typeof value === 'string') {
        if (this.shapes.read(value, this.recordLeaf)) continue;
        if (this.scanText(value)) {
          this.shapes.learn(value, this.selectedInfo);
          continue;
        }
        value = JSON.parse(value) as unknown;
      }
      if (isMap(value)) this.walk(value, this.root, 1);
    }
    const leaves = [...this.infos.values()].filter((info) => info.isLeaf);
    const columns = leaves.flatMap((info) => (info.column ? [info.column] : []));
    const availablePaths = leaves.map((info) => info.path).sort();
    const mapPaths: string[] = [];
    for (const info of this.infos.values()) if (info.isMap) mapPaths.push(info.path);
    return { availablePaths, columns: columns.sort(byPath), mapPaths };
  }

  private walk(map: Record<string, unknown>, node: TrieNode, depth: number): void {
    let position = 0;
    // for-in rather than Object.keys: no array per map, and data maps (JSON or null-prototype)
    // carry no inherited enumerable keys.
    for (const key in map) {
      const child = map[key];
      if (typeof child === 'number') {
        if (Number.isFinite(child)) this.record(this.child(node, key, position).info, child);
      } else if (depth < MAX_PATH_DEPTH && isMap(child)) {
        const inner = this.child(node, key, position);
        inner.info.isMap = true;
        this.walk(child, inner, depth + 1);
      }
      position++;
    }
  }

  private child(node: TrieNode, key: string, position: number): TrieNode {
    if (node.lastKeys[position] === key) return node.lastChildren[position]!;
    const child = this.lookup(node, key);
    node.lastKeys[position] = key;
    node.lastChildren[position] = child;
    return child;
  }

  private lookup(node: TrieNode, key: string): TrieNode {
    let child = node.children.get(key);
    if (!child) {
      const path = node === this.root ? key : `${node.info.path}.${key}`;
      let info = this.infos.get(path);
      if (!info) {
        info = { path, isLeaf: false, isMap: false, column: this.selects(path) ? newColumn(path) : null };
        this.infos.set(path, info);
      }
      child = newNode(info, key);
      node.children.set(key, child);
    }
    return child;
  }

  // The text scanner's state, reused from bucket to bucket: the leaves of the bucket being scanned
  // (recorded only once the whole text has scanned), and the objects it is inside.
  private readonly leafInfos: PathInfo[] = [];
  private leafValues = new Float64Array(64);
  private readonly outerNodes: TrieNode[] = [];
  private readonly outerPositions: number[] = [];
  private readonly outerObjects: number[] = [];
  private objects = 0;

  /** Scans a bucket's JSON text in the plain form and records its leaves; false (nothing recorded) otherwise. */
  private scanText(text: string): boolean {
    const end = text.length;
    if (end < 2 || text.charCodeAt(0) !== LBRACE) return false;
    let leaves = 0;
    let depth = 0; // objects open around `node`'s
    let node = this.root;
    let position = 0;
    let object = ++this.objects;
    let i = 1;
    if (text.charCodeAt(i) === RBRACE) return i + 1 === end;
    for (;;) {
      // a key: the one met at this position last time (no new string), else read and looked up
      if (text.charCodeAt(i) !== QUOTE) return false;
      const keyAt = i + 1;
      let child: TrieNode;
      const last = node.lastKeys[position];
      if (last !== undefined && spelledAt(text, keyAt, last)) {
        child = node.lastChildren[position]!;
        i = keyAt + last.length + 1;
      } else {
        const close = text.indexOf('"', keyAt);
        if (close < 0) return false;
        const key = text.slice(keyAt, close);
        if (key.includes('\\')) return false;
        child = this.child(node, key, position);
        i = close + 1;
      }
      if (child.dotted || child.seenIn === object) return false;
      child.seenIn = object;
      if (text.charCodeAt(i) !== COLON) return false;
      i++;
      const c = text.charCodeAt(i);
      if (c === LBRACE) {
        if (depth + 2 > MAX_PATH_DEPTH) return false; // deeper than a walk descends
        this.outerNodes[depth] = node;
        this.outerPositions[depth] = position;
        this.outerObjects[depth] = object;
        depth++;
        node = child;
        child.info.isMap = true;
        position = 0;
        object = ++this.objects;
        i++;
        if (text.charCodeAt(i) !== RBRACE) continue;
      } else {
        const start = i;
        let whole = 0;
        let digits = true;
        if (c === MINUS) i++;
        for (let d = text.charCodeAt(i); d >= DIGIT_0 && d <= DIGIT_9; d = text.charCodeAt(++i))
          whole = whole * 10 + (d - DIGIT_0);
        for (
          let d = text.charCodeAt(i);
          d === DOT ||
          d === LOWER_E ||
          d === UPPER_E ||
          d === PLUS ||
          d === MINUS ||
          (d >= DIGIT_0 && d <= DIGIT_9);
          d = text.charCodeAt(++i)
        )
          digits = false;
        const length = i - start;
        if (length === 0 || (c === MINUS && length === 1)) return false;
        let value: number;
        if (digits && length <= 15) value = c === MINUS ? -whole : whole;
        else {
          value = Number(text.slice(start, i));
          if (Number.isNaN(value)) return false;
        }
        if (Number.isFinite(value)) {
          if (leaves === this.leafValues.length) this.growLeaves();
          this.leafInfos[leaves] = child.info;
          this.leafValues[leaves++] = value;
        }
        position++;
        if (text.charCodeAt(i) === COMMA) {
          i++;
          continue;
        }
      }
      // the end of one object or more
      while (text.charCodeAt(i) === RBRACE) {
        i++;
        if (depth === 0) {
          if (i !== end) return false;
          for (let k = 0; k < leaves; k++) this.record(this.leafInfos[k]!, this.leafValues[k]!);
          return true;
        }
        depth--;
        node = this.outerNodes[depth]!;
        position = this.outerPositions[depth]! + 1;
        object = this.outerObjects[depth]!;
      }
      if (text.charCodeAt(i) !== COMMA) return false;
      i++;
    }
  }

  private growLeaves(): void {
    const values = new Float64Array(this.leafValues.length * 2);
    values.set(this.leafValues);
    this.leafValues = values;
  }

  private record(info: PathInfo, leaf: number): void {
    info.isLeaf = true;
    const column = info.column;
    if (!column) return;
    const size = column.size;
    // Two spellings of one path in a bucket: the later wins, as in flattenLeaves.
    if (size > 0 && column.index[size - 1] === this.bucket) {
      column.value[size - 1] = leaf;
      return;
    }
    if (size === column.index.length) grow(column, this.bucket, this.buckets);
    column.index[size] = this.bucket;
    column.value[size] = leaf;
    column.size = size + 1;
  }
}

/** Whether `text` holds `key` and a closing quote at `at` (a loop: startsWith is a call into the runtime). */
function spelledAt(text: string, at: number, key: string): boolean {
  const n = key.length;
  for (let k = 0; k < n; k++) if (text.charCodeAt(at + k) !== key.charCodeAt(k)) return false;
  return text.charCodeAt(at + n) === QUOTE;
}

const LBRACE = 0x7b;
const RBRACE = 0x7d;
const QUOTE = 0x22;
const COLON = 0x3a;
const COMMA = 0x2c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

const byPath = (a: Column, b: Column) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

export function scanSeries(
  values: ReadonlyArray<string | unknown>,
  selects: (path: string) => boolean,
): Scan {
  return new SeriesScanner(selects).scan(values);
}

/**
 * Slicing (SPEC 5.4): `size = floor(buckets / slices)`; the oldest `buckets - size * slices`
 * buckets are dropped and the rest is cut into `slices` chronological groups of `size`.
 */
export interface SlicePlan {
  slices: number;
  size: number;
  drop: number;
}

export function planSlices(buckets: number, slices: number): SlicePlan {
  const size = Math.floor(buckets / slices);
  return { slices, size, drop: buckets - size * slices };
}

/** Per-group running figures for one column. Sums use Neumaier compensation to limit drift. */
export interface GroupStats {
  sum: Float64Array;
  count: Uint32Array;
  min: Float64Array;
  max: Float64Array;
}

export function groupStats(column: Column, plan: SlicePlan): GroupStats {
  const sum = new Float64Array(plan.slices);
  const carry = new Float64Array(plan.slices);
  const count = new Uint32Array(plan.slices);
  const min = new Float64Array(plan.slices).fill(Number.POSITIVE_INFINITY);
  const max = new Float64Array(plan.slices).fill(Number.NEGATIVE_INFINITY);
  const { index, value } = column;
  for (let k = 0; k < column.size; k++) {
    const at = index[k]! - plan.drop;
    if (at < 0) continue;
    const g = Math.floor(at / plan.size);
    const x = value[k]!;
    const s = sum[g]!;
    const t = s + x;
    carry[g]! += Math.abs(s) >= Math.abs(x) ? s - t + x : x - t + s;
    sum[g] = t;
    count[g]! += 1;
    if (x < min[g]!) min[g] = x;
    if (x > max[g]!) max[g] = x;
  }
  for (let g = 0; g < plan.slices; g++) sum[g] = sum[g]! + carry[g]!;
  return { sum, count, min, max };
}

/** Non-finite figures (a sum that overflowed) are reported as null, never as a number. */
export const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** The dense values of a column over all buckets, 0 where a bucket lacks the path. */
export function denseValues(column: Column, buckets: number): Float64Array {
  const dense = new Float64Array(buckets);
  for (let k = 0; k < column.size; k++) dense[column.index[k]!] = column.value[k]!;
  return dense;
}

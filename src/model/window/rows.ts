// The rows and groups of a metric writer's window (model/window/window.ts), as columns (model/window/table.ts).
// - Rows: one per series (metric key and granularity) and bucket: the leaf values to add or set,
//   with the points they count for the system key, and whether their fold has committed.
// - Groups: tracks of one key that share every bucket, summed before they are spread into rows.
// Leaf paths are interned per window as shapes (lists of paths): a row or group holds a shape id
// and the offset of its values; a row that receives other leaves moves to the union shape, which
// extends its own (Shapes), its values kept in place while its room lasts.
import type { RowDelta } from '../row-delta';
import { DoubleColumn, SlotTable } from './table';

/** Bucket ids and group keys share one number: high part x 2^26 + bucket id. */
export const ID_UNIT = 2 ** 26;

/** A list of paths that only grows at its end, with the first place of each path in it. */
interface Lineage {
  paths: string[];
  index: Map<string, number>;
}

/**
 * Path lists of a window, with the index maps between them. A list a point brings is interned by
 * its text; the union a row moves to when it receives other leaves is made by appending the
 * missing paths to its shape's lineage, so a shape is the first `size` paths of a lineage, and
 * finding a path in it is one look-up in the lineage's index. A row that keeps gaining leaves
 * thus costs work in proportion to the leaves it gains, not to its width times their number.
 */
export class Shapes {
  /** per shape: how many paths it holds */
  readonly sizes: number[] = [];
  /**
   * per shape: where its assert part starts (a pair's list, model/wire.ts): a write of the shape
   * adds the values before that index and sets those from it on; the size for a plain shape
   */
  readonly assertFrom: number[] = [];
  /** per shape: its paths (made on first use for a union: pathsOf) */
  private readonly lists: Array<string[] | null> = [];
  /** per shape: the lineage it is a prefix of (made on first use for an interned list) */
  private readonly lineages: Array<Lineage | null> = [];
  private readonly ids = new Map<string, number>();
  private readonly maps = new Map<number, Int32Array>();
  /** base * ID_UNIT + extra -> their union */
  private readonly unions = new Map<number, number>();
  /** a * ID_UNIT + b -> whether one sets a leaf the other adds to (conflict) */
  private readonly conflicts = new Map<number, boolean>();
  /**
   * Paths read, copied or looked up by interning, mapping and extending shapes, and row values
   * moved when a row outgrows its room: what merging wide keys costs (tests check that it grows in
   * proportion to the leaves, test/unit/replay-scaling.test.ts).
   */
  steps = 0;

  reset(): void {
    this.sizes.length = 0;
    this.assertFrom.length = 0;
    this.conflicts.clear();
    this.lists.length = 0;
    this.lineages.length = 0;
    this.ids.clear();
    this.maps.clear();
    this.unions.clear();
  }

  /**
   * The shape of a path list (a copy is kept: the caller's list may change); `assertFrom` below
   * its length makes it a pair's shape, apart from the plain one of the same paths.
   */
  id(paths: readonly string[], assertFrom = paths.length): number {
    this.steps += paths.length;
    const pair = assertFrom < paths.length;
    const text = (pair ? `${assertFrom}|` : '') + paths.map((p) => `${p.length}:${p}`).join('');
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.sizes.push(paths.length) - 1;
      this.assertFrom.push(pair ? assertFrom : paths.length);
      this.lists.push([...paths]);
      this.lineages.push(null);
      this.ids.set(text, id);
    }
    return id;
  }

  /** The paths of a shape (not to be changed). */
  pathsOf(shape: number): string[] {
    let list = this.lists[shape]!;
    if (list === null) {
      list = this.lineages[shape]!.paths.slice(0, this.sizes[shape]!);
      this.lists[shape] = list;
      this.steps += list.length;
    }
    return list;
  }

  /** Where each path of shape `from` sits in shape `to` (-1: absent). */
  map(from: number, to: number): Int32Array {
    const key = from * ID_UNIT + to;
    let map = this.maps.get(key);
    if (!map) {
      const { index } = this.lineageOf(to);
      const size = this.sizes[to]!;
      const paths = this.lists[from] ?? this.lineages[from]!.paths;
      const n = this.sizes[from]!;
      map = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const at = index.get(paths[i]!);
        map[i] = at !== undefined && at < size ? at : -1;
      }
      this.steps += n;
      this.maps.set(key, map);
    }
    return map;
  }

  /**
   * The shape holding `base`'s paths, then those of `extra` it lacks, in their order. Appended to
   * `base`'s lineage when `base` is its end; else (another union grew the lineage past `base`)
   * to a copy of `base`'s paths.
   */
  union(base: number, extra: number): number {
    const key = base * ID_UNIT + extra;
    const known = this.unions.get(key);
    if (known !== undefined) return known;
    const missing = this.map(extra, base);
    let lineage = this.lineageOf(base);
    const size = this.sizes[base]!;
    if (lineage.paths.length !== size) lineage = this.newLineage(lineage.paths.slice(0, size));
    const extraPaths = this.lists[extra] ?? this.lineages[extra]!.paths;
    const { paths, index } = lineage;
    for (let i = 0; i < missing.length; i++) {
      if (missing[i]! >= 0) continue;
      const path = extraPaths[i]!;
      if (!index.has(path)) index.set(path, paths.length);
      paths.push(path);
    }
    this.steps += missing.length;
    const id = this.sizes.push(paths.length) - 1;
    this.assertFrom.push(paths.length);
    this.lists.push(null);
    this.lineages.push(lineage);
    this.unions.set(key, id);
    return id;
  }

  /** Whether a shape has an assert part. */
  isPair(shape: number): boolean {
    return this.assertFrom[shape]! < this.sizes[shape]!;
  }

  /**
   * Whether writes of the two shapes must keep their order: one sets a leaf the other adds to.
   * (Adds commute; sets of a leaf by both are ordered by the writes' numbers, window.ts.)
   */
  conflict(a: number, b: number): boolean {
    if (!this.isPair(a) && !this.isPair(b)) return false;
    const key = a * ID_UNIT + b;
    let known = this.conflicts.get(key);
    if (known === undefined) {
      known = this.overlaps(a, b) || this.overlaps(b, a);
      this.conflicts.set(key, known);
    }
    return known;
  }

  /** Whether a leaf `a` sets is one `b` adds to. */
  private overlaps(a: number, b: number): boolean {
    const setBy = new Set(this.pathsOf(a).slice(this.assertFrom[a]!));
    if (setBy.size === 0) return false;
    const added = this.pathsOf(b).slice(0, this.assertFrom[b]!);
    this.steps += setBy.size + added.length;
    return added.some((p) => setBy.has(p));
  }

  private lineageOf(shape: number): Lineage {
    let lineage = this.lineages[shape]!;
    if (lineage === null) {
      lineage = this.newLineage(this.lists[shape]!.slice());
      this.lineages[shape] = lineage;
    }
    return lineage;
  }

  private newLineage(paths: string[]): Lineage {
    const index = new Map<string, number>();
    for (let i = 0; i < paths.length; i++) if (!index.has(paths[i]!)) index.set(paths[i]!, i);
    this.steps += paths.length;
    return { paths, index };
  }
}

const FOLDED = 1;
const COUNT_FOLDED = 2;

/**
 * Leaves written into rows: `shape`'s paths take `values` from `offset` on, set (`assert`, or from
 * the shape's assert part on) or added,
 * and the system key's counts grow by `tracked` and `untracked` points (0 and 0 for a write set's row,
 * whose counts come with the set).
 */
export interface LeafWrite {
  shape: number;
  values: ArrayLike<number>;
  offset: number;
  assert: boolean;
  tracked: number;
  untracked: number;
}

export class Rows {
  readonly table: SlotTable;
  count = 0;
  /** whether the last `find` made a new row */
  created = false;
  series: Int32Array;
  /** the bucket's id in its source (model/window/window.ts WindowSource) */
  bucket: Int32Array;
  bucketMs: Float64Array;
  shape: Int32Array;
  at: Int32Array;
  /** values the row has room for from `at` on (more than its shape holds once it has grown) */
  room: Int32Array;
  /** points counted for the system key (a window holds far fewer than 2^31) */
  tracked: Int32Array;
  untracked: Int32Array;
  flags: Uint8Array;
  /** the series' next row (a list per series), -1 at the end */
  next: Int32Array;
  readonly values: DoubleColumn;
  /** per value: 1 where it replaces the stored leaf */
  sets: Uint8Array;

  /** `capacity`: rows expected (the previous window's count), so that the columns rarely grow */
  constructor(
    private readonly shapes: Shapes,
    capacity = 1024,
  ) {
    const n = columnSize(capacity);
    this.table = new SlotTable(tableSize(n));
    this.series = new Int32Array(n);
    this.bucket = new Int32Array(n);
    this.bucketMs = new Float64Array(n);
    this.shape = new Int32Array(n);
    this.at = new Int32Array(n);
    this.room = new Int32Array(n);
    this.tracked = new Int32Array(n);
    this.untracked = new Int32Array(n);
    this.flags = new Uint8Array(n);
    this.next = new Int32Array(n);
    this.values = new DoubleColumn(3 * n);
    this.sets = new Uint8Array(3 * n);
  }

  /** Forgets every row; the columns stay for the next window. */
  reset(): void {
    this.table.reset();
    this.values.reset();
    this.count = 0;
  }

  /** How many rows the columns hold before they grow. */
  get capacity(): number {
    return this.series.length;
  }

  /** The row of a series and bucket; a new one (then `created`) starts with `shape` and no values. */
  find(series: number, bucketId: number, bucketMs: number, shape: number, head: number): number {
    const row = this.table.add(series * ID_UNIT + bucketId);
    this.created = row >= this.count;
    if (!this.created) return row;
    this.grow();
    this.count++;
    this.series[row] = series;
    this.bucket[row] = bucketId;
    this.bucketMs[row] = bucketMs;
    this.shape[row] = shape;
    const size = this.shapes.sizes[shape]!;
    this.at[row] = this.allocValues(size);
    this.room[row] = size;
    this.tracked[row] = 0;
    this.untracked[row] = 0;
    this.flags[row] = 0;
    this.next[row] = head;
    return row;
  }

  /** Adds the leaf write's values to the row, or sets them (`assert`, a pair's assert part). */
  write(row: number, leaf: LeafWrite): void {
    const { shape, values: source, offset } = leaf;
    const setFrom = leaf.assert ? 0 : this.shapes.assertFrom[shape]!;
    let map: Int32Array | null = null;
    if (shape !== this.shape[row]) {
      map = this.shapes.map(shape, this.shape[row]!);
      if (map.indexOf(-1) >= 0) {
        this.reshape(row, this.shapes.union(this.shape[row]!, shape));
        map = this.shapes.map(shape, this.shape[row]!);
      }
    }
    const values = this.values.data;
    const base = this.at[row]!;
    const n = this.shapes.sizes[shape]!;
    for (let i = 0; i < n; i++) {
      const at = base + (map === null ? i : map[i]!);
      if (i >= setFrom) {
        values[at] = source[offset + i]!;
        this.sets[at] = 1;
      } else values[at]! += source[offset + i]!;
    }
  }

  /** The row's pending change; its values are a view of the column (copy it to keep it). */
  delta(row: number): RowDelta {
    const paths = this.shapes.pathsOf(this.shape[row]!);
    const from = this.at[row]!;
    const sets = this.sets.subarray(from, from + paths.length);
    return {
      paths,
      values: this.values.data.subarray(from, from + paths.length),
      set: sets.indexOf(1) >= 0 ? sets : null,
    };
  }

  folded(row: number): boolean {
    return (this.flags[row]! & FOLDED) !== 0;
  }

  countFolded(row: number): boolean {
    return (this.flags[row]! & COUNT_FOLDED) !== 0;
  }

  markFolded(row: number): void {
    this.flags[row]! |= FOLDED;
  }

  markCountFolded(row: number): void {
    this.flags[row]! |= COUNT_FOLDED;
  }

  /**
   * Moves a row to a shape that extends its own (a union): the new leaves take the zeroed room
   * after its values, or the values move to room for twice as many, so that a row gaining leaves
   * one record after another moves each value a few times at most.
   */
  private reshape(row: number, shape: number): void {
    const size = this.shapes.sizes[shape]!;
    if (size > this.room[row]!) {
      const old = this.at[row]!;
      const oldLength = this.shapes.sizes[this.shape[row]!]!;
      const room = Math.max(size, 2 * oldLength);
      const at = this.allocValues(room);
      this.values.data.copyWithin(at, old, old + oldLength);
      this.sets.copyWithin(at, old, old + oldLength);
      this.shapes.steps += oldLength;
      this.at[row] = at;
      this.room[row] = room;
    }
    this.shape[row] = shape;
  }

  private allocValues(n: number): number {
    const at = this.values.alloc(n);
    if (this.values.data.length > this.sets.length) {
      const bigger = new Uint8Array(this.values.data.length);
      bigger.set(this.sets);
      this.sets = bigger;
    }
    this.sets.fill(0, at, at + n);
    return at;
  }

  private grow(): void {
    if (this.count < this.series.length) return;
    const n = this.series.length * 2;
    this.series = widen(this.series, n);
    this.bucket = widen(this.bucket, n);
    this.bucketMs = widen(this.bucketMs, n);
    this.shape = widen(this.shape, n);
    this.at = widen(this.at, n);
    this.room = widen(this.room, n);
    this.tracked = widen(this.tracked, n);
    this.untracked = widen(this.untracked, n);
    this.flags = widen(this.flags, n);
    this.next = widen(this.next, n);
  }
}

/** Columns for a window expected to hold `n`: a tenth more, so that they rarely grow. */
export function columnSize(n: number): number {
  return Math.max(1024, Math.ceil(n * 1.1));
}

/** A hash table for `n` entries: a power of two, at most half full. */
function tableSize(n: number): number {
  return 2 ** Math.ceil(Math.log2(2 * n));
}

function widen<T extends Int32Array | Float64Array | Uint8Array>(a: T, n: number): T {
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

/**
 * Groups: tracks of one key whose buckets agree in every granularity, summed. Found by key and
 * finest bucket (other shapes of the same buckets in a second table); a spread group is kept
 * for reuse by the next track of its key and bucket, as long as the window lives.
 */
export class Groups {
  readonly table: SlotTable;
  count = 0;
  key: Int32Array;
  finest: Int32Array;
  shape: Int32Array;
  at: Int32Array;
  tracked: Int32Array;
  untracked: Int32Array;
  /** the number of the group's last write in its window (a key's pair groups spread in that order) */
  seq: Float64Array;
  live: Uint8Array;
  /** the key's next live group (a list per key), -1 at the end */
  nextOfKey: Int32Array;
  readonly sums: DoubleColumn;
  /** the other shapes of the same buckets: first group of those buckets * ID_UNIT + shape -> group */
  private readonly others = new SlotTable(1024);
  /** whether the last `find` took a group that was not live (the key's list must take it) */
  revived = false;

  constructor(
    private readonly shapes: Shapes,
    capacity = 1024,
  ) {
    const n = columnSize(capacity);
    this.table = new SlotTable(tableSize(n));
    this.key = new Int32Array(n);
    this.finest = new Int32Array(n);
    this.shape = new Int32Array(n);
    this.at = new Int32Array(n);
    this.tracked = new Int32Array(n);
    this.untracked = new Int32Array(n);
    this.seq = new Float64Array(n);
    this.live = new Uint8Array(n);
    this.nextOfKey = new Int32Array(n);
    this.sums = new DoubleColumn(3 * n);
  }

  /** Forgets every group; the columns stay for the next window. */
  reset(): void {
    this.table.reset();
    if (this.others.size > 0) this.others.reset();
    this.sums.reset();
    this.count = 0;
  }

  find(key: number, finest: number, shape: number): number {
    // the table holds the first group of the buckets itself (no column between: one cache miss less)
    const table = this.table;
    const at = table.place(key * ID_UNIT + finest);
    let group = table.valueAt(at);
    if (group < 0) {
      group = this.create(key, finest, shape);
      table.setValue(at, group);
      return group;
    }
    if (this.shape[group] !== shape) {
      // another shape of the same buckets (a key whose points bring other leaves): one look-up,
      // however many shapes those buckets have
      const others = this.others;
      const other = others.place(group * ID_UNIT + shape);
      group = others.valueAt(other);
      if (group < 0) {
        group = this.create(key, finest, shape);
        others.setValue(other, group);
        return group;
      }
    }
    this.revived = this.live[group] === 0;
    if (this.revived) {
      this.live[group] = 1;
      this.tracked[group] = 0;
      this.untracked[group] = 0;
      const at = this.at[group]!;
      this.sums.data.fill(0, at, at + this.shapes.sizes[shape]!);
    }
    return group;
  }

  private create(key: number, finest: number, shape: number): number {
    const group = this.count++;
    if (group >= this.key.length) {
      const n = this.key.length * 2;
      this.key = widen(this.key, n);
      this.finest = widen(this.finest, n);
      this.shape = widen(this.shape, n);
      this.at = widen(this.at, n);
      this.tracked = widen(this.tracked, n);
      this.untracked = widen(this.untracked, n);
      this.seq = widen(this.seq, n);
      this.live = widen(this.live, n);
      this.nextOfKey = widen(this.nextOfKey, n);
    }
    this.key[group] = key;
    this.finest[group] = finest;
    this.shape[group] = shape;
    this.at[group] = this.sums.alloc(this.shapes.sizes[shape]!);
    this.tracked[group] = 0;
    this.untracked[group] = 0;
    this.live[group] = 1;
    this.revived = true;
    return group;
  }
}

/** The system key's bookkeeping of one bucket: points counted and the untracked ones among them. */
export class CountRow {
  count = 0;
  untracked = 0;
  folded = false;
  /** a write set's own system-key writes (addWriteSet): per-key counts and other leaves */
  keys: Map<string, number> | null = null;
  leaves: RowDelta | null = null;

  constructor(readonly bucketMs: number) {}
}

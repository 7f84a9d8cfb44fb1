// The rows and groups of a metric writer's window (model/window/window.ts), as columns (model/window/table.ts).
// - Rows: one per series (metric key and granularity) and bucket: the leaf values to add or set,
//   with the points they count for the system key, and whether their fold has committed.
// - Groups: tracks of one key that share every bucket, summed before they are spread into rows.
// Leaf paths are interned per window as shapes (lists of paths): a row or group holds a shape id
// and the offset of its values; a row that receives other leaves moves to the union shape.
import type { RowDelta } from '../row-delta';
import { DoubleColumn, IntColumn, SlotTable } from './table';

/** Bucket ids and group keys share one number: high part x 2^26 + bucket id. */
export const ID_UNIT = 2 ** 26;

/** Path lists of a window, interned, with the index maps between them. */
export class Shapes {
  readonly paths: string[][] = [];
  private readonly ids = new Map<string, number>();
  private readonly maps = new Map<number, Int32Array>();

  reset(): void {
    this.paths.length = 0;
    this.ids.clear();
    this.maps.clear();
  }

  id(paths: readonly string[]): number {
    const text = paths.map((p) => `${p.length}:${p}`).join('');
    let id = this.ids.get(text);
    if (id === undefined) this.ids.set(text, (id = this.paths.push([...paths]) - 1));
    return id;
  }

  /** Where each path of shape `from` sits in shape `to` (-1: absent). */
  map(from: number, to: number): Int32Array {
    const key = from * ID_UNIT + to;
    let map = this.maps.get(key);
    if (!map) {
      const target = this.paths[to]!;
      this.maps.set(key, (map = Int32Array.from(this.paths[from]!, (p) => target.indexOf(p))));
    }
    return map;
  }

  /** The shape holding `base`'s paths, then those of `extra` it lacks (replacements first). */
  union(base: number, extra: number, replaced: (i: number) => boolean): number {
    const paths = [...this.paths[base]!];
    const missing = this.map(extra, base);
    for (const first of [true, false]) {
      missing.forEach((at, i) => {
        if (at < 0 && replaced(i) === first) paths.push(this.paths[extra]![i]!);
      });
    }
    return this.id(paths);
  }
}

const FOLDED = 1;
const COUNT_FOLDED = 2;

/**
 * Leaves written into rows: `shape`'s paths take `values` from `offset` on, set (`assert`) or added,
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
    this.at[row] = this.allocValues(this.shapes.paths[shape]!.length);
    this.tracked[row] = 0;
    this.untracked[row] = 0;
    this.flags[row] = 0;
    this.next[row] = head;
    return row;
  }

  /** Adds the leaf write's values to the row, or sets them (`assert`). */
  write(row: number, leaf: LeafWrite): void {
    const { shape, values: source, offset, assert: assign } = leaf;
    let map: Int32Array | null = null;
    if (shape !== this.shape[row]) {
      map = this.shapes.map(shape, this.shape[row]!);
      if (map.indexOf(-1) >= 0) {
        this.reshape(
          row,
          this.shapes.union(this.shape[row]!, shape, () => assign),
        );
        map = this.shapes.map(shape, this.shape[row]!);
      }
    }
    const values = this.values.data;
    const base = this.at[row]!;
    const n = this.shapes.paths[shape]!.length;
    for (let i = 0; i < n; i++) {
      const at = base + (map === null ? i : map[i]!);
      if (assign) {
        values[at] = source[offset + i]!;
        this.sets[at] = 1;
      } else values[at]! += source[offset + i]!;
    }
  }

  /** The row's pending change; its values are a view of the column (copy it to keep it). */
  delta(row: number): RowDelta {
    const paths = this.shapes.paths[this.shape[row]!]!;
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

  private reshape(row: number, shape: number): void {
    const old = this.at[row]!;
    const oldLength = this.shapes.paths[this.shape[row]!]!.length;
    const at = this.allocValues(this.shapes.paths[shape]!.length);
    this.values.data.copyWithin(at, old, old + oldLength);
    this.sets.copyWithin(at, old, old + oldLength);
    this.shape[row] = shape;
    this.at[row] = at;
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
 * finest bucket (other shapes of the same buckets chain behind the first); a spread group is kept
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
  live: Uint8Array;
  /** the next group of the same buckets (another shape), -1 at the end */
  nextShape: Int32Array;
  /** the key's next live group (a list per key), -1 at the end */
  nextOfKey: Int32Array;
  readonly sums: DoubleColumn;
  /** table slot -> first group of those buckets */
  private readonly heads = new IntColumn();
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
    this.live = new Uint8Array(n);
    this.nextShape = new Int32Array(n);
    this.nextOfKey = new Int32Array(n);
    this.sums = new DoubleColumn(3 * n);
  }

  /** Forgets every group; the columns stay for the next window. */
  reset(): void {
    this.table.reset();
    this.heads.data.fill(-1);
    this.sums.reset();
    this.count = 0;
  }

  find(key: number, finest: number, shape: number): number {
    const slot = this.table.add(key * ID_UNIT + finest);
    this.heads.reach(slot);
    let group = this.heads.data[slot]!;
    if (group < 0) return (this.heads.data[slot] = this.create(key, finest, shape));
    for (;;) {
      if (this.shape[group] === shape) break;
      const next = this.nextShape[group]!;
      if (next < 0) {
        const made = this.create(key, finest, shape);
        this.nextShape[group] = made;
        return made;
      }
      group = next;
    }
    this.revived = this.live[group] === 0;
    if (this.revived) {
      this.live[group] = 1;
      this.tracked[group] = 0;
      this.untracked[group] = 0;
      const at = this.at[group]!;
      this.sums.data.fill(0, at, at + this.shapes.paths[shape]!.length);
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
      this.live = widen(this.live, n);
      this.nextShape = widen(this.nextShape, n);
      this.nextOfKey = widen(this.nextOfKey, n);
    }
    this.key[group] = key;
    this.finest[group] = finest;
    this.shape[group] = shape;
    this.at[group] = this.sums.alloc(this.shapes.paths[shape]!.length);
    this.tracked[group] = 0;
    this.untracked[group] = 0;
    this.live[group] = 1;
    this.nextShape[group] = -1;
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
